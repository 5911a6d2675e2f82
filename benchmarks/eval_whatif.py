"""What if the estimator compared outcomes differently, or ignored some inputs?  Offline, from the
outcome matrices ``coherence eval --keep-matrices`` writes (``matrices.jsonl`` next to
``tasks.jsonl``): no program is re-run, the labels (tests, pointwise error) stay as measured.

    python benchmarks/eval_whatif.py RUN_DIR [RUN_DIR...]

For each rule it recomputes Î (U-statistic) and DSDE with the engine's own ``metrics.score`` and
prints the detection rates, false alarms, warning precision and AUROCs.  Rules:

- ``design``: the engine as it is (sanity check: must reproduce the run's numbers);
- ``raise-any``: two raises are equal whatever their exception types (Timeout included);
- ``no-timeout``: inputs on which any program timed out are dropped;
- ``all-return``: only inputs on which every program returns (the inputs all agree are valid);
- ``majority-return``: inputs on which more than half of the programs raise are dropped;
- ``raise-any+no-timeout``: both;
- ``seeds-only`` / ``no-seeds``: only the seed inputs (doctest, test, default, annotation) / only the
  mutants, to see what mutation adds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.engine.metrics import score  # noqa: E402
from coherence.eval.runner import read_records  # noqa: E402
from coherence.eval.stats import auroc, detection_rate, share  # noqa: E402


def load(run_dir: Path):
    for tasks_path in sorted(run_dir.rglob("tasks.jsonl")):
        mats = {}
        mpath = tasks_path.with_name("matrices.jsonl")
        if not mpath.is_file():
            continue
        with open(mpath, encoding="utf-8") as fh:
            for line in fh:
                try:
                    m = json.loads(line)
                except json.JSONDecodeError:
                    continue
                mats[str(m["task_id"])] = m
        recs = [r for r in read_records(tasks_path) if str(r["task_id"]) in mats]
        yield tasks_path.parent, recs, mats


def rule_view(m: dict, rule: str):
    labels = np.array(m["labels"], dtype=np.int64)[:-1]  # drop the reference row
    errors = np.array(m["errors"], dtype=np.int64)[:-1]
    raised = errors >= 0
    names = m["error_names"]
    timeout = np.array([[e >= 0 and names[e] == "Timeout" for e in row] for row in errors], dtype=bool) if "Timeout" in names else np.zeros_like(raised)
    # inputs some program never reached (its time budget ran out) are left out, as the Checker does
    keep = ~np.array([[e >= 0 and names[e] == "BudgetExceeded" for e in row] for row in errors], dtype=bool).any(axis=0)
    origins = m.get("origins") or ""
    if rule in ("raise-any", "raise-any+no-timeout"):
        labels = labels.copy()
        labels[raised] = labels.max() + 1 if labels.size else 0
        # relabel each column densely so per_input_disagreement's bincount stays small
        for x in range(labels.shape[1]):
            _, labels[:, x] = np.unique(labels[:, x], return_inverse=True)
        errors = np.where(raised, 0, -1)
    if rule in ("no-timeout", "raise-any+no-timeout"):
        keep &= ~timeout.any(axis=0)
    if rule == "all-return":
        keep &= ~raised.any(axis=0)
    if rule == "majority-return":
        keep &= raised.sum(axis=0) * 2 <= raised.shape[0]
    if rule in ("seeds-only", "no-seeds") and origins:
        seed = np.array([c != "m" for c in origins], dtype=bool)
        keep &= seed if rule == "seeds-only" else ~seed
    return labels[:, keep], raised[:, keep], errors[:, keep]


RULES = ["design", "raise-any", "no-timeout", "all-return", "majority-return", "raise-any+no-timeout", "seeds-only", "no-seeds"]


def evaluate(recs: list[dict], mats: dict, rule: str) -> dict:
    inc, dsde, err, fails, allpass = [], [], [], [], []
    for r in recs:
        m = mats[str(r["task_id"])]
        labels, raised, errors = rule_view(m, rule)
        if labels.shape[1] == 0:
            i, d = 0.0, 0.0
        else:
            met = score(labels, raised, errors)
            i, d = met.incoherence, met.dsde
        inc.append(i)
        dsde.append(d)
        err.append(r.get("error"))
        fails.append(not r.get("candidate0_pass"))
        allpass.append(bool(r.get("all_used_pass")))
    flagged = [k for k, i in enumerate(inc) if i > 0]
    with_err = [k for k, e in enumerate(err) if e is not None]
    return {
        "rule": rule,
        "tasks": len(recs),
        "incoherent": len(flagged),
        "detection_rate": detection_rate([err[k] for k in with_err], [inc[k] for k in with_err]),
        "detection_rate_tests": share([inc[k] > 0 for k in range(len(recs)) if fails[k]]),
        "false_alarm_rate": (sum(1 for k in flagged if allpass[k]) / len(flagged)) if flagged else None,
        "warning_precision": share([fails[k] for k in flagged]),
        "auroc_incoherence": auroc(inc, fails),
        "auroc_dsde": auroc(dsde, fails),
        "max_abs_diff_vs_recorded": max((abs(inc[k] - (recs[k].get("incoherence") or 0)) for k in range(len(recs))), default=0.0) if rule == "design" else None,
    }


def main() -> int:
    dirs = [Path(a) for a in sys.argv[1:]]
    if not dirs:
        print(__doc__)
        return 2
    for d in dirs:
        for run_dir, recs, mats in load(d):
            print(f"\n{run_dir} ({len(recs)} tasks with matrices)")
            print(f"  {'rule':<22} {'I>0':>5} {'det.':>6} {'det.tests':>9} {'false al.':>9} {'w.prec':>7} {'AUROC I':>8} {'AUROC DSDE':>10}")
            for rule in RULES:
                s = evaluate(recs, mats, rule)

                def f(x):
                    return "    –" if x is None else f"{x:.3f}"

                extra = f"  (design vs recorded Î: max |diff| {s['max_abs_diff_vs_recorded']:.2g})" if rule == "design" else ""
                print(f"  {rule:<22} {s['incoherent']:>5} {f(s['detection_rate']):>6} {f(s['detection_rate_tests']):>9} {f(s['false_alarm_rate']):>9} "
                      f"{f(s['warning_precision']):>7} {f(s['auroc_incoherence']):>8} {f(s['auroc_dsde']):>10}{extra}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
