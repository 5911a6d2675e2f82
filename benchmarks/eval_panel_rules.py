"""Replay the severity rule with and without the panel term (``verdict.judge(models=...,
cross_share=...)``) on recorded ``coherence eval --panel`` runs and on same-model runs, from
``--keep-matrices`` output.  Prints a markdown table per run and pooled; no sandbox runs.

    python benchmarks/eval_panel_rules.py RUN_ROOT...    # e.g. /work/panel-runs /tmp/ev-after-he
    python benchmarks/eval_panel_rules.py PANEL_ROOT... --same SAME_MODEL_ROOT...   # each panel run
                                                         # beside its author's same-model run
    python benchmarks/eval_panel_rules.py PANEL_ROOT... --table SAME_MODEL_ROOT...  # the README's table
    python benchmarks/eval_panel_rules.py --lomo PANEL_ROOT...   # the whole-models term's threshold,
                                                                 # leave-one-model-out

A panel run's rows get their models back from ``eval.panel.compose`` (the same corpora and seed
as the run: ``run.json``); a same-model run's rows are all one model, so the panel term cannot
change its verdicts (the script counts them anyway, to show it).  A diagnostic on a passing
function is "unverified" unless the reference solution returns what the bloc returns on the
evidence's input (then it is a bug the tests miss).  "verified" uses the reference's
outcome on the rule's own (unshrunk) input, as ``eval_verdict_rules.py`` does.  What holds a
panel's missed failures down, and how far a per-input extension of the rule gets:
``eval_panel_misses.py``.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from coherence.engine.verdict import PANEL_HELD_SHARE, PANEL_WHOLE_MIN_INPUTS, PANEL_WHOLE_MODELS, judge
from coherence.eval.corpus import load_samples
from coherence.eval.panel import compose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_verdict_rules import checked, input_masks, reference_backs, unpack

# name -> judge's panel keywords
BACKS = {"model_backs": "hint"}
VARIANTS: dict[str, dict] = {
    "shipped": {},
    "cross 1/3": {"cross_share": 1 / 3},
    "bloc of 2 models": {"bloc_models": 2},
    "a model backs yours: information": {"model_backs": "information"},
    "a model backs yours: hint": BACKS,
    "bloc of 2 models, a model backs yours: hint": {"bloc_models": 2, **BACKS},
    "a model backs yours: hint; the bloc's models hold 2/3": {**BACKS, "held_share": 2 / 3},
    "a model backs yours: hint; the bloc's models hold 3/4": {**BACKS, "held_share": 3 / 4},
    "a model backs yours: hint; the bloc's models hold all": {**BACKS, "held_share": 1.0},
}
# the panel term of s37 (no whole-models term, no empty-collections cap), and the terms since:
# ``masks_off`` leaves a table rule's mask out of the replay
HELD = {**BACKS, "held_share": PANEL_HELD_SHARE}
S37_PANEL_RULE = "s37: a model backs yours: hint; held 3/4; no empty-collections cap"
VARIANTS[S37_PANEL_RULE] = {**HELD, "masks_off": ["empty_collections"]}
VARIANTS["held 3/4; empty-collections cap"] = HELD
WHOLE_MIN_INPUTS = (1, 3, 10, 30, 100)  # the thresholds leave-one-model-out chooses among
for _k in WHOLE_MIN_INPUTS:
    VARIANTS[f"held 3/4; empty-collections cap; two whole models on {_k}+ inputs"] = {
        **HELD,
        "whole_models": PANEL_WHOLE_MODELS,
        "whole_min_inputs": _k,
    }
VARIANTS["held 3/4; two whole models on 10+ inputs; no empty-collections cap"] = {
    **HELD,
    "whole_models": PANEL_WHOLE_MODELS,
    "whole_min_inputs": PANEL_WHOLE_MIN_INPUTS,
    "masks_off": ["empty_collections"],
}
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


def replay(run: Path, only: set[str] | None = None, rules: list[str] | None = None) -> dict[str, dict[str, int]]:
    """Per rule (``rules``: these of VARIANTS alone): the counts over the run's checked tasks
    (``only``: these task ids alone)."""
    variants = {k: v for k, v in VARIANTS.items() if rules is None or k in rules}
    origins = origins_of(run)
    rows: dict[str, dict[str, int]] = {v: defaultdict(int) for v in variants}
    for r, mtx in checked(run, complete=True, only=only):
        labels, raised, ref, ref_raised, inside = unpack(mtx)
        models = (
            [origins[str(mtx["task_id"])][c] for c in mtx["candidates"]]
            if origins
            else ["one"] * len(mtx["candidates"])
        )
        fails = not r.get("candidate0_pass")
        incoherent = (r.get("incoherence") or 0) > 0
        masks = input_masks(mtx)
        for name, kw in variants.items():
            row = rows[name]
            row["functions"] += 1
            row["failing"] += fails
            kept = {k: v for k, v in masks.items() if k not in kw.get("masks_off", ())}
            ev = judge(
                labels,
                raised,
                inside=inside,
                incoherent=incoherent,
                models=models,
                masks=kept,
                **{k: v for k, v in kw.items() if k != "masks_off"},
            )
            if ev.severity in DIAGNOSTIC:
                row["diag on passing"] += not fails
                # a real bug the tests miss: the reference sides with the bloc
                theirs = reference_backs(labels, ref, ref_raised, ev.rival, ev.input)
                row["unverified on passing"] += not fails and not theirs
                row["diag on failing"] += fails
            if ev.severity == "warning":
                row["W"] += 1
                row["W failing"] += fails
                row["W verified"] += fails or theirs
    return rows


def same_model_runs(roots: list[Path]) -> dict[tuple[str, str], Path]:
    """(benchmark, model) -> a same-model run directory under ``roots``."""
    out = {}
    for run in sorted({p.parent for root in roots for p in root.rglob("matrices.jsonl")}):
        settings = json.loads((run / "run.json").read_text())["settings"]
        if not settings.get("panel"):
            out[(settings["benchmark"], settings["model"])] = run
    return out


def _task_ids(run: Path) -> set[str]:
    return {str(json.loads(x)["task_id"]) for x in (run / "tasks.jsonl").read_text().splitlines() if x.strip()}


def pairs(panel_roots: list[Path], same_roots: list[Path]):
    """(panel run, its settings, the author's same-model run, the task ids both hold)."""
    same = same_model_runs(same_roots)
    for run in sorted({p.parent for root in panel_roots for p in root.rglob("matrices.jsonl")}):
        settings = json.loads((run / "run.json").read_text())["settings"]
        base = same.get((settings["benchmark"], settings["model"]))
        if settings.get("panel") and base is not None:
            yield run, settings, base, _task_ids(run) & _task_ids(base)


def versus(panel_roots: list[Path], same_roots: list[Path]) -> None:
    """Per panel run: the same-model run on the panel's tasks (shipped rule, replayed) beside the
    panel under every rule."""
    f = lambda a, b: f"{a / b:.3f}" if b else "–"  # noqa: E731
    print(
        "| run | rule | failing | W recall | W prec. (verified) | diag. recall | diag. on passing | of them unverified |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for run, _, base, both in pairs(panel_roots, same_roots):
        rows = {"same model": replay(base, both)["shipped"], **replay(run, both)}
        for name, row in rows.items():
            print(
                f"| {run.name} | {name} | {row['failing']} | {f(row['W failing'], row['failing'])} | {f(row['W verified'], row['W'])} | "
                f"{f(row['diag on failing'], row['failing'])} | {row['diag on passing']} | {row['unverified on passing']} |"
            )


# what engine/verdict/scoring.py passes
SHIPPED_PANEL_RULE = f"held 3/4; empty-collections cap; two whole models on {PANEL_WHOLE_MIN_INPUTS}+ inputs"
EARLIER_PANEL_RULE = "a model backs yours: hint"  # the panel term before the held share


def readme_table(panel_roots: list[Path], same_roots: list[Path]) -> None:
    """The README's table: per panel run, same model -> panel with the earlier panel term ->
    panel with the shipped one, on the tasks both runs checked."""
    f = lambda a, b: f"{a / b:.2f}" if b else "–"  # noqa: E731
    print(
        "| benchmark | candidate 0 from | alternatives from | tasks | failing | W recall | W precision (verified) "
        "| diagnostics on passing | of which unverified |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for run, settings, base, ids in pairs(panel_roots, same_roots):
        b = replay(base, ids, ["shipped"])["shipped"]
        p = replay(run, ids, [EARLIER_PANEL_RULE, SHIPPED_PANEL_RULE])
        members = settings["panel"].split("+")
        who = f"the {len(members)} others" if len(members) > 3 else ", ".join(members)
        cells = [
            " → ".join(fmt(r) for r in (b, p[EARLIER_PANEL_RULE], p[SHIPPED_PANEL_RULE]))
            for fmt in (
                lambda r: f(r["W failing"], r["failing"]),
                lambda r: f(r["W verified"], r["W"]),
                lambda r: str(r["diag on passing"]),
                lambda r: str(r["unverified on passing"]),
            )
        ]
        print(
            f"| {settings['benchmark']} | {settings['model']} | {who} | {b['functions']} | {b['failing']} | {' | '.join(cells)} |"
        )


def _fit(by_run: dict, train: list[Path], name: str) -> tuple[float, float]:
    """A rule's verified precision, then recall, on the ``train`` runs."""
    w, wf, wv, fl = (sum(by_run[r][name][k] for r in train) for k in ("W", "W failing", "W verified", "failing"))
    return (wv / w if w else 0.0, wf / fl if fl else 0.0)


def lomo(roots: list[Path]) -> None:
    """The whole-models term's input threshold chosen leave-one-model-out: for each author, the
    threshold of WHOLE_MIN_INPUTS with the highest verified precision on the other authors' panel
    runs (then the higher recall), scored on that author's; pooled over the held-out authors,
    beside the s37 rule and the empty-collections cap alone (no threshold to fit)."""
    runs = sorted({p.parent for root in roots for p in root.rglob("matrices.jsonl")})
    runs = [r for r in runs if json.loads((r / "run.json").read_text())["settings"].get("panel")]
    whole = [f"held 3/4; empty-collections cap; two whole models on {k}+ inputs" for k in WHOLE_MIN_INPUTS]
    fixed = [S37_PANEL_RULE, "held 3/4; empty-collections cap"]
    by_run = {run: replay(run, rules=fixed + whole) for run in runs}
    f = lambda a, b: f"{a / b:.3f}" if b else "–"  # noqa: E731
    pooled: dict[str, dict[str, int]] = {name: defaultdict(int) for name in [*fixed, "two whole models, LOMO"]}
    print("| held-out author | threshold chosen on the others | W | W recall | W prec. (verified) |")
    print("|---|---|---|---|---|")
    for held in runs:
        train = [r for r in runs if r != held]

        chosen = max(whole, key=lambda name, train=train: _fit(by_run, train, name))
        row = by_run[held][chosen]
        print(
            f"| {held.name} | {chosen.rsplit(' on ', 1)[1]} | {row['W']} | {f(row['W failing'], row['failing'])} | "
            f"{f(row['W verified'], row['W'])} |"
        )
        for name, got in [*((n, by_run[held][n]) for n in fixed), ("two whole models, LOMO", row)]:
            for k, v in got.items():
                pooled[name][k] += v
    print("\n| pooled over held-out authors | W | W recall | W prec. (verified) |")
    print("|---|---|---|---|")
    for name, row in pooled.items():
        print(f"| {name} | {row['W']} | {f(row['W failing'], row['failing'])} | {f(row['W verified'], row['W'])} |")


def main(argv: list[str]) -> int:
    if "--lomo" in argv:  # panel roots: the whole-models threshold, leave-one-model-out
        lomo([Path(a) for a in argv if a != "--lomo"])
        return 0
    if "--table" in argv:  # panel roots --table same-model roots
        i = argv.index("--table")
        readme_table([Path(a) for a in argv[:i]], [Path(a) for a in argv[i + 1 :]])
        return 0
    if "--same" in argv:  # panel roots --same same-model roots
        i = argv.index("--same")
        versus([Path(a) for a in argv[:i]], [Path(a) for a in argv[i + 1 :]])
        return 0
    runs = sorted({p.parent for a in argv or ["."] for p in Path(a).rglob("matrices.jsonl")})
    pooled: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: {v: defaultdict(int) for v in VARIANTS})
    f = lambda a, b: f"{a / b:.3f}" if b else "–"  # noqa: E731
    print(
        "| run | rule | functions | failing | W | W recall | W prec. (verified) | diag. recall | diag. on passing "
        "| of which unverified |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        kind = "panel" if json.loads((run / "run.json").read_text())["settings"].get("panel") else "same model"
        for name, row in replay(run).items():
            for k, v in row.items():
                pooled[kind][name][k] += v
            print(
                f"| {run.name} | {name} | {row['functions']} | {row['failing']} | {row['W']} | {f(row['W failing'], row['failing'])} | "
                f"{f(row['W verified'], row['W'])} | {f(row['diag on failing'], row['failing'])} | {row['diag on passing']} | "
                f"{row['unverified on passing']} |"
            )
    for kind, by_rule in pooled.items():
        for name, row in by_rule.items():
            print(
                f"| pooled {kind} | {name} | {row['functions']} | {row['failing']} | {row['W']} | {f(row['W failing'], row['failing'])} | "
                f"{f(row['W verified'], row['W'])} | {f(row['diag on failing'], row['failing'])} | {row['diag on passing']} | "
                f"{row['unverified on passing']} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
