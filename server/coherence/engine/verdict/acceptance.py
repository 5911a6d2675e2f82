"""What the user stated about a function outside its docstring: ``assume`` preconditions and
``accept`` statements (a comment, a decorator argument, the baseline file) that declare one
disagreement intended (``covers`` says exactly what that means).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from coherence.engine.execution import ModuleContext
from coherence.engine.inputs import Input
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.outcomes import Outcome, outcomes_equal
from coherence.engine.spec import Target
from coherence.engine.stated.preconditions import Assumption, assumption

if TYPE_CHECKING:
    from coherence.engine.execution.executor import Executor
    from coherence.engine.verdict.scored import Scored

log = logging.getLogger(__name__)


def user_assumptions(target: Target) -> list[Assumption]:
    """The preconditions the user stated outside the docstring (decorator, comment)."""
    out = []
    for expr in target.assume:
        a = assumption(expr, "your assume")
        if a is None:
            log.warning(
                "%s: ignoring assume %r: not an expression over the parameters coherence can evaluate",
                target.name,
                expr,
            )
        else:
            out.append(a)
    return out


def input_from_call(target: Target, call: str) -> Input | None:
    """The input a call of this function spells (``clamp(0, 1, 0)``, ``Cart().add('', 0)``),
    read the way the docstring's examples are; None when it is not such a call."""
    spec = dataclasses.replace(target.spec, docstring=f">>> {call}")
    found = doctest_seeds(spec, target.module_source)
    return found[0] if found else None


def accepted_inputs(target: Target) -> list[tuple[str, Input]]:
    """(call text, input) for each ``accept`` statement that parses as a call of this function."""
    out = []
    for call in target.accept:
        inp = input_from_call(target, call)
        if inp is not None:
            out.append((call, inp))
        else:
            log.warning(
                "%s: ignoring accept %r: not a call of %s with values coherence can rebuild",
                target.name,
                call,
                target.spec.callee,
            )
    return out


@dataclasses.dataclass
class Accepted:
    """An ``accept`` statement that names a disagreement: its call, the input, and every
    program's outcome there (yours first)."""

    call: str
    input: Input
    outcomes: list[Outcome]


def run_accepted(
    executor: Executor, seed: int, target: Target, module: ModuleContext, scored: Scored, cancel: threading.Event | None
) -> list[Accepted]:
    """The user's ``accept`` statements that name a call where some alternative disagrees with
    yours, each with every program's outcome on it (``covers`` reads them)."""
    accepted = accepted_inputs(target)
    if not accepted:
        return []
    report = executor.run(module, scored.programs, [inp for _, inp in accepted], seed=seed, cancel=cancel)
    if report.module_error:
        return []
    out = []
    for a, (call, inp) in enumerate(accepted):
        row = [report.outcomes[j][a] for j in range(len(scored.programs))]
        if any(not outcomes_equal(o, row[0]) for o in row[1:]):
            out.append(Accepted(call, inp, row))
    return out


def _siding(outcomes: Sequence[Outcome]) -> list[bool]:
    """Which alternatives give yours' outcome."""
    return [outcomes_equal(o, outcomes[0]) for o in outcomes[1:]]


def covers(
    accepted: list[Accepted], callee: str, calls: list[str], outcomes: Sequence[Outcome] | None, rival: int | None
) -> str:
    """The ``accept`` statement that names this finding ("" when none does).

    What an accept means: the user declares yours' result on that call intended, and with it
    the reading of the spec of the alternatives that agree with yours there.  A finding is the
    accepted one when

    - the call its evidence rests on, or the counterexample shown for it (``calls``: the shrunk
      call and the one it was shrunk from), is the accepted call; or
    - the counterexample shows the accepted disagreement's own outcomes (yours' and the bloc's
      ``rival``'s): count_vowels('E') after accepting count_vowels('A'); or
    - the same alternatives side with yours there as on the accepted call, some but not all of
      them: the same split between two readings of the spec, on another input.

    No alternative loses its vote: a finding with another counterexample keeps its full
    severity.  When every alternative disagrees with yours on the accepted call, only its call
    or its outcomes name it, so a new bug in the body still shows."""
    for acc in accepted:
        if acc.input.call(callee) in calls:
            return acc.call
    if outcomes is None or rival is None or outcomes_equal(outcomes[0], outcomes[rival]):
        return ""
    siding = _siding(outcomes)
    for acc in accepted:
        if outcomes_equal(outcomes[0], acc.outcomes[0]) and outcomes_equal(outcomes[rival], acc.outcomes[rival]):
            return acc.call
        if len(acc.outcomes) == len(outcomes) and any(siding) and _siding(acc.outcomes) == siding:
            return acc.call
    return ""
