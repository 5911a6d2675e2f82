"""The verdict of an incoherent (or coherent) check, into its result: the user's accept statements,
the docstring's worked examples, the severity and its evidence, and the counterexample shown.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from coherence.engine import verdict
from coherence.engine.result import CheckResult
from coherence.engine.verdict import counterexample as cx
from coherence.engine.verdict.acceptance import Accepted, accepted_inputs, covers, run_accepted
from coherence.engine.verdict.convincing import for_verdict
from coherence.engine.verdict.scored import Judging
from coherence.engine.verdict.scoring import judge_scored
from coherence.engine.verdict.stated import (
    Found,
    Votes,
    discredited,
    example_counterexample,
    example_verdict,
    example_votes,
    followers,
    stated_outcomes,
)


async def decide(j: Judging, result: CheckResult, report_progress: Callable[[str, float], None]) -> None:
    """The severity, its evidence and the counterexample of an incoherent check, into ``result``.

    The docstring's worked examples are part of the spec: a function that contradicts one is
    wrong or documented wrongly, whatever the alternatives say (``verdict.from_examples``).
    Its stages' seconds go into the result's timings: the verdict, the wait for the inputs run
    ahead (``convincing.run_ahead``), then the counterexample."""
    target, scored = j.target, j.scored
    timings = result.extra.setdefault("timings", {})
    stage = time.monotonic()
    accepted: list[Accepted] = []
    if target.accept:
        accepted = await asyncio.to_thread(run_accepted, j.executor, j.config.seed, target, j.module, scored, j.cancel)
    examples, votes = await _examples(j)
    stated, special = example_verdict(examples, votes, scored)
    without = discredited(votes, scored.models, verdict.PANEL_HELD_SHARE, scored.voters, special)
    by_fiat = followers(votes, special)
    # in a thread, like scoring: a thousand disagreeing inputs cost it milliseconds
    evidence = await asyncio.to_thread(judge_scored, scored, without - by_fiat, by_fiat)
    if stated is not None:
        evidence = verdict.stronger(stated, evidence)
    result.severity = evidence.severity
    result.evidence = evidence.to_dict()
    if evidence.kind != "example" and without:
        result.evidence["discredited"] = len(without)  # alternatives without a vote
    timings["verdict"] = round(time.monotonic() - stage, 4)
    if j.ahead is not None and not (evidence.kind == "example" and evidence.input is not None):
        stage = time.monotonic()
        await asyncio.shield(j.ahead)  # what it runs, the shrink need not
        timings["ahead"] = round(time.monotonic() - stage, 4)  # what scoring and the verdict did not hide
    stage = time.monotonic()
    try:
        await _counterexample(j, result, evidence, examples, accepted, report_progress)
    finally:
        timings["counterexample"] = round(time.monotonic() - stage, 4)


async def _counterexample(
    j: Judging,
    result: CheckResult,
    evidence: verdict.Evidence,
    examples: list[Found],
    accepted: list[Accepted],
    report_progress: Callable[[str, float], None],
) -> None:
    """The counterexample the verdict's evidence rests on, into ``result``."""
    target, scored = j.target, j.scored
    if evidence.kind == "example" and evidence.input is not None:
        result.counterexample, result.disagreeing_code = example_counterexample(
            target, scored, examples[evidence.input], evidence
        )
        contradicted(result, evidence)
        return
    report_progress(f"{target.name}: shrinking a counterexample", 0.85)
    result.counterexample, where, rival, outcomes = await asyncio.to_thread(for_verdict, j, evidence)
    if outcomes is not None:
        shown = cx.render_outcomes(outcomes, target.spec.receiver)
        for cluster, members in zip(result.clusters, scored.metrics.cluster_members):
            cluster.output = shown[members[0]]
    if rival is not None and scored.programs[rival].source:
        result.disagreeing_code = scored.programs[rival].source  # the side the counterexample shows
    if scored.inside is not None and where:
        result.outside_domain = where
    ce = result.counterexample
    if accepted and ce is not None:
        calls = [c for c in (ce.call, ce.shrunk_from) if c]
        if evidence.input is not None:
            calls.append(scored.inputs[evidence.input].call(target.spec.callee))
        call = covers(accepted, target.spec.callee, calls, outcomes, rival)
        if call:  # the finding the user accepted: a hint that says so
            result.accepted = [call]
            result.severity = "hint"
            result.evidence["severity"] = "hint"
            result.evidence["why"] = "you accepted this disagreement as intended"


def contradicted(result: CheckResult, evidence: verdict.Evidence) -> None:
    """A function that contradicts a worked example (its docstring's, or a workspace test's
    assert) that alternatives reproduce is wrong or documented wrongly: its trust is at most the
    share of alternatives that side with it there, whatever the rest of the run says, so a
    failing test beside it never raises its trust."""
    if evidence.severity == "warning" and result.dsde is not None:
        result.evidence["trust_at_most"] = evidence.agree / max(1, evidence.alternatives)  # calibrate applies it


async def _examples(j: Judging) -> tuple[list[Found], list[Votes]]:
    """The docstring's worked examples with every program's outcome, and who gives each stated
    result; an example the user accepted yours on (a comment, the baseline) is left out."""
    examples = await asyncio.to_thread(
        stated_outcomes, j.executor, j.config.seed, j.target, j.module, j.scored, j.report, j.cancel, j.config.workspace
    )
    accepted = {inp.key() for _, inp in accepted_inputs(j.target)} if j.target.accept else set()
    examples = [e for e in examples if e[1].key() not in accepted]
    return examples, [example_votes(i, ex, row) for i, (ex, _, row) in enumerate(examples)]


async def against_examples(j: Judging, result: CheckResult) -> None:
    """A coherent function that contradicts its docstring's worked example: every program
    agrees, and not with the docstring.  The status stays coherent; the severity says there is
    something to read (``verdict.from_examples``: information when no alternative gives the
    stated result, which is what agreement means on an input they all ran)."""
    examples, votes = await _examples(j)
    evidence, _ = example_verdict(examples, votes, j.scored)
    if evidence is None or evidence.input is None:
        return
    result.severity = evidence.severity
    result.evidence = evidence.to_dict()
    result.counterexample, result.disagreeing_code = example_counterexample(
        j.target, j.scored, examples[evidence.input], evidence
    )
