"""The "coherence" settings of the editor, and the ``CheckConfig`` they make for one document.

Settings are camelCase (like jedi-language-server's).  They come from ``initializationOptions``
(``{"settings": {...}}``, ``{"coherence": {...}}`` or flat) and from ``workspace/configuration``
(section ``coherence``), and are re-read on ``workspace/didChangeConfiguration``.  A bad value
never stops the server: it is replaced by its default and reported once in a friendly sentence.

Layers, lowest first (``engine/resolve.py``): engine defaults < the user's config.toml <
COHERENCE_* < ``[tool.coherence]`` of the nearest pyproject.toml (its model, api_base, python,
sandbox, cache_dir and workspace only when the workspace is trusted) < editor settings that differ
from their defaults.  The provider (model, apiBase, replay) is taken as a unit: when the editor
names a model or a replay file, the pyproject's provider is ignored.

Trust: the client may say whether the editor trusts the workspace (``initializationOptions``
``{"workspaceTrusted": true|false}``, outside the settings, which a workspace's own settings file
could set); without it the user's trust store decides (``coherence trust``).
"""

from __future__ import annotations

import logging
import math
import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from coherence.engine.errors import ConfigurationError
from coherence.engine.resolve import ConfigResolver, Resolved

log = logging.getLogger(__name__)

SECTION = "coherence"
RUN_ON = ("save", "change", "manual")
MARKERS = ("marked", "docstring")
# Keys the VS Code client sends that only the client uses.
CLIENT_ONLY = {"interpreter", "serverInstallSource", "trace"}


@dataclass(frozen=True)
class Settings:
    model: str = ""
    models: str = ""  # a panel: "openai/a share=2 api_base=URL, anthropic/b" (config.parse_models)
    apiBase: str = ""
    replay: str = ""
    temperature: float = 0.6
    samples: int = 10
    inputs: int = 1000
    callTimeout: float = 1.0
    runOn: str = "save"
    debounceMs: int = 800
    markers: str = "marked"
    executionInterpreter: str = ""
    maxConcurrentChecks: int = 2
    cacheDir: str = ""
    # Which keys the editor set to something other than the default (they win over pyproject).
    explicit: frozenset[str] = field(default=frozenset(), compare=False)


DEFAULTS = Settings()

# name -> (kind, check, description of a valid value)
_SPEC: dict[str, tuple[str, Any, str]] = {
    "model": ("str", None, "a litellm model name such as openai/gpt-4o-mini"),
    "models": ("models", None, "a list of litellm model names, each optionally followed by share=N api_base=URL"),
    "apiBase": ("str", None, "a URL"),
    "replay": ("str", None, "the path of a recorded-samples JSONL file"),
    "temperature": ("float", lambda v: 0 <= v <= 2, "a number between 0 and 2"),
    "samples": ("int", lambda v: 2 <= v <= 1000, "an integer of at least 2 (your function plus one alternative)"),
    "inputs": ("int", lambda v: 1 <= v <= 1_000_000, "a positive integer"),
    "callTimeout": ("float", lambda v: 0 < v <= 600, "a number of seconds above 0"),
    "runOn": ("enum", RUN_ON, "one of " + ", ".join(RUN_ON)),
    "debounceMs": ("int", lambda v: 0 <= v <= 600_000, "a number of milliseconds of at least 0"),
    "markers": ("enum", MARKERS, "one of " + ", ".join(MARKERS)),
    "executionInterpreter": ("str", None, "the path of a Python interpreter"),
    "maxConcurrentChecks": ("int", lambda v: 1 <= v <= 64, "an integer of at least 1"),
    "cacheDir": ("str", None, "a directory"),
}


def extract_section(options: Any) -> dict:
    """The "coherence" settings inside ``initializationOptions`` or a didChangeConfiguration
    payload: ``{"settings": {...}}``, ``{"settings": {"coherence": {...}}}``, ``{"coherence":
    {...}}`` or the flat dict itself."""
    if not isinstance(options, dict):
        return {}
    for key in ("settings", SECTION):
        inner = options.get(key)
        if isinstance(inner, dict):
            return extract_section(inner) if key == "settings" else inner
    return options


def client_trust(options: Any) -> bool | None:
    """The editor's workspace trust, when the client sends it: ``initializationOptions``
    ``{"workspaceTrusted": bool}`` at the top level only (never from the settings section, which a
    repository's own settings file can fill)."""
    value = options.get("workspaceTrusted") if isinstance(options, dict) else None
    return value if isinstance(value, bool) else None


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from a raw dict, with every bad value replaced by its default.

    Returns the settings and one friendly sentence per problem."""
    problems: list[str] = []
    if raw is None:
        return DEFAULTS, problems
    if not isinstance(raw, dict):
        return DEFAULTS, [f"the '{SECTION}' settings should be an object, got {type(raw).__name__}; using the defaults"]
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in CLIENT_ONLY:
            continue
        if key not in _SPEC:
            log.info("ignoring unknown setting %s.%s", SECTION, key)
            continue
        kind, check, wanted = _SPEC[key]
        default = getattr(DEFAULTS, key)
        if value is None:
            continue
        ok, converted = _convert(kind, check, value)
        if not ok:
            problems.append(f"{SECTION}.{key} should be {wanted}, got {value!r}; using {default!r}")
            continue
        values[key] = converted
    explicit = frozenset(k for k, v in values.items() if v != getattr(DEFAULTS, k))
    return replace(DEFAULTS, **values, explicit=explicit), problems


def _convert(kind: str, check: Any, value: Any) -> tuple[bool, Any]:
    if value is None:
        return False, None
    if kind == "str":
        return (True, value.strip()) if isinstance(value, str) else (False, None)
    if kind == "models":  # a JSON array of strings, or one comma-separated string
        ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) and "," not in v for v in value))
        return (True, value.strip() if isinstance(value, str) else ", ".join(v.strip() for v in value)) if ok else (False, None)
    if kind == "enum":
        return (True, value) if isinstance(value, str) and value in check else (False, None)
    if isinstance(value, bool):
        return False, None
    if isinstance(value, str):  # "10" from a hand-written config: accept it
        try:
            value = float(value.strip())
        except ValueError:
            return False, None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return False, None
    if kind == "int":
        if float(value) != int(value):
            return False, None
        value = int(value)
    else:
        value = float(value)
    return (True, value) if check(value) else (False, None)


def resolve_path(value: str, root: str | None) -> str:
    """``~`` and environment variables expanded; relative paths against the workspace root."""
    expanded = os.path.expandvars(os.path.expanduser(value))
    p = Path(expanded)
    if not p.is_absolute() and root:
        p = Path(root) / p
    return str(p)


def build_config(settings: Settings, document_path: str | None, workspace_root: str | None, trusted: bool | None = None) -> Resolved:
    """The engine configuration for one document, with the notice naming any repository setting
    that was refused (``trusted``: the editor's workspace trust when the client says, else None:
    the user's trust store).  Raises ``ConfigurationError`` for a broken pyproject.toml or user
    config (the caller shows it once)."""
    start = Path(document_path).parent if document_path else (Path(workspace_root) if workspace_root else None)
    overrides: dict[str, Any] = {}
    if settings.model:
        overrides["model"] = settings.model
    if settings.models:
        from coherence.engine.config import parse_models

        overrides["models"] = parse_models(settings.models, f"{SECTION}.models")
    if settings.apiBase:
        overrides["api_base"] = settings.apiBase
    if settings.replay:
        overrides["replay"] = resolve_path(settings.replay, workspace_root)
    if settings.executionInterpreter:
        overrides["python"] = resolve_path(settings.executionInterpreter, workspace_root) if os.sep in settings.executionInterpreter else settings.executionInterpreter
    if settings.cacheDir:
        overrides["cache_dir"] = resolve_path(settings.cacheDir, workspace_root)
    explicit_map = {
        "temperature": "temperature",
        "samples": "samples",
        "inputs": "inputs",
        "callTimeout": "call_timeout",
        "markers": "mode",
    }
    for key, name in explicit_map.items():
        if key in settings.explicit:
            overrides[name] = getattr(settings, key)
    resolver = ConfigResolver(overrides, trust=trusted)
    if start is not None and start.exists():
        resolved = resolver.for_path(start)
    else:
        resolved = resolver.without_project()
    config = resolved.config
    if config.python is None:
        config = replace(config, python=sys.executable)
    if config.workspace is None:
        ws = workspace_root or (str(start) if start is not None else None)
        if ws:
            config = replace(config, workspace=str(Path(ws).resolve()))
    if config.model is None and not config.models and config.replay is None:
        raise ConfigurationError(
            "coherence: no model configured. Set coherence.model (e.g. openai/gpt-4o-mini) or coherence.replay "
            "in the editor settings, or [tool.coherence] model = ... in pyproject.toml."
            + (f" ({resolved.notice.removeprefix('coherence: ')})" if resolved.notice else "")
        )
    if config.replay and not Path(config.replay).is_file():
        raise ConfigurationError(f"coherence: the replay file {config.replay} does not exist (setting coherence.replay).")
    return replace(resolved, config=config.validated())


def describe(settings: Settings) -> dict:
    return {f.name: getattr(settings, f.name) for f in fields(Settings) if f.name != "explicit"}
