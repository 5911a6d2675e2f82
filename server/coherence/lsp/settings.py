"""The "coherence" settings of the editor, and the ``CheckConfig`` they make for one document.

Settings are camelCase (like jedi-language-server's).  They come from ``initializationOptions``
(``{"settings": {...}}``, ``{"coherence": {...}}`` or flat) and from ``workspace/configuration``
(section ``coherence``), and are re-read on ``workspace/didChangeConfiguration``.  A bad value
never stops the server: it is replaced by its default and reported once in a friendly sentence.

Layers, lowest first (``engine/resolve.py``): engine defaults < the user's config.toml <
COHERENCE_* < ``[tool.coherence]`` of the nearest pyproject.toml (its model, api_base, python,
sandbox, cache_dir and workspace only when the workspace is trusted) < the editor settings the user
set.  A key the client sends with a valid value is set, even to the default (``samples: 10`` beats
``samples = 20`` in pyproject); a key left out or sent as ``null`` is not (the VS Code client sends
only what ``inspect`` says the user set).  ``exclude`` adds to the pyproject's patterns.  The provider (model, apiBase, replay) is taken as a unit: when the editor
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
from typing import Any, get_origin, get_type_hints

from coherence.engine.bounds import BOUNDS
from coherence.engine.config import CheckConfig
from coherence.engine.errors import ConfigurationError
from coherence.engine.resolve import ConfigResolver, Resolved
from coherence.engine.selection import check_patterns

log = logging.getLogger(__name__)

SECTION = "coherence"
RUN_ON = ("save", "open", "change", "manual")
MARKERS = ("marked", "docstring")
_ENGINE = CheckConfig()


def _setting(
    default: Any,
    wanted: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    choices: tuple[str, ...] = (),
    engine: str | None = None,
    client: bool = False,
    key: str | None = None,
    scope: str = "resource",
    parse: Any = None,
) -> Any:
    """One setting: its default, what a valid value is (``wanted``, for the message when it is not;
    ``minimum``/``maximum``/``above`` (exclusive minimum) or ``choices``, which validation and the
    client's package.json share), the ``CheckConfig`` field it overrides (``engine``), whether only
    the client uses it (``client``), its key when not the field's name (``key``: ``trace.server``),
    its VS Code scope, and for a list, how its value is read (``parse``: raises ValueError when
    invalid; exclude patterns by default).  A setting that overrides a numeric engine setting takes
    that setting's bounds (``engine.config.BOUNDS``)."""
    bounds = BOUNDS.get(engine) if engine else None
    if bounds is not None:
        minimum, above = bounds.minimum, bounds.above
        maximum = bounds.maximum if bounds.maximum is not None else bounds.editor_maximum
    meta = {
        "wanted": wanted,
        "minimum": minimum,
        "maximum": maximum,
        "above": above,
        "choices": choices,
        "engine": engine,
        "client": client,
        "key": key,
        "scope": scope,
        "parse": parse,
    }
    if isinstance(default, (list, tuple)):
        return field(default=tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def _model_list(value: Any) -> tuple[str, ...]:
    """A panel's members: a list of strings, or one comma-separated string."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError("not a list of model names")
    return tuple(v.strip() for v in value if v.strip())


@dataclass(frozen=True)
class Settings:
    """Every "coherence" setting, spelled once: validation, the camelCase keys, the defaults (the
    engine's own where a setting overrides one) and the client's package.json (checked by
    tests/lsp/test_settings_schema.py) all come from here."""

    # the VS Code client does not start the server when false; the server honours it too (every
    # editor: nothing is checked or shown), so a Neovim or Emacs user can turn it off per folder
    enable: bool = _setting(True, "true or false")
    interpreter: tuple[str, ...] = _setting(
        (), "a list of strings: the interpreter and its leading arguments", client=True
    )
    importStrategy: str = _setting(
        "useBundled", "one of useBundled, fromEnvironment", choices=("useBundled", "fromEnvironment"), client=True
    )
    model: str = _setting("", "a litellm model name such as openai/gpt-4o-mini")
    # a panel: "openai/a share=2 api_base=URL" per entry (config.parse_models)
    models: tuple[str, ...] = _setting(
        (), "a list of litellm model names, each optionally followed by share=N api_base=URL", parse=_model_list
    )
    apiBase: str = _setting("", "a URL")
    replay: str = _setting("", "the path of a recorded-samples JSONL file")
    temperature: float = _setting(
        _ENGINE.temperature,
        f"a number between {BOUNDS['temperature'].minimum:g} and {BOUNDS['temperature'].maximum:g}",
        engine="temperature",
    )
    samples: int = _setting(
        _ENGINE.samples,
        f"an integer of at least {BOUNDS['samples'].minimum:g} ({BOUNDS['samples'].why})",
        engine="samples",
    )
    inputs: int = _setting(_ENGINE.inputs, "a positive integer", engine="inputs")
    callTimeout: float = _setting(
        _ENGINE.call_timeout, f"a number of seconds above {BOUNDS['call_timeout'].above:g}", engine="call_timeout"
    )
    runOn: str = _setting("save", "one of " + ", ".join(RUN_ON), choices=RUN_ON)
    debounceMs: int = _setting(800, "a number of milliseconds of at least 0", minimum=0, maximum=600_000)
    markers: str = _setting(_ENGINE.mode, "one of " + ", ".join(MARKERS), choices=MARKERS, engine="mode")
    exclude: tuple[str, ...] = _setting((), "a list of 'path/glob.py::name_glob' patterns")
    executionInterpreter: str = _setting("", "the path of a Python interpreter")
    maxConcurrentChecks: int = _setting(2, "an integer of at least 1", minimum=1, maximum=64, scope="window")
    cacheDir: str = _setting("", "a directory")
    # what this editor window may spend on samples (litellm's prices), 0 for no cap; the server
    # keeps the window's running total (``lsp/budget.py``)
    maxCostUsd: float = _setting(
        0.0, "a number of US dollars of at least 0 (0: no cap)", minimum=0, maximum=1_000_000, scope="window"
    )
    traceServer: str = _setting(
        "off",
        "one of off, messages, verbose",
        choices=("off", "messages", "verbose"),
        client=True,
        key="trace.server",
        scope="window",
    )
    # The keys the editor set (to any valid value, the default included): they win over pyproject.
    explicit: frozenset[str] = field(default=frozenset(), compare=False)


DEFAULTS = Settings()
# name -> dataclass field, for every setting (``explicit`` is bookkeeping, not a setting)
SPEC = {f.name: f for f in fields(Settings) if f.name != "explicit"}
KINDS = {name: hint for name, hint in get_type_hints(Settings).items() if name in SPEC}


def setting_key(name: str) -> str:
    """The key under "coherence" (``trace.server`` for ``traceServer``)."""
    return SPEC[name].metadata["key"] or name


# Top-level keys of the settings object the VS Code client sends that only the client uses.
CLIENT_ONLY = {setting_key(n).split(".")[0] for n, f in SPEC.items() if f.metadata["client"]}


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


def client_flag(options: Any, name: str) -> bool:
    """A capability of the client it states in ``initializationOptions`` at the top level, such as
    ``{"raiseCostCap": true}``: it answers ``coherence/raiseCostCap`` by writing the setting."""
    return isinstance(options, dict) and options.get(name) is True


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from a raw dict, with every bad value replaced by its default.  A key given a
    valid value is explicit, even when the value equals the default; ``null`` means unset.

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
        if key not in SPEC:
            log.info("ignoring unknown setting %s.%s", SECTION, key)
            continue
        if value is None:
            continue
        ok, converted = _convert(KINDS[key], SPEC[key].metadata, value)
        if not ok:
            problems.append(
                f"{SECTION}.{key} should be {SPEC[key].metadata['wanted']}, got {value!r}; using {getattr(DEFAULTS, key)!r}"
            )
            continue
        values[key] = converted
    return replace(DEFAULTS, **values, explicit=frozenset(values)), problems


def _convert(kind: Any, meta: Any, value: Any) -> tuple[bool, Any]:
    if kind is str:
        if not isinstance(value, str) or (meta["choices"] and value not in meta["choices"]):
            return False, None
        return True, value if meta["choices"] else value.strip()
    if kind is bool:
        return (True, value) if isinstance(value, bool) else (False, None)
    if get_origin(kind) is tuple:
        try:
            return True, (meta["parse"] or (lambda v: check_patterns(v, "exclude")))(value)
        except ValueError:
            return False, None
    if isinstance(value, bool):
        return False, None
    if isinstance(value, str):  # "10" from a hand-written config: accept it
        try:
            value = float(value.strip())
        except ValueError:
            return False, None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return False, None
    if kind is int:
        if float(value) != int(value):
            return False, None
        value = int(value)
    else:
        value = float(value)
    return (True, value) if in_range(value, meta) else (False, None)


def in_range(value: float, meta: Any) -> bool:
    low, high, above = meta["minimum"], meta["maximum"], meta["above"]
    return (low is None or value >= low) and (high is None or value <= high) and (above is None or value > above)


class NoModel(ConfigurationError):
    """No model, panel or replay file anywhere: the first run (a client may offer its own models)."""


def resolve_path(value: str, root: str | None) -> str:
    """``~`` and environment variables expanded; relative paths against the workspace root."""
    expanded = os.path.expandvars(os.path.expanduser(value))
    p = Path(expanded)
    if not p.is_absolute() and root:
        p = Path(root) / p
    return str(p)


def build_config(
    settings: Settings, document_path: str | None, workspace_root: str | None, trusted: bool | None = None
) -> Resolved:
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
        overrides["python"] = (
            resolve_path(settings.executionInterpreter, workspace_root)
            if os.sep in settings.executionInterpreter
            else settings.executionInterpreter
        )
    if settings.cacheDir:
        overrides["cache_dir"] = resolve_path(settings.cacheDir, workspace_root)
    for name in settings.explicit:
        engine = SPEC[name].metadata["engine"]
        if engine:
            overrides[engine] = getattr(settings, name)
    resolver = ConfigResolver(overrides, trust=trusted)
    if start is not None and start.exists():
        resolved = resolver.for_path(start)
    else:
        resolved = resolver.without_project()
    config = resolved.config
    if config.python is None:
        config = replace(config, python=sys.executable)
    if settings.exclude:  # the editor's patterns add to the pyproject's: both are left out
        config = replace(config, exclude=tuple(dict.fromkeys(config.exclude + settings.exclude)))
    if config.workspace is None:
        ws = workspace_root or (str(start) if start is not None else None)
        if ws:
            config = replace(config, workspace=str(Path(ws).resolve()))
    if config.model is None and not config.models and config.replay is None:
        raise NoModel(
            "coherence: no model configured. Set coherence.model (e.g. openai/gpt-4o-mini, or editor for the "
            "editor's own chat models in VS Code) or coherence.replay in the editor settings, or "
            "[tool.coherence] model = ... in pyproject.toml."
            + (f" ({resolved.notice.removeprefix('coherence: ')})" if resolved.notice else "")
        )
    switched = source_switch(settings, resolved)
    if switched:
        resolved = replace(resolved, notice=f"{resolved.notice} {switched}" if resolved.notice else switched)
    if config.replay and not Path(config.replay).is_file():
        raise ConfigurationError(
            f"coherence: the replay file {config.replay} does not exist (setting coherence.replay)."
        )
    return replace(resolved, config=config.validated())


def source_switch(settings: Settings, resolved: Resolved) -> str | None:
    """The sentence saying that an editor setting replaced the project's source of samples (its
    model by a replay file, or its replay file by a model), or None when it did not."""
    project = resolved.project.values if resolved.project else {}
    where = resolved.project.path.name if resolved.project else "pyproject.toml"
    if (settings.model or settings.models) and project.get("replay"):
        model = settings.model or ", ".join(settings.models)
        return (
            f"coherence: your setting coherence.model{'s' if settings.models else ''} ({model}) replaces the "
            f"project's recorded samples ({where}: replay): checks ask the model, which may cost money. "
            "Clear the setting to use the project's replay."
        )
    if settings.replay and (project.get("model") or project.get("models")):
        return (
            f"coherence: your setting coherence.replay replaces the project's model ({where}): "
            "samples are read from the replay file."
        )
    return None


def only_the_cap_differs(old: Settings, new: Settings) -> bool:
    """Whether ``new`` differs from ``old`` in ``maxCostUsd`` alone: no configuration, checker or
    parse depends on the cap, so raising it (from the editor's question) keeps them, and the checks
    in flight go on."""

    def rest(s: Settings) -> tuple[Settings, frozenset[str]]:
        return replace(s, maxCostUsd=0.0), s.explicit - {"maxCostUsd"}

    return rest(old) == rest(new)


def describe(settings: Settings) -> dict:
    return {name: getattr(settings, name) for name in SPEC}
