"""The editor's settings as the server holds them: pulled for the window and for each workspace
folder (one ``workspace/configuration`` item per folder, with its scopeUri, so a folder's own
``enable`` and ``exclude`` count), parsed over the initialization options, and applied (what
changed decides what the scheduler drops)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from coherence.lsp import settings as settings_mod
from coherence.lsp.uris import path_to_uri

if TYPE_CHECKING:
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)


async def pull(ls: CoherenceLanguageServer) -> tuple[dict | None, dict[str, dict | None]] | None:
    """The "coherence" section for the window (the first folder's) and for each workspace
    folder, by path: one ``workspace/configuration`` item per folder, with its scopeUri, so a
    folder's own settings (``enable``, ``exclude``, ...) count.  None when the client cannot
    answer (it keeps the init options)."""
    if not ls.supports_configuration():
        return None
    roots = ls.workspace_roots()
    scopes: list[str | None] = [path_to_uri(r) for r in roots] or [None]
    result = await ls.ask_client(
        ls.workspace_configuration_async(
            types.ConfigurationParams(
                items=[types.ConfigurationItem(scope_uri=scope, section=settings_mod.SECTION) for scope in scopes]
            )
        ),
        "workspace/configuration",
    )
    if not result:
        return None
    values = [v if isinstance(v, dict) and v else None for v in result]
    values += [None] * (len(scopes) - len(values))
    if values[0] is None and not any(values):
        return None
    return values[0], (dict(zip(roots, values)) if len(roots) > 1 else {})


def apply(
    ls: CoherenceLanguageServer, raw: dict | None, *, source: str, folders: dict[str, dict | None] | None = None
) -> bool:
    """Parse and apply the window's settings (``raw``) and each workspace folder's
    (``folders``, path -> raw; a folder left out has the window's); returns True when they
    changed."""
    new, problems = _parse(ls, raw)
    new_folders = {root: _parse(ls, folder_raw, problems)[0] for root, folder_raw in (folders or {}).items()}
    for p in dict.fromkeys(problems):
        ls.notify_problem(f"coherence: {p}")
    old, old_folders = ls.settings, ls.folder_settings
    if (
        same_settings(new, old)
        and new_folders.keys() == old_folders.keys()
        and all(same_settings(s, old_folders[root]) for root, s in new_folders.items())
    ):
        return False
    log.info("settings from %s: %s", source, settings_mod.describe(new))
    for root, s in new_folders.items():
        if not same_settings(s, new):
            log.info("settings of the folder %s: %s", root, settings_mod.describe(s))
    ls.settings, ls.folder_settings = new, new_folders
    ls._shown.clear()  # a problem that persists under the new settings is shown again, once
    ls.scheduler.budget.settings_changed(old, new)
    pairs = [(old, new)] + [(old_folders.get(root), s) for root, s in new_folders.items()]
    if new_folders.keys() != old_folders.keys() or not all(
        a is not None and settings_mod.only_the_cap_differs(a, b) for a, b in pairs
    ):
        ls.scheduler.settings_changed()
    # else the cost cap alone changed: the checkers and results stand, and the checks in flight go on
    return True


def _parse(
    ls: CoherenceLanguageServer, raw: dict | None, problems: list[str] | None = None
) -> tuple[settings_mod.Settings, list[str]]:
    merged = dict(ls._init_settings)
    if raw:
        merged.update(raw)
    parsed, found = settings_mod.parse_settings(merged)
    problems = problems if problems is not None else []
    problems.extend(found)
    return parsed, problems


def same_settings(a: settings_mod.Settings, b: settings_mod.Settings) -> bool:
    return a == b and a.explicit == b.explicit
