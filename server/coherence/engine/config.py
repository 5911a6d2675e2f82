"""Check settings, and reading them from ``[tool.coherence]`` in the nearest pyproject.toml.

Front ends layer their own sources on top (CLI flags, editor settings); the engine only needs a
``CheckConfig``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

from coherence.engine.errors import ConfigurationError

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - 3.10
    tomllib = None  # type: ignore[assignment]


@dataclass(frozen=True)
class CheckConfig:
    model: str | None = None  # litellm model name, e.g. "openai/gpt-4o-mini"
    api_base: str | None = None
    replay: str | None = None  # recorded-samples JSONL(.gz) instead of an LLM
    samples: int = 10  # m: programs compared, the user's function included
    inputs: int = 1000  # n
    temperature: float = 0.6
    python: str | None = None  # interpreter that runs the code (default: this one)
    call_timeout: float = 0.5  # seconds per call; LLM-sized functions answer in microseconds
    program_budget: float = 5.0  # seconds for one program over all inputs; inputs past it are dropped
    # Seconds for all the programs of a check together (shared out over the parallel slots, at
    # least 1 s each): a task whose programs are all slow costs about this long, with fewer inputs,
    # instead of program_budget times m over the slots.
    run_budget: float | None = 10.0
    # Seconds for input generation.  A safety net only: generation normally stops at n long
    # before it, and results must not depend on how busy the machine is.
    input_budget: float = 10.0
    llm_timeout: float = 60.0
    max_concurrency: int = 4  # concurrent LLM requests
    delta: float = 0.05
    seed: int = 0
    sandbox: str = "auto"  # auto | bwrap | guard
    cache_dir: str | None = None
    mode: str = "marked"  # marked | docstring
    rerun_inputs: int = 50  # inputs the user's function runs twice on (nondeterminism check)
    shrink_rounds: int = 4  # each round tries one- and two-step shrinks at once
    workspace: str | None = None
    # path/glob.py::name_glob patterns (engine/selection.py): checked unmarked / never checked
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def validated(self) -> "CheckConfig":
        if self.samples < 2:
            raise ConfigurationError(f"samples must be at least 2 (your function plus one alternative), got {self.samples}")
        if self.inputs < 1:
            raise ConfigurationError(f"inputs must be at least 1, got {self.inputs}")
        if not 0 < self.delta < 1:
            raise ConfigurationError(f"delta must be between 0 and 1, got {self.delta}")
        if self.mode not in ("marked", "docstring"):
            raise ConfigurationError(f"mode must be 'marked' or 'docstring', got {self.mode!r}")
        if self.sandbox not in ("auto", "bwrap", "guard"):
            raise ConfigurationError(f"sandbox must be auto, bwrap or guard, got {self.sandbox!r}")
        return self

    def merged(self, **overrides) -> "CheckConfig":
        """A copy with every override that is not None applied."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


_FIELDS = {f.name: f for f in fields(CheckConfig)}


def find_pyproject(start: str | Path) -> Path | None:
    p = Path(start).resolve()
    if p.is_file():
        p = p.parent
    for d in (p, *p.parents):
        cand = d / "pyproject.toml"
        if cand.is_file():
            return cand
    return None


def load_project_config(start: str | Path, base: CheckConfig | None = None) -> CheckConfig:
    """``base`` updated from ``[tool.coherence]`` of the nearest pyproject.toml above ``start``.

    Keys may be snake_case or kebab-case; relative paths (replay, cache_dir) are resolved against
    the pyproject's folder.  Environment: COHERENCE_MODEL and COHERENCE_API_BASE fill gaps.
    """
    cfg = base or CheckConfig()
    pyproject = find_pyproject(start)
    if pyproject is not None and tomllib is not None:
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigurationError(f"cannot read {pyproject}: {exc}") from exc
        section = data.get("tool", {}).get("coherence", {})
        values = {}
        for key, value in section.items():
            name = key.replace("-", "_")
            if name not in _FIELDS:
                raise ConfigurationError(f"{pyproject}: unknown setting [tool.coherence] {key!r}; known: {', '.join(sorted(_FIELDS))}")
            if name in ("replay", "cache_dir", "workspace") and isinstance(value, str):
                value = str((pyproject.parent / value).resolve())
            values[name] = value
        cfg = replace(cfg, **values)
        if cfg.workspace is None:
            cfg = replace(cfg, workspace=str(pyproject.parent))
    if cfg.model is None and os.environ.get("COHERENCE_MODEL"):
        cfg = replace(cfg, model=os.environ["COHERENCE_MODEL"])
    if cfg.api_base is None and os.environ.get("COHERENCE_API_BASE"):
        cfg = replace(cfg, api_base=os.environ["COHERENCE_API_BASE"])
    return cfg
