"""Replay the severity rule with and without the panel term (``verdict.judge(models=...,
cross_share=...)``) on recorded ``coherence eval --panel`` runs and on same-model runs, from
``--keep-matrices`` output.  Prints a markdown table per run and pooled; no sandbox runs.

    python benchmarks/eval_panel_rules.py RUN_ROOT...    # e.g. /work/panel-runs /tmp/ev-after-he

A panel run's rows get their models back from ``eval.panel.compose`` (the same corpora and seed
as the run: ``run.json``); a same-model run's rows are all one model, so the panel term cannot
change its verdicts (the script counts them anyway, to show it).  "verified" uses the reference's
outcome on the rule's own (unshrunk) input, as ``eval_verdict_rules.py`` does.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from coherence.engine.verdict import judge
from coherence.eval.corpus import load_samples
from coherence.eval.panel import compose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_verdict_rules import unpack  # noqa: E402

# name -> (cross_share, bloc_models, model_backs)
VARIANTS = {"shipped": (None, 1, False), "cross 1/3": (1 / 3, 1, False), "bloc of 2 models": (None, 2, False),
            "a model backs yours": (None, 1, True), "bloc of 2 models, a model backs yours": (None, 2, True)}
DIAGNOSTIC = ("warning", "information")


def origins_of(run: Path) -> dict[str, list[str]] | None:
    """task id -> the model of each composed candidate, for a panel run (None: one model)."""
    meta = json.loads((run / "run.json").read_text())
    settings, author = meta["settings"], Path(meta["samples_file"])
    if not settings.get("panel"):
        return None
    prefix = author.name.split("-", 1)[0]
    others = [load_samples(author.parent / f"{prefix}-{m}.jsonl.gz") for m in settings["panel"].split("+")]
    composed = compose(load_samples(author), others, settings["samples"] - 1, settings["seed"])
    return {t.key: t.origins for t in composed}


def replay(run: Path) -> dict[str, dict[str, int]]:
    records = {str(r["task_id"]): r for r in map(json.loads, (run / "tasks.jsonl").read_text().splitlines()) if r.get("complete")}
    origins = origins_of(run)
    rows: dict[str, dict[str, int]] = {v: defaultdict(int) for v in VARIANTS}
    for line in (run / "matrices.jsonl").read_text().splitlines():
        mtx = json.loads(line)
        r = records.get(str(mtx["task_id"]))
        if r is None or r.get("status") not in ("coherent", "incoherent"):
            continue
        labels, raised, ref, ref_raised, inside = unpack(mtx)
        models = [origins[str(mtx["task_id"])][c] for c in mtx["candidates"]] if origins else ["one"] * len(mtx["candidates"])
        fails = not r.get("candidate0_pass")
        incoherent = (r.get("incoherence") or 0) > 0
        for name, (cross, spans, backs) in VARIANTS.items():
            row = rows[name]
            row["functions"] += 1
            row["failing"] += fails
            ev = judge(labels, raised, inside=inside, incoherent=incoherent, models=models, cross_share=cross, bloc_models=spans, model_backs=backs)
            if ev.severity in DIAGNOSTIC:
                row["diag on passing"] += not fails
                row["diag on failing"] += fails
            if ev.severity == "warning":
                row["W"] += 1
                row["W failing"] += fails
                row["W verified"] += fails or (not ref_raised[ev.input] and ref[ev.input] == labels[ev.rival, ev.input])
    return rows


def main(argv: list[str]) -> int:
    runs = sorted({p.parent for a in argv or ["."] for p in Path(a).rglob("matrices.jsonl")})
    pooled: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: {v: defaultdict(int) for v in VARIANTS})
    f = lambda a, b: f"{a / b:.3f}" if b else "–"  # noqa: E731
    print("| run | rule | functions | failing | W | W recall | W prec. (verified) | diag. recall | diag. on passing |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        kind = "panel" if json.loads((run / "run.json").read_text())["settings"].get("panel") else "same model"
        for name, row in replay(run).items():
            for k, v in row.items():
                pooled[kind][name][k] += v
            print(f"| {run.name} | {name} | {row['functions']} | {row['failing']} | {row['W']} | {f(row['W failing'], row['failing'])} | "
                  f"{f(row['W verified'], row['W'])} | {f(row['diag on failing'], row['failing'])} | {row['diag on passing']} |")
    for kind, by_rule in pooled.items():
        for name, row in by_rule.items():
            print(f"| pooled {kind} | {name} | {row['functions']} | {row['failing']} | {row['W']} | {f(row['W failing'], row['failing'])} | "
                  f"{f(row['W verified'], row['W'])} | {f(row['diag on failing'], row['failing'])} | {row['diag on passing']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
