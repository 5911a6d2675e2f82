"""What if the estimator compared outcomes differently, or ignored some inputs?  Offline, from the
outcome matrices ``coherence eval --keep-matrices`` writes (``matrices.jsonl`` next to
``tasks.jsonl``): no program is re-run, the labels (tests, pointwise error) stay as measured.

    python benchmarks/eval_whatif.py RUN_DIR [RUN_DIR...] [--examples]

For each rule it recomputes Î (U-statistic) and DSDE with the engine's own ``metrics.score`` and
prints the detection rates, false alarms, warning precision and AUROCs.  Rules:

- ``design``: the engine as it is (sanity check: must reproduce the run's numbers);
- ``raise-any``: two raises are equal whatever their exception types (Timeout included);
- ``no-timeout``: inputs on which any program timed out are dropped;
- ``all-return``: only inputs on which every program returns (the inputs all agree are valid);
- ``majority-return``: inputs on which more than half of the programs raise are dropped;
- ``raise-any+no-timeout``: both;
- ``seeds-only`` / ``no-seeds``: only the seed inputs (doctest, test, default, annotation) / only the
  mutants, to see what mutation adds;
- ``in-domain``: only the inputs inside the domain the docstring's examples show
  (``coherence.engine.stated.domain``: never negative, only these characters, sorted, rectangular,
  equals len(other)); a task with no such rule, or none of whose inputs is in the domain, keeps all;
- ``in-domain-or-seeds``: the in-domain inputs plus every seed (default and annotation seeds too);
- ``out-of-domain``: only the inputs outside the domain (a task without a domain, or one that does
  not line up, has none: Î = 0).

The domain rules need the inputs themselves, which the matrices do not hold: for each task the
target is rebuilt from the run's corpus (``run.json``'s ``samples_file``) and the inputs are
regenerated as the eval did in signature mode (same spec, seed, n; a generous time budget, since
the output is a pure function of those unless the budget cuts it short: a prefix of the
matrix's length is what ran).  A task lines up when the regenerated origins equal the matrix's
origins string (and the recorded wrong-input example, if any, is among the regenerated inputs);
one that does not keeps all its inputs under the domain rules and is counted.  Runs made with
``--seeds tests`` are not regenerated (their seeds need the benchmark's test file).

``det.kept`` is the paper's detection rate with candidate 0's pointwise error recomputed on the
kept inputs only (``det.`` uses the error over all inputs, as recorded).  ``--examples`` lists, per
run, the tasks whose flag the ``in-domain`` rule changes, with one dropped input on which the
programs disagree and why it lies outside the domain.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.markers import target_for
from coherence.engine.sampling import extract_program
from coherence.engine.stated.domain import Domain
from coherence.engine.verdict.metrics import score
from coherence.eval.corpus import load_samples, safe_name
from coherence.eval.runner import read_records
from coherence.eval.stats import auroc, detection_rate, share
from coherence.eval.task import _ORIGIN_CODE


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


# ---------------------------------------------------------------------------------------------
# the domain of each task (regenerated inputs)
# ---------------------------------------------------------------------------------------------

GEN_BUDGET = 120.0  # seconds: generous, so that the regenerated list is never cut shorter than the eval's


def domains(run_dir: Path, recs: list[dict], mats: dict) -> dict[str, dict]:
    """Per task id: ``status`` ("lined up" or why not), and when lined up ``mask`` (True = the input
    is in the domain), ``rules`` (the domain's rules), ``inputs`` and ``why`` (the regenerated
    inputs, and the violations of each out-of-domain input, by column)."""
    out: dict[str, dict] = {}
    try:
        run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        settings = run["settings"]
        samples = {s.key: s for s in load_samples(run["samples_file"])}
    except (OSError, ValueError, KeyError) as exc:
        return {str(r["task_id"]): {"status": f"no corpus ({type(exc).__name__})"} for r in recs}
    if settings.get("seeds") != "signature":
        return {str(r["task_id"]): {"status": "not signature mode"} for r in recs}
    for r in recs:
        key = str(r["task_id"])
        out[key] = _domain_of(r, mats[key], samples.get(key), settings)
    return out


def _domain_of(rec: dict, m: dict, st, settings: dict) -> dict:
    if not m.get("origins"):
        return {"status": "no origins in the matrix"}
    if st is None:
        return {"status": "task not in the corpus"}
    name = st.entry_point
    c0 = extract_program(st.candidates[0], name) if st.candidates else None
    if c0 is None or not c0.ok:
        return {"status": "candidate 0 unusable"}
    try:
        target = target_for(c0.code, name, f"{safe_name(st.task_id)}.py", docstring=st.description or None)
    except (SyntaxError, LookupError):
        return {"status": "no target"}
    inputs = generate_inputs(
        target.spec,
        int(settings.get("inputs", 1000)),
        module_source=target.module_source,
        workspace=None,
        seed=int(settings.get("seed", 0)),
        time_budget=GEN_BUDGET,
    )
    ncols = len(m["labels"][0]) if m["labels"] else 0
    if len(inputs) < ncols:
        return {"status": "fewer inputs regenerated"}
    inputs = inputs[:ncols]
    if "".join(_ORIGIN_CODE.get(i.origin, "?") for i in inputs) != m["origins"]:
        return {"status": "origins differ"}
    example = (rec.get("error_example") or {}).get("call")
    if example and example not in {i.call(name)[:300] for i in inputs}:
        return {"status": "recorded example input not regenerated"}
    dom = Domain(target.spec, inputs, infer_types)
    why = {x: v for x, inp in enumerate(inputs) if (v := dom.violations(inp))}
    return {
        "status": "lined up",
        "rules": dom.describe(),
        "mask": np.array([x not in why for x in range(ncols)], dtype=bool),
        "inputs": inputs,
        "why": why,
        "name": name,
        "cut": ncols < int(settings.get("inputs", 1000)),
    }


DOMAIN_RULES = ("in-domain", "in-domain-or-seeds", "out-of-domain")


def rule_view(m: dict, rule: str, dom: dict | None = None):
    labels = np.array(m["labels"], dtype=np.int64)[:-1]  # drop the reference row
    errors = np.array(m["errors"], dtype=np.int64)[:-1]
    raised = errors >= 0
    names = m["error_names"]
    timeout = (
        np.array([[e >= 0 and names[e] == "Timeout" for e in row] for row in errors], dtype=bool)
        if "Timeout" in names
        else np.zeros_like(raised)
    )
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
    if rule in DOMAIN_RULES:
        inside = dom["mask"] if dom and dom.get("mask") is not None else None
        if rule == "out-of-domain":
            keep &= ~inside if inside is not None else np.zeros_like(keep)
        elif inside is not None:
            if rule == "in-domain-or-seeds":
                inside = inside | np.array([c != "m" for c in origins], dtype=bool)
            if (keep & inside).any():  # no input in the domain: keep them all
                keep &= inside
    return labels[:, keep], raised[:, keep], errors[:, keep], keep


RULES = [
    "design",
    "raise-any",
    "no-timeout",
    "all-return",
    "majority-return",
    "raise-any+no-timeout",
    "seeds-only",
    "no-seeds",
]


def kept_error(m: dict, keep: np.ndarray) -> float | None:
    """Candidate 0's pointwise error against the reference (the matrix's last row) on the kept
    inputs: inputs where the reference raised, or candidate 0 never ran, are not counted."""
    labels = np.array(m["labels"], dtype=np.int64)
    errors = np.array(m["errors"], dtype=np.int64)
    names = m["error_names"]
    budget = names.index("BudgetExceeded") if "BudgetExceeded" in names else -2
    counted = keep & (errors[-1] < 0) & (errors[0] != budget)
    if not counted.any():
        return None
    return float((labels[0][counted] != labels[-1][counted]).mean())


def evaluate(items: list[tuple[dict, dict, dict | None]], rule: str) -> dict:
    """``items``: (tasks.jsonl record, matrix, domain) per task."""
    inc, dsde, err, err_kept, fails, allpass = [], [], [], [], [], []
    recs = [r for r, _, _ in items]
    for r, m, dom in items:
        labels, raised, errors, keep = rule_view(m, rule, dom)
        if labels.shape[1] == 0:
            i, d = 0.0, 0.0
        else:
            met = score(labels, raised, errors)
            i, d = met.incoherence, met.dsde
        inc.append(i)
        dsde.append(d)
        err.append(r.get("error"))
        err_kept.append(kept_error(m, keep) if r.get("error") is not None else None)
        fails.append(not r.get("candidate0_pass"))
        allpass.append(bool(r.get("all_used_pass")))
    flagged = [k for k, i in enumerate(inc) if i > 0]
    with_err = [k for k, e in enumerate(err) if e is not None]
    return {
        "rule": rule,
        "tasks": len(recs),
        "incoherent": len(flagged),
        "detection_rate": detection_rate([err[k] for k in with_err], [inc[k] for k in with_err]),
        "detection_rate_kept": detection_rate(err_kept, inc),
        "detection_rate_tests": share([inc[k] > 0 for k in range(len(recs)) if fails[k]]),
        "false_alarm_rate": (sum(1 for k in flagged if allpass[k]) / len(flagged)) if flagged else None,
        "warning_precision": share([fails[k] for k in flagged]),
        "auroc_incoherence": auroc(inc, fails),
        "auroc_dsde": auroc(dsde, fails),
        "max_abs_diff_vs_recorded": max(
            (abs(inc[k] - (recs[k].get("incoherence") or 0)) for k in range(len(recs))), default=0.0
        )
        if rule == "design"
        else None,
        # the recomputed error over all columns must reproduce the recorded one
        "max_abs_error_diff": max(
            (
                abs(r["error"] - (kept_error(m, np.ones(len(m["labels"][0]), dtype=bool)) or 0.0))
                for r, m, _ in items
                if r.get("error") is not None
            ),
            default=0.0,
        )
        if rule == "design"
        else None,
        "flags": inc,
    }


HEADER = (
    f"  {'rule':<22} {'I>0':>5} {'det.':>6} {'det.kept':>8} {'det.tests':>9} {'false al.':>9} {'w.prec':>7} "
    f"{'AUROC I':>8} {'AUROC DSDE':>10}"
)


def _f(x):
    return "    –" if x is None else f"{x:.3f}"


def print_rule(s: dict, extra: str = "") -> None:
    print(
        f"  {s['rule']:<22} {s['incoherent']:>5} {_f(s['detection_rate']):>6} {_f(s['detection_rate_kept']):>8} "
        f"{_f(s['detection_rate_tests']):>9} {_f(s['false_alarm_rate']):>9} {_f(s['warning_precision']):>7} "
        f"{_f(s['auroc_incoherence']):>8} {_f(s['auroc_dsde']):>10}{extra}"
    )


def domain_line(items) -> str:
    doms = [d for _, _, d in items]
    lined = [d for d in doms if d and d.get("status") == "lined up"]
    ruled = [d for d in lined if d["rules"]]
    dropped = [d for d in ruled if not d["mask"].all()]
    cut = sum(1 for d in lined if d.get("cut"))
    reasons: dict[str, int] = {}
    for d in doms:
        if d and d.get("status") != "lined up":
            reasons[d["status"]] = reasons.get(d["status"], 0) + 1
    not_lined = ", ".join(f"{v} {k}" for k, v in sorted(reasons.items())) or "none"
    out_share = (sum(int((~d["mask"]).sum()) for d in ruled) / sum(d["mask"].size for d in ruled)) if ruled else 0.0
    return (
        f"  domain: {len(lined)} of {len(items)} tasks lined up ({cut} with fewer than n inputs; not lined up: "
        f"{not_lined}); {len(ruled)} have a domain, {len(dropped)} of them with inputs outside it "
        f"({out_share:.1%} of their inputs)"
    )


def print_examples(items, design: dict, indom: dict) -> None:
    """Tasks whose flag (Î > 0) the in-domain rule changes, with a dropped input where the programs
    disagree."""
    for k, (r, m, dom) in enumerate(items):
        was, now = design["flags"][k] > 0, indom["flags"][k] > 0
        if was == now:
            continue
        kind = (
            "false alarm removed"
            if r.get("all_used_pass")
            else "true detection lost"
            if not r.get("candidate0_pass")
            else "alarm removed (c0 passes, another fails)"
        )
        if now:
            kind = "new flag"
        print(
            f"    {r['task_id']}: {kind}; Î {design['flags'][k]:.4f} -> {indom['flags'][k]:.4f}; domain: {'; '.join(dom['rules'])}"
        )
        labels = np.array(m["labels"], dtype=np.int64)[:-1]
        split = [x for x in dom["why"] if len(set(labels[:, x].tolist())) > 1]
        if split:
            x = min(split, key=lambda x: (dom["inputs"][x].size(), x))
            groups = sorted(np.unique(labels[:, x], return_counts=True)[1].tolist(), reverse=True)
            print(
                f"      e.g. {dom['inputs'][x].call(dom['name'])[:160]}  (programs split {'+'.join(map(str, groups))}; "
                f"{'; '.join(dom['why'][x])}; {len(split)} such inputs)"
            )


def main() -> int:
    args = sys.argv[1:]
    examples = "--examples" in args
    dirs = [Path(a) for a in args if not a.startswith("--")]
    if not dirs:
        print(__doc__)
        return 2
    pooled: dict[str, list] = {}
    runs = 0
    for d in dirs:
        for run_dir, recs, mats in load(d):
            doms = domains(run_dir, recs, mats)
            items = [(r, mats[str(r["task_id"])], doms.get(str(r["task_id"]))) for r in recs]
            bench = str(recs[0].get("benchmark") or "?") if recs else "?"
            pooled.setdefault(bench, []).extend(items)
            runs += 1
            print(f"\n{run_dir} ({len(recs)} tasks with matrices)")
            print(HEADER)
            results = {}
            for rule in RULES + list(DOMAIN_RULES):
                s = evaluate(items, rule)
                results[rule] = s
                extra = ""
                if rule == "design":
                    extra = (
                        f"  (design vs recorded Î: max |diff| {s['max_abs_diff_vs_recorded']:.2g}; "
                        f"recomputed error vs recorded: {s['max_abs_error_diff']:.2g})"
                    )
                print_rule(s, extra)
            print(domain_line(items))
            if examples:
                print_examples(items, results["design"], results["in-domain"])
    groups = list(pooled.items()) if runs > 1 else []
    if len(groups) > 1:
        groups.append(("all", [it for _, its in pooled.items() for it in its]))
    for bench, items in groups:
        print(f"\npooled: {bench} ({len(items)} tasks)")
        print(HEADER)
        for rule in ("design",) + DOMAIN_RULES:
            print_rule(evaluate(items, rule))
        print(domain_line(items))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
