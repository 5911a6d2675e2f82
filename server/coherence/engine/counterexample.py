"""Pick, shrink and explain one input on which the user's function disagrees with alternatives.

Choice (DESIGN.md): an input where the user's outcome differs from the largest cluster that
disagrees with the user, preferring inputs where both sides returned normally, then the smallest.
Shrinking re-runs only those two programs on one-step smaller inputs while they still disagree
(and still both return, when they did).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coherence.engine.execution import ModuleContext, Program
from coherence.engine.inputs import Input
from coherence.engine.inputs.generate import shrink_candidates
from coherence.engine.inputs.shrink import shrink_key
from coherence.engine.metrics import Metrics
from coherence.engine.outcomes import Outcome, group_outcomes, outcomes_equal
from coherence.engine.result import ClusterOutput, Counterexample


def choose(labels: np.ndarray, raised: np.ndarray, inputs: Sequence[Input], metrics: Metrics) -> tuple[int, int] | None:
    """(input index, representative program of the opposing cluster), or None when P0 agrees with all."""
    others = [g for i, g in enumerate(metrics.cluster_members) if i != metrics.user_cluster]
    if not others:
        return None
    rep = others[0][0]  # clusters are sorted largest first
    differs = np.flatnonzero(labels[0] != labels[rep])
    if differs.size == 0:
        return None
    both_ok = differs[~raised[0, differs] & ~raised[rep, differs]]
    pool = both_ok if both_ok.size else differs
    best = min(pool.tolist(), key=lambda x: (inputs[x].size(), x))
    return best, rep


def shrink(executor, module: ModuleContext, user: Program, rival: Program, start: Input, start_outcomes: tuple[Outcome, Outcome], *, rounds: int = 8, seed: int = 0, cancel=None) -> Input:
    """Greedy shrinking: take the smallest one-step variant on which the two programs still disagree."""
    current = start
    want_both_ok = start_outcomes[0].kind == "ok" and start_outcomes[1].kind == "ok"
    for _ in range(rounds):
        # shrink_key, not size(): halving 9 to 4 keeps the size but is still simpler.
        candidates = [c for c in shrink_candidates(current) if shrink_key(c) < shrink_key(current)]
        if not candidates:
            break
        report = executor.run(module, [user, rival], [c.source() for c in candidates], seed=seed, cancel=cancel)
        if report.module_error or any(report.load_errors):
            break
        keep = []
        for idx, cand in enumerate(candidates):
            mine, theirs = report.outcomes[0][idx], report.outcomes[1][idx]
            if outcomes_equal(mine, theirs):
                continue
            if want_both_ok and (mine.kind != "ok" or theirs.kind != "ok"):
                continue
            if mine.error == "Timeout" or theirs.error == "Timeout":
                continue  # a disagreement made of a timeout is not one a user can read
            keep.append(cand)
        if not keep:
            break
        current = min(keep, key=lambda c: (shrink_key(c), c.key()))
    if current is not start:
        current = Input(args=current.args, kwargs=current.kwargs, origin="shrink")
    return current


def describe(name: str, inp: Input, outcomes: Sequence[Outcome], rival_index: int, *, shrunk_from: Input | None = None) -> Counterexample:
    """Group every program's outcome on ``inp``; ``outcomes[0]`` is the user's."""
    labels = group_outcomes(outcomes)
    mine = outcomes[0]
    groups: dict[int, list[int]] = {}
    for prog, lab in enumerate(labels[1:], start=1):
        groups.setdefault(lab, []).append(prog)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    alternatives = [ClusterOutput(output=outcomes[g[0]].render(), count=len(g)) for _, g in ordered]
    disagreeing = sum(1 for lab in labels[1:] if lab != labels[0])
    rival = outcomes[rival_index]
    if outcomes_equal(rival, mine):  # the rival cluster's representative agreed here after all
        rival = next((outcomes[g[0]] for lab, g in ordered if lab != labels[0]), rival)
    return Counterexample(
        call=inp.call(name),
        yours=mine.render(),
        theirs=rival.render(),
        alternatives=alternatives,
        disagreeing=disagreeing,
        total=len(outcomes) - 1,
        shrunk_from=shrunk_from.call(name) if shrunk_from is not None and shrunk_from.key() != inp.key() else None,
    )
