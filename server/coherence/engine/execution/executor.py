"""Parent side of execution: start the worker, stream its results, enforce deadlines, clean up.

``Executor.run`` is synchronous (callers run it in a thread); ``Executor.prepare`` starts the
workers of a run before its inputs are ready (``PreparedRun``).  Generated code only ever runs in
the worker's processes; nothing it does makes ``run`` raise.  An unusable interpreter raises
``ConfigurationError``; a set ``cancel`` event kills everything and raises ``CheckCancelled``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import IO, Protocol

from coherence.engine.errors import CheckCancelled, ConfigurationError
from coherence.engine.execution import procs
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.coherence_worker import protocol
from coherence.engine.execution.distinct import copy_rows, distinct_programs
from coherence.engine.execution.pool import POOL, WarmWorker
from coherence.engine.execution.program import ExecutionLimits, ExecutionReport, ModuleContext, Program
from coherence.engine.execution.records import RunRecords, reserved_outcome
from coherence.engine.outcomes import Outcome

# ExecutionReport lives in program.py (distinct.py needs it without importing this module); it
# is named here too, where check.py and eval/ import it from
__all__ = ["BUDGET_EXCEEDED", "OUT_OF_TIME", "ExecutionReport", "Executor", "PreparedRun", "cpu_count", "input_sources"]

LOAD_ERROR = Outcome.raised(protocol.LOAD_ERROR)
TIMEOUT = Outcome.raised(protocol.TIMEOUT)
# Inputs a program never got to because it used up its time budget (see ExecutionLimits).
BUDGET_EXCEEDED = protocol.BUDGET_EXCEEDED
# Outcomes that say a call was slow (or never made), not what it computes.
OUT_OF_TIME = frozenset((TIMEOUT.error, BUDGET_EXCEEDED))
WORKER_CRASH = Outcome.raised(protocol.CRASH_WORKER)
_JOB_IDS = itertools.count(1)
# What a run keeps of its workers' diagnostics (its records are bounded by ``RunRecords``)
_DIAGNOSTICS = 20
_DIAGNOSTIC_CHARS = 2000
# How long a job started ahead may take to end once it is given up (its leader leaves as soon as
# it reads the empty inputs frame; one still importing the module reads it after that)
_ABANDON_SECONDS = 1.0


class Packable(Protocol):
    """An input the worker can load from marshal data (``packed``, base64, or None when it
    cannot) instead of compiling its source; ``inputs.values.Input`` is one."""

    def source(self) -> str: ...

    @property
    def packed(self) -> str | None: ...


def cheapest_first(sources: Sequence[str], last: Sequence[int] = ()) -> list[int]:
    """The order each program runs the inputs in: shortest source first, a cheap stand-in for the
    cost of a call.  A program that runs out of time (its budget, or timeouts in a row) then leaves
    out the largest inputs, the same ones for every program, instead of whatever came last.  The
    inputs ``last`` (ones the function is likely not meant for, see ``inputs.likely``) come after
    all the others, so that hangs on them cannot take the others away."""
    late = set(last)
    return sorted(range(len(sources)), key=lambda i: (i in late, len(sources[i])))


def input_sources(inputs: Sequence[str | Packable]) -> list[str]:
    """The source of each input (``run`` takes sources or ``Packable`` inputs)."""
    return [s if isinstance(s, str) else s.source() for s in inputs]


class _Run:
    """One worker process and the results it streamed."""

    def __init__(self, label: str, n_tasks: int, n_inputs: int):
        self.label = label
        self.proc: subprocess.Popen | None = None
        self.fd = -1
        self.buf = b""
        self.module_status_seen = False
        self.module_error: str | None = None
        self.load_errors: list[str | None] = [None] * n_tasks
        self.results: list[list[Outcome | None]] = []
        self.expect(n_inputs)
        self.done = False
        self.eof = False
        self.diagnostics: list[str] = []
        self.tmp: str | None = None
        self.stderr: IO[bytes] | None = None  # the worker's stderr, a temporary file
        self.records = RunRecords()
        self.diagnostics_dropped = 0
        self.warm: WarmWorker | None = None
        self.over = False  # warm worker: the job is over (its leader exited and was swept)
        self.over_status: int | None = None
        self.over_clean = False
        self.over_cpu: float | None = None
        self.killed = False
        self.layers: list[str] = []  # the kernel layers its children applied (protocol.SANDBOX)

    def expect(self, n_inputs: int) -> None:
        """Room for the outcomes of ``n_inputs`` inputs (a run started ahead learns how many
        when they are sent)."""
        self.results = [[None] * n_inputs for _ in range(len(self.load_errors))]

    def feed(self, data: bytes) -> None:
        buf = self.buf + data
        k = buf.rfind(b"\n")
        if k < 0:
            self.buf = buf
            return
        self.buf = buf[k + 1 :]
        outcome = self.records.outcome
        mark, reserved = protocol.RESERVED_MARK, reserved_outcome
        results = self.results
        n_tasks = len(results)
        for line in buf[:k].split(b"\n"):
            try:
                t_s, i_s, rest = line.split(b" ", 2)
                t, i = int(t_s), int(i_s)
            except ValueError:
                continue
            if t >= 0:
                if t >= n_tasks:
                    continue
                if i >= 0:
                    row = results[t]
                    if i < len(row) and row[i] is None:  # the first record wins (re-runs repeat)
                        row[i] = reserved(rest) if rest[:1] == mark else outcome(rest)
                elif i == protocol.LOADED:
                    msg = _loads(rest)
                    if msg is not None:
                        self.load_errors[t] = str(msg)[:_DIAGNOSTIC_CHARS]
            elif i == protocol.MODULE:  # t < 0: protocol.META
                self.module_status_seen = True
                msg = _loads(rest)
                self.module_error = None if msg is None else str(msg)
            elif i == protocol.DIAGNOSTIC:
                self.note(rest)
            elif i == protocol.DONE:
                self.done = True
            elif i == protocol.SANDBOX:
                layers = _loads(rest)
                self.layers = [x for x in layers if isinstance(x, str)][:8] if isinstance(layers, list) else []
            elif i == protocol.OVER:
                info = _loads(rest)
                self.over = True
                if isinstance(info, dict):
                    self.over_status = info.get("status")
                    self.over_clean = bool(info.get("clean"))
                    cpu = info.get("cpu")
                    if isinstance(cpu, (int, float)) and not isinstance(cpu, bool) and cpu >= 0:
                        self.over_cpu = float(cpu)

    def note(self, raw: bytes) -> None:
        """Keep a worker's diagnostic, within bounds: every crashed child may send a few of up to
        68 KB, and 134 MB of them were once stored for nobody to read."""
        if len(self.diagnostics) >= _DIAGNOSTICS:
            self.diagnostics_dropped += 1
            if self.diagnostics_dropped == 1:
                self.diagnostics.append(f"{self.label}: (more diagnostics left out)")
            return
        self.diagnostics.append(f"{self.label}: {str(_loads(raw))[:_DIAGNOSTIC_CHARS]}")


def _loads(raw: bytes):
    try:
        return json.loads(raw)
    except Exception:  # noqa: BLE001 - not only ValueError: deep nesting is a RecursionError
        return raw.decode("utf-8", "replace")[:2000]


def _slots(lim: ExecutionLimits) -> int:
    """Programs run at once: ``jobs``, or one per CPU."""
    return lim.jobs if lim.jobs and lim.jobs > 0 else cpu_count()


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity), which the executor sizes its slots by."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_LAUNCHER = os.path.basename(sb.WORKER).encode()


def _worker_pids(pids) -> list[int]:
    """Those of ``pids`` that run the worker's launcher (in order)."""
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if _LAUNCHER in f.read():
                    out.append(pid)
        except OSError:
            continue
    return out


class Executor:
    """Runs programs on inputs in sandboxed worker processes (see ``coherence_worker``)."""

    def __init__(
        self,
        python: str | None = None,
        limits: ExecutionLimits | None = None,
        sandbox: str = "auto",
        warm: bool | None = None,
    ):
        self.python = python
        self.limits = limits or ExecutionLimits()
        self.sandbox = sandbox
        # warm workers (see pool.py) unless switched off, e.g. to measure what they save
        self.warm = os.environ.get("COHERENCE_COLD_WORKERS", "") in ("", "0") if warm is None else warm
        # CPU seconds of every run's jobs so far, and the runs that could not say (benchmarks read it)
        self.cpu_used = 0.0
        self.cpu_unknown = 0
        self._cpu_lock = threading.Lock()

    # ------------------------------------------------------------------------------------
    def run(
        self,
        module: ModuleContext,
        programs: Sequence[Program],
        inputs: Sequence[str | Packable],
        *,
        rerun: Sequence[int] = (),
        rerun_program: int = 0,
        seed: int = 0,
        cancel: threading.Event | None = None,
        budget: float | None = None,
        last: Sequence[int] = (),
        anchor: int | None = None,
    ) -> ExecutionReport:
        """Every program on every input; the report has a row per program.  Copies of one program
        (the same syntax tree) run once, and their rows are that run's (see ``distinct``).
        ``budget`` lowers the seconds each program may take over all inputs for this run; the
        inputs ``last`` are run after the others (see ``cheapest_first``).  ``anchor``: a program
        whose ``BudgetExceeded`` inputs the caller leaves out for every program (``Checker`` does
        for the user's function): once it leaves inputs out, the other programs skip them too.
        ``rerun``: inputs ``rerun_program`` runs once more, in a process with another hash seed."""
        if cancel is not None and cancel.is_set():
            raise CheckCancelled("The check was cancelled.")
        prepared = self.prepare(
            module, programs, rerun_program=rerun_program if rerun else -1, seed=seed, budget=budget, anchor=anchor
        )
        try:
            return prepared.run(inputs, rerun=rerun, cancel=cancel, last=last)
        finally:
            prepared.close()

    def prepare(
        self,
        module: ModuleContext,
        programs: Sequence[Program],
        *,
        rerun_program: int = -1,
        seed: int = 0,
        budget: float | None = None,
        anchor: int | None = None,
    ) -> PreparedRun:
        """``run`` in two steps, for a caller whose inputs are not ready yet: the workers start now
        and load the module and the programs, and ``PreparedRun.run`` gives them the inputs.
        ``rerun_program`` (-1: none) is the program a re-run may be asked for."""
        return PreparedRun(self, module, programs, rerun_program=rerun_program, seed=seed, budget=budget, anchor=anchor)

    def _count_cpu(self, report: ExecutionReport) -> None:
        with self._cpu_lock:
            if report.cpu_seconds is None:
                self.cpu_unknown += 1
            else:
                self.cpu_used += report.cpu_seconds

    # ------------------------------------------------------------------------------------
    def limits_for(self, m: int) -> ExecutionLimits:
        """The limits of a run of ``m`` programs: ``run_budget`` shared out as program budgets."""
        lim = self.limits
        if not lim.run_budget or m <= 0:
            return lim
        share = max(1.0, lim.run_budget * min(_slots(lim), m) / m)
        return replace(lim, program_budget=min(lim.program_budget, share))

    def _deadline(self, m: int, with_rerun: bool, lim: ExecutionLimits) -> float:
        waves = math.ceil(m / max(1, _slots(lim))) + (1 if with_rerun else 0)
        per_program = lim.program_budget + lim.call_timeout + 2.0
        return 2 * lim.load_timeout + 10.0 + waves * per_program

    def _job(self, mode, interp, extra, module, programs, seed, lim: ExecutionLimits) -> dict:
        """A job for the worker, but for its inputs (``_job_inputs``)."""
        return {
            "remove_tmp": mode == "bwrap",
            "sandbox": mode,
            # kernel layers the worker must apply or refuse to run ("strict")
            "require": sb.required_layers(self.sandbox, mode),
            # the workspace's dotfiles and VCS folders, which no child may read
            "hidden": sb.hidden_paths(interp, extra),
            "path": list(interp.path),
            "site_dirs": list(interp.site_dirs),
            # reads the children may not do (the user's home), except what they need
            "private": [os.path.expanduser("~")] if os.path.expanduser("~") not in ("", "/") else [],
            "allow": list(interp.prefixes)
            + list(interp.path)
            + list(interp.site_dirs)
            + list(extra)
            + [os.path.dirname(interp.executable), os.path.dirname(sb.WORKER)],
            "module": {
                "source": module.source,
                "filename": module.filename,
                "module_name": module.module_name,
                "sys_path": list(extra),
            },
            "programs": [_program_spec(p) for p in programs],
            "seed": int(seed),
            "limits": {
                "call_timeout": lim.call_timeout,
                "program_budget": lim.program_budget,
                "load_timeout": lim.load_timeout,
                "memory_mb": lim.memory_mb,
                "file_size_mb": lim.file_size_mb,
                "max_output_kb": lim.max_output_kb,
                "jobs": lim.jobs,
            },
        }

    @staticmethod
    def _job_inputs(
        inputs: Sequence[str], packed: Sequence[str | None], last: Sequence[int] = (), anchor: int | None = None
    ) -> dict:
        """The part of a job that needs the inputs (``protocol.INPUT_KEYS``, in that order)."""
        values = (list(inputs), list(packed), cheapest_first(inputs, last), sorted(set(last)), anchor)
        return dict(zip(protocol.INPUT_KEYS, values))

    def _start_ahead(self, run: _Run, mode, interp, extra, hashseed, job: dict) -> bool:
        """Hand a warm worker the job without its inputs ("inputs_follow"): its leader loads the
        module and the programs, then waits for the inputs (``_start``).  False when no warm
        worker could take it (the run then starts in full once the inputs are there)."""
        return self.warm and self._start_warm(
            run, mode, interp, extra, hashseed, lambda tmp, fd: _encode(dict(job, fd=fd, tmp=tmp, inputs_follow=True))
        )

    def _start(self, run: _Run, mode, interp, extra, hashseed, job: dict, inputs: dict) -> None:
        """Start a run with its inputs, or send the inputs to one ``_start_ahead`` started."""
        run.expect(len(inputs["inputs"]))
        if run.warm is not None:
            if run.warm.send(_encode(inputs)):
                return
            # it died while its leader waited (killed from outside): the run starts afresh
            POOL.retire(run.warm)
            if run.tmp:
                shutil.rmtree(run.tmp, ignore_errors=True)
            run.warm, run.proc, run.fd, run.tmp = None, None, -1, None
        full = dict(job, **inputs)

        def job_bytes(tmp: str, fd: int) -> bytes:
            return _encode(dict(full, fd=fd, tmp=tmp))

        if not (self.warm and self._start_warm(run, mode, interp, extra, hashseed, job_bytes)):
            self._start_cold(run, mode, interp, extra, hashseed, job_bytes)

    def _abandon(self, run: _Run, mode: str) -> None:
        """End a run started ahead whose inputs never came (the check ended first): an empty
        inputs frame lets its leader exit, and the worker is reused once the job is over."""
        if run.warm is not None and run.warm.send(b""):
            self._pump([run], time.monotonic() + _ABANDON_SECONDS, None)
            if not run.over:
                self._kill(run)
        self._cleanup(run, mode)

    def _start_warm(self, run: _Run, mode, interp, extra, hashseed, job_bytes) -> bool:
        """Hand the job to a warm worker (see pool.py); False when none could take it."""
        env = sb.base_env(sb.BWRAP_TMP if mode == "bwrap" else "", hashseed)
        # (bubblewrap's mounts hide the workspace's dotfiles as they were when the worker started)
        hidden = tuple(sb.hidden_paths(interp, extra)) if mode == "bwrap" else ()
        key = (interp.executable, interp.stamp, mode, extra, hidden, hashseed, tuple(sorted(env.items())))
        try:
            warm = POOL.checkout(
                key, lambda: sb.worker_command(mode, interp, env, extra), env, guard_home=mode != "bwrap"
            )
        except OSError:
            return False  # the one-shot path reports why the interpreter does not start
        if mode == "bwrap":
            tmp = f"{sb.BWRAP_TMP}/job-{next(_JOB_IDS)}"
        else:
            tmp = run.tmp = tempfile.mkdtemp(prefix="coherence-run-")
        if not warm.send(job_bytes(tmp, warm.fd_number)):
            POOL.retire(warm)  # it died while idle
            if run.tmp:
                shutil.rmtree(run.tmp, ignore_errors=True)
                run.tmp = None
            return False
        run.warm, run.proc, run.fd = warm, warm.proc, warm.fd
        return True

    def _start_cold(self, run: _Run, mode, interp, extra, hashseed, job_bytes) -> None:
        """A one-shot worker for this run alone."""
        if mode == "bwrap":
            tmp, cwd = sb.BWRAP_TMP, "/"
        else:
            tmp = cwd = run.tmp = tempfile.mkdtemp(prefix="coherence-run-")
        env = sb.base_env(tmp, hashseed)
        cmd = sb.worker_command(mode, interp, env, extra)
        r, w = os.pipe()
        data = job_bytes(tmp, w)
        run.stderr = stderr = tempfile.TemporaryFile()  # noqa: SIM115 - the run owns it; closed when the run is reaped
        try:
            run.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=run.stderr,
                pass_fds=(w,),
                start_new_session=True,
                env=env,
                cwd=cwd,
            )
        except OSError as exc:
            os.close(r)
            os.close(w)
            stderr.close()
            raise ConfigurationError(f"Could not start the Python interpreter {interp.executable!r}: {exc}.") from exc
        os.close(w)
        run.fd = r
        try:
            assert run.proc.stdin is not None  # stdin=PIPE
            run.proc.stdin.write(data)
            run.proc.stdin.close()
        except OSError:
            pass  # the worker died at once; its exit status tells why

    def _pump(self, runs: list[_Run], deadline: float, cancel: threading.Event | None) -> bool:
        """Read results until every worker is finished.  Returns True if the deadline hit."""
        fds = {r.fd: r for r in runs if not r.over}  # (one read ahead may be over already)
        while fds:
            if cancel is not None and cancel.is_set():
                for r in runs:
                    self._kill(r)
                raise CheckCancelled("The check was cancelled.")
            now = time.monotonic()
            if now >= deadline:
                for r in runs:
                    self._kill(r)
                return True
            try:
                ready = select.select(list(fds), [], [], min(0.05, max(deadline - now, 0.0)))[0]
            except InterruptedError:
                continue
            for fd in ready:
                run = fds[fd]
                try:
                    data = os.read(fd, 1 << 20)
                except InterruptedError:
                    continue
                except OSError:
                    data = b""
                if data:
                    run.feed(data)
                    if run.over:
                        del fds[fd]
                else:
                    run.eof = True
                    del fds[fd]
            # a worker that finished but whose pipe a stray process keeps open
            for fd, run in list(fds.items()):
                if run.done and run.proc is not None and run.proc.poll() is not None:
                    del fds[fd]
        return False

    def _kill(self, run: _Run) -> None:
        """Stop a worker and everything below it.  First SIGTERM to the worker, which kills and
        reaps its children (so nothing is orphaned), then SIGKILL whatever is left."""
        proc = run.proc
        if proc is None:
            return
        run.killed = True
        tree = procs.descendants(proc.pid)
        if proc.poll() is None:
            workers = _worker_pids([proc.pid] + tree)
            if workers:
                try:
                    os.kill(workers[0], signal.SIGTERM)
                except OSError:
                    pass
                try:
                    proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        table = procs.proc_table()
        for pid in set(tree) | set(procs.descendants(proc.pid, table)) | set(procs.session_members(proc.pid, table)):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def _cleanup(self, run: _Run, mode: str) -> None:
        if run.warm is not None:
            reusable = run.over and run.over_clean and not run.killed
            if not reusable and not run.killed and run.warm.alive():
                self._kill(run)
            if run.over and run.over_status not in (0, None) and not run.module_status_seen:
                run.diagnostics.append(f"{run.label}: the job leader exited with status {run.over_status}")
            POOL.checkin(run.warm, reusable)  # the pool owns its descriptor
            run.fd = -1
            if run.tmp:
                shutil.rmtree(run.tmp, ignore_errors=True)
            return
        proc = run.proc
        if proc is not None:
            try:
                proc.wait(timeout=2.0 if run.done else 0.2)
            except subprocess.TimeoutExpired:
                pass
            if not (run.done and proc.returncode == 0):  # a clean exit reaped everything itself
                self._kill(run)
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                pass
            if run.stderr is not None and proc.returncode not in (0, None) and not run.module_status_seen:
                try:
                    run.stderr.seek(0)
                    tail = run.stderr.read()[-2000:].decode("utf-8", "replace").strip()
                except OSError:
                    tail = ""
                run.diagnostics.append(
                    f"{run.label}: exited with status {proc.returncode}"
                    + (f": {tail.splitlines()[-1]}" if tail else "")
                )
        if run.fd >= 0:
            try:
                os.close(run.fd)
            except OSError:
                pass
            run.fd = -1
        if run.stderr is not None:
            run.stderr.close()
        if run.tmp:
            shutil.rmtree(run.tmp, ignore_errors=True)

    def _module_error(self, run: _Run) -> str | None:
        if run.module_status_seen:
            return run.module_error
        proc = run.proc
        code = proc.returncode if proc is not None else None
        if run.warm is not None:
            code = run.over_status if run.over else None
        if code is not None and code < 0:
            try:
                how = signal.Signals(-code).name
            except ValueError:
                how = f"signal {-code}"
            return f"the worker died while loading the module ({how})"
        if code is not None:
            return f"the worker exited (status {code}) while loading the module"
        return "the worker did not finish loading the module in time"


class PreparedRun:
    """A run whose workers start before its inputs exist (``Executor.prepare``).

    A check's inputs are generated while the LLM answers; with samples from the cache (or a
    replay) nothing hides the generation, and the job leaders would then start only after it:
    the interpreter's fork, the module's import and the programs' compilation, 5-10 ms of the
    main run and the re-run each, on a core that sits idle meanwhile.  Started here, a leader
    does all that and then waits for the inputs (see ``coherence_worker.ahead``).

    One-shot workers (no warm pool) cannot take a job in two frames: those start in ``run``.
    ``close`` gives up the jobs that never got their inputs and must always be called."""

    def __init__(
        self,
        executor: Executor,
        module: ModuleContext,
        programs: Sequence[Program],
        *,
        rerun_program: int,
        seed: int,
        budget: float | None,
        anchor: int | None,
    ):
        self.executor = ex = executor
        self.programs = list(programs)
        self.distinct, self.runs_for = distinct_programs(self.programs)
        m = len(self.distinct)
        self.rerun_program = self.runs_for[rerun_program] if 0 <= rerun_program < len(self.programs) else -1
        self.anchor = self.runs_for[anchor] if anchor is not None and 0 <= anchor < len(self.programs) else None
        self.interp = sb.probe_interpreter(ex.python)
        self.extra = tuple(os.path.abspath(p) for p in module.sys_path if p)
        self.mode = sb.choose_mode(ex.sandbox, self.interp, self.extra)
        lim = ex.limits_for(m)
        if budget is not None and budget < lim.program_budget:
            lim = replace(lim, program_budget=max(budget, 0.01))
        self.lim = lim
        self.main: _Run | None = None
        self.rr: _Run | None = None
        self.main_job: dict = {}
        self.rr_job: dict = {}
        self.pending: list[_Run] = []  # started ahead, waiting for their inputs
        self.rr_early: list[str] | None = None  # the re-run's inputs, when start_rerun sent them
        self._lock = threading.Lock()  # run and close may race (a check cancelled mid-start)
        self._closed = False
        self._running = False  # run has begun: start_rerun is too late
        if m == 0:
            return
        self.main_job = ex._job(self.mode, self.interp, self.extra, module, self.distinct, seed, lim)
        self.main = _Run("worker", m, 0)
        if self.rerun_program >= 0:
            self.rr_job = ex._job(
                self.mode, self.interp, self.extra, module, [self.distinct[self.rerun_program]], seed + 1, lim
            )
            self.rr = _Run("rerun worker", 1, 0)
        try:
            for run, job, hashseed in ((self.main, self.main_job, 0), (self.rr, self.rr_job, 1)):
                if run is not None and ex._start_ahead(run, self.mode, self.interp, self.extra, hashseed, job):
                    self.pending.append(run)
        except BaseException:
            self.close()
            raise

    def start_rerun(self, inputs: Sequence[str | Packable]) -> bool:
        """Give the re-run its inputs ahead of ``run``.  A check re-runs the first inputs it
        generates, which exist long before the others (see ``Checker``): sent now, the re-run
        runs while the rest are being made, on a core the generation leaves idle, instead of
        taking its share of both cores from the programs in ``run``.  ``run`` then re-runs these,
        which must be its first ``len(inputs)`` inputs (if they are not, it leaves the re-run out).
        False when nothing was sent (no re-run started ahead, or the run is over)."""
        rr = self.rr
        if rr is None or not inputs:
            return False
        sources = input_sources(inputs)
        packed = [None if isinstance(s, str) else s.packed for s in inputs]
        with self._lock:
            if self._closed or self._running or rr not in self.pending or self.rr_early is not None or rr.warm is None:
                return False
            rr.expect(len(sources))
            if not rr.warm.send(_encode(self.executor._job_inputs(sources, packed))):
                return False  # it died while it waited: run starts it afresh
            self.rr_early = sources
        return True

    def run(
        self,
        inputs: Sequence[str | Packable],
        *,
        rerun: Sequence[int] = (),
        cancel: threading.Event | None = None,
        last: Sequence[int] = (),
    ) -> ExecutionReport:
        """What ``Executor.run`` returns, for these inputs (once)."""
        ex, mode, interp = self.executor, self.mode, self.interp
        start = time.monotonic()
        if cancel is not None and cancel.is_set():
            raise CheckCancelled("The check was cancelled.")  # close() gives up what started
        main, rr = self.main, self.rr
        if main is None:
            self.close()
            report = ExecutionReport([], [], [], None, mode, 0.0, [], interp.executable, interp.version_text)
            return copy_rows(report, self.runs_for)
        with self._lock:
            self._running = True
        sources = input_sources(inputs)
        packed = [None if isinstance(s, str) else s.packed for s in inputs]
        m, n = len(self.distinct), len(sources)
        rerun_idx = [i for i in rerun if 0 <= i < n] if self.rerun_program >= 0 else []
        uniq = sorted(set(rerun_idx))
        rr_early = self.rr_early
        early = rr_early is not None
        if (
            rr is not None
            and rr_early is not None
            and (uniq != list(range(len(rr_early))) or [sources[i] for i in uniq] != rr_early)
        ):
            uniq = rerun_idx = []  # it re-ran other inputs than these: no re-run (never seen)
        if rr is not None and not uniq:
            self._give_up(rr)
            rr = self.rr = None
        runs = [main] + ([rr] if rr is not None else [])
        with self._lock:
            if self._closed:
                raise CheckCancelled("The check was cancelled.")
            self._closed = True  # the runs are this call's now
            self.pending = []
        try:
            ex._start(
                main, mode, interp, self.extra, 0, self.main_job, ex._job_inputs(sources, packed, last, self.anchor)
            )
            if rr is not None and not early:
                ex._start(
                    rr,
                    mode,
                    interp,
                    self.extra,
                    1,
                    self.rr_job,
                    ex._job_inputs([sources[i] for i in uniq], [packed[i] for i in uniq]),
                )
            deadline = start + ex._deadline(m, rr is not None, self.lim)
            timed_out = ex._pump(runs, deadline, cancel)
        finally:
            for r in runs:
                ex._cleanup(r, mode)

        # -- assemble -------------------------------------------------------------------
        diagnostics: list[str] = []
        for r in runs:
            diagnostics += r.diagnostics
        module_error = ex._module_error(main)
        if module_error is not None:
            outcomes = [[LOAD_ERROR] * n for _ in range(m)]
            load_errors: list[str | None] = [module_error] * m
        else:
            load_errors = list(main.load_errors)
            outcomes = []
            filler = TIMEOUT if timed_out else WORKER_CRASH
            if not timed_out and not main.done:
                diagnostics.append("worker: ended before finishing the run")
            for p in range(m):
                if load_errors[p] is not None:
                    outcomes.append([LOAD_ERROR] * n)
                else:
                    outcomes.append([o if o is not None else filler for o in main.results[p]])
        rerun_out: list[Outcome] = []
        if rr is not None:
            rr_error = ex._module_error(rr)
            if rr_error is not None or rr.load_errors[0] is not None:
                by_index = dict.fromkeys(uniq, LOAD_ERROR)
            else:
                filler = TIMEOUT if timed_out else WORKER_CRASH
                by_index = {i: (rr.results[0][k] or filler) for k, i in enumerate(uniq)}
            rerun_out = [by_index[i] for i in rerun_idx]
        timeouts = [sum(1 for o in row if o.kind == "raise" and o.error in OUT_OF_TIME) for row in outcomes]
        report = ExecutionReport(
            outcomes=outcomes,
            rerun=rerun_out,
            load_errors=load_errors,
            module_error=module_error,
            sandbox=sb.sandbox_name(mode, main.layers),
            seconds=time.monotonic() - start,
            timeouts=timeouts,
            python=interp.executable,
            python_version=interp.version_text,
            diagnostics=diagnostics,
            cpu_seconds=None if any(r.over_cpu is None for r in runs) else sum(r.over_cpu or 0.0 for r in runs),
        )
        report = copy_rows(report, self.runs_for)
        report.programs_run = m
        ex._count_cpu(report)
        return report

    def close(self) -> None:
        """Give up the jobs started ahead that never got their inputs (none after ``run``)."""
        with self._lock:
            self._closed = True
            pending, self.pending = self.pending, []
        for r in pending:
            self.executor._abandon(r, self.mode)

    def _give_up(self, run: _Run) -> None:
        with self._lock:
            mine = run in self.pending
            if mine:
                self.pending.remove(run)
        if mine:
            self.executor._abandon(run, self.mode)


def _encode(job: dict) -> bytes:
    return json.dumps(job).encode("utf-8")


def _program_spec(p: Program) -> dict:
    spec = {"entry_point": p.entry_point, "source": p.source, "label": p.label}
    if p.owner:
        spec["owner"] = p.owner
        spec["kind"] = p.method_kind or "instance"
    return spec
