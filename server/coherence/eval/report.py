"""Summaries of ``tasks.jsonl``: ``summary.json``, the Table-2-style markdown, and ``--compare``.

Every key of ``summary.json`` is defined in the docstring of :mod:`coherence.eval`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from coherence.engine.result import SEVERITIES
from coherence.eval.labels import right
from coherence.eval.stats import auroc, detection_rate, mean, median, share, spearman
from coherence.eval.verdicts import verdict_summary

CHECKED = ("coherent", "incoherent", "nondeterministic")

# Detection rates the incoherence paper reports at m=10, n=1000 with benchmark seeds
# (HumanEval, MBPP), from ../shared/corpus/README.md.
PAPER_DETECTION = {
    "gpt_4o": (0.70, 0.72),
    "gemini_2_5_pro": (0.72, 0.69),
    "ministral_8b": (0.74, 0.70),
}
PAPER_MEAN_DETECTION = (0.66, 0.69)  # mean over the paper's 16 models
DSDE_PAPER_AUROC = 0.75  # top-anchored DSDE, predicting pass@1 failure (semantic-distance paper)


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def summarize(records: list[dict], meta: dict | None = None) -> dict[str, Any]:
    """The summary of one run (one model, one benchmark, one seed mode)."""
    meta = dict(meta or {})
    first = records[0] if records else {}
    checked = [r for r in records if r.get("status") in CHECKED and r.get("incoherence") is not None]
    with_err = [r for r in checked if r.get("error") is not None]
    inc = [r["incoherence"] for r in checked]
    fails = [not r.get("candidate0_pass", False) for r in checked]
    flagged = [r for r in checked if r["incoherence"] > 0]
    undetected = [r["error"] for r in with_err if r["incoherence"] == 0 and r["error"] > 0]
    confident = [r["error"] for r in with_err if r["incoherence"] == 0]
    failing = [r for r in checked if not r.get("candidate0_pass", False)]
    false_alarms = [r for r in flagged if r.get("all_used_pass")]
    value_err = [r for r in checked if r.get("error_value") is not None]

    summary: dict[str, Any] = {
        "model": meta.get("model", first.get("model")),
        "benchmark": meta.get("benchmark", first.get("benchmark")),
        "panel": meta.get("panel", first.get("panel")),  # --panel: the alternatives' models
        "tasks": len(records),
        "checked": len(checked),
        "samples": meta.get("samples", first.get("samples_requested")),
        "samples_real_mean": _r(mean([r.get("samples") for r in checked])),
        "inputs": meta.get("inputs", first.get("inputs_requested")),
        "inputs_real_mean": _r(mean([r.get("inputs") for r in checked]), 1),
        "seeds": meta.get("seeds", first.get("seeds")),
        "pass_at_1": _r(share([bool(r.get("candidate0_pass")) for r in records])),
        "mean_error": _r(mean([r["error"] for r in with_err])),
        "mean_error_value": _r(mean([r["error_value"] for r in value_err])),
        "mean_error_mean_candidates": _r(mean([r.get("error_mean_candidates") for r in with_err])),
        "mean_incoherence": _r(mean(inc)),
        "spearman_error_incoherence": _r(
            spearman([r["error"] for r in with_err], [r["incoherence"] for r in with_err])
        ),
        "detection_rate": _r(detection_rate([r["error"] for r in with_err], [r["incoherence"] for r in with_err])),
        "detection_rate_tests": _r(share([r["incoherence"] > 0 for r in failing])),
        "detection_rate_mean_error": _r(
            detection_rate([r.get("error_mean_candidates") for r in with_err], [r["incoherence"] for r in with_err])
        ),
        "detection_rate_value_error": _r(
            detection_rate([r["error_value"] for r in value_err], [r["incoherence"] for r in value_err])
        ),
        "tasks_error_positive": sum(1 for r in with_err if r["error"] > 0),
        "tasks_failing_tests": len(failing),
        "tasks_incoherent": len(flagged),
        "undetected_mean_error": _r(mean(undetected)),
        "undetected_tasks": len(undetected),
        "confident_mean_error": _r(mean(confident)),
        "false_alarm_rate": _r(len(false_alarms) / len(flagged)) if flagged else None,
        "false_alarm_denominator": len(flagged),
        "auroc_dsde": _r(auroc([r["dsde"] for r in checked], fails)),
        "auroc_sde": _r(auroc([r["sde"] for r in checked], fails)),
        "auroc_incoherence": _r(auroc(inc, fails)),
        "auroc_dsde_error": _r(auroc([r["dsde"] for r in with_err], [r["error"] > 0 for r in with_err])),
        # not the warnings' precision (``warning_precision_tests``): every Î > 0 counts here
        "incoherent_precision_tests": _r(share([not r.get("candidate0_pass", False) for r in flagged])),
        "share_zero_incoherence": _r(
            share([r.get("status") in CHECKED and r.get("incoherence") == 0 for r in records])
        ),
        # deemed correct by the oracle on the fuzzed inputs (Figure 1's "zero empirical error")
        "share_zero_error": _r(share([r.get("status") in CHECKED and r.get("error") == 0 for r in records])),
        "seconds_per_task_median": _r(median([r.get("seconds") for r in records]), 3),
        "seconds_total_tasks": _r(sum(r.get("seconds") or 0 for r in records), 1),
        "statuses": dict(Counter(r.get("status") for r in records)),
        "definitions": "see the docstring of coherence.eval (detection_rate: paper, error > 0; detection_rate_tests: candidate 0 fails the tests)",
    }
    summary.update(verdict_summary(records))
    summary["trust_by_severity"] = trust_by_severity(checked)
    if meta.get("engine"):
        summary["engine"] = meta["engine"]
    summary["inputs_over_budget_tasks"] = sum(1 for r in records if r.get("inputs_over_budget"))
    if meta.get("wall_seconds") is not None:
        summary["wall_seconds"] = _r(meta["wall_seconds"], 1)
    origins: Counter = Counter()
    for r in records:
        origins.update(r.get("input_origins") or {})
    summary["input_origins"] = dict(origins)

    # The paper's own per-task estimates (difftrust logs), when they were found for this run.
    paper = [r for r in records if isinstance(r.get("paper"), dict) and "Dis" in r["paper"]]
    if paper:
        p_err = [r["paper"]["Err"] for r in paper]
        p_dis = [r["paper"]["Dis"] for r in paper]
        err_ids = {id(r) for r in with_err}
        both = [r for r in paper if id(r) in err_ids]
        summary["paper_log"] = {
            "tasks": len(paper),
            "detection_rate": _r(detection_rate(p_err, p_dis)),
            "mean_error": _r(mean(p_err)),
            "mean_incoherence": _r(mean(p_dis)),
            "spearman_error_incoherence": _r(spearman(p_err, p_dis)),
            "share_zero_incoherence": _r(share([d == 0 for d in p_dis])),
            # agreement with this run, task by task, where both have numbers
            "tasks_both": len(both),
            "incoherent_both": sum(1 for r in both if r["incoherence"] > 0 and r["paper"]["Dis"] > 0),
            "incoherent_only_here": sum(1 for r in both if r["incoherence"] > 0 and r["paper"]["Dis"] == 0),
            "incoherent_only_paper": sum(1 for r in both if r["incoherence"] == 0 and r["paper"]["Dis"] > 0),
            "error_positive_both": sum(1 for r in both if r["error"] > 0 and r["paper"]["Err"] > 0),
            "error_positive_only_here": sum(1 for r in both if r["error"] > 0 and r["paper"]["Err"] == 0),
            "error_positive_only_paper": sum(1 for r in both if r["error"] == 0 and r["paper"]["Err"] > 0),
            "spearman_incoherence_vs_paper": _r(
                spearman([r["incoherence"] for r in both], [r["paper"]["Dis"] for r in both])
            ),
            "spearman_error_vs_paper": _r(spearman([r["error"] for r in both], [r["paper"]["Err"] for r in both])),
        }
    model = summary["model"]
    if model in PAPER_DETECTION and summary["benchmark"] in ("HumanEval", "MBPP"):
        summary["paper_detection_rate"] = PAPER_DETECTION[model][0 if summary["benchmark"] == "HumanEval" else 1]
    return summary


# ---------------------------------------------------------------------------------------------
# markdown
# ---------------------------------------------------------------------------------------------


def _f(x: Any, nd: int = 2) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def table_markdown(summaries: list[dict]) -> str:
    """Table 2 of the incoherence paper, one table per seed mode: a row per model, a column group
    per benchmark; then every run in full."""
    out: list[str] = []
    by_seeds: dict[str, list[dict]] = defaultdict(list)
    for s in summaries:
        by_seeds[str(s.get("seeds"))].append(s)
    cols = [
        ("pass@1", "pass_at_1"),
        ("Err>0", "tasks_error_positive"),
        ("det.", "detection_rate"),
        ("det. paper", None),
        ("det. logs", None),
        ("det. Ē", "detection_rate_mean_error"),
        ("det. tests", "detection_rate_tests"),
        ("undet. Err", "undetected_mean_error"),
        ("false al.", "false_alarm_rate"),
        ("AUROC DSDE", "auroc_dsde"),
    ]
    for seeds, group in sorted(by_seeds.items()):
        ms = group[0].get("samples")
        ns = group[0].get("inputs")
        benches = [b for b in ("HumanEval", "MBPP") if any(x.get("benchmark") == b for x in group)]  # no empty columns
        out.append(f"### Seeds: {seeds} (m={ms}, n={ns})\n")
        head = ["model"] + [f"{b} {c}" for b in benches for c, _ in cols]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        models = sorted({s.get("model") for s in group}, key=str)
        for model in models:
            row = [str(model)]
            for b in benches:
                hit = next((x for x in group if x.get("model") == model and x.get("benchmark") == b), None)
                for label, key in cols:
                    if hit is None:
                        row.append("")
                    elif label == "det. paper":
                        row.append(_f(hit.get("paper_detection_rate")))
                    elif label == "det. logs":
                        row.append(_f((hit.get("paper_log") or {}).get("detection_rate")))
                    elif key == "tasks_error_positive":
                        row.append(f"{hit.get(key)}/{hit.get('checked')}")
                    else:
                        row.append(_f(hit.get(key)))
            out.append("| " + " | ".join(row) + " |")
        means = []
        for b in benches:
            vals = [v for x in group if x.get("benchmark") == b and (v := x.get("detection_rate")) is not None]
            means.append(f"{b} {(sum(vals) / len(vals)):.2f}" if vals else f"{b} –")
        out.append("")
        out.append(
            f"Mean detection rate here: {', '.join(means)} · paper, mean of 16 models: "
            f"HumanEval {PAPER_MEAN_DETECTION[0]:.2f}, MBPP {PAPER_MEAN_DETECTION[1]:.2f}. "
            "det. = share of tasks with pointwise error > 0 that have Î > 0 (paper's definition); "
            "det. paper = the rate the paper reports for the model (benchmark test seeds, m=10, n=1000); "
            "det. Ē = the same with the error averaged over the m programs (the paper's logged Err is that mean); "
            "det. logs = the paper's definition computed from its per-task difftrust logs; det. tests = share of "
            "tasks whose candidate 0 fails the benchmark tests that have Î > 0; false al. = tasks with "
            "Î > 0 whose programs all pass the tests, over tasks with Î > 0.\n"
        )
    out.append(verdicts_markdown(summaries))
    out.append(
        "W prec. (tests) = warnings on functions that fail the tests, over warnings (warning_precision_tests); "
        "incoherent_precision_tests below = tasks with Î > 0 whose candidate 0 fails the tests, over tasks with "
        "Î > 0, whatever their verdict.\n"
    )
    out.append(trust_markdown(summaries))
    out.append("### Every run\n")
    keys = [
        "model",
        "benchmark",
        "seeds",
        "tasks",
        "checked",
        "pass_at_1",
        "mean_error",
        "mean_incoherence",
        "spearman_error_incoherence",
        "detection_rate",
        "detection_rate_mean_error",
        "detection_rate_tests",
        "undetected_mean_error",
        "false_alarm_rate",
        "false_alarm_denominator",
        "auroc_incoherence",
        "auroc_sde",
        "auroc_dsde",
        "incoherent_precision_tests",
        "share_zero_incoherence",
        "seconds_per_task_median",
        "wall_seconds",
    ]
    out.append("| " + " | ".join(keys) + " |")
    out.append("|" + "---|" * len(keys))
    for s in sorted(summaries, key=lambda x: (str(x.get("seeds")), str(x.get("model")), str(x.get("benchmark")))):
        out.append("| " + " | ".join(_f(s.get(k), 3 if k != "wall_seconds" else 0) for k in keys) + " |")
    return "\n".join(out) + "\n"


VERDICT_COLUMNS = [
    ("model", "model"),
    ("benchmark", "benchmark"),
    ("seeds", "seeds"),
    ("checked", "checked"),
    ("failing", "failing"),
    ("W", "warnings"),
    ("I", "informations"),
    ("H", "hints"),
    ("W recall (tests)", "warning_recall_tests"),
    ("W prec. (tests)", "warning_precision_tests"),
    ("W prec. (verified)", "warning_precision_verified"),
    ("I prec. (verified)", "information_precision_verified"),
    ("cx rejected", "counterexample_rejected_share"),
    ("diag. on clean", "diagnostics_on_clean"),
    ("incoh. on clean", "incoherent_on_clean"),
    ("ECE trust", "ece_trust"),
    ("AUROC trust", "auroc_trust"),
    ("AUROC DSDE", "auroc_dsde"),
]


def verdicts_markdown(summaries: list[dict], title: str = "### Verdicts\n") -> str:
    """One row per summary (a run, or a pool of runs): the verdicts' precision and recall (see
    :mod:`coherence.eval.verdicts` for the definitions)."""
    out = [title, "| " + " | ".join(c for c, _ in VERDICT_COLUMNS) + " |", "|" + "---|" * len(VERDICT_COLUMNS)]
    for s in sorted(summaries, key=lambda x: (str(x.get("benchmark")), str(x.get("seeds")), str(x.get("model")))):
        out.append("| " + " | ".join(_f(s.get(k), 3) for _, k in VERDICT_COLUMNS) + " |")
    return "\n".join(out) + "\n"


def trust_by_severity(checked: list[dict]) -> dict[str, dict]:
    """Per severity: functions, mean trust, and the share that were right (``labels.right``)."""
    out = {}
    for sev in SEVERITIES:
        group = [r for r in checked if (r.get("severity") or "none") == sev and r.get("trust") is not None]
        if group:
            out[sev] = {
                "n": len(group),
                "trust": _r(mean([r["trust"] for r in group])),
                "right": _r(share([right(r) for r in group])),
            }
    return out


def trust_markdown(summaries: list[dict], title: str = "### Trust by severity\n") -> str:
    """Per run and severity: mean trust against the share of functions that were right."""
    out = [
        title,
        "Right: passes the benchmark's tests, and the reference does not side with the alternatives on the "
        "counterexample shown. Each cell: mean trust / share right (functions).\n",
        "| model | benchmark | seeds | " + " | ".join(SEVERITIES) + " |",
        "|" + "---|" * (3 + len(SEVERITIES)),
    ]
    for s in sorted(summaries, key=lambda x: (str(x.get("benchmark")), str(x.get("seeds")), str(x.get("model")))):
        t = s.get("trust_by_severity") or {}
        cells = [f"{_f(t[v]['trust'])} / {_f(t[v]['right'])} ({t[v]['n']})" if v in t else "" for v in SEVERITIES]
        out.append(f"| {s.get('model')} | {s.get('benchmark')} | {s.get('seeds')} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def calibration_markdown(data: dict) -> str:
    """``coherence eval --calibrate``'s report: per benchmark and severity, then per model, the
    trust the runs recorded and the trust fit without the function's model, against the share
    of functions that were right."""
    out = [
        "## Trust calibration, leave-one-model-out\n",
        f"Corpus: {data['corpus']}  \nEngine that measured it: {data['engine']}  \nLabel: {data['label']}  \n"
        f"Shipped maps: depth {data['depth']} (0 one map, 1 per severity, 2 and spec stratum, 3 and panel), "
        f"shrinkage {data['shrinkage']:g}, steps of at least {data['min_block']} functions, chosen "
        f"leave-one-model-out (Brier + per-cell gap {_f(data['score_leave_one_model_out'], 4)}). "
        "Held out: each model's trust comes from maps fit on the other models, with depth/shrinkage/step "
        "chosen again on those models alone: "
        + ", ".join(
            f"{m} {c['depth']}/{c['shrinkage']:g}/{c['min_block']}" for m, c in data["held_out_choices"].items()
        )
        + ".\n",
        "### Per severity\n",
        "Before: the trust the runs recorded (the engine's map at the time, fit on these same models: in sample). "
        "After: held out. Gap: |mean trust − share right|.\n",
        "| benchmark | severity | n | trust before | trust after | share right | gap before | gap after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for bench, table in data["held_out_by_severity"].items():
        for sev, c in table.items():
            before = c.get("trust_recorded")
            gap_b = None if before is None else abs(before - c["right"])
            out.append(
                f"| {bench} | {sev} | {c['n']} | {_f(before)} | {_f(c['trust'])} | {_f(c['right'])} | "
                f"{_f(gap_b, 3)} | {_f(abs(c['trust'] - c['right']), 3)} |"
            )
    ece = data["ece_leave_one_model_out"]
    out.append("")
    out.append("ECE held out: " + ", ".join(f"{b} {_f(e, 4)}" for b, e in ece.items()) + "\n")
    out.append("### Per model\n")
    out.append(
        "Each severity: trust before → after / share right (n). ECE and AUROC (predicting a wrong function) "
        "before → after; AUROC DSDE is the raw score's.\n"
    )
    out.append("| model | benchmark | n | " + " | ".join(SEVERITIES) + " | ECE | AUROC trust | AUROC DSDE |")
    out.append("|" + "---|" * (6 + len(SEVERITIES)))
    for model, benches in data["held_out_by_model"].items():
        for bench, m in benches.items():
            cells = []
            for sev in SEVERITIES:
                c = m["severity"].get(sev)
                cells.append(f"{_f(c['trust_recorded'])} → {_f(c['trust'])} / {_f(c['right'])} ({c['n']})" if c else "")
            out.append(
                f"| {model} | {bench} | {m['n']} | "
                + " | ".join(cells)
                + f" | {_f(m['ece_recorded'], 3)} → {_f(m['ece'], 3)} | {_f(m['auroc_trust_recorded'], 3)} → "
                f"{_f(m['auroc_trust'], 3)} | {_f(m['auroc_dsde'], 3)} |"
            )
    return "\n".join(out) + "\n"


def pooled(records_by_run: list[list[dict]]) -> list[dict]:
    """The verdict summary of every (benchmark, seeds) pool of runs, models together."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    models: dict[tuple, set] = defaultdict(set)
    for records in records_by_run:
        for r in records:
            key = (r.get("benchmark"), r.get("seeds"))
            groups[key].append(r)
            models[key].add(r.get("model"))
    out = []
    for (bench, seeds), recs in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        summary = {
            "model": f"pooled ({len(models[(bench, seeds)])} models)",
            "benchmark": bench,
            "seeds": seeds,
            "checked": sum(1 for r in recs if r.get("status") in CHECKED),
            "tasks": len(recs),
        }
        summary.update(verdict_summary(recs))
        out.append(summary)
    return out


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------


def write_pooled(out_dir: Path) -> list[dict]:
    """``DIR/pooled.json`` and ``DIR/pooled.md``: the verdicts of every run under ``DIR``, pooled
    per benchmark and seed mode."""
    runs = []
    for tasks in sorted(Path(out_dir).rglob("tasks.jsonl")):
        recs = []
        for line in tasks.read_text(encoding="utf-8").splitlines():
            try:
                recs.append(json.loads(line))
            except ValueError:
                continue
        runs.append(recs)
    pools = pooled(runs)
    (Path(out_dir) / "pooled.json").write_text(json.dumps(pools, indent=2) + "\n", encoding="utf-8")
    (Path(out_dir) / "pooled.md").write_text(
        verdicts_markdown(pools, "### Verdicts, models pooled\n"), encoding="utf-8"
    )
    return pools


def find_summaries(dirs: list[str | Path]) -> list[tuple[Path, dict]]:
    found = []
    for d in dirs:
        p = Path(d)
        paths = [p] if p.is_file() else sorted(p.rglob("summary.json"))
        for sp in paths:
            try:
                found.append((sp, json.loads(sp.read_text(encoding="utf-8"))))
            except (OSError, ValueError):
                continue
    return found


def write_run_outputs(out_dir: Path, records: list[dict], meta: dict, *, plots: bool = True) -> dict:
    """``summary.json``, ``table.md`` and the plots of one run."""
    summary = summarize(records, meta)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out_dir / "table.md").write_text(table_markdown([summary]), encoding="utf-8")
    if plots and records:
        from coherence.eval import plots as plotting

        try:
            plotting.error_vs_incoherence(records, out_dir / "error_vs_incoherence.png", title=_title(summary))
            plotting.roc(records, out_dir / "roc_dsde.png", title=_title(summary))
        except ImportError as exc:
            summary["plots"] = f"not drawn: {exc} (pip install 'coherence[eval]')"
    return summary


def _title(s: dict) -> str:
    return (
        f"{s.get('model')} · {s.get('benchmark')} · seeds {s.get('seeds')} · m={s.get('samples')}, n={s.get('inputs')}"
    )


def compare(summaries: list[dict]) -> list[dict]:
    """Per (benchmark, seeds): Spearman ρ between the models' ranking by the share of tasks with zero
    incoherence and their ranking by pass@1 (``spearman``), and by the share with zero pointwise
    error (``spearman_zero_error``): the paper's Figure 1."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for s in summaries:
        groups[(s.get("benchmark"), s.get("seeds"))].append(s)
    out = []
    for (bench, seeds), group in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        rows = [g for g in group if g.get("pass_at_1") is not None and g.get("share_zero_incoherence") is not None]
        # one summary per model (a later duplicate replaces an earlier one)
        by_model = {g.get("model"): g for g in rows}
        rows = sorted(by_model.values(), key=lambda g: -g["pass_at_1"])
        zero_inc = [g["share_zero_incoherence"] for g in rows]
        rho = spearman([g["pass_at_1"] for g in rows], zero_inc) if len(rows) >= 2 else None
        # the same against the ranking by zero empirical error (older summaries lack it: None)
        zero_err = [g.get("share_zero_error") for g in rows]
        rho_err = spearman(zero_err, zero_inc) if len(rows) >= 2 and None not in zero_err else None
        out.append(
            {
                "benchmark": bench,
                "seeds": seeds,
                "models": [
                    {
                        "model": g.get("model"),
                        "pass_at_1": g["pass_at_1"],
                        "share_zero_incoherence": g["share_zero_incoherence"],
                        "share_zero_error": g.get("share_zero_error"),
                    }
                    for g in rows
                ],
                "spearman": rho,
                "spearman_zero_error": rho_err,
            }
        )
    return out


def compare_text(groups: list[dict]) -> str:
    lines = []
    for g in groups:
        lines.append(
            f"{g['benchmark']} · seeds {g['seeds']}: Spearman ρ(pass@1 ranking, zero-incoherence ranking) = {_f(g['spearman'], 3)}, "
            f"ρ(zero-error ranking, zero-incoherence ranking) = {_f(g.get('spearman_zero_error'), 3)} over {len(g['models'])} models"
        )
        lines.append(f"  {'model':<26} {'pass@1':>7} {'I=0 share':>10}")
        for m in g["models"]:
            lines.append(f"  {m['model']!s:<26} {m['pass_at_1']:>7.3f} {m['share_zero_incoherence']:>10.3f}")
    return "\n".join(lines)
