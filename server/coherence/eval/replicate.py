"""``coherence eval --replicate CORPUS_DIR``: every model of a corpus folder, both seed modes, both
benchmarks, under one engine; then one table per benchmark in the papers' shape and their figures.

The runs are ordinary eval runs (``OUT/<benchmark>-<model>-<seeds>/``, resumable one by one); this
module finds the corpus files, keeps the runs to one engine, and writes ``OUT/replication-<bench>.md``,
``OUT/replication.json`` and the plots from whatever ``tasks.jsonl`` hold so far, so a replication
cut short still reports how far it got.

Figures, per the papers:

- incoherence paper, Table 2: per model, pass@1, the tasks with pointwise error > 0, the detection
  rate (of those, the share with Î > 0), the mean error of the undetected ones, the false alarms;
- incoherence paper, Figure 1: Spearman ρ between the models' ranking by the share of tasks with
  zero incoherence and their ranking by pass@1, and by the share with zero empirical (pointwise)
  error (``eval.report.compare``);
- incoherence paper, Figure 2: error against incoherence per task (pooled over the models);
- semantic-distance (DSDE) paper: AUROC of DSDE for predicting that candidate 0 fails its tests.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from coherence.eval.corpus import CorpusError, normalize_benchmark
from coherence.eval.report import (
    DSDE_PAPER_AUROC,
    PAPER_DETECTION,
    PAPER_MEAN_DETECTION,
    _f,
    compare,
    summarize,
)
from coherence.eval.runner import _engines_of, read_records

SEED_ORDER = ("tests", "signature")  # the papers' setting first
BENCH_ORDER = ("HumanEval", "MBPP")
# Spearman ρ of the pass@1 and zero-incoherence rankings of the paper's 16 models (Figure 1).
PAPER_RHO = {"HumanEval": 0.94, "MBPP": 0.92}


def discover(corpus_dir: str | Path) -> dict[str, tuple[Path, list[Path]]]:
    """``benchmark -> (task file, [samples file per model])`` of a corpus folder: task files are
    named ``*tasks*.jsonl[.gz]``, samples files ``<benchmark>-<model>.jsonl[.gz]``."""
    root = Path(corpus_dir)
    if not root.is_dir():
        raise CorpusError(f"{root} is not a folder")
    tasks: dict[str, Path] = {}
    samples: dict[str, list[Path]] = defaultdict(list)
    for p in sorted(root.iterdir()):
        if not (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz")) or not p.is_file():
            continue
        bench = normalize_benchmark(p.name.split("-", 1)[0])
        if bench not in BENCH_ORDER:
            continue
        if "tasks" in p.name:
            tasks[bench] = p
        else:
            samples[bench].append(p)
    plan = {b: (tasks[b], samples[b]) for b in BENCH_ORDER if b in tasks and samples.get(b)}
    if not plan:
        raise CorpusError(
            f"{root} holds no benchmark with both a task file (*tasks*.jsonl.gz) and samples files (<benchmark>-<model>.jsonl.gz)"
        )
    return plan


def other_engines(out: Path, fingerprint: str) -> list[str]:
    """The runs under ``out`` that another engine wrote to (a replication keeps to one)."""
    bad = []
    for run in sorted(Path(out).glob("*/run.json")):
        try:
            engines = _engines_of(json.loads(run.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        if (run.parent / "tasks.jsonl").is_file() and engines and engines != [fingerprint]:
            bad.append(f"{run.parent.name} ({'+'.join(engines)})")
    return bad


def _summaries(out: Path) -> list[dict]:
    """A summary per run under ``out``, from its ``tasks.jsonl`` as it is now (a run in progress
    counts what it has), with the task count of its corpus file when known."""
    found = []
    for tasks_path in sorted(Path(out).glob("*/tasks.jsonl")):
        records = read_records(tasks_path)
        if not records:
            continue
        run_dir = tasks_path.parent
        meta: dict = {}
        for name in ("summary.json", "run.json"):
            try:
                meta[name] = json.loads((run_dir / name).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                meta[name] = {}
        s = summarize(records, {"engine": "+".join(_engines_of(meta["run.json"])) or None})
        s["wall_seconds"] = meta["summary.json"].get("wall_seconds")
        s["finished"] = bool(meta["summary.json"]) and meta["summary.json"].get("tasks") == len(records)
        found.append(s)
    return found


TABLE2 = [  # (header, summary key) per seed mode
    ("tasks", "tasks"),
    ("Err>0", "tasks_error_positive"),
    ("det.", "detection_rate"),
    ("det. Ē", "detection_rate_mean_error"),
    ("det. tests", "detection_rate_tests"),
    ("undet. Err", "undetected_mean_error"),
    ("false al.", "false_alarm_rate"),
    ("Î=0", "share_zero_incoherence"),
    ("Err=0", "share_zero_error"),
    ("AUROC DSDE", "auroc_dsde"),
]


def benchmark_markdown(bench: str, summaries: list[dict], groups: list[dict]) -> str:
    """One benchmark's table: a row per model, pass@1, then the Table 2 columns per seed mode; the
    Spearman ρ of Figure 1 and the DSDE AUROC beside the papers'."""
    runs = [s for s in summaries if s.get("benchmark") == bench]
    seeds = [x for x in SEED_ORDER if any(s.get("seeds") == x for s in runs)]
    models = sorted({str(s.get("model")) for s in runs})
    by = {(str(s.get("model")), s.get("seeds")): s for s in runs}
    engines = sorted({str(s.get("engine")) for s in runs})
    first = runs[0] if runs else {}
    out = [
        f"## {bench}: {len(models)} models, m={first.get('samples')}, n={first.get('inputs')}, engine {', '.join(engines)}\n",
    ]
    head = ["model", "pass@1", "det. paper"] + [f"{x}: {c}" for x in seeds for c, _ in TABLE2]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    bi = BENCH_ORDER.index(bench) if bench in BENCH_ORDER else 0
    for model in models:
        any_run = next((by[(model, x)] for x in seeds if (model, x) in by), {})
        paper = PAPER_DETECTION.get(model)
        row = [model, _f(any_run.get("pass_at_1")), _f(paper[bi]) if paper else "–"]
        for x in seeds:
            s = by.get((model, x))
            for _, key in TABLE2:
                if s is None:
                    row.append("")
                elif key == "tasks":
                    row.append(f"{s['tasks']}" + ("" if s.get("finished") else " (running)"))
                elif key == "tasks_error_positive":
                    row.append(f"{s.get(key)}/{s.get('checked')}")
                else:
                    row.append(_f(s.get(key)))
        out.append("| " + " | ".join(row) + " |")
    mean_row = ["mean", "", _f(PAPER_MEAN_DETECTION[bi]) + " (16 models)"]
    for x in seeds:
        for _, key in TABLE2:
            vals = [float(v) for s in runs if s.get("seeds") == x and isinstance(v := s.get(key), float)]
            mean_row.append(_f(sum(vals) / len(vals)) if vals and key not in ("tasks", "tasks_error_positive") else "")
    out += ["| " + " | ".join(mean_row) + " |", ""]
    for g in groups:
        if g["benchmark"] != bench:
            continue
        n = len(g["models"])
        out.append(
            f"- seeds {g['seeds']}: Spearman ρ of the rankings by zero incoherence and by pass@1 = "
            f"{_f(g['spearman'], 3)}, and by zero empirical error = {_f(g.get('spearman_zero_error'), 3)}, "
            f"over {n} models (the paper: {PAPER_RHO.get(bench, '–')} over 16 models, by pass@1)"
        )
    out.append(
        f"- DSDE AUROC (predicting that candidate 0 fails its tests): the semantic-distance paper reports "
        f"about {DSDE_PAPER_AUROC} (K=10 samples, N=10 inputs)\n"
    )
    out.append(
        "pass@1: candidate 0 passes the benchmark's tests. det. = share of the tasks with pointwise error > 0 that have "
        "Î > 0 (the paper's detection rate); det. Ē = the same with the error averaged over the m programs (the paper's "
        "logged Err); det. tests = share of the tasks whose candidate 0 fails its tests that have Î > 0; undet. Err = mean "
        "error of the tasks with Err > 0 and Î = 0; false al. = share of the tasks with Î > 0 whose programs all pass "
        "the tests; Î=0 / Err=0 = share of all tasks with zero incoherence / zero pointwise error (Figure 1's rankings); "
        "det. paper = the rate the paper reports for the model (its mean over 16 models in the last row).\n"
    )
    return "\n".join(out)


def write_report(out: Path, *, plots: bool = True) -> tuple[list[Path], list[str]]:
    """The tables (``replication-<bench>.md``), ``replication.json`` and the figures of the runs
    under ``out``; returns the files written and what could not be drawn."""
    out = Path(out)
    summaries = _summaries(out)
    groups = compare(summaries)
    written: list[Path] = []
    for bench in BENCH_ORDER:
        if any(s.get("benchmark") == bench for s in summaries):
            path = out / f"replication-{bench}.md"
            path.write_text(benchmark_markdown(bench, summaries, groups), encoding="utf-8")
            written.append(path)
    data = {"runs": summaries, "rankings": groups, "paper_rho": PAPER_RHO, "paper_dsde_auroc": DSDE_PAPER_AUROC}
    (out / "replication.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    written.append(out / "replication.json")
    notes: list[str] = []
    if plots and summaries:
        try:
            written += _figures(out, groups)
        except ImportError as exc:
            notes.append(f"no plots: {exc} (pip install 'coherence[eval]')")
    return written, notes


def _figures(out: Path, groups: list[dict]) -> list[Path]:
    from coherence.eval import plots

    paths = [out / "figure1-rankings.png"]
    plots.compare_rankings(groups, paths[0])
    pooled: dict[tuple, list[dict]] = defaultdict(list)
    for tasks_path in sorted(out.glob("*/tasks.jsonl")):
        for r in read_records(tasks_path):
            pooled[(r.get("benchmark"), r.get("seeds"))].append(r)
    for (bench, seeds), records in sorted(pooled.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        title = f"{bench} · seeds {seeds} · {len({r.get('model') for r in records})} models pooled"
        fig2 = out / f"figure2-error-vs-incoherence-{bench}-{seeds}.png"
        plots.error_vs_incoherence(records, fig2, title=title)
        roc = out / f"roc-dsde-{bench}-{seeds}.png"
        plots.roc(records, roc, title=title)
        paths += [fig2, roc]
    return paths
