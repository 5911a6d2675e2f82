"""What the user stated about a function outside its docstring: ``assume`` preconditions and
``accept`` statements (a comment, a decorator argument, the baseline file) that declare one
disagreement intended.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from typing import TYPE_CHECKING

import numpy as np

from coherence.engine.execution import ModuleContext
from coherence.engine.inputs import Input
from coherence.engine.inputs.preconditions import Assumption, assumption
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.outcomes import outcomes_equal
from coherence.engine.spec import Target

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


def apply_accepted(
    executor: Executor, seed: int, target: Target, module: ModuleContext, scored: Scored, cancel: threading.Event | None
) -> None:
    """Apply the user's ``accept`` statements: each names a call on which the user declared
    their function's behaviour intended.  The alternatives that disagree with it there are the
    accepted readings of the spec; an input where only they disagree is no evidence
    (``scored.ignore``).  A disagreement of any other alternative still counts."""
    accepted = accepted_inputs(target)
    if not accepted:
        return
    report = executor.run(module, scored.programs, [inp for _, inp in accepted], seed=seed, cancel=cancel)
    if report.module_error:
        return
    readers = np.zeros(len(scored.programs), dtype=bool)
    matched = []
    for a, (call, _) in enumerate(accepted):
        mine = report.outcomes[0][a]
        differ = [j for j in range(1, len(scored.programs)) if not outcomes_equal(report.outcomes[j][a], mine)]
        if differ:
            readers[differ] = True
            matched.append(call)
    if not matched:
        return
    scored.result_accepted = matched
    differs = scored.labels[1:] != scored.labels[0]
    scored.ignore = ~(differs & ~readers[1:, None]).any(axis=0)
