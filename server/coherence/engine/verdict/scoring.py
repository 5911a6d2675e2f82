"""Scoring one check: its outcome matrix to the metrics, the status and the stated domain
(``Scored``), and the verdict on what is scored.

What leaves the matrix first: alternatives that need a module this interpreter lacks, and
inputs some program never reached in its time budget (or the one alternative too slow to reach
most of them).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

import numpy as np

from coherence.engine import verdict
from coherence.engine.config import CheckConfig
from coherence.engine.execution import Program
from coherence.engine.execution.executor import BUDGET_EXCEEDED, OUT_OF_TIME, ExecutionReport
from coherence.engine.inputs import Input
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.outcomes import Outcome, labels_from_ids, outcome_ids, outcomes_equal
from coherence.engine.result import CheckResult, Cluster
from coherence.engine.spec import Target
from coherence.engine.stated.domain import Domain
from coherence.engine.verdict import rules
from coherence.engine.verdict.acceptance import user_assumptions
from coherence.engine.verdict.metrics import Metrics, score
from coherence.engine.verdict.mutation import agreeing_labels
from coherence.engine.verdict.scored import Scored

_MISSING_MODULE = re.compile(r"^(ModuleNotFoundError|ImportError)\b")


def stated_domain(target: Target, inputs: list[Input]) -> Domain:
    """The domain a check holds its disagreement to (the eval's kept matrices record it too)."""
    return Domain(target.spec, inputs, infer_types, assume=user_assumptions(target))


def score_run(
    config: CheckConfig,
    target: Target,
    result: CheckResult,
    report: ExecutionReport,
    programs: list[Program],
    valid: list[Any],
    inputs: list[Input],
    rerun: list[int],
    started: float,
    hangs: frozenset[int] = frozenset(),
) -> Scored | None:
    """The outcome matrix to metrics, status and domain, filled into ``result``; None when the
    result is final (an error: nothing ran, nothing left to compare).  ``hangs``: the inputs
    where the programs that timed out hung (``verdict.timeouts.confirm_hangs``); every other
    input where a program ran out of time is left out, and ``result.inputs`` (the PAC bound's n)
    counts only the inputs kept."""
    if report.module_error:
        result.status = "error"
        result.reason = f"your module failed to load in the sandbox: {report.module_error}"
        result.seconds = time.monotonic() - started
        return None

    # Alternatives that import a module this interpreter lacks say nothing about the task.
    dropped = [i for i, err in enumerate(report.load_errors) if i > 0 and err and _MISSING_MODULE.match(err)]
    if dropped:
        programs, valid, _ = drop_programs(dropped, programs, valid, report)
        result.sampling += f"; {len(dropped)} dropped: needs a module that is not installed"
    if len(programs) < 2:
        result.status = "error"
        result.reason = f"no runnable alternative implementations ({result.sampling})"
        result.seconds = time.monotonic() - started
        return None

    unstable = _nondeterminism(report, rerun)
    if unstable is not None:
        x, first, second = unstable
        receiver = target.spec.receiver
        unstable_reason = (
            f"your function gave two different results for {inputs[x].call(target.spec.callee)}: "
            f"{first.render(receiver=receiver)} then {second.render(receiver=receiver)}"
        )

    # Inputs where a program ran out of time (never reached one in its budget, or a call timed
    # out) are left out for everyone: n shrinks, rather than a slow program "disagreeing" where
    # it never answered, or a call near its limit deciding the verdict (``verdict.timeouts``).
    ids, distinct = outcome_ids(report.outcomes)
    over_budget = np.fromiter((o.error == BUDGET_EXCEEDED for o in distinct), dtype=bool, count=len(distinct))
    out_of_time = np.fromiter((o.error in OUT_OF_TIME for o in distinct), dtype=bool, count=len(distinct))
    if out_of_time.any():
        # But an alternative that ran out of time long before the others (one that hangs on
        # small inputs) would take most inputs away from everyone: it goes instead, and says so.
        reach = (~over_budget[ids]).sum(axis=1)
        slow = too_slow(~over_budget[ids], ~out_of_time[ids]) if over_budget.any() else []
        if slow and len(programs) - len(slow) >= 2:
            programs, valid, keep = drop_programs(slow, programs, valid, report)
            ids = ids[keep]
            result.sampling += (
                f"; {len(slow)} dropped: too slow (reached {int(reach[slow].max())} of {len(inputs)} inputs in time)"
            )
            result.too_slow = len(slow)
        lost = out_of_time[ids].any(axis=0)
        # a hang is evidence, not noise: it stays (one of yours is capped at information,
        # ``yours_slow``; one of an alternative's raised, which sets no value against yours)
        lost[sorted(hangs)] = False
        reached = np.flatnonzero(~lost)
        result.inputs_over_budget = int(lost.sum())  # out of time, never reached or timed out
        ids = ids[:, reached]
        reached = reached.tolist()
        inputs = [inputs[x] for x in reached]
        report.outcomes = [[row[x] for x in reached] for row in report.outcomes]
    if not inputs:
        result.status = "error"
        result.reason = "every input ran out of the time budget: the programs are too slow for these inputs"
        result.seconds = time.monotonic() - started
        return None

    labels = labels_from_ids(ids, distinct)
    raised, errors = _raise_matrices(ids, distinct)
    metrics = score(labels, raised, errors, delta=config.delta)
    result.samples = metrics.programs
    result.inputs = metrics.inputs
    result.incoherence = metrics.incoherence
    result.incoherence_interval = list(metrics.incoherence_interval)
    result.disagreement = metrics.disagreement
    result.error_lower_bound = metrics.error_lower_bound
    result.pac_bound = metrics.pac_bound
    result.sde = metrics.sde
    result.dsde = metrics.dsde
    result.trust_raw = metrics.trust  # trust itself is read once the severity is final (calibrate)
    result.clusters = describe_clusters(metrics, programs)
    result.user_cluster = metrics.user_cluster
    result.load_errors = {programs[i].label: e for i, e in enumerate(report.load_errors) if e}
    result.timeouts = sum(report.timeouts)
    result.extra["programs_run"] = report.programs_run  # copies of one alternative run once

    if unstable is not None:
        result.status = "nondeterministic"
        result.reason = unstable_reason
        result.severity = "information"
    elif metrics.incoherence > 0:
        result.status = "incoherent"
    elif thin := thin_evidence(metrics.programs - 1, config, result.sampling):
        result.status = "error"
        result.reason = thin
    else:
        result.status = "coherent"

    members = metrics.cluster_members
    others = [g for i, g in enumerate(members) if i != metrics.user_cluster]
    if others:
        result.disagreeing_code = programs[others[0][0]].source
        if members[0] is not members[metrics.user_cluster] and len(members[0]) > len(members[metrics.user_cluster]):
            result.majority_code = programs[members[0][0]].source

    # The stated domain: the docstring's preconditions and examples, the workspace's tests, the
    # user's ``assume``.  Disagreement outside it is still disagreement, but no evidence against
    # the user's function (``verdict``), and the counterexample comes from inside when it can.
    domain = stated_domain(target, inputs) if result.status == "incoherent" else None
    inside = None
    disagree = metrics.per_input > 0
    if domain is not None and not domain.empty:
        inside = inside_mask(domain, inputs, disagree)
        result.domain = domain.describe()
    # A call of yours that ran out of time says it is slow there (or the machine was busy), not
    # what it returns: the verdict does not make a warning of it (``verdict.judge``).
    yours_slow = np.fromiter((o.error in OUT_OF_TIME for o in report.outcomes[0]), dtype=bool, count=len(inputs))
    return Scored(
        programs,
        inputs,
        labels,
        raised,
        metrics,
        domain,
        inside,
        disagree,
        yours_slow=yours_slow,
        outcomes=report.outcomes,
    )


def thin_evidence(alternatives: int, config: CheckConfig, sampling: str) -> str:
    """Why agreement with ``alternatives`` alternatives is too little to call a function coherent
    ("" when it is enough): fewer than ``min_alternatives``, or than all that were asked for when
    fewer were (``--samples 2`` asks for one)."""
    needed = min(config.min_alternatives, config.samples - 1)
    if alternatives >= needed:
        return ""
    return (
        f"too little evidence to call it coherent: it agrees with {alternatives} alternative"
        f"{'' if alternatives == 1 else 's'} only ({sampling}), and min_alternatives is {needed}"
    )


def describe_clusters(metrics: Metrics, programs: list[Program]) -> list[Cluster]:
    """The behaviour clusters as a result shows them: size, whose, where their alternatives
    came from, and one alternative's source to read (``--show-alternatives``, the editor's diff)."""
    out = []
    for i, members in enumerate(metrics.cluster_members):
        alternatives = [programs[j] for j in members if j != 0]
        out.append(
            Cluster(
                size=len(members),
                yours=i == metrics.user_cluster,
                models=dict(Counter(p.origin or "unknown" for p in alternatives)),
                representative_source=alternatives[0].source if alternatives else None,
            )
        )
    return out


def judge_scored(
    scored: Scored,
    discredited: set[int] | frozenset[int] = frozenset(),
    followers: set[int] | frozenset[int] = frozenset(),
) -> verdict.Evidence:
    """The verdict on a scored check; inputs like the examples' magnitudes are preferred as its
    evidence.  ``discredited`` alternatives (they contradict a worked example of the docstring)
    have no vote, as long as two alternatives keep theirs.  ``followers`` have none at all: they
    reproduce a docstring example that alternatives special-case in their code
    (``stated.special_cased``), and what they return near it is the example's, by fiat (the
    recorded median samples return 15.0 on every ordering of the example's list)."""
    disagreeing = np.flatnonzero(scored.disagree).tolist()
    # the table's masks that read the inputs (the domain's own, ``inside``, came with the score)
    names = [r.name for r in rules.JUDGED if r.name != "inside" and r.applies(scored.panel)]
    masks = rules.input_masks(scored.inputs, disagreeing, scored.domain, names=names)
    rows = [j for j in range(len(scored.programs)) if j not in discredited and j not in followers]
    if len(rows) < 3:
        rows = [j for j in range(len(scored.programs)) if j not in followers]
    labels, raised = scored.labels[rows], scored.raised[rows]
    if scored.outcomes is not None:  # changing an argument yours leaves alone is no evidence
        labels = agreeing_labels(labels, [scored.outcomes[j] for j in rows], disagreeing)
    incoherent = bool((labels != labels[:1]).any())
    models = [scored.models[j] for j in rows]
    evidence = verdict.judge(
        labels,
        raised,
        inside=scored.inside,
        incoherent=incoherent,
        yours_slow=scored.yours_slow,
        models=models,
        masks=masks,
        **verdict.PANEL_TERMS,
    )
    if evidence.severity == "none" and followers:
        return verdict.Evidence(
            "hint",
            alternatives=len(rows) - 1,
            why="the alternatives that differ from yours follow a docstring example that some of them special-case in their code",
        )
    if evidence.severity == "none":  # only the discredited ones disagree with yours
        return verdict.Evidence(
            "hint",
            alternatives=len(rows) - 1,
            why="only alternatives that contradict the docstring's worked examples disagree with yours",
        )
    if evidence.rival is not None:
        evidence.rival = rows[evidence.rival]  # back to the program's own index
    return evidence


def inside_mask(domain: Domain, inputs: list[Input], disagree: np.ndarray) -> np.ndarray:
    """Which inputs lie inside ``domain``, asked only of those some programs disagree on: the
    rest are never a counterexample, and asking all of a thousand cost an incoherent check
    several milliseconds on its critical path.  False elsewhere."""
    return rules.input_masks(inputs, np.flatnonzero(disagree).tolist(), domain, names=("inside",))["inside"]


# An alternative is dropped as too slow when it reached fewer than this share of the inputs the
# median program reached within its time budget.
_SLOW_REACH = 0.5


def too_slow(reached: np.ndarray, finished: np.ndarray) -> list[int]:
    """The alternatives (rows after the user's, row 0) that ran out of time long before the others.

    ``reached[p, x]``: program p got to input x within its budget; ``finished[p, x]``: it also
    returned or raised there (no timeout).  Reach is measured against the median program: when
    most programs are slow, the inputs are what is too big, and they go instead.  And a short
    reach alone is not enough, because where a run stops is noisy when the calls take about the
    timeout (docs/results.md#slow-alternatives): the
    inputs the program gave up on must mostly be ones that most other programs finished.  Only
    inputs yours reached count: the ones its tail budget left out, every program skipped."""
    reach = reached.sum(axis=1)
    bar = _SLOW_REACH * np.median(reach)
    slow = []
    for p in range(1, len(reach)):
        if reach[p] >= bar:
            continue
        gave_up = ~finished[p] & reached[0]
        others = np.delete(finished, p, axis=0)[:, gave_up]
        finished_by_most = 2 * others.sum(axis=0) > len(others)
        if 2 * finished_by_most.sum() > gave_up.sum():
            slow.append(p)
    return slow


def drop_programs(
    drop: list[int], programs: list[Program], valid: list[Any], report: ExecutionReport
) -> tuple[list[Program], list[Any], list[int]]:
    """Leave the alternatives ``drop`` out of the programs, their samples and the report's rows;
    returns (programs, samples, indices kept)."""
    keep = [p for p in range(len(programs)) if p not in drop]
    report.outcomes = [report.outcomes[p] for p in keep]
    report.load_errors = [report.load_errors[p] for p in keep]
    return [programs[p] for p in keep], [valid[p - 1] for p in keep[1:]], keep


def _raise_matrices(ids: np.ndarray, distinct: list[Outcome]) -> tuple[np.ndarray, np.ndarray]:
    """Which calls raised, and an integer code of the exception type (-1 where none was)."""
    codes: dict[str, int] = {}
    raised = np.array([o.kind == "raise" for o in distinct], dtype=bool)
    errors = np.array(
        [codes.setdefault(o.error or "", len(codes)) if o.kind == "raise" else -1 for o in distinct], dtype=np.int64
    )
    return raised[ids], errors[ids]


def _nondeterminism(report: ExecutionReport, rerun: list[int]) -> tuple[int, Outcome, Outcome] | None:
    for x, again in zip(rerun, report.rerun):
        first = report.outcomes[0][x]
        if {again.error, first.error} & OUT_OF_TIME:
            continue  # a slow call, or one never made, is not evidence of nondeterminism
        if not outcomes_equal(first, again):
            return x, first, again
    return None
