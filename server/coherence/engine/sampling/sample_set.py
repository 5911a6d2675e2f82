"""What sampling gave for one function: the samples, what was asked for, and the words that
say what fell short and what to do about it (a ``SampleSet``; per member of a panel, a
``MemberReport``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from coherence.engine.errors import SamplingError
from coherence.engine.sampling.prompt import Sample


@dataclass
class MemberReport:
    """What one member gave: for the result's per-model sampling and cost lines."""

    requested: int
    valid: int = 0
    failures: list[str] = field(default_factory=list)
    error: str = ""  # the member's whole request failed: why (user-facing)
    cost_usd: float = 0.0
    from_cache: int = 0


_INVALID_WORDS = {
    "no_code": "without code",
    "syntax_error": "with a syntax error",
    "missing_function": "without the function",
    "other_language": "in another language",
}


@dataclass
class SampleSet:
    samples: list[Sample]  # every reply received, valid or not, in order (cached ones first)
    requested: int
    failures: list[str]  # transport failures not turned into samples, one per missing sample
    model: str
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    from_cache: int = 0
    notices: list[str] = field(default_factory=list)  # user-facing: what happened to the cache
    # a panel (``sampling.panel``): what each member gave and cost, in the panel's order
    by_model: dict[str, MemberReport] = field(default_factory=dict)

    @property
    def cost_by_model(self) -> dict[str, float]:
        """USD per model (one entry for a single model); their sum is ``cost_usd``."""
        if self.by_model:
            return {m: r.cost_usd for m, r in self.by_model.items()}
        return {self.model: self.cost_usd}

    @property
    def complete(self) -> bool:
        return len(self.valid) >= self.requested and not self.failures

    def _problems(self) -> list[str]:
        extra: list[str] = []
        bad = Counter(s.status for s in self.invalid)
        for status in ("missing_function", "other_language", "syntax_error", "no_code"):
            if bad.get(status):
                extra.append(f"{bad[status]} {_INVALID_WORDS[status]}")
        for status, k in bad.items():
            if status not in _INVALID_WORDS:
                extra.append(f"{k} {status}")
        if self.failures:
            reasons = Counter(self.failures)
            if len(reasons) == 1:
                extra.append(f"{len(self.failures)} failed: {self.failures[0]}")
            else:
                listed = ", ".join(f"{k} {r}" for r, k in reasons.most_common())
                extra.append(f"{len(self.failures)} failed: {listed}")
        return extra

    @property
    def valid(self) -> list[Sample]:
        return [s for s in self.samples if s.status == "ok" and s.code is not None]

    @property
    def invalid(self) -> list[Sample]:
        return [s for s in self.samples if not (s.status == "ok" and s.code is not None)]

    def summary(self) -> str:
        """``"9 of 9 alternatives"`` or
        ``"7 of 9 alternatives; 1 without the function, 1 failed: rate limited (429)"``."""
        extra = self._problems()
        head = f"{len(self.valid)} of {self.requested} alternatives"
        return head + ("; " + ", ".join(extra) if extra else "")

    def programs_summary(self) -> str:
        """Counted as programs, the user's function included (m, as ``--samples`` counts):
        ``"7 of 10 samples; 3 failed: rate limited (429)"``."""
        extra = self._problems()
        head = f"{min(len(self.valid), self.requested) + 1} of {self.requested + 1} samples"
        return head + ("; " + ", ".join(extra) if extra else "")

    def report(self) -> str:
        """What a result shows: ``"9 of 9 alternatives"`` when nothing is missing, else
        ``programs_summary()``."""
        return self.summary() if self.complete and not self.invalid else self.programs_summary()

    @property
    def failure_kind(self) -> str | None:
        """auth | rate_limit | timeout | connection | invalid | provider, or None."""
        return kind_of(self.failures) if self.failures else None

    def problem(self, name: str) -> str | None:
        """One user-facing sentence when LLM requests failed (partial samples), else None."""
        if not self.failures:
            return None
        kind = kind_of(self.failures)
        failing = {m: r for m, r in self.by_model.items() if r.failures}
        if failing:  # a panel: name the members that fell short, each with its own reason
            who = "; ".join(
                f"{m}: {len(r.failures)} of {r.requested} failed ({Counter(r.failures).most_common(1)[0][0]})"
                for m, r in failing.items()
            )
            kind = kind_of([f for r in failing.values() for f in r.failures])
            return f"coherence: {name}: {self.programs_summary()} from the panel; {who}. {KIND_ADVICE[kind]}"
        return f"coherence: {name}: {self.programs_summary()} from {self.model}. {KIND_ADVICE[kind]}"


UNUSABLE_BEFORE = "no usable code in earlier replies (not asked again)"


def kind_of(failures: list[str]) -> str:
    top = Counter(failures).most_common(1)[0][0] if failures else ""
    if top == UNUSABLE_BEFORE:
        return "unusable"
    if top.startswith("rate limited"):
        return "rate_limit"
    if top.startswith("timeout"):
        return "timeout"
    if top.startswith("connection"):
        return "connection"
    if top.startswith("authentication"):
        return "auth"
    if top.startswith("invalid response"):
        return "invalid"
    return "provider"


KIND_ADVICE = {
    "rate_limit": "The provider is rate-limiting this key; wait, lower the concurrency or the number of samples.",
    "timeout": "The provider did not answer in time; check the server, or give it longer with --llm-timeout "
    "SECONDS (llm_timeout).",
    "connection": "Could not connect; check the api_base and that the server is running.",
    "auth": "Check the API key.",
    "unusable": "The model's earlier replies for this function had no usable code; clear the "
    "sample cache to ask again.",
    "invalid": "The provider sent replies that could not be read (cut short or not JSON); "
    "check the api_base and the server.",
    "provider": "The provider reported errors; check that it is up and the model name is right.",
}


def failure_label(err: SamplingError) -> str:
    return {
        "auth": "authentication failed",
        "rate_limit": "rate limited",
        "timeout": "timeout",
        "deadline": "timeout",
        "connection": "connection error",
        "config": "configuration error",
        "missing": "no recorded samples",
    }.get(err.kind, "provider error")
