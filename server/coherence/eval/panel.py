"""``coherence eval --panel``: recorded corpora composed into a panel of models.

Candidate 0 (the user's function) comes from the first corpus, the m-1 alternatives from the
others: the shares are as even as the count allows (9 alternatives over 7 models: two models give
two), which models give one more is drawn per task with a fixed seed, and so is which of a
model's recorded candidates is used.  The same seed, corpora and task always give the same panel,
so a panel run resumes and repeats like any eval run.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import replace

from coherence.eval.corpus import CorpusError, SampleTask


def panel_name(models: list[str]) -> str:
    """``claude_sonnet_4+gemini_2_5_pro``: the run folder and the ``panel`` field of a record."""
    return "+".join(models)


def compose(
    author: list[SampleTask], others: list[list[SampleTask]], alternatives: int, seed: int = 0
) -> list[SampleTask]:
    """One SampleTask per task of ``author`` that every corpus of ``others`` also holds:
    ``candidates[0]`` is the author's, the rest drawn from ``others``; ``origins[i]`` names the
    model of candidate i.  Tasks missing from a panel member are left out (the gain against the
    same-model run is computed on the tasks both have).  The author's own corpus may be a member
    too (a panel that keeps the author's model beside others): its share is drawn from the
    author's other candidates, never from candidate 0 itself."""
    if not others:
        raise CorpusError("--panel needs at least two corpus files: the author's, then the panel's")
    bench = author[0].benchmark
    by_model = []
    for corpus in others:
        if corpus[0].benchmark != bench:
            raise CorpusError(f"--panel mixes benchmarks ({bench} and {corpus[0].benchmark})")
        by_model.append({t.key: t for t in corpus})
    out = []
    for task in author:
        found = [m.get(task.key) for m in by_model]
        members = [m for m in found if m is not None and m.candidates]
        if not task.candidates or len(members) < len(found):
            continue
        rng = random.Random(zlib.crc32(f"{seed}:{task.key}".encode()))
        share, extra = divmod(alternatives, len(members))
        counts = [share] * len(members)
        for i in rng.sample(range(len(members)), extra):
            counts[i] += 1
        cands, origins = [task.candidates[0]], [task.model]
        for member, k in zip(members, counts):
            first = 1 if member.model == task.model else 0  # the author's own: not yours again
            pool = range(first, len(member.candidates))
            picked = rng.sample(pool, min(k, len(pool)))
            cands += [member.candidates[i] for i in picked]
            origins += [member.model] * len(picked)
        out.append(replace(task, candidates=cands, origins=origins, panel=panel_name([m.model for m in members])))
    return out


# The figures the gain compares (``report.summarize`` over the tasks both runs have), plus
# ``diagnostics_on_passing``: warnings and information on functions that pass their tests.
GAIN_KEYS = (
    "checked",
    "failing",
    "warnings",
    "informations",
    "warning_recall_tests",
    "warning_precision_tests",
    "warning_precision_verified",
    "diagnostic_recall_tests",
    "detection_rate_tests",
    "diagnostics_on_clean",
    "diagnostics_on_passing",
    "auroc_dsde",
)


def gain(panel_records: list[dict], baseline_records: list[dict]) -> dict:
    """The panel run against the same-model run on the tasks both checked: each figure of
    ``GAIN_KEYS`` for both, and the difference (panel minus same-model)."""
    from coherence.eval.report import summarize
    from coherence.eval.verdicts import DIAGNOSTIC, _checked

    both = {str(r["task_id"]) for r in _checked(panel_records)} & {
        str(r["task_id"]) for r in _checked(baseline_records)
    }

    def figures(records: list[dict]) -> dict:
        kept = [r for r in records if str(r["task_id"]) in both]
        s = summarize(kept)
        s["diagnostics_on_passing"] = sum(
            1 for r in kept if r.get("candidate0_pass") and r.get("severity") in DIAGNOSTIC
        )
        return {k: s.get(k) for k in GAIN_KEYS}

    p, b = figures(panel_records), figures(baseline_records)
    delta = {
        k: (round(p[k] - b[k], 4) if isinstance(p[k], (int, float)) and isinstance(b[k], (int, float)) else None)
        for k in GAIN_KEYS
    }
    return {"tasks": len(both), "panel": p, "same_model": b, "gain": delta}


def write_gain(run_dir, panel_records: list[dict], baseline_dir) -> str:
    """``gain.json`` in the panel's run folder; returns a one-line summary (or why there is none)."""
    import json
    from pathlib import Path

    from coherence.eval.runner import read_records

    baseline = read_records(Path(baseline_dir) / "tasks.jsonl")
    if not baseline:
        return f"coherence eval: no gain: {baseline_dir} holds no tasks.jsonl"
    g = gain(panel_records, baseline)
    Path(run_dir, "gain.json").write_text(json.dumps(g, indent=1) + "\n", encoding="utf-8")
    p, b = g["panel"], g["same_model"]

    def f(x):
        return "–" if x is None else (f"{x:.3f}" if isinstance(x, float) else str(x))

    return (
        f"panel vs same model on {g['tasks']} tasks: W recall {f(b['warning_recall_tests'])} -> {f(p['warning_recall_tests'])}, "
        f"W precision (verified) {f(b['warning_precision_verified'])} -> {f(p['warning_precision_verified'])}, "
        f"diagnostics on passing {b['diagnostics_on_passing']} -> {p['diagnostics_on_passing']} ({Path(run_dir) / 'gain.json'})"
    )
