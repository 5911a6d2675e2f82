"""``coherence eval``: the command line of the eval.

    coherence eval --corpus SAMPLES.jsonl[.gz]... --tasks TASKS.jsonl[.gz]... [--samples m]
                   [--inputs n] [--seeds signature|tests] [--jobs J] [--out DIR]
    coherence eval --compare DIR... [--out DIR]
    coherence eval --rebuild DIR...
    coherence eval --replicate CORPUS_DIR [--out DIR] [--report-only]

``--ray auto|ADDRESS|local`` runs the tasks on a Ray cluster instead of ``--jobs`` threads here
(``eval.backends``).

Several corpus files (models, benchmarks) may be given at once; each is paired with the task file
of its benchmark and written to ``DIR/<benchmark>-<model>-<seeds>/`` (to ``DIR`` itself when there
is only one).  ``DIR/table.md`` then gathers every run found under ``DIR``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from coherence.engine.errors import CoherenceError
from coherence.eval.corpus import CorpusError, load_samples, load_tasks

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_eval_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "eval",
        help="replay recorded LLM samples and measure the estimator against benchmark labels",
        description=(
            "Replay recorded LLM samples (../shared/corpus schema): candidate 0 plays the user's function, "
            "candidates 1..m-1 the alternatives. Labels (benchmark tests, pointwise error against the "
            "reference) are run in the same sandbox and only measured, never fed to the estimator."
        ),
    )
    p.add_argument("--corpus", nargs="+", metavar="SAMPLES", help="recorded samples, JSONL or JSONL.gz (one or more)")
    p.add_argument(
        "--panel",
        nargs="+",
        metavar="SAMPLES",
        help="a panel of models: candidate 0 from the first corpus file, the alternatives drawn from the others (even shares, fixed --seed; list the first file again to keep the author's model in its panel); same benchmark",
    )
    p.add_argument(
        "--baseline",
        metavar="DIR",
        help="with --panel: the same-model run of the first corpus (its tasks.jsonl), for the gain on the tasks both have",
    )
    p.add_argument(
        "--tasks",
        nargs="+",
        metavar="TASKS",
        help="benchmark task files: HumanEval (check(candidate)) and/or sanitized MBPP (test_list)",
    )
    p.add_argument("--samples", "-m", type=int, default=10, help="programs per task, candidate 0 included (default 10)")
    p.add_argument("--inputs", "-n", type=int, default=1000, help="inputs per task (default 1000)")
    p.add_argument(
        "--seeds",
        choices=("signature", "tests"),
        default="signature",
        help="signature: IDE mode, inputs from the signature and docstring only (default); tests: the benchmark's test inputs seed the fuzzer (the paper's setting)",
    )
    p.add_argument(
        "--jobs", "-j", type=int, default=1, help="tasks run at once (each already uses sandbox processes; default 1)"
    )
    p.add_argument(
        "--ray",
        metavar="auto|ADDRESS|local",
        help="run the tasks as Ray tasks: auto (the cluster this machine belongs to), a head node's ADDRESS, or local (a private cluster of this machine); pip install 'coherence[cluster]'",
    )
    p.add_argument(
        "--task-cpus",
        type=int,
        default=1,
        help="with --ray: CPUs each task reserves, and the programs its sandbox runs at once (default 1, as --jobs N on N cores)",
    )
    p.add_argument(
        "--replicate",
        metavar="CORPUS_DIR",
        help="every model of a corpus folder, both seed modes, both benchmarks, one engine: runs under --out, then one table per benchmark in the papers' shape (replication-<bench>.md) and the figures",
    )
    p.add_argument(
        "--report-only",
        action="store_true",
        help="with --replicate: write the tables and figures from the runs under --out as they are, run nothing",
    )
    p.add_argument(
        "--out", "-o", default="coherence-eval", metavar="DIR", help="output folder (default ./coherence-eval)"
    )
    p.add_argument("--limit", type=int, help="only the first N tasks of each corpus file")
    p.add_argument("--task-id", nargs="+", dest="task_ids", metavar="ID", help="only these task ids")
    p.add_argument(
        "--timeout", type=float, default=1.0, dest="call_timeout", help="seconds per call in the check (default 1.0)"
    )
    p.add_argument(
        "--program-budget",
        type=float,
        default=20.0,
        help="seconds for one program over all inputs; the inputs past it are left out for every program (default 20)",
    )
    p.add_argument(
        "--run-budget",
        type=float,
        help="seconds for all the programs of a task together, shared out over the parallel slots, at least 1 s each (default: the engine's run_budget; 0 for no cap)",
    )
    p.add_argument(
        "--tail-budget",
        type=float,
        help="CPU seconds for all the programs of a task together past each one's first 100 inputs, an equal share each, at least 0.05 s (default: the engine's tail_budget; 0 for none)",
    )
    p.add_argument(
        "--label-timeout", type=float, default=10.0, help="seconds for one candidate's benchmark tests (default 10)"
    )
    p.add_argument("--seed", type=int, default=0, help="input generation seed (default 0)")
    p.add_argument("--sandbox", choices=("auto", "bwrap", "guard", "strict"), default="auto")
    p.add_argument("--python", metavar="INTERPRETER", help="interpreter that runs the programs (default: this one)")
    p.add_argument("--restart", action="store_true", help="discard finished tasks in --out instead of resuming")
    p.add_argument(
        "--redo-failures",
        action="store_true",
        help="before resuming, drop finished tasks that a sandbox worker failure (not the code) spoiled, and run them again",
    )
    p.add_argument(
        "--keep-matrices",
        action="store_true",
        help="also write every task's outcome matrix to matrices.jsonl (for benchmarks/eval_whatif.py)",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.add_argument(
        "--compare",
        nargs="+",
        metavar="DIR",
        help="rank the models of these runs' summaries: pass@1 vs share of zero incoherence",
    )
    p.add_argument(
        "--calibrate",
        nargs="+",
        metavar="DIR",
        help="fit trust on the tasks.jsonl files under DIR (DSDE, severity, spec stratum, panel -> share of functions that were right), leave-one-model-out; --out X.json writes the maps, --out DIR also the report and a reliability plot per severity",
    )
    p.add_argument(
        "--rebuild",
        nargs="+",
        metavar="DIR",
        help="recompute summary.json, table.md and plots from the tasks.jsonl files under DIR",
    )


def run_eval(args) -> int:
    try:
        if getattr(args, "compare", None):
            return _compare(args)
        if getattr(args, "rebuild", None):
            return _rebuild(args)
        if getattr(args, "calibrate", None):
            return _calibrate(args)
        if getattr(args, "replicate", None):
            return _replicate(args)
        if getattr(args, "panel", None):
            if args.corpus:
                print("coherence eval: give --corpus or --panel, not both", file=sys.stderr)
                return EXIT_USAGE
            if len(args.panel) < 2:
                print("coherence eval: --panel needs the author's corpus file and at least one more", file=sys.stderr)
                return EXIT_USAGE
        elif getattr(args, "baseline", None):
            print("coherence eval: --baseline goes with --panel", file=sys.stderr)
            return EXIT_USAGE
        if not (args.corpus or getattr(args, "panel", None)) or not args.tasks:
            print(
                "coherence eval: give --corpus (or --panel) and --tasks (or --compare DIR..., --rebuild DIR...)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        return _run(args)
    except (CorpusError, CoherenceError) as exc:
        print(f"coherence eval: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _options(args, seeds: str):
    from coherence.eval.runner import EvalOptions

    def budget(given: float | None, default: float | None) -> float | None:
        """A budget not given is the engine's (EvalOptions' default); 0 turns it off."""
        return default if given is None else (given or None)

    return EvalOptions(
        samples=args.samples,
        inputs=args.inputs,
        seeds=seeds,
        jobs=args.jobs,
        seed=args.seed,
        call_timeout=args.call_timeout,
        program_budget=args.program_budget,
        run_budget=budget(args.run_budget, EvalOptions.run_budget),
        tail_budget=budget(args.tail_budget, EvalOptions.tail_budget),
        label_timeout=args.label_timeout,
        sandbox=args.sandbox,
        python=args.python,
        keep_matrices=args.keep_matrices,
    )


def _check_numbers(args) -> str | None:
    if args.samples < 2:
        return "--samples must be at least 2 (candidate 0 plus one alternative)"
    if args.inputs < 1 or args.jobs < 1 or getattr(args, "task_cpus", 1) < 1:
        return "--inputs, --jobs and --task-cpus must be at least 1"
    return None


def _backend(args):
    """The Ray backend for ``--ray`` (joined once for every run of the command), else None: each run
    then makes its own ``--jobs`` threads."""
    if not getattr(args, "ray", None):
        return None
    from coherence.eval.backends.cluster import RayBackend

    return RayBackend(args.ray, task_cpus=args.task_cpus)


def _run(args) -> int:
    from coherence.eval.report import find_summaries, table_markdown, write_pooled

    problem = _check_numbers(args)
    if problem:
        print(f"coherence eval: {problem}", file=sys.stderr)
        return EXIT_USAGE
    task_sets: dict[str, dict] = {}
    for path in args.tasks:
        tasks = load_tasks(path)
        bench = next(iter(tasks.values())).benchmark
        task_sets.setdefault(bench, {}).update(tasks)
    groups = []
    panel = getattr(args, "panel", None)
    for path in [panel[0]] if panel else args.corpus:
        samples = load_samples(path)
        if panel:
            from coherence.eval.panel import compose

            samples = compose(samples, [load_samples(p) for p in panel[1:]], args.samples - 1, args.seed)
            if not samples:
                print("coherence eval: the panel's corpus files share no task with the first", file=sys.stderr)
                return EXIT_USAGE
        bench = samples[0].benchmark
        if bench not in task_sets:
            print(f"coherence eval: no --tasks file for {bench} (needed by {path})", file=sys.stderr)
            return EXIT_USAGE
        samples = _select(args, samples)
        if samples:
            groups.append((path, samples, task_sets[bench]))
    if not groups:
        print("coherence eval: no tasks selected", file=sys.stderr)
        return EXIT_USAGE

    out = Path(args.out)
    single = len(groups) == 1
    backend = _backend(args)
    try:
        status = _run_groups(args, groups, _options(args, args.seeds), out, single=single, backend=backend)
    finally:
        if backend is not None:
            backend.close()
    if not single:
        found = [s for _, s in find_summaries([out])]
        (out / "table.md").write_text(table_markdown(found), encoding="utf-8")
        write_pooled(out)
        print(f"table of {len(found)} runs: {out / 'table.md'}; pooled verdicts: {out / 'pooled.md'}", file=sys.stderr)
    return status


def _select(args, samples: list) -> list:
    """``--task-id`` and ``--limit``."""
    if args.task_ids:
        wanted = {str(t) for t in args.task_ids}
        samples = [s for s in samples if s.key in wanted]
    return samples[: args.limit] if args.limit else samples


def _run_groups(args, groups: list, opts, out: Path, *, single: bool, backend=None) -> int:
    """Run each (samples path, samples, tasks) group into its folder and write its outputs."""
    from coherence.eval.report import write_run_outputs
    from coherence.eval.runner import run_samples_file

    cancel = threading.Event()
    for path, samples, tasks in groups:
        first = samples[0]
        run_dir = out if single else out / f"{first.benchmark}-{first.model}-{opts.seeds}"
        prev = 0.0 if args.restart else _previous_wall(run_dir)
        started = time.monotonic()
        records, interrupted = run_samples_file(
            samples,
            tasks,
            run_dir,
            opts,
            samples_path=path,
            restart=args.restart,
            redo_infra=args.redo_failures,
            progress=not args.quiet,
            cancel=cancel,
            backend=backend,
        )
        wall = time.monotonic() - started
        meta = {
            "model": first.model,
            "benchmark": first.benchmark,
            "samples": opts.samples,
            "inputs": opts.inputs,
            "seeds": opts.seeds,
        }
        if first.panel:
            meta["panel"] = first.panel
        meta["wall_seconds"] = prev + wall
        meta["engine"] = _engine_of(run_dir)
        summary = write_run_outputs(run_dir, records, meta, plots=not args.no_plots)
        _print_summary(run_dir, summary, interrupted)
        if getattr(args, "baseline", None):
            from coherence.eval.panel import write_gain

            print(write_gain(run_dir, records, Path(args.baseline)), file=sys.stderr)
        if interrupted:
            return EXIT_INTERRUPTED
    return EXIT_OK


def _replicate(args) -> int:
    """``--replicate CORPUS_DIR``: every model, both benchmarks, both seed modes, one engine."""
    from coherence.eval.replicate import SEED_ORDER, discover, other_engines, write_report
    from coherence.eval.runner import engine_fingerprint

    out = Path(args.out)
    plan = discover(args.replicate)
    status = EXIT_OK
    if not args.report_only:
        problem = _check_numbers(args)
        engine = engine_fingerprint()
        mixed = [] if args.restart else other_engines(out, engine)
        if mixed:
            problem = (
                f"{out} holds runs of another engine than this one ({engine}): {', '.join(mixed[:4])}; "
                "a replication keeps to one engine: use another --out, or --restart"
            )
        if problem:
            print(f"coherence eval: {problem}", file=sys.stderr)
            return EXIT_USAGE
        backend = _backend(args)
        try:
            for tasks_path, samples_paths in plan.values():
                tasks = load_tasks(tasks_path)
                for seeds in SEED_ORDER:
                    groups = [(p, _select(args, load_samples(p)), tasks) for p in samples_paths]
                    groups = [g for g in groups if g[1]]
                    status = _run_groups(args, groups, _options(args, seeds), out, single=False, backend=backend)
                    write_report(out, plots=False)  # the tables so far, after each seed mode
                    if status != EXIT_OK:
                        break
                if status != EXIT_OK:
                    break
        finally:
            if backend is not None:
                backend.close()
    written, notes = write_report(out, plots=not args.no_plots)
    for note in notes:
        print(f"coherence eval: {note}", file=sys.stderr)
    print(f"replication: {', '.join(str(p) for p in written)}", file=sys.stderr)
    return status


def _engine_of(run_dir: Path) -> str | None:
    try:
        return json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("engine")
    except (OSError, ValueError):
        return None


def _previous_wall(run_dir: Path) -> float:
    """Wall time of earlier, interrupted sessions of the same run (resume adds up)."""
    try:
        s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        return float(s.get("wall_seconds") or 0.0) if (run_dir / "tasks.jsonl").is_file() else 0.0
    except (OSError, ValueError):
        return 0.0


def _print_summary(run_dir: Path, s: dict, interrupted: bool) -> None:
    def f(x, nd=3):
        return "–" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))

    tag = " (interrupted: partial)" if interrupted else ""
    print(
        f"{s['benchmark']}/{s['model']} seeds={s['seeds']} m={s['samples']} n={s['inputs']}{tag}: "
        f"tasks {s['tasks']} (checked {s['checked']}) · pass@1 {f(s['pass_at_1'])} · "
        f"detection {f(s['detection_rate'])} (tests {f(s['detection_rate_tests'])}) · "
        f"undetected mean error {f(s['undetected_mean_error'])} · false alarms {f(s['false_alarm_rate'])} "
        f"of {s['false_alarm_denominator']} · AUROC DSDE {f(s['auroc_dsde'])} · ρ(E, I) {f(s['spearman_error_incoherence'])} · "
        f"wall {f(s.get('wall_seconds'), 0)} s\n  -> {run_dir}"
    )


def _calibrate(args) -> int:
    """Fit trust on the runs under ``--calibrate``.  ``--out X.json`` writes the maps there (the
    engine's own file is ``engine/calibration.json``); ``--out DIR`` writes ``calibration.json``,
    the report ``calibration.md`` and ``reliability_by_severity.png`` into DIR."""
    from coherence.eval.calibration import fit_dirs
    from coherence.eval.report import calibration_markdown
    from coherence.eval.runner import engine_fingerprint

    out = Path(args.out)
    folder = None if args.out.endswith(".json") else out
    target = out if folder is None else folder / "calibration.json"
    try:
        data, rows = fit_dirs(args.calibrate, engine=engine_fingerprint())
    except ValueError as exc:
        print(f"coherence eval --calibrate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    report = calibration_markdown(data)
    written = [str(target)]
    if folder is None:
        print(report, file=sys.stderr)
    else:
        (folder / "calibration.md").write_text(report, encoding="utf-8")
        written.append(str(folder / "calibration.md"))
        if not args.no_plots:
            try:
                from coherence.eval.plots import reliability_by_severity

                reliability_by_severity(rows, folder / "reliability_by_severity.png")
                written.append(str(folder / "reliability_by_severity.png"))
            except ImportError as exc:
                print(f"coherence eval: no plot ({exc}; pip install 'coherence[eval]')", file=sys.stderr)
    ece = ", ".join(f"{b} {e}" for b, e in data["ece_leave_one_model_out"].items())
    print(
        f"trust maps of {data['tasks']} tasks, {len(data['cells'])} cells (depth {data['depth']}, shrinkage "
        f"{data['shrinkage']:g}, chosen leave-one-model-out); ECE leave-one-model-out: {ece} -> {', '.join(written)}",
        file=sys.stderr,
    )
    return EXIT_OK


def _rebuild(args) -> int:
    from coherence.eval.report import find_summaries, table_markdown, write_pooled, write_run_outputs
    from coherence.eval.runner import read_records

    n = 0
    for d in args.rebuild:
        for tasks_path in sorted(Path(d).rglob("tasks.jsonl")):
            run_dir = tasks_path.parent
            records = read_records(tasks_path)
            if not records:
                continue
            old = {}
            try:
                old = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pass
            first = records[0]
            meta = {
                "model": first.get("model"),
                "benchmark": first.get("benchmark"),
                "samples": first.get("samples_requested"),
                "inputs": first.get("inputs_requested"),
                "seeds": first.get("seeds"),
                "wall_seconds": old.get("wall_seconds"),
                "engine": _engine_of(run_dir),
            }
            if first.get("panel"):
                meta["panel"] = first["panel"]
            summary = write_run_outputs(run_dir, records, meta, plots=not args.no_plots)
            _print_summary(run_dir, summary, False)
            n += 1
        found = [s for _, s in find_summaries([d])]
        if len(found) > 1:
            (Path(d) / "table.md").write_text(table_markdown(found), encoding="utf-8")
            write_pooled(Path(d))
    if not n:
        print("coherence eval: no tasks.jsonl found", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _compare(args) -> int:
    from coherence.eval.report import compare, compare_text, find_summaries

    found = find_summaries(args.compare)
    if not found:
        print("coherence eval --compare: no summary.json under " + ", ".join(args.compare), file=sys.stderr)
        return EXIT_USAGE
    groups = compare([s for _, s in found])
    print(compare_text(groups))
    out = Path(args.out if args.out != "coherence-eval" else args.compare[0])
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(groups, indent=2) + "\n", encoding="utf-8")
    if not args.no_plots:
        try:
            from coherence.eval.plots import compare_rankings

            compare_rankings(groups, out / "compare.png")
            print(f"plot: {out / 'compare.png'}", file=sys.stderr)
        except ImportError as exc:
            print(f"coherence eval: no plot ({exc}; pip install 'coherence[eval]')", file=sys.stderr)
    return EXIT_OK
