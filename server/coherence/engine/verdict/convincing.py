"""The counterexample that convinces: the verdict's own input when it rests on one, kept inside
the stated domain and near the examples' magnitudes while it shrinks (``counterexample.shrink``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from coherence.engine import verdict
from coherence.engine.errors import CheckCancelled
from coherence.engine.inputs.near_examples import near_examples
from coherence.engine.outcomes import Outcome, group_outcomes
from coherence.engine.verdict import counterexample as cx
from coherence.engine.verdict import rules
from coherence.engine.verdict.mutation import agreeing_labels

if TYPE_CHECKING:
    from coherence.engine.config import CheckConfig
    from coherence.engine.execution import ModuleContext, Program
    from coherence.engine.execution.executor import Executor
    from coherence.engine.execution.seen import SeenOutcomes, SeenView
    from coherence.engine.inputs import Input
    from coherence.engine.result import Counterexample
    from coherence.engine.spec import Target
    from coherence.engine.verdict.scored import Judging

log = logging.getLogger(__name__)


def for_verdict(
    j: Judging, evidence: verdict.Evidence
) -> tuple[Counterexample | None, str, int | None, Sequence[Outcome] | None]:
    """The counterexample, why its input lies outside the stated domain ("" inside), and the
    program whose outcome it sets against yours.

    It is the verdict's own input when the verdict rests on one (a bloc that outvotes yours, or
    disagrees with it, inside the domain, both sides returning when they can); else the
    general choice among all inputs (``counterexample.choose``)."""
    scored = j.scored
    inputs, domain, inside = scored.inputs, scored.domain, scored.inside
    picked: tuple[int, int] | None
    if evidence.input is not None and evidence.rival is not None:  # the verdict sets both
        picked = (evidence.input, evidence.rival)
    else:
        picked = cx.choose(scored.labels, scored.raised, inputs, scored.metrics, prefer=inside)
    if picked is None:
        return None, "", None, None
    x, rival = picked
    start = inputs[x]
    start_outcomes = [row[x] for row in j.report.outcomes]
    if j.seen is None:
        shrunk, outcomes = _shrunk(j, start, rival, start_outcomes, cx.KnownOutcomes(inputs, j.report.outcomes))
    else:
        seen = j.seen.for_run(
            j.module, scored.programs, j.config.seed, j.executor.limits, (j.target.function_source, j.target.name)
        )
        # the same programs shrink from the same input to the same place: a re-check looks it up
        evidence_keys = tuple(e.key() for e in domain.evidence) if domain is not None else None
        memo = (seen.prints, j.target.spec.spec_hash, evidence_keys, start.key(), rival, j.config.shrink_rounds)
        kept = j.seen.shrunk(memo)
        if kept is not None:
            shrunk, outcomes = kept[0], list(kept[1])
        else:
            known = cx.KnownOutcomes(inputs, j.report.outcomes, seen)
            # an edited body that gives what it gave on every input the last shrink read (run
            # ahead, ``run_ahead``) takes the shrink where it went then, without walking it again
            path_key = (seen.prints[1:], *memo[1:])
            path = j.seen.path(path_key)
            found = known.get(path[0].key()) if path is not None and known.agrees(path[1]) else None
            if path is not None and found is not None:
                shrunk, outcomes = path[0], found
            else:
                shrunk, outcomes = _shrunk(j, start, rival, start_outcomes, known)
                if shrunk is not start:
                    j.seen.keep_path(path_key, shrunk, known.consulted)
                j.seen.keep_ran(ran_key(j.target, j.config), list(known.ran.values()))
            if shrunk is not start:
                j.seen.keep_shrunk(memo, shrunk, outcomes)
    if shrunk is not start and not _bloc_holds(outcomes, rival, evidence):
        # The shrinker keeps yours and the rival apart, not the bloc behind the rival: an input
        # where the rival stands alone, or the bloc no longer outvotes yours, is not the evidence
        # the verdict rests on (HumanEval/40's triples_sum_to_zero([0, 0]): the bloc had gone).
        shrunk, outcomes = start, start_outcomes
    where = "; ".join(domain.violations(shrunk)) if domain is not None else ""
    described = cx.describe(
        j.target.spec.callee,
        shrunk,
        outcomes,
        rival,
        shrunk_from=start,
        receiver=j.target.spec.receiver,
        params=[p.name for p in j.target.spec.params],
    )
    return described, where, rival, outcomes


def run_ahead(
    executor: Executor,
    seen: SeenOutcomes,
    view: SeenView,
    config: CheckConfig,
    target: Target,
    module: ModuleContext,
    programs: Sequence[Program],
    cancel: threading.Event | None = None,
) -> None:
    """Run your function on the inputs the last shrink of this spec had to run, when the
    alternatives' outcomes there are known and yours are not (its body was edited): the shrink
    that follows finds them all known, with no job of its own.  Meant to run beside scoring.
    ``view``: ``seen`` for these programs (``SeenOutcomes.for_run``)."""
    ran = seen.ran_for(ran_key(target, config))
    if not ran or len(programs) < 2:
        return
    keys = [inp.key() for inp in ran]
    todo = [inp for inp, key in zip(ran, keys) if view.get(0, key) is None]
    if not todo:
        return
    if not any(all(view.get(p, key) is not None for key in keys) for p in range(1, len(programs))):
        return  # the alternatives changed too: the shrink runs its own pairs
    try:
        report = executor.run(
            module,
            [programs[0]],
            todo,
            seed=config.seed,
            cancel=cancel,
            budget=max(cx.SHRINK_BUDGET, 2 * executor.limits.call_timeout),
        )
    except Exception as exc:  # noqa: BLE001 - only a head start: the shrink runs what it lacks
        log.debug("running the shrink's inputs ahead failed: %s", exc)
        return
    if report.module_error or report.load_errors[0]:
        return
    for inp, outcome in zip(todo, report.outcomes[0]):
        view.put(0, inp.key(), outcome)


def ran_key(target: Target, config: CheckConfig) -> tuple[object, ...]:
    """What the inputs a shrink had to run are kept under (``SeenOutcomes.keep_ran``): the spec."""
    return (target.spec.spec_hash, config.seed)


def _shrunk(
    j: Judging, start: Input, rival: int, start_outcomes: list[Outcome], known: cx.KnownOutcomes
) -> tuple[Input, list[Outcome]]:
    """``start`` shrunk, with every program's outcome there (``start`` itself when no smaller
    input keeps what the verdict rests on)."""
    scored, domain = j.scored, j.scored.domain
    # it stays out of every rule's mask it started out of (``rules.shrink_keeper``): inside the
    # domain, near the examples' magnitudes (shrinking toward 0 turns is_leap(1900) into
    # is_leap(0)), not all-empty, no empty string argument, intervals ordered like the examples'
    keep = rules.shrink_keeper(start, domain, panel=scored.panel)
    try:
        shrunk, outcomes = cx.shrink(
            j.executor,
            j.module,
            scored.programs,
            rival,
            start,
            start_outcomes,
            rounds=j.config.shrink_rounds,
            seed=j.config.seed,
            cancel=j.cancel,
            keep=keep,
            known=known,
        )
    except CheckCancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - shrinking is a nicety; the unshrunk input stands
        log.debug("shrinking failed: %s", exc)
        shrunk, outcomes = start, start_outcomes
    if domain is not None and domain.crossed(shrunk) and not domain.crossed(start):
        shrunk, outcomes = start, start_outcomes  # the input before shrinking, which the reader would not dismiss
    if domain is not None and domain.bands and not domain.typical(shrunk):
        shrunk, outcomes = cx.toward_examples(
            j.executor,
            j.module,
            scored.programs,
            rival,
            shrunk,
            outcomes,
            [c for c in near_examples(domain, shrunk) if keep is None or keep(c)],
            seed=j.config.seed,
            cancel=j.cancel,
            known=known,
        )
    return shrunk, outcomes


def _bloc_holds(outcomes: list[Outcome], rival: int, evidence: verdict.Evidence) -> bool:
    """Whether the programs' outcomes on one input carry the verdict's severity by themselves,
    with the rival in the bloc that disagrees with yours (a verdict with no severity to keep,
    a hint or the general choice, holds anywhere the two disagree)."""
    if evidence.severity not in ("warning", "information") or evidence.kind == "example":
        return True
    labels = agreeing_labels(np.array(group_outcomes(outcomes))[:, None], [[o] for o in outcomes], [0])
    raised = np.array([o.kind == "raise" for o in outcomes])[:, None]
    judged = verdict.judge(labels, raised, incoherent=True)
    return (
        verdict.at_least(judged.severity, evidence.severity)
        and judged.rival is not None
        and labels[judged.rival, 0] == labels[rival, 0]
    )
