"""Orchestration: Target -> samples -> inputs -> outcome matrix -> metrics -> CheckResult.

``Checker`` holds what is worth keeping between checks (the LLM provider, the sample cache, the
executor).  Blocking work (input generation, running the sandbox) happens in threads that only
wait on worker processes: generated code never runs in this process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coherence.engine.calibration import calibrate, shows_examples
from coherence.engine.config import CheckConfig
from coherence.engine.errors import CheckCancelled, CoherenceError
from coherence.engine.execution import ExecutionLimits, ModuleContext, Program
from coherence.engine.execution.distinct import distinct_programs
from coherence.engine.execution.executor import Executor, PreparedRun
from coherence.engine.execution.seen import SeenOutcomes
from coherence.engine.inputs import Input
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.likely import run_last
from coherence.engine.inputs.seeds.workspace import tests_fingerprint
from coherence.engine.markers import find_targets
from coherence.engine.overlap import EarlyRerun, close_in_background, close_when_started, retrieve
from coherence.engine.result import CheckResult
from coherence.engine.sampling import SampleSet, make_provider, sample_alternatives
from coherence.engine.sampling.cache import SampleCache
from coherence.engine.sampling.editor import Transport
from coherence.engine.sampling.provider import Provider
from coherence.engine.spec import Target
from coherence.engine.verdict.convincing import run_ahead
from coherence.engine.verdict.decide import against_examples, decide
from coherence.engine.verdict.scored import Judging
from coherence.engine.verdict.scoring import score_run
from coherence.engine.verdict.timeouts import confirm_hangs

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]  # (message, fraction done in [0, 1])
_INPUTS_CACHE_SIZE = 64


def module_context_for(target: Target, workspace: str | None) -> ModuleContext:
    path = Path(target.path)
    sys_path: list[str] = []
    if path.name and path.parent != Path(""):
        sys_path.append(str(path.parent.resolve()))
    if workspace:
        sys_path.append(str(Path(workspace).resolve()))
    stem = re.sub(r"\W", "_", path.stem) or "module"
    # A private module name: a user file called random.py must not shadow the stdlib in the worker.
    return ModuleContext(
        source=target.module_source,
        filename=str(path),
        module_name=f"coherence_user_{stem}",
        sys_path=tuple(dict.fromkeys(sys_path)),
    )


class Checker:
    def __init__(
        self,
        config: CheckConfig,
        *,
        provider: Provider | None = None,
        cache: SampleCache | None = None,
        executor: Executor | None = None,
        editor: Transport | None = None,
    ) -> None:
        self.config = config.validated()
        self._provider = provider
        self._editor = editor  # how to ask the editor's models (model = "editor"), in an editor
        self._cache = cache
        self._executor = executor
        self._inputs_cache: dict[tuple[Any, ...], tuple[list[Input], list[int]]] = {}
        self._inputs_lock = threading.Lock()
        self._inputs_pending: dict[tuple[Any, ...], concurrent.futures.Future[tuple[list[Input], list[int]]]] = {}
        # what programs gave on the shrinker's inputs: a re-check shrinks without running them again
        self._seen = SeenOutcomes()

    # Built lazily: a replay-only or skipped check must not pay for litellm or a cache file.
    @property
    def provider(self) -> Provider:
        if self._provider is None:
            self._provider = make_provider(
                model=self.config.model,
                models=self.config.models,
                api_base=self.config.api_base,
                replay=self.config.replay,
                temperature=self.config.temperature,
                timeout=self.config.llm_timeout,
                max_concurrency=self.config.max_concurrency,
                editor=self._editor,
            )
        return self._provider

    @property
    def cache(self) -> SampleCache | None:
        if self._cache is None and getattr(self.provider, "cacheable", False):
            self._cache = SampleCache(self.config.cache_dir, folder=True)
        return self._cache

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            limits = ExecutionLimits(
                call_timeout=self.config.call_timeout,
                program_budget=self.config.program_budget,
                run_budget=self.config.run_budget,
                tail_budget=self.config.tail_budget,
            )
            self._executor = Executor(python=self.config.python, limits=limits, sandbox=self.config.sandbox)
        return self._executor

    def _spec_key(self, target: Target) -> tuple[Any, ...]:
        """What a check's inputs are made from, but the workspace's test files (whose state
        ``_inputs_for`` adds, and kept rows check by the inputs' digest)."""
        cfg = self.config
        return (target.spec.spec_hash, cfg.inputs, cfg.seed, cfg.workspace)

    def _inputs_for(self, target: Target, early: EarlyRerun | None = None) -> tuple[list[Input], list[int]]:
        """The inputs, and those of them to run last (``inputs.likely``).  Inputs depend on the
        spec alone (never the body), so a body edit reuses them.  ``early`` gets the first inputs
        as soon as they exist, when this call makes them."""
        cfg = self.config
        # the workspace's tests seed inputs: a changed or deleted test file makes new ones
        key = (*self._spec_key(target), tests_fingerprint(cfg.workspace))
        with self._inputs_lock:
            cached = self._inputs_cache.get(key)
            if cached is not None:
                return cached
            # checks of one spec that overlap (edits in quick succession) share one generation
            pending = self._inputs_pending.get(key)
            mine = pending is None
            if pending is None:
                pending = self._inputs_pending[key] = concurrent.futures.Future()
        if not mine:
            return pending.result()
        try:
            inputs = generate_inputs(
                target.spec,
                cfg.inputs,
                module_source=target.module_source,
                workspace=cfg.workspace,
                seed=cfg.seed,
                time_budget=cfg.input_budget,
                on_prefix=(early.count, early.inputs_made) if early is not None else None,
            )
            try:
                last = run_last(target.spec, inputs)
            except Exception:  # only the order depends on it: cheapest first will do
                log.warning("ordering the inputs of %s failed", target.name, exc_info=True)
                last = []
            # Packed here (cached on each input), they cost nothing once the LLM has answered:
            # this thread runs while it does (docs/results.md#call-costs).
            for inp in inputs:
                inp.packed  # noqa: B018
            made = (inputs, last)
        except BaseException as exc:
            with self._inputs_lock:
                self._inputs_pending.pop(key, None)
            pending.set_exception(exc)
            raise
        with self._inputs_lock:
            self._inputs_cache[key] = made
            while len(self._inputs_cache) > _INPUTS_CACHE_SIZE:
                self._inputs_cache.pop(next(iter(self._inputs_cache)))
            self._inputs_pending.pop(key, None)
        pending.set_result(made)
        return made

    async def _prepare(
        self, module: ModuleContext, programs: list[Program], *, rerun_program: int, shared: int | None = None
    ) -> PreparedRun:
        """``Executor.prepare`` off the event loop; a check cancelled meanwhile gives up what it
        starts (the start goes on in its thread)."""
        starting = asyncio.ensure_future(
            asyncio.to_thread(
                self.executor.prepare,
                module,
                programs,
                rerun_program=rerun_program,
                seed=self.config.seed,
                anchor=0,
                shared=shared,
            )
        )
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            starting.add_done_callback(close_when_started)
            raise

    async def check_source(self, source: str, path: str, **kw: Any) -> list[CheckResult]:
        """Check every marked function of one module.  A syntax error becomes one error result."""
        try:
            targets = find_targets(source, path, mode=self.config.mode)
        except SyntaxError as exc:
            return [
                CheckResult(
                    name="<module>",
                    path=path,
                    line=exc.lineno or 1,
                    status="error",
                    reason=f"syntax error: {exc.msg} (line {exc.lineno})",
                )
            ]
        results = []
        for target in targets:
            results.append(await self.check(target, **kw))
        return results

    async def check(
        self,
        target: Target,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        samples: SampleSet | None = None,
    ) -> CheckResult:
        """Check one target.  Raises ``CoherenceError`` only for problems the user must fix in their
        configuration (no model, bad key); everything about the code itself ends up in the result."""
        # Inputs depend on the spec alone: build them while the LLM answers, which takes longer.
        inputs_task = None
        early = EarlyRerun(self.config.rerun_inputs) if self.config.rerun_inputs > 0 else None
        if not target.skip_reason:
            inputs_task = asyncio.ensure_future(asyncio.to_thread(self._inputs_for, target, early))
            inputs_task.add_done_callback(retrieve)
        try:
            return await self._check(
                target, inputs_task, progress=progress, cancel=cancel, samples=samples, early=early
            )
        finally:
            # A check that ended early or was cancelled leaves no task behind (the thread finishes
            # on its own and caches the inputs for the next check).
            if inputs_task is not None and not inputs_task.done():
                inputs_task.cancel()

    async def _check(
        self,
        target: Target,
        inputs_task: Any,  # the inputs' Future; None only for a skipped target, which returns before awaiting it
        *,
        progress: Progress | None,
        cancel: threading.Event | None,
        samples: SampleSet | None,
        early: EarlyRerun | None = None,
    ) -> CheckResult:
        started = time.monotonic()
        result = result_for(target, "skipped")
        result.delta = self.config.delta
        if target.skip_reason:
            result.reason = target.skip_reason
            return result
        cfg = self.config
        report_progress = progress or (lambda msg, frac: None)

        report_progress(f"{target.name}: sampling {cfg.samples - 1} alternatives", 0.0)
        if samples is None:
            samples = await sample_alternatives(target.spec, cfg.samples - 1, self.provider, self.cache)
        result.model = samples.model
        result.cost_usd = samples.cost_usd
        result.cost_by_model = samples.cost_by_model
        result.sampling = samples.report()  # "7 of 10 samples; 3 failed: rate limited (429)"
        if samples.notices:
            result.notices = list(samples.notices)
        problem = samples.problem(target.name)
        if problem:
            result.sampling_problem = problem
            result.sampling_problem_kind = samples.failure_kind or ""
        valid = samples.valid[: cfg.samples - 1]
        if not valid:
            result.status = "error"
            result.reason = f"no usable alternative implementations ({samples.report()})"
            result.seconds = time.monotonic() - started
            return result
        _raise_if_cancelled(cancel)

        stage = time.monotonic()
        timings = result.extra["timings"] = {"sampling": round(stage - started, 4)}
        module = module_context_for(target, cfg.workspace)
        spec = target.spec
        programs = [Program(target.name, None, "yours", spec.owner, spec.method_kind)] + [
            Program(
                target.name, s.code, f"alternative {i}", spec.owner, spec.method_kind, origin=s.model or samples.model
            )
            for i, s in enumerate(valid, start=1)
        ]
        # After an edit of your body, on the same inputs, the alternatives' rows are those of the
        # check before: only yours runs.
        view = self._seen.for_run(
            module, programs, cfg.seed, self.executor.limits, (target.function_source, target.name)
        )
        starting_rerun = 0 if cfg.rerun_inputs > 0 else -1
        spec_key = self._spec_key(target)
        kept = self._seen.rows(view.prints[1:], spec_key)
        # The workers load the module and the programs while the inputs are still being made
        # (with cached or replayed samples, nothing else hides their generation).
        prepared = await self._prepare(
            module,
            programs[:1] if kept is not None else programs,
            rerun_program=starting_rerun,
            shared=kept.shared if kept is not None else None,
        )
        if early is not None:
            early.run_prepared(prepared)

        # An edited body's shrink inputs run while scoring and the verdict do, on workers the
        # main run gave back, or beside it when yours runs alone (``decide`` waits for them).
        ahead_cancel = threading.Event()

        def start_ahead() -> asyncio.Future[None]:
            task = asyncio.ensure_future(
                asyncio.to_thread(
                    run_ahead, self.executor, self._seen, view, cfg, target, module, programs, ahead_cancel
                )
            )
            task.add_done_callback(retrieve)
            return task

        ahead = start_ahead() if kept is not None else None
        try:
            report_progress(f"{target.name}: generating inputs", 0.2)
            inputs, last = await inputs_task  # "inputs" below is what it added after sampling
            if not inputs:
                ahead_cancel.set()
                result.reason = "could not build any input from the signature"
                result.seconds = time.monotonic() - started
                return result
            _raise_if_cancelled(cancel)
            timings["inputs"] = round(time.monotonic() - stage, 4)
            stage = time.monotonic()
            report_progress(f"{target.name}: running {len(programs)} programs × {len(inputs)} inputs", 0.3)
            rerun = list(range(min(len(inputs), cfg.rerun_inputs)))
            if kept is not None and not kept.hold_for(inputs):  # the workspace's tests changed them
                kept = None
                close_in_background(prepared)
                prepared = await self._prepare(module, programs, rerun_program=starting_rerun)
            report = await asyncio.to_thread(prepared.run, inputs, rerun=rerun, cancel=cancel, last=last)
        except BaseException:
            ahead_cancel.set()
            raise
        finally:
            if prepared.pending:  # it never got its inputs
                close_in_background(prepared)
        if kept is not None:
            report = kept.beside(report)
        else:
            # the limits a run of yours alone keeps are those of these programs (the eval's first
            # run also ran the reference: its report's count is not theirs)
            shared = len(distinct_programs(programs)[0])
            self._seen.keep_rows(view.prints[1:], spec_key, inputs, report.outcomes[1:], shared)
        result.sandbox = report.sandbox
        timings["execution"] = round(time.monotonic() - stage, 4)
        stage = time.monotonic()
        if ahead is None:
            ahead = start_ahead()
        try:
            # Scoring runs in a thread: grouping long float outputs within tolerance can take a large
            # share of a second, and the editor's event loop must not wait (docs/results.md#scoring-thread).
            # A timeout decides nothing unless it is a hang, which one short run tells (``verdict.timeouts``).
            hangs = frozenset[int]()
            if any(report.timeouts):  # (confirm_hangs finds the inputs, off the event loop)
                hangs = await asyncio.to_thread(
                    confirm_hangs, self.executor, module, programs, inputs, report, seed=cfg.seed, cancel=cancel
                )
            scored = await asyncio.to_thread(
                score_run, self.config, target, result, report, programs, valid, inputs, rerun, started, hangs
            )
            if scored is None:
                return result
            timings["metrics"] = round(time.monotonic() - stage, 4)
            judging = Judging(self.executor, self.config, target, module, scored, report, cancel, self._seen, ahead)
            if result.status == "incoherent":
                await decide(judging, result, report_progress)  # times its verdict and counterexample
            elif result.status == "coherent":
                # Agreement is no verdict on the docstring: every program can contradict its example.
                stage = time.monotonic()
                await against_examples(judging, result)
                timings["examples"] = round(time.monotonic() - stage, 4)
        finally:
            ahead_cancel.set()  # no shrink follows, or it has what it needed
        # Trust is read once the severity is final: what the user is told is part of the evidence.
        calibrate(result, shows_examples(i.origin for i in inputs), len({p.origin for p in programs[1:]}) > 1)
        result.seconds = time.monotonic() - started
        report_progress(f"{target.name}: done", 1.0)
        return result


def result_for(target: Target, status: str, reason: str = "") -> CheckResult:
    """A result that knows where its function is, before (or instead of) any measurement."""
    return CheckResult(
        name=target.name,
        qualname=target.qualname or target.name,
        path=target.path,
        line=target.name_line,
        column=target.column,
        end_line=target.end_line,
        status=status,
        reason=reason,
        spec_hash=target.spec.spec_hash,
        body_hash=target.body_hash,
        checked_at=time.time(),
    )


def _raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CheckCancelled("check cancelled")


__all__ = ["Checker", "CoherenceError", "Input", "module_context_for", "result_for"]
