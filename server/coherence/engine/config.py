"""Check settings (``CheckConfig``), and reading them from one TOML file.

A file is ``[tool.coherence]`` of a pyproject.toml or the top level of the user's own
config.toml.  Which files apply to a source file, and how they stack with the user's own settings,
is ``engine/resolve.py``'s job; which of a repository's settings are believed is ``engine/trust.py``'s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from coherence.engine.bounds import BOUNDS, VALIDATED
from coherence.engine.errors import ConfigurationError

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, from PyPI (a dependency on these versions): never skip a file
    import tomli as tomllib


@dataclass(frozen=True)
class PanelMember:
    """One model of a panel (``models``): its share of the alternatives (a weight: shares 2 and 1
    split 9 alternatives 6 and 3) and its own ``api_base``."""

    model: str
    share: float = 1.0
    api_base: str | None = None

    def __str__(self) -> str:
        extra = (f" share={self.share:g}" if self.share != 1.0 else "") + (
            f" api_base={self.api_base}" if self.api_base else ""
        )
        return self.model + extra


def parse_member(value: Any, what: str = "models") -> PanelMember:
    """A panel member from ``"openai/gpt-4o"``, ``"openai/x share=2 api_base=http://..."`` (the
    command line, the editor, COHERENCE_MODELS) or a TOML table ``{model = "...", share = 2,
    api_base = "..."}``."""
    if isinstance(value, str):
        words = value.split()
        if not words:
            raise ConfigurationError(f"{what}: an empty model name")
        table: dict[str, Any] = {"model": words[0]}
        for word in words[1:]:
            key, sep, val = word.partition("=")
            if not sep:
                raise ConfigurationError(f"{what}: {word!r} in {value!r} should be share=N or api_base=URL")
            table[key.replace("-", "_")] = val
        value = table
    if not isinstance(value, dict):
        raise ConfigurationError(
            f"{what} should list model names or tables {{model = ..., share = ..., api_base = ...}}, got {value!r}"
        )
    unknown = set(value) - {"model", "share", "api_base", "api-base"}
    model = value.get("model")
    if unknown or not isinstance(model, str) or not model.strip():
        raise ConfigurationError(
            f"{what}: each entry needs a model name and may have share and api_base only, got {value!r}"
        )
    api_base = value.get("api_base", value.get("api-base"))
    if api_base is not None and (not isinstance(api_base, str) or not api_base.strip()):
        raise ConfigurationError(f"{what}: api_base of {model} should be a URL, got {api_base!r}")
    try:
        share = float(value.get("share", 1.0))
    except (TypeError, ValueError):
        share = -1.0
    if not (share > 0 and share < float("inf")) or isinstance(value.get("share"), bool):
        raise ConfigurationError(f"{what}: share of {model} should be a number above 0, got {value.get('share')!r}")
    return PanelMember(model.strip(), share, api_base.strip() if api_base else None)


def parse_models(values: Any, what: str = "models") -> tuple[PanelMember, ...]:
    """``models`` from a list (TOML, the editor) or one comma-separated string (COHERENCE_MODELS)."""
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    if not isinstance(values, (list, tuple)):
        raise ConfigurationError(f"{what} should be a list of model names, got {values!r}")
    members = tuple(v if isinstance(v, PanelMember) else parse_member(v, what) for v in values)
    names = [m.model + "@" + (m.api_base or "") for m in members]
    if len(set(names)) < len(names):
        raise ConfigurationError(f"{what} names a model twice: {', '.join(str(m) for m in members)}")
    return members


DEFAULT_MAX_COST_USD = 5.0  # dollars one run (a CLI check, an editor window) may spend on samples


@dataclass(frozen=True)
class CheckConfig:
    model: str | None = None  # litellm model name, e.g. "openai/gpt-4o-mini"
    # A panel: the alternatives spread over several models (wins over ``model`` when both are set)
    models: tuple[PanelMember, ...] = ()
    api_base: str | None = None
    replay: str | None = None  # recorded-samples JSONL(.gz) instead of an LLM
    samples: int = 10  # m: programs compared, the user's function included
    inputs: int = 1000  # n: generated inputs every program runs on
    temperature: float = 0.6
    python: str | None = None  # interpreter that runs the code (default: this one)
    call_timeout: float = 0.5  # seconds per call; LLM-sized functions answer in microseconds
    program_budget: float = 5.0  # seconds for one program over all inputs; inputs past it are dropped
    # Seconds for all the programs of a check together (shared out over the parallel slots, at
    # least 1 s each): a task whose programs are all slow costs about this long, with fewer inputs,
    # instead of program_budget times m over the slots.
    run_budget: float | None = 10.0
    # CPU seconds for all the programs of a check together on the inputs past each one's first
    # 100 (an equal share each, at least 0.05 s): see the tail budget in docs/configuration.md.
    # None or 0: no tail budget.  Shared by the programs rather than the slots, so what it keeps
    # does not depend on how many programs run at once.
    tail_budget: float | None = 0.5
    # Seconds for input generation.  A safety net only: generation normally stops at n long
    # before it, and results must not depend on how busy the machine is.
    input_budget: float = 10.0
    llm_timeout: float = 120.0  # seconds the LLM may take for one function's samples, retries included
    max_concurrency: int = 4  # concurrent LLM requests
    delta: float = 0.05  # 1 - confidence of the PAC bound and the intervals (0.05: 95%)
    seed: int = 0
    sandbox: str = "auto"  # auto | bwrap | guard | strict (refuse to run without bwrap+seccomp or Landlock+seccomp)
    cache_dir: str | None = None
    mode: str = "marked"  # marked | docstring
    rerun_inputs: int = 50  # inputs the user's function runs twice on (nondeterminism check)
    shrink_rounds: int = 4  # each round tries one- and two-step shrinks at once
    # Alternatives a "coherent" verdict needs (or all that were asked for, when fewer): agreement
    # with one alternative, after the others failed to parse, is no evidence.
    min_alternatives: int = 3
    # Dollars a run may spend on samples (litellm's price of each reply); a function whose samples
    # would go past it is not sampled (``engine/sampling/cost.py``).  None: no limit.  The default
    # is a backstop against a run that buys far more than anyone meant (a repository with
    # thousands of marked functions); the user raises it, a repository cannot (``CEILINGS``).
    max_cost_usd: float | None = DEFAULT_MAX_COST_USD
    workspace: str | None = None  # the project's folder, which programs may read (default: the pyproject.toml's)
    # path/glob.py::name_glob patterns (engine/selection.py): checked unmarked / never checked
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # (exclude wins over include, markers and mode)

    def validated(self) -> CheckConfig:
        for name in VALIDATED:
            problem = BOUNDS[name].refusal(name, getattr(self, name))
            if problem:
                raise ConfigurationError(problem)
        if self.mode not in ("marked", "docstring"):
            raise ConfigurationError(f"mode must be 'marked' or 'docstring', got {self.mode!r}")
        if self.sandbox not in ("auto", "bwrap", "guard", "strict"):
            raise ConfigurationError(f"sandbox must be auto, bwrap, guard or strict, got {self.sandbox!r}")
        return self

    def merged(self, **overrides: Any) -> CheckConfig:
        """A copy with every override that is not None applied."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


_FIELDS = {f.name: f for f in fields(CheckConfig)}

# Settings that decide where secrets go or what runs outside the sandbox.  They come from the
# user (command line, COHERENCE_* variables, the user's own config file, the editor), never from a
# repository's own [tool.coherence] unless the user trusts that repository (``coherence trust``).
# Every new setting of that kind goes here, with what it decides.
USER_ONLY = {
    "model": "which provider gets your API key",
    "models": "which providers get your API keys, and where they are sent",
    "api_base": "where your API key is sent",
    "python": "a program that runs as you, outside the sandbox",
    "sandbox": "how generated code is isolated",
    "cache_dir": "where coherence writes, and whose cached samples it runs",
    "workspace": "what the sandbox can read",
}
# Settings that spend the user's API key or time.  A repository's own [tool.coherence] may lower
# them, but raises past the user's settings (or the defaults) only when the user trusts it: an
# untrusted ``samples = 1000`` with ``mode = "docstring"`` would buy hundreds of requests, and huge
# budgets would let one hostile program hold a check for ever.  ``input_budget`` and
# ``llm_timeout`` are not here: generation stops at ``inputs``, and the model is the user's choice.
CEILINGS = {
    "samples": "completions bought per function",
    "mode": "which functions are checked (docstring: every documented one)",
    "include": "unmarked functions that are checked",
    "inputs": "inputs every program runs on",
    "rerun_inputs": "inputs your function runs twice on",
    "shrink_rounds": "rounds spent shrinking a counterexample",
    "call_timeout": "seconds one call may take",
    "program_budget": "seconds one program may take",
    "run_budget": "seconds the programs of a check may take",
    "tail_budget": "CPU seconds the programs of a check may take past their first inputs",
    "max_concurrency": "requests to the model at once",
    "max_cost_usd": "dollars a run may spend",
}
_MODE_ORDER = ("marked", "docstring")


def raises(name: str, value: Any, limit: Any) -> bool:
    """Whether a repository's ``value`` for a ``CEILINGS`` setting asks for more than ``limit``
    (the value below it: the user's, or the default).  None as the limit is no limit."""
    if limit is None or value is None:
        return False
    if name == "mode":
        rank = {m: i for i, m in enumerate(_MODE_ORDER)}
        return rank.get(value, len(rank)) > rank.get(limit, 0)
    if name == "include":
        return bool(set(value) - set(limit))
    try:
        return bool(value > limit)
    except TypeError:
        return True  # not comparable: judged by CheckConfig.validated once trusted


# The LLM settings that are taken as one: a layer naming a model or a replay file replaces the
# lower layers' provider, so a key never goes to an api_base chosen for another model.
PROVIDER = ("model", "models", "api_base", "replay")
_PATHS = ("replay", "cache_dir", "workspace")


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed file; ``ConfigurationError`` naming the file (and the line) when it is not TOML."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)" ...
        where = ""
        if "line" not in str(exc):  # ... or "(at end of document)": say which line that is
            where = f" (line {len(path.read_bytes().splitlines()) or 1})"
        raise ConfigurationError(f"{path} is not valid TOML: {exc}{where}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc


def coherence_table(data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """``[tool.coherence]`` of a parsed pyproject.toml, None when it has none."""
    tool = data.get("tool")
    table = tool.get("coherence") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigurationError(
            f"{path}: tool.coherence should be a table ([tool.coherence]), got {type(table).__name__}"
        )
    return table


def settings_from_table(table: dict[str, Any], path: Path, where: str = "[tool.coherence] ") -> dict[str, Any]:
    """Validated settings (snake_case names) from one file's table.  Keys may be kebab-case;
    relative paths are resolved against the file's folder, ``~`` is expanded."""
    values = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in _FIELDS:
            raise ConfigurationError(f"{path}: unknown setting {where}{key!r}; known: {', '.join(sorted(_FIELDS))}")
        values[name] = _checked(name, value, f"{path}: {where}{key}")
        if name in _PATHS:
            values[name] = str((path.parent / os.path.expanduser(value)).resolve())
        elif name == "python" and ("/" in value or os.sep in value):  # a bare name is looked up on PATH
            # not resolved: a virtualenv's python is a symlink, and following it leaves the venv
            values[name] = os.path.normpath(path.parent / os.path.expanduser(value))
    return values


# annotation (as text) -> what TOML value it takes, and how to say so
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "float": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "list": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
    "tuple": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"),
}


def _checked(name: str, value: Any, what: str) -> Any:
    if name == "models":  # strings or tables, not the one kind an annotation names
        return parse_models(value, what)
    kind = str(_FIELDS[name].type).split("|")[0].split("[")[0].strip()  # annotations are text here
    check, wanted = _KINDS.get(kind, (lambda v: True, ""))  # a new kind: CheckConfig.validated judges
    if not check(value):
        raise ConfigurationError(f"{what} should be {wanted}, got {value!r}")
    if kind == "tuple":
        return tuple(value)
    return float(value) if kind == "float" else value


def find_pyproject(start: str | Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` (any: it marks the project's root)."""
    p = Path(start).resolve()
    if p.is_file():
        p = p.parent
    for d in (p, *p.parents):
        cand = d / "pyproject.toml"
        if cand.is_file():
            return cand
    return None


def load_project_config(start: str | Path, base: CheckConfig | None = None) -> CheckConfig:
    """The configuration for files at ``start`` with no command-line flags: the user's own
    settings and the nearest ``[tool.coherence]`` (see ``engine/resolve.py``), over ``base``."""
    from coherence.engine.resolve import ConfigResolver

    return ConfigResolver(base=base).for_path(start).config
