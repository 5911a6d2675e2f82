"""Parent side of execution: start the worker, stream its results, enforce deadlines, clean up.

``Executor.run`` is synchronous (callers run it in a thread); ``Executor.prepare`` starts the
workers of a run before its inputs are ready (``PreparedRun``).  Generated code only ever runs in
the worker's processes; nothing it does makes ``run`` raise.  An unusable interpreter raises
``ConfigurationError``; a set ``cancel`` event kills everything and raises ``CheckCancelled``.
"""

from __future__ import annotations

import itertools
import math
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from coherence.engine.errors import CheckCancelled, ConfigurationError
from coherence.engine.execution import procs
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.coherence_worker import protocol
from coherence.engine.execution.jobs import Packable, cheapest_first, encode, input_sources, program_spec
from coherence.engine.execution.launch import start_worker
from coherence.engine.execution.pool import POOL
from coherence.engine.execution.prepared import PreparedRun
from coherence.engine.execution.program import ExecutionLimits, ExecutionReport, ModuleContext, Program
from coherence.engine.execution.worker_run import BUDGET_EXCEEDED, OUT_OF_TIME, WorkerRun

# ExecutionReport lives in program.py (distinct.py needs it without importing this module),
# PreparedRun in prepared.py, the run's outcome words in worker_run.py and input_sources in
# jobs.py; all are named here too, where check.py and eval/ import them from
__all__ = ["BUDGET_EXCEEDED", "OUT_OF_TIME", "ExecutionReport", "Executor", "PreparedRun", "cpu_count", "input_sources"]

_JOB_IDS = itertools.count(1)
# How long a job started ahead may take to end once it is given up (its leader leaves as soon as
# it reads the empty inputs frame; one still importing the module reads it after that)
_ABANDON_SECONDS = 1.0


# The tail budget (ExecutionLimits.tail_budget): every program runs its first TAIL_HEAD inputs
# (the smallest) under its program budget alone, so a slow function still has that many to be
# compared on, and gets at least TAIL_FLOOR CPU seconds for the rest.
TAIL_HEAD = 100
TAIL_FLOOR = 0.05


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


def _worker_pids(pids: Iterable[int]) -> list[int]:
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
        shared: int | None = None,
    ) -> PreparedRun:
        """``run`` in two steps, for a caller whose inputs are not ready yet: the workers start now
        and load the module and the programs, and ``PreparedRun.run`` gives them the inputs.
        ``rerun_program`` (-1: none) is the program a re-run may be asked for; ``shared``: the
        limits are those of a run of this many programs (default: of these)."""
        return PreparedRun(
            self,
            module,
            programs,
            rerun_program=rerun_program,
            seed=seed,
            budget=budget,
            anchor=anchor,
            shared=shared,
        )

    def _count_cpu(self, report: ExecutionReport) -> None:
        with self._cpu_lock:
            if report.cpu_seconds is None:
                self.cpu_unknown += 1
            else:
                self.cpu_used += report.cpu_seconds

    # ------------------------------------------------------------------------------------
    def limits_for(self, m: int) -> ExecutionLimits:
        """The limits of a run of ``m`` programs: ``run_budget`` shared out over the slots as each
        program's budget, and ``tail_budget`` over the programs as each one's tail budget."""
        lim = self.limits
        if m <= 0:
            return lim
        if lim.tail_budget:
            # a share of CPU time per program, not of wall time per slot: one slot or many, busy
            # or idle, every program gets as far into its inputs
            lim = replace(lim, program_tail=max(TAIL_FLOOR, lim.tail_budget / m))
        if not lim.run_budget:
            return lim
        share = max(1.0, lim.run_budget * min(_slots(lim), m) / m)
        return replace(lim, program_budget=min(lim.program_budget, share))

    def _deadline(self, m: int, with_rerun: bool, lim: ExecutionLimits) -> float:
        waves = math.ceil(m / max(1, _slots(lim))) + (1 if with_rerun else 0)
        per_program = lim.program_budget + lim.call_timeout + 2.0
        return 2 * lim.load_timeout + 10.0 + waves * per_program

    def _job(
        self,
        mode: str,
        interp: sb.Interpreter,
        extra: tuple[str, ...],
        module: ModuleContext,
        programs: Sequence[Program],
        seed: int,
        lim: ExecutionLimits,
    ) -> dict[str, Any]:
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
            "programs": [program_spec(p) for p in programs],
            "seed": int(seed),
            "limits": {
                "call_timeout": lim.call_timeout,
                "program_budget": lim.program_budget,
                "load_timeout": lim.load_timeout,
                "memory_mb": lim.memory_mb,
                "file_size_mb": lim.file_size_mb,
                # what the job's directory may hold in all: the size of bubblewrap's /tmp and of
                # the guard's own tmpfs, or the leader's measured budget (coherence_worker/disk.py)
                "disk_mb": sb.TMPFS_MB,
                "jobs": lim.jobs,
                "tail_budget": lim.program_tail or 0.0,
                "tail_head": TAIL_HEAD,
            },
        }

    @staticmethod
    def _job_inputs(
        inputs: Sequence[str], packed: Sequence[str | None], last: Sequence[int] = (), anchor: int | None = None
    ) -> dict[str, Any]:
        """The part of a job that needs the inputs (``protocol.INPUT_KEYS``, in that order)."""
        values = (list(inputs), list(packed), cheapest_first(inputs, last), sorted(set(last)), anchor)
        return dict(zip(protocol.INPUT_KEYS, values))

    def _start_ahead(
        self,
        run: WorkerRun,
        mode: str,
        interp: sb.Interpreter,
        extra: tuple[str, ...],
        hashseed: int,
        job: dict[str, Any],
    ) -> bool:
        """Hand a warm worker the job without its inputs ("inputs_follow"): its leader loads the
        module and the programs, then waits for the inputs (``_start``).  False when no warm
        worker could take it (the run then starts in full once the inputs are there)."""
        return self.warm and self._start_warm(
            run, mode, interp, extra, hashseed, lambda tmp, fd: encode(dict(job, fd=fd, tmp=tmp, inputs_follow=True))
        )

    def _start(
        self,
        run: WorkerRun,
        mode: str,
        interp: sb.Interpreter,
        extra: tuple[str, ...],
        hashseed: int,
        job: dict[str, Any],
        inputs: dict[str, Any],
    ) -> None:
        """Start a run with its inputs, or send the inputs to one ``_start_ahead`` started."""
        run.expect(len(inputs["inputs"]))
        if run.warm is not None:
            if run.warm.send(encode(inputs)):
                return
            # it died while its leader waited (killed from outside): the run starts afresh
            POOL.retire(run.warm)
            if run.tmp:
                shutil.rmtree(run.tmp, ignore_errors=True)
            run.warm, run.proc, run.fd, run.tmp = None, None, -1, None
        full = dict(job, **inputs)

        def job_bytes(tmp: str, fd: int) -> bytes:
            return encode(dict(full, fd=fd, tmp=tmp))

        if not (self.warm and self._start_warm(run, mode, interp, extra, hashseed, job_bytes)):
            self._start_cold(run, mode, interp, extra, hashseed, job_bytes)

    def _abandon(self, run: WorkerRun, mode: str) -> None:
        """End a run started ahead whose inputs never came (the check ended first): an empty
        inputs frame lets its leader exit, and the worker is reused once the job is over."""
        if run.warm is not None and run.warm.send(b""):
            self._pump([run], time.monotonic() + _ABANDON_SECONDS, None)
            if not run.over:
                self._kill(run)
        self._cleanup(run, mode)

    def _start_warm(
        self,
        run: WorkerRun,
        mode: str,
        interp: sb.Interpreter,
        extra: tuple[str, ...],
        hashseed: int,
        job_bytes: Callable[[str, int], bytes],
    ) -> bool:
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
            tmp = f"{sb.BWRAP_TMP}/tmp{next(_JOB_IDS)}"
        else:
            tmp = run.tmp = tempfile.mkdtemp(prefix="tmp")  # (a name that tells the checked code nothing)
        if not warm.send(job_bytes(tmp, warm.fd_number)):
            POOL.retire(warm)  # it died while idle
            if run.tmp:
                shutil.rmtree(run.tmp, ignore_errors=True)
                run.tmp = None
            return False
        run.warm, run.proc, run.fd = warm, warm.proc, warm.fd
        return True

    def _start_cold(
        self,
        run: WorkerRun,
        mode: str,
        interp: sb.Interpreter,
        extra: tuple[str, ...],
        hashseed: int,
        job_bytes: Callable[[str, int], bytes],
    ) -> None:
        """A one-shot worker for this run alone."""
        if mode == "bwrap":
            tmp, cwd = sb.BWRAP_TMP, "/"
        else:
            tmp = cwd = run.tmp = tempfile.mkdtemp(prefix="tmp")  # (a name that tells the checked code nothing)
        env = sb.base_env(tmp, hashseed)
        cmd = sb.worker_command(mode, interp, env, extra)
        run.stderr = stderr = tempfile.TemporaryFile()  # noqa: SIM115 - the run owns it; closed when the run is reaped
        try:
            run.proc, run.fd, fd_number = start_worker(cmd, env=env, cwd=cwd, stderr=stderr)
        except OSError as exc:
            stderr.close()
            raise ConfigurationError(f"Could not start the Python interpreter {interp.executable!r}: {exc}.") from exc
        try:
            assert run.proc.stdin is not None  # stdin=PIPE
            run.proc.stdin.write(job_bytes(tmp, fd_number))
            run.proc.stdin.close()
        except OSError:
            pass  # the worker died at once; its exit status tells why

    def _pump(self, runs: list[WorkerRun], deadline: float, cancel: threading.Event | None) -> bool:
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

    def _kill(self, run: WorkerRun) -> None:
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

    def _cleanup(self, run: WorkerRun, mode: str) -> None:
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

    def _module_error(self, run: WorkerRun) -> str | None:
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
