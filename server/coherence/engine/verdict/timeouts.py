"""Which timeouts are evidence: a hang, set apart from a call that merely ran near its limit.

The rule.  An input on which any program's call ran out of time (``Timeout``) or was never made
(``BudgetExceeded``) is left out of the outcome matrix for every program: out of the clustering,
the metrics, the verdict and the counterexample, and out of the PAC bound's n ("inputs used"
counts only the inputs kept).  Where a call ends is a matter of how busy the machine is, so a
call near its limit must not decide anything.

One exception, because a function that loops for ever where the others answer at once has a bug
a user must hear of: an input is a *hang* when every program that finished there finishes again,
in a second run, within ``HANG_SHARE`` of the call timeout (at least ten times faster than the
ones that timed out).  A hang stays, timeouts and all:

- where your function timed out, your timeout is evidence (the verdict caps it at information,
  ``rules``' ``yours_slow``);
- where alternatives timed out, theirs raised and set no value against yours, and the others
  still vote there: an alternative cannot take an input away by hanging on it.

A machine busy enough to slow the finishers past a tenth of the limit makes the input contested,
and it is left out: the two outcomes of the rule are keep (a hang) and leave out, never a timeout
read as a different result.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace

from coherence.engine.execution import ModuleContext, Program
from coherence.engine.execution.executor import OUT_OF_TIME, ExecutionReport, Executor
from coherence.engine.execution.worker_run import TIMEOUT
from coherence.engine.inputs import Input

# A finisher must run again within this share of the call timeout for a timeout beside it to be
# a hang (the brief's "well under the limit": ten times faster than the call that timed out).
HANG_SHARE = 0.1
# Inputs asked about at most per check: each costs one call per program in the second run, and a
# program that hangs on many inputs is cut short by its budget long before this.
MAX_ASKED = 20


def timed_out_with_finishers(outcomes: Sequence[Sequence[object]]) -> list[int]:
    """The inputs where some program timed out and another returned or raised: the only ones a
    hang can be (where every program timed out, nothing finished fast)."""
    if not outcomes:
        return []
    found = []
    for x in range(len(outcomes[0])):
        errors = [getattr(row[x], "error", None) for row in outcomes]
        if TIMEOUT.error in errors and any(e not in OUT_OF_TIME for e in errors):
            found.append(x)
    return found


def confirm_hangs(
    executor: Executor,
    module: ModuleContext,
    programs: Sequence[Program],
    inputs: Sequence[Input],
    report: ExecutionReport,
    *,
    seed: int = 0,
    cancel: threading.Event | None = None,
) -> frozenset[int]:
    """The inputs (indices into ``inputs``) that are hangs: every program that finished there in
    ``report`` finishes again within ``HANG_SHARE`` of the call timeout, in one more sandboxed
    run of every program on those inputs alone.  The first ``MAX_ASKED`` candidates are asked;
    the others stay contested."""
    asked = timed_out_with_finishers(report.outcomes)[:MAX_ASKED]
    if not asked:
        return frozenset()
    lim = executor.limits
    fast = Executor(
        python=executor.python,
        limits=replace(lim, call_timeout=HANG_SHARE * lim.call_timeout),
        sandbox=executor.sandbox,
        warm=executor.warm,
    )
    again = fast.run(module, list(programs), [inputs[x] for x in asked], seed=seed, cancel=cancel)
    if again.module_error:
        return frozenset()
    hangs = set()
    for k, x in enumerate(asked):
        finishers = [p for p, row in enumerate(report.outcomes) if row[x].error not in OUT_OF_TIME]
        if all(again.outcomes[p][k].error not in OUT_OF_TIME for p in finishers):
            hangs.add(x)
    return frozenset(hangs)
