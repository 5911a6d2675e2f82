"""The bounds of each numeric engine setting, written here only: ``CheckConfig.validated``, the
command line's option types, the editor's settings and the client's package.json
(tests/lsp/test_settings_schema.py) all read them.  A module of its own, beside ``config.py``,
because ``coherence --help`` reads it and must not pay for the config's TOML reader."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bounds:
    """The values a numeric setting may take: ``minimum`` and ``maximum`` inclusive, ``above`` and
    ``below`` exclusive.  ``unit`` and ``why`` finish the sentence that refuses a value.
    ``editor_maximum`` is the most the editor's settings accept where the engine sets no maximum:
    a guard against a typo in a setting read on every save, not a limit of the engine."""

    kind: type
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    below: float | None = None
    unit: str = ""
    why: str = ""
    editor_maximum: float | None = None

    def admits(self, value: float) -> bool:
        """Whether ``value`` is within the bounds (NaN never is)."""
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.maximum is None or value <= self.maximum)
            and (self.above is None or value > self.above)
            and (self.below is None or value < self.below)
        )

    def refusal(self, name: str, value: float | None) -> str | None:
        """Why ``value`` of setting ``name`` is refused (None: it is not; None as a value is unset)."""
        if value is None or self.admits(value):
            return None
        low = self.minimum if self.minimum is not None else self.above
        high = self.maximum if self.maximum is not None else self.below
        if low is not None and high is not None:
            words = f"between {low:g} and {high:g}"
        elif self.above is not None:
            words = f"more than {self.above:g}" + (f" {self.unit}" if self.unit else "")
        else:
            words = f"at least {self.minimum:g}" + (f" ({self.why})" if self.why else "")
        return f"{name} must be {words}, got {value}"


# Each numeric setting of ``CheckConfig``, by its field's name.
BOUNDS = {
    "samples": Bounds(int, minimum=2, why="your function plus one alternative", editor_maximum=1000),
    "inputs": Bounds(int, minimum=1, editor_maximum=1_000_000),
    # 2: the highest any litellm provider takes (OpenAI, Gemini; Anthropic: 1)
    "temperature": Bounds(float, minimum=0, maximum=2),
    "call_timeout": Bounds(float, above=0, unit="seconds", editor_maximum=600),
    "llm_timeout": Bounds(float, above=0, unit="seconds"),
    "min_alternatives": Bounds(int, minimum=1),
    "max_cost_usd": Bounds(float, above=0, unit="dollars"),
    "delta": Bounds(float, above=0, below=1),
    "run_budget": Bounds(float, minimum=0, why="0: no cap"),
    "tail_budget": Bounds(float, minimum=0, why="0: none"),
}
# The bounds ``CheckConfig.validated`` holds every config to; the command line also refuses a
# pyproject's call_timeout and temperature out of bounds (``cli/plan.py``), and its options refuse
# any value out of bounds.
VALIDATED = ("samples", "inputs", "min_alternatives", "max_cost_usd", "delta", "run_budget", "tail_budget")
