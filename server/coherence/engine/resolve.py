"""The configuration for each source file, from every place a setting can come from.

Layers, lowest first:

1. the engine's defaults;
2. the user's own config file (``config.toml`` in the user's config directory, top-level keys);
3. ``COHERENCE_MODEL``, ``COHERENCE_API_BASE``, ... (one per setting in ``config.USER_ONLY``);
4. ``[tool.coherence]`` of the pyproject.toml nearest to the file (as ruff does: a pyproject.toml
   without that table is passed over), with its ``USER_ONLY`` settings only when the repository is
   trusted (``engine/trust.py``), and its replay file only inside the repository unless trusted;
5. the front end's overrides (command-line flags, editor settings).

A layer that names a model or a replay file replaces the provider of the layers below it
(``config.PROVIDER``), so a key is never sent to an api_base chosen for another model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from coherence.engine.config import (
    CEILINGS,
    PROVIDER,
    USER_ONLY,
    CheckConfig,
    coherence_table,
    parse_models,
    raises,
    read_toml,
    settings_from_table,
)
from coherence.engine.errors import ConfigurationError
from coherence.engine.trust import USER_CONFIG_NAME, TrustStore, table_digest, user_config_dir

ENV = {name: f"COHERENCE_{name.upper()}" for name in USER_ONLY}


@dataclass(frozen=True)
class ProjectConfig:
    path: Path  # the pyproject.toml
    table: dict[str, Any]  # its [tool.coherence] as written
    values: dict[str, Any]  # validated, paths resolved

    @property
    def digest(self) -> str:
        return table_digest(self.table)


@dataclass(frozen=True)
class Resolved:
    config: CheckConfig
    project: ProjectConfig | None
    trust: str = "none"  # trusted | untrusted | changed | none (nothing in it needed trust)
    refused: tuple[str, ...] = ()  # the repository's settings left out, as named to the user
    notice: str | None = None  # one line saying so, for stderr or the editor's output channel


def stack(layers: list[dict[str, Any]]) -> dict[str, Any]:
    """Later layers win; one that names a model or replay file drops the provider below it."""
    out: dict[str, Any] = {}
    for values in layers:
        values = {k: v for k, v in values.items() if v is not None}
        if "model" in values or "models" in values or "replay" in values:
            for key in PROVIDER:
                out.pop(key, None)
        out.update(values)
    return out


def _inside(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


class ConfigResolver:
    """Resolves configurations for the files of one run (CLI) or one settings generation (editor).

    ``trust``: True trusts every repository config (``--trust-workspace``, an editor's trusted
    workspace), False none (an editor's restricted mode), None asks the user's trust store."""

    def __init__(
        self,
        overrides: Mapping[str, Any] | None = None,
        *,
        trust: bool | None = None,
        base: CheckConfig | None = None,
        store: TrustStore | None = None,
        user_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
    ):
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.trust = trust
        self.base = base or CheckConfig()
        user_dir = user_dir if user_dir is not None else user_config_dir()
        self.store = store or TrustStore(user_dir / "trusted.json")
        # read now, so a broken user file stops the run before any work
        self.user_layers = [self._user_file(user_dir / USER_CONFIG_NAME), self._env(os.environ if env is None else env)]
        self._pyprojects: dict[Path, tuple[ProjectConfig | None, bool]] = {}
        self._located: dict[Path, tuple[ProjectConfig | None, Path | None]] = {}
        self._resolved: dict[tuple[Any, ...], Resolved] = {}

    @staticmethod
    def _user_file(path: Path) -> dict[str, Any]:
        if not path.is_file():
            return {}
        return settings_from_table(read_toml(path), path, where="")

    @staticmethod
    def _env(env: Mapping[str, str]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, var in ENV.items():
            value: Any = (env.get(var) or "").strip()
            if not value:
                continue
            if name == "models":
                value = parse_models(value, var)
            elif name in ("cache_dir", "workspace"):
                value = str(Path(os.path.expanduser(value)).resolve())
            elif name == "python" and os.sep in value:  # not resolved: that would leave a venv
                value = os.path.abspath(os.path.expanduser(value))
            values[name] = value
        return values

    def _pyproject(self, path: Path) -> tuple[ProjectConfig | None, bool]:
        """(its [tool.coherence], None when it has none; whether the file exists), read once."""
        known = self._pyprojects.get(path)
        if known is None:
            project = None
            exists = path.is_file()
            table = coherence_table(read_toml(path), path) if exists else None
            if table is not None:
                project = ProjectConfig(path, table, settings_from_table(table, path))
            known = self._pyprojects[path] = (project, exists)
        return known

    def locate(self, start: str | Path) -> tuple[ProjectConfig | None, Path | None]:
        """The nearest ``[tool.coherence]`` at or above ``start``, and the nearest pyproject.toml's
        folder (the project's root, the default workspace)."""
        p = Path(start).resolve()
        if not p.is_dir():
            p = p.parent
        known = self._located.get(p)
        if known is None:
            root = None
            for d in (p, *p.parents):
                project, exists = self._pyproject(d / "pyproject.toml")
                root = root or (d if exists else None)
                if project is not None:
                    break
            known = self._located[p] = (project, root)
        return known

    def for_path(self, path: str | Path) -> Resolved:
        project, root = self.locate(path)
        key = (project.path if project else None, root)
        known = self._resolved.get(key)
        if known is None:
            known = self._resolved[key] = self._resolve(project, root)
        return known

    def without_project(self) -> Resolved:
        """The user's settings and the overrides alone (a document that is not on disk)."""
        return self._resolve(None, None)

    def _resolve(self, project: ProjectConfig | None, root: Path | None) -> Resolved:
        values = dict(project.values) if project else {}
        held = {k: values[k] for k in USER_ONLY if k in values}
        if project and "replay" in values and not _inside(values["replay"], project.path.parent):
            held["replay"] = values["replay"]
        limits = replace(self.base, **stack(self.user_layers))
        ceilings = {k: getattr(limits, k) for k in CEILINGS if k in values and raises(k, values[k], getattr(limits, k))}
        held.update({k: values[k] for k in ceilings})
        trust, problem = "none", None
        if held and project is not None:  # only a project's values are ever held
            trust, problem = self._trust(project)
        if trust == "trusted":
            held = {}
        allowed = {k: v for k, v in values.items() if k not in held}
        final = stack([*self.user_layers, allowed, self.overrides])
        wanted = stack([*self.user_layers, values, self.overrides])
        refused = tuple(k for k in held if final.get(k) != wanted.get(k))
        config = replace(self.base, **final)
        if config.workspace is None and root is not None:
            config = replace(config, workspace=str(project.path.parent if project else root))
        notice = (
            self._notice(project, trust, refused, problem, {k: (values[k], v) for k, v in ceilings.items()})
            if refused and project is not None
            else None
        )
        return Resolved(config, project, trust, refused, notice)

    def _trust(self, project: ProjectConfig) -> tuple[str, str | None]:
        if self.trust is not None:
            return ("trusted" if self.trust else "untrusted"), None
        try:
            return self.store.status(project.path, project.digest), None
        except ConfigurationError as exc:
            return "untrusted", str(exc)

    @staticmethod
    def _notice(
        project: ProjectConfig,
        trust: str,
        refused: tuple[str, ...],
        problem: str | None,
        ceilings: dict[str, tuple[Any, Any]],
    ) -> str:
        folder = project.path.parent

        def name(key: str) -> str:
            if key in ceilings:
                asked, limit = ceilings[key]
                return f"{key} = {_shown(asked)} (above {_shown(limit)}, {CEILINGS[key]})"
            return f"replay (outside {folder})" if key == "replay" else key

        names = ", ".join(name(k) for k in refused)
        why = "it changed since you trusted it" if trust == "changed" else "this repository is not trusted"
        rules = []
        if any(k not in ceilings for k in refused):
            rules.append(
                "a repository's own config may not choose where your API key goes or what runs outside the sandbox"
            )
        if any(k in ceilings for k in refused):
            rules.append("it may lower what a check spends of your key and time, not raise it")
        tail = f"; {problem}" if problem else ""
        return (
            f"coherence: not using {names} from {project.path} ({why}; {'; '.join(rules)}). "
            f"Review it, then run: coherence trust {folder}{tail}"
        )


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(repr(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)
