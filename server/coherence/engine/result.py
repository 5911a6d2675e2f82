"""What a check produces, in a form every front end (CLI, SARIF, language server) can render."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from coherence.engine.frequency import in_words

STATUSES = ("coherent", "incoherent", "nondeterministic", "skipped", "error")
# How strongly a result speaks against the user's function (``engine.verdict``); the one scale
# every front end uses: exit code, SARIF level, JSON, diagnostics, status bar.
SEVERITIES = ("warning", "information", "hint", "none")


@dataclass
class ClusterOutput:
    """What one group of alternatives returned on the counterexample input."""

    output: str
    count: int
    agrees: bool = False  # the same outcome as yours (beside the groups that disagree)

    def shown(self, total: int, quote: Callable[[str], str] = str) -> str:
        """``8 of 9 alternatives: 1``; a group that agrees with yours says so instead of
        repeating your outcome (``1 of 9 alternatives: the same as yours``).  ``quote`` marks
        the outcome up (the hover's code span)."""
        return f"{self.count} of {total} alternatives: {'the same as yours' if self.agrees else quote(self.output)}"


@dataclass
class Cluster:
    """One group of programs whose outcomes agree on every input (the papers' behaviour
    cluster), largest first in ``CheckResult.clusters``."""

    size: int  # programs in it, the user's function included when ``yours``
    yours: bool = False  # the user's function is in it
    # where its alternatives came from: model -> count (a panel of models mixes them)
    models: dict[str, int] = field(default_factory=dict)
    # the source of one alternative in it (None when it holds only the user's function)
    representative_source: str | None = None
    output: str | None = None  # its representative's outcome on the counterexample, when there is one


@dataclass
class Counterexample:
    call: str  # pasteable: name(args...)
    yours: str  # rendered outcome of the user's function
    theirs: str  # rendered outcome of the largest cluster that disagrees with the user
    alternatives: list[ClusterOutput]  # every alternative's outcome on this input, grouped
    disagreeing: int  # alternatives whose outcome differs from yours on this input
    total: int  # alternatives run
    shrunk_from: str | None = None  # the call before shrinking, when it changed
    # the result the docstring's worked example states for ``call``, as written, when the
    # evidence is that example (``engine.stated.examples``); ``theirs`` then renders it
    stated: str | None = None
    # where yours changes an argument the alternatives leave alone, that in words
    # (``verdict.mutation.in_words``)
    mutation: str | None = None
    # what yours' exception said, when yours raises a builtin exception with a message
    yours_message: str | None = None

    def rows(
        self, code: Callable[[str], str] = str, text: Callable[[str], str] = str, shrunk: bool = False
    ) -> list[str]:
        """What each side gives on ``call``, one row each, as every front end lists them: yours,
        the docstring's example, each group of alternatives, (where it was shrunk from), and how
        yours changes an argument.  ``code`` marks up values and ``text`` words (the hover's
        inline code and escaped Markdown)."""
        said = f"{self.yours}: {self.yours_message}" if self.yours_message else self.yours
        rows = [f"yours: {code(said)}"]
        if self.stated is not None:
            rows.append(f"your docstring's example: {code(self.stated)}")
        rows.extend(alt.shown(self.total, code) for alt in self.alternatives)
        if shrunk and self.shrunk_from:
            rows.append(f"(shrunk from {code(self.shrunk_from)})")
        if self.mutation:
            rows.append(text(self.mutation))
        return rows

    def summary(self) -> str:
        """``7 of 9 alternatives disagree: f(3) -> yours 4, theirs 5``."""
        return f"{self.disagreeing} of {self.total} alternatives disagree: {self.call} -> yours {self.yours}, theirs {self.theirs}"


# Keys of ``CheckResult.extra`` that became fields; ``from_dict`` lifts them out of old JSON.
_FORMER_EXTRA = (
    "sampling_problem",
    "sampling_problem_kind",
    "notices",
    "config_error",
    "too_slow",
    "inputs_over_budget",
    "timeouts",
    "load_errors",
)


@dataclass
class CheckResult:
    name: str
    path: str
    line: int
    status: str  # one of STATUSES
    reason: str = ""  # why skipped / error / nondeterministic
    qualname: str = ""
    column: int = 0
    end_line: int = 0
    samples: int = 0  # m: programs compared, the user's function included
    inputs: int = 0  # n
    incoherence: float | None = None
    incoherence_interval: list[float] | None = None
    disagreement: float | None = None
    error_lower_bound: float | None = None
    dsde: float | None = None
    sde: float | None = None
    # calibrated: the probability that the function is right given its DSDE, severity, spec
    # stratum and panel (``engine.calibration``); ``trust_raw`` is 1 - DSDE
    trust: float | None = None
    trust_raw: float | None = None
    # the finest calibration cell trust was read from: "warning · spec with examples · one model"
    trust_map: str = ""
    clusters: list[Cluster] = field(default_factory=list)  # largest first
    user_cluster: int | None = None  # index into clusters
    counterexample: Counterexample | None = None
    pac_bound: float | None = None
    delta: float = 0.05
    cost_usd: float = 0.0
    cost_by_model: dict[str, float] = field(default_factory=dict)  # USD per model; they add up to cost_usd
    seconds: float = 0.0
    model: str = ""
    sampling: str = ""  # e.g. "9 of 9 alternatives" / "7 of 9 alternatives; 2 failed: rate limited"
    sandbox: str = ""
    spec_hash: str = ""
    body_hash: str = ""
    # Code of the representative of the largest cluster that disagrees with the user, and of the
    # largest cluster overall when the user is not in it (for "replace body").
    disagreeing_code: str | None = None
    majority_code: str | None = None
    checked_at: float = 0.0
    # The verdict (``engine.verdict``): severity, and the evidence it rests on (bloc, against,
    # agree, alternatives, kind, why).
    severity: str = "none"
    evidence: dict[str, Any] = field(default_factory=dict)
    # The stated domain (docstring preconditions, examples, the user's ``assume``), and why the
    # counterexample lies outside it ("" when it lies inside or there is no domain).
    domain: list[str] = field(default_factory=list)
    outside_domain: str = ""
    # ``accept`` statements that matched this result's disagreement (it is then a hint)
    accepted: list[str] = field(default_factory=list)
    # What went wrong around the check rather than in the programs: every front end reads these.
    # The LLM's partial failure, in one sentence, and its kind ("rate_limit", ...): the editor says
    # it once per model and kind.
    sampling_problem: str = ""
    sampling_problem_kind: str = ""
    notices: list[str] = field(default_factory=list)  # e.g. a sample cache that was rebuilt
    config_error: bool = False  # the check never ran: configuration, key or provider (no diagnostic)
    # The run's accounting: alternatives dropped for being too slow (or hung), inputs left out
    # because some program ran out of time on them (its budget, or a call's timeout:
    # ``verdict.timeouts``), calls that timed out, and each program that failed to load.
    too_slow: int = 0
    inputs_over_budget: int = 0
    timeouts: int = 0
    load_errors: dict[str, str] = field(default_factory=dict)
    # Figures no front end shows (stage timings, distinct programs run: ``benchmarks/``).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_problem(self) -> bool:
        return self.status == "incoherent"

    @property
    def finding(self) -> str:
        """The severity every front end shows (the editor's diagnostic, the CLI's summary and
        exit code, SARIF's level): an incoherent result's verdict, or a coherent one's when its
        docstring's worked example contradicts it and every alternative ("" for the rest)."""
        if self.status == "incoherent" or (self.status == "coherent" and self.severity != "none"):
            return self.severity
        return ""

    @property
    def contradicts_docstring(self) -> bool:
        """Every program agrees, and not with a worked example of the docstring."""
        return self.status == "coherent" and bool(self.finding)

    @property
    def cluster_sizes(self) -> list[int]:
        return [c.size for c in self.clusters]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        data = dict(data)
        ce = data.get("counterexample")
        if ce is not None:
            ce = dict(ce)
            ce["alternatives"] = [ClusterOutput(**a) for a in ce.get("alternatives", [])]
            data["counterexample"] = Counterexample(**ce)
        # results written before clusters were objects hold their sizes only
        user = data.get("user_cluster")
        data["clusters"] = [
            Cluster(size=c, yours=i == user) if isinstance(c, int) else Cluster(**c)
            for i, c in enumerate(data.get("clusters") or [])
        ]
        known = set(cls.__dataclass_fields__)
        # Results saved before these keys became fields carry them in ``extra``.
        extra = dict(data.get("extra") or {})
        for key in _FORMER_EXTRA:
            if key in extra and key not in data:
                data[key] = extra.pop(key)
        data["extra"] = extra
        return cls(**{k: v for k, v in data.items() if k in known})

    def evidence_line(self) -> str:
        """The evidence, first: ``8 of 9 alternatives disagree with yours on is_leap(1900)``."""
        ce = self.counterexample
        if ce is None:
            return ""
        if ce.stated is not None:
            backing = self.evidence.get("bloc", 0)
            how = ", special-casing that call in their code" if self.evidence.get("special_cased") else ""
            return f"the docstring says {ce.call} {_gives(ce.theirs)}, yours {_gives(ce.yours)} ({backing} of {ce.total} alternatives agree with the docstring{how})"
        return f"{ce.disagreeing} of {ce.total} alternatives disagree with yours on {ce.call}"

    def evidence_and_values(self) -> str:
        """The evidence with what each side gives: ``9 of 9 alternatives disagree with yours on
        count_vowels('A'): yours 0, theirs 1`` (a docstring's example already names both)."""
        ce = self.counterexample
        if ce is None:
            return ""
        if ce.stated is not None:
            return self.evidence_line()
        return f"{self.evidence_line()}: yours {ce.yours}, theirs {ce.theirs}"

    def trust_in_words(self) -> str:
        """``trust 0.17: of functions with evidence like this, about 1 in 6 was right`` ("" when
        nothing was measured)."""
        if self.trust is None:
            return ""
        return f"trust {self.trust:.2f}: {in_words(self.trust)}"

    def disagreeing_by_model(self) -> list[tuple[str, int, int]]:
        """Per model that wrote alternatives: (model, its alternatives outside your cluster, its
        alternatives), most alternatives first."""
        total: Counter[str] = Counter()
        against: Counter[str] = Counter()
        for c in self.clusters:
            for model, k in c.models.items():
                total[model] += k
                if not c.yours:
                    against[model] += k
        return [(m, against[m], n) for m, n in total.most_common()]

    def panel_line(self) -> str:
        """A panel's ``3 of 3 from claude-sonnet-4, 5 of 6 from gpt-4o`` (each model's alternatives
        that behave differently from yours); "" when one model wrote them all."""
        rows = self.disagreeing_by_model()
        return ", ".join(f"{a} of {n} from {m}" for m, a, n in rows) if len(rows) > 1 else ""

    def cost_split(self) -> str:
        """A panel's cost per model, ``claude-sonnet-4 $0.0120, gpt-4o $0.0031``; "" for one model."""
        if not self.cost_usd or len(self.cost_by_model) < 2:
            return ""
        return ", ".join(f"{m} ${c:.4f}" for m, c in self.cost_by_model.items())

    def headline(self) -> str:
        """One line for lists, code lenses and logs: the evidence first, then trust."""
        if self.finding and self.counterexample:
            return f"{self.evidence_line()} · trust {self.trust:.2f}"
        if self.status == "incoherent":
            return f"trust {self.trust:.2f} · incoherence {self.incoherence:.3f}"
        if self.status == "coherent":
            return f"trust {self.trust:.2f} · {self.samples} samples × {self.inputs} inputs"
        return f"{self.status}: {self.reason}" if self.reason else self.status


def _gives(rendered: str) -> str:
    """``gives 3``, but ``raises TypeError`` (never "gives raises TypeError")."""
    return rendered if rendered.startswith("raises ") else f"gives {rendered}"
