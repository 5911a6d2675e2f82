"""The docstring's worked examples in a check: every program's outcome on each example coherence
can rebuild, who gives the stated result (``verdict.from_examples``), the alternatives that lose
their vote for contradicting one, and the counterexample a contradicted example makes.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from coherence.engine import verdict
from coherence.engine.execution import ModuleContext, Program
from coherence.engine.execution.executor import BUDGET_EXCEEDED, OUT_OF_TIME, ExecutionReport
from coherence.engine.inputs import Input
from coherence.engine.inputs.seeds.workspace import asserted_examples
from coherence.engine.outcomes import Outcome, canonical, gives, outcomes_equal
from coherence.engine.spec import Target
from coherence.engine.stated.examples import StatedExample, stated_examples
from coherence.engine.verdict import counterexample as cx
from coherence.engine.verdict.acceptance import input_from_call
from coherence.engine.verdict.special_cases import special_cases

if TYPE_CHECKING:
    from coherence.engine.execution.executor import Executor
    from coherence.engine.result import Counterexample
    from coherence.engine.verdict.scored import Scored

Found = tuple[StatedExample, Input, list[Outcome]]  # an example, its input, each program's outcome
Votes = tuple[int, bool, list[bool], list[bool]]  # (``example_votes``)


def stated_outcomes(
    executor: Executor,
    seed: int,
    target: Target,
    module: ModuleContext,
    scored: Scored,
    report: ExecutionReport,
    cancel: threading.Event | None,
    workspace: str | None = None,
) -> list[Found]:
    """Each worked example of the docstring, and of the workspace's tests (``assert f(...) ==
    ...``, ``asserted_examples``), that coherence can rebuild, with every program's
    outcome on it: from the run when the example was among the inputs (doctests are), else
    from a small run of its own.  Examples on which yours ran out of time are left out."""
    spec = target.spec
    if spec.owner:  # a method's examples call it on an object the example builds
        return []
    examples = stated_examples(spec.docstring, spec.name)
    written = {ex.call for ex in examples}
    examples += [ex for ex in asserted_examples(spec, workspace) if ex.call not in written]
    if not examples:
        return []
    where = {inp.key(): x for x, inp in enumerate(scored.inputs)}
    found, missing = [], []
    for ex in examples:
        inp = input_from_call(target, ex.call)
        if inp is None:
            continue
        x = where.get(inp.key())
        if x is not None:
            found.append((ex, inp, [row[x] for row in report.outcomes]))
        else:
            missing.append((ex, inp))
    if missing:
        run = executor.run(module, scored.programs, [inp for _, inp in missing], seed=seed, cancel=cancel)
        if not run.module_error:
            found.extend((ex, inp, [row[a] for row in run.outcomes]) for a, (ex, inp) in enumerate(missing))
    return [
        (ex, inp, row) for ex, inp, row in found if row[0].error not in OUT_OF_TIME and row[0].error != BUDGET_EXCEEDED
    ]


def example_votes(i: int, ex: StatedExample, row: list[Outcome]) -> Votes:
    """(index, yours gives the stated result, which alternatives do, which agree with yours)."""

    def said(o: Outcome) -> bool:
        return gives(o, ex.value, ex.raises, ex.expected)

    return i, said(row[0]), [said(o) for o in row[1:]], [outcomes_equal(o, row[0]) for o in row[1:]]


def special_cased(examples: list[Found], votes: list[Votes], programs: list[Program]) -> set[int]:
    """The examples (indices into ``votes``) that yours contradicts and an alternative
    reproduces by recognising the example's input in its code (``special_cases.special_cases``)."""
    out = set()
    for (ex, inp, _), (i, mine_gives, support, _) in zip(examples, votes):
        if mine_gives or ex.raises is not None:
            continue
        if any(gives and special_cases(programs[1 + j].source or "", inp, ex.value) for j, gives in enumerate(support)):
            out.add(i)
    return out


def example_verdict(
    examples: list[Found], votes: list[Votes], scored: Scored
) -> tuple[verdict.Evidence | None, set[int]]:
    """``verdict.from_examples`` with a panel's held share and the examples alternatives
    special-case; and those examples (``special_cased``)."""
    special = special_cased(examples, votes, scored.programs)
    evidence = verdict.from_examples(
        votes,
        len(scored.programs) - 1,
        models=scored.models,
        held_share=verdict.PANEL_HELD_SHARE,
        with_vote=scored.voters,
        special_cased=special,
    )
    return evidence, special


def followers(votes: list[Votes], special: set[int]) -> set[int]:
    """The alternatives (rows) that reproduce an example in ``special``: they answer it, and
    what is near it, by fiat (``scoring.judge_scored``)."""
    return {1 + j for i, _, support, _ in votes if i in special for j, gives in enumerate(support) if gives}


def discredited(
    votes: list[Votes],
    models: list[str] | None = None,
    held_share: float = 0.0,
    with_vote: set[str] | None = None,
    special: set[int] | frozenset[int] = frozenset(),
) -> set[int]:
    """The alternatives that contradict a worked example of the docstring which some program
    (yours or another) does give: known wrong on the spec's own example, they lose their vote.
    (An example no program gives is more likely sloppy than a verdict on them all.)  (``docs/results.md#discredited-alternatives``.)  In a panel (``models``, the model
    of each program; ``with_vote``: ``verdict.voters``), an example that yours does not give
    discredits nobody unless the models that give it hold ``held_share`` of the alternatives
    (``verdict.panel_backs``): one member's reproduction of a wrong example must not take the
    others' votes.  Nor does an example in ``special`` (``special_cased``), unless yours gives it."""
    out: set[int] = set()
    for i, mine_gives, support, _ in votes:  # (``example_votes``)
        if mine_gives or (
            any(support) and i not in special and verdict.panel_backs(support, models, held_share, with_vote)
        ):
            out.update(1 + j for j, gave in enumerate(support) if not gave)
    return out


def example_counterexample(
    target: Target, scored: Scored, found: Found, evidence: verdict.Evidence
) -> tuple[Counterexample, str | None]:
    """The counterexample of a contradicted worked example: the example's own call, yours
    against what the docstring states; and the source of an alternative that reproduces it."""
    ex, inp, row = found
    receiver = target.spec.receiver
    ce = cx.describe(target.spec.callee, inp, row, evidence.rival or 1, receiver=receiver)
    said = Outcome("raise", error=ex.raises) if ex.raises else Outcome("ok", value=canonical(ex.value))
    ce.theirs = said.render(receiver=receiver)
    ce.stated = ex.expected
    ce.call = ex.call  # as the docstring writes it
    code = scored.programs[evidence.rival].source if evidence.rival else None
    return ce, code
