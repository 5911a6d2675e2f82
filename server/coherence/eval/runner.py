"""A run of the eval over one samples file: which tasks are left (resume), ``run.json``, and
``tasks.jsonl``, which gets each finished task's record at once, so an interrupted run keeps what is
done and a re-run skips those task ids.

What one task does is :mod:`coherence.eval.task`; where the tasks run (threads here, or a Ray
cluster) is a backend of :mod:`coherence.eval.backends`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from coherence.engine.errors import CheckCancelled, CoherenceError
from coherence.eval.backends import Backend
from coherence.eval.corpus import BenchmarkTask, SampleTask, load_paper_log, paper_log_for
from coherence.eval.progress import ProgressBar
from coherence.eval.task import _WORKER_FAILURE, CHECKED, SEED_MODES, EvalOptions, evaluate_task

__all__ = [
    "CHECKED",
    "SEED_MODES",
    "EvalOptions",
    "ProgressBar",
    "SettingsMismatch",
    "engine_fingerprint",
    "evaluate_task",
    "infra_failure",
    "read_records",
    "run_samples_file",
]


def _engines_of(run: dict) -> list[str]:
    """The engines a ``run.json`` says wrote its tasks (older files name one, as ``engine``)."""
    return list(run.get("engines") or ([run["engine"]] if run.get("engine") else []))


def engine_fingerprint() -> str:
    """A short hash of the engine's source (``coherence/engine/**/*.py``): runs made with different
    engines are told apart in ``run.json`` and ``summary.json``."""
    import hashlib

    import coherence.engine as engine_pkg

    root = Path(engine_pkg.__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


# ---------------------------------------------------------------------------------------------
# a run over one samples file
# ---------------------------------------------------------------------------------------------


def read_records(path: Path) -> list[dict]:
    """Complete records of ``tasks.jsonl`` (a line cut short by a kill is ignored)."""
    out: list[dict] = []
    if not path.is_file():
        return out
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and rec.get("complete"):
                out.append(rec)
    return out


def infra_failure(rec: dict) -> bool:
    """The record was hit by a sandbox worker that died or exited early (not by the code)."""
    if rec.get("status") == "error" and _WORKER_FAILURE.search(rec.get("reason") or ""):
        return True
    return any(_WORKER_FAILURE.search(d or "") for d in rec.get("label_details") or [])


class SettingsMismatch(CoherenceError):
    pass


def _previous_run(out_dir: Path, settings: dict) -> dict:
    """The ``run.json`` of the run being resumed ({} when there is none); refuses one with other
    settings, and warns when another engine started it."""
    tasks_path, run_path = out_dir / "tasks.jsonl", out_dir / "run.json"
    if not (run_path.is_file() and tasks_path.is_file()):
        return {}
    try:
        previous = json.loads(run_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    old = previous.get("settings", {})
    before = _engines_of(previous)
    fingerprint = engine_fingerprint()
    if before and fingerprint not in before and tasks_path.stat().st_size:
        print(
            f"coherence eval: warning: {out_dir} was started with another engine ({'+'.join(before)}, now "
            f"{fingerprint}); resuming mixes them, and run.json lists every one (use --restart for "
            "a clean run)",
            file=sys.stderr,
        )
    diff = {k: (old.get(k), v) for k, v in settings.items() if k in old and old.get(k) != v}
    if diff:
        listed = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in diff.items())
        raise SettingsMismatch(f"{out_dir} holds a run with other settings ({listed}); use another --out or --restart")
    return previous


def _drop_infra_failures(records: list[dict], tasks_path: Path) -> list[dict]:
    """``--redo-failures``: the records of tasks a worker failure hit leave ``tasks.jsonl``, so
    that they run again."""
    bad = [r for r in records if infra_failure(r)]
    if not bad:
        return records
    kept = [r for r in records if not infra_failure(r)]
    tmp = tasks_path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    os.replace(tmp, tasks_path)
    print(
        f"coherence eval: redoing {len(bad)} task(s) hit by a worker failure: {', '.join(str(r['task_id']) for r in bad[:8])}",
        file=sys.stderr,
    )
    return kept


def _end_with_newline(tasks_path: Path) -> None:
    """A file that does not end in a newline (a write cut short) would glue the next record to it."""
    if tasks_path.is_file() and tasks_path.stat().st_size:
        with open(tasks_path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                with open(tasks_path, "ab") as out:
                    out.write(b"\n")


def run_samples_file(
    samples: list[SampleTask],
    tasks: dict[str, BenchmarkTask],
    out_dir: Path,
    opts: EvalOptions,
    *,
    samples_path: str | Path | None = None,
    restart: bool = False,
    redo_infra: bool = False,
    progress: bool = True,
    cancel: threading.Event | None = None,
    backend: Backend | None = None,
) -> tuple[list[dict], bool]:
    """Evaluate every task of one samples file into ``out_dir/tasks.jsonl`` (resuming).

    Returns (all complete records, interrupted).  KeyboardInterrupt stops the run cleanly: running
    tasks are cancelled, finished ones are kept.  ``backend`` runs the tasks (default: ``--jobs``
    threads here, closed at the end; a given one is left open for the next run)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks_path = out_dir / "tasks.jsonl"
    run_path = out_dir / "run.json"
    first = samples[0]
    settings = {"model": first.model, "benchmark": first.benchmark, **opts.settings()}
    if first.panel:
        settings["panel"] = first.panel
    if restart:
        tasks_path.unlink(missing_ok=True)
    previous = _previous_run(out_dir, settings)
    records = read_records(tasks_path)
    if redo_infra:
        records = _drop_infra_failures(records, tasks_path)
    done = {str(r["task_id"]) for r in records}
    todo = []
    missing = []
    for st in samples:
        if st.key in done:
            continue
        bt = tasks.get(st.key)
        if bt is None:
            missing.append(st.key)
            continue
        todo.append((st, bt))
    if missing:
        print(
            f"coherence eval: {len(missing)} task(s) of {first.benchmark}/{first.model} have no benchmark task and are skipped: {', '.join(missing[:5])}{'…' if len(missing) > 5 else ''}",
            file=sys.stderr,
        )
    total = len(todo) + len(done)
    # Every engine that wrote tasks into this run, oldest first: a resume that runs nothing keeps the
    # list as it was, so a finished run is not credited to the engine that merely re-read it.
    engines = _engines_of(previous)
    fingerprint = engine_fingerprint()  # reads every engine file
    if todo and fingerprint not in engines:
        engines.append(fingerprint)
    run_path.write_text(
        json.dumps(
            {
                "settings": settings,
                "samples_file": str(samples_path or ""),
                "engine": "+".join(engines) or fingerprint,
                "engines": engines,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )

    paper: dict[str, dict] = {}
    if samples_path is not None:
        log_path = paper_log_for(samples_path, first.benchmark, first.model, first.temperature)
        if log_path is not None:
            paper = load_paper_log(log_path)

    _end_with_newline(tasks_path)

    if backend is None:
        from coherence.eval.backends.local import LocalBackend

        # evaluate_task is looked up here, at run time (tests replace it)
        backend = own = LocalBackend(evaluate_task, opts.jobs, cancel)
    else:
        own = None
    bar = ProgressBar(total, len(done), f"{first.benchmark}/{first.model}/{opts.seeds}") if progress else None
    if bar:
        bar.update(force=True)
    interrupted = False
    failures = 0
    with open(tasks_path, "a", encoding="utf-8") as sink:

        def harvest(st: SampleTask, out: dict | BaseException) -> None:
            nonlocal failures, interrupted
            if isinstance(out, CheckCancelled):
                return
            if isinstance(out, KeyboardInterrupt):
                interrupted = True
                return
            if isinstance(out, BaseException):  # one broken task must not end the run
                failures += 1
                print(f"\ncoherence eval: task {st.task_id} failed: {type(out).__name__}: {out}", file=sys.stderr)
                return
            matrix = out.pop("_matrix", None)
            if matrix is not None:
                with open(out_dir / "matrices.jsonl", "a", encoding="utf-8") as mfh:
                    mfh.write(json.dumps({"task_id": out["task_id"], **matrix}, separators=(",", ":")) + "\n")
            sink.write(json.dumps(out) + "\n")
            sink.flush()
            records.append(out)

        try:
            backend.start([(st, bt, paper.get(st.key)) for st, bt in todo], opts)
            while backend.pending() and not interrupted:
                for st, result in backend.poll(0.5):
                    harvest(st, result)
                if bar:
                    bar.extra = " · ".join(x for x in (backend.label, f"{failures} failed" if failures else "") if x)
                    bar.update(len(records))
            if interrupted:
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            interrupted = True
            # keep every task that finished before the cancellation reached it
            for st, result in backend.stop():
                harvest(st, result)
            if bar:
                bar.close()
                bar = None
            print(
                f"coherence eval: interrupted; {len(records)} of {total} tasks are saved in {tasks_path}; run again to resume",
                file=sys.stderr,
            )
        finally:
            if own is not None:
                own.close()
            if bar:
                bar.close()
    return records, interrupted
