"""A run in two steps (``Executor.prepare``): its workers start and load the module and the programs
while the check still generates the inputs; ``PreparedRun.run`` hands them the inputs and
assembles the ``ExecutionReport``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from coherence.engine.errors import CheckCancelled
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.distinct import copy_rows, distinct_programs
from coherence.engine.execution.program import ExecutionReport, ModuleContext, Program
from coherence.engine.outcomes import Outcome

if TYPE_CHECKING:  # the executor makes a PreparedRun (its prepare), which calls back its launch methods
    from coherence.engine.execution.executor import Executor
from coherence.engine.execution.jobs import Packable, encode, input_sources
from coherence.engine.execution.worker_run import LOAD_ERROR, OUT_OF_TIME, TIMEOUT, WORKER_CRASH, WorkerRun


class PreparedRun:
    """A run whose workers start before its inputs exist (``Executor.prepare``).

    A check's inputs are generated while the LLM answers; with samples from the cache (or a
    replay) nothing hides the generation, and the job leaders would then start only after it:
    the interpreter's fork, the module's import and the programs' compilation, in the main run
    and the re-run each, while a core sits idle (docs/results.md#worker-start).  Started here, a
    leader does all that and then waits for the inputs (see ``coherence_worker.ahead``).

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
        shared: int | None = None,
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
        # a run of yours alone beside kept rows keeps the limits of the whole run it stands for
        lim = ex.limits_for(shared or m)
        if budget is not None and budget < lim.program_budget:
            lim = replace(lim, program_budget=max(budget, 0.01))
        self.lim = lim
        self.main: WorkerRun | None = None
        self.rr: WorkerRun | None = None
        self.main_job: dict[str, Any] = {}
        self.rr_job: dict[str, Any] = {}
        self.pending: list[WorkerRun] = []  # started ahead, waiting for their inputs
        self.rr_early: list[str] | None = None  # the re-run's inputs, when start_rerun sent them
        self._lock = threading.Lock()  # run and close may race (a check cancelled mid-start)
        self._closed = False
        self._running = False  # run has begun: start_rerun is too late
        if m == 0:
            return
        self.main_job = ex._job(self.mode, self.interp, self.extra, module, self.distinct, seed, lim)
        self.main = WorkerRun("worker", m, 0)
        if self.rerun_program >= 0:
            self.rr_job = ex._job(
                self.mode, self.interp, self.extra, module, [self.distinct[self.rerun_program]], seed + 1, lim
            )
            # The re-run (yours again on the first inputs generated, for nondeterminism) has no
            # head: its tail budget binds from its first call, so the giant inputs among them
            # (n = 10^6) cannot cost seconds that the main run's tail budget saved.
            self.rr_job["limits"]["tail_head"] = 0
            self.rr = WorkerRun("rerun worker", 1, 0)
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
            if not rr.warm.send(encode(self.executor._job_inputs(sources, packed))):
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

    def _give_up(self, run: WorkerRun) -> None:
        with self._lock:
            mine = run in self.pending
            if mine:
                self.pending.remove(run)
        if mine:
            self.executor._abandon(run, self.mode)
