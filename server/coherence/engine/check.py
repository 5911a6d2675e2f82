"""Orchestration: Target -> samples -> inputs -> outcome matrix -> metrics -> CheckResult.

``Checker`` holds what is worth keeping between checks (the LLM provider, the sample cache, the
executor).  Blocking work (input generation, running the sandbox) happens in threads that only
wait on worker processes: generated code never runs in this process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import itertools
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from coherence.engine import counterexample as cx
from coherence.engine import verdict
from coherence.engine.calibration import calibrated_trust
from coherence.engine.config import CheckConfig
from coherence.engine.errors import CheckCancelled, CoherenceError
from coherence.engine.execution import ExecutionLimits, ModuleContext, Program
from coherence.engine.execution.executor import BUDGET_EXCEEDED, OUT_OF_TIME, ExecutionReport, Executor, PreparedRun
from coherence.engine.inputs import Input
from coherence.engine.inputs.domain import Domain
from coherence.engine.inputs.examples import StatedExample, stated_examples
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.likely import run_last
from coherence.engine.inputs.preconditions import Assumption, assumption
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.markers import find_targets
from coherence.engine.metrics import Metrics, score
from coherence.engine.outcomes import Outcome, canonical, gives, labels_from_ids, outcome_ids, outcomes_equal
from coherence.engine.result import CheckResult, Cluster
from coherence.engine.sampling import SampleSet, make_provider, sample_alternatives
from coherence.engine.sampling.cache import SampleCache
from coherence.engine.spec import Target

log = logging.getLogger(__name__)

Progress = Callable[[str, float], None]  # (message, fraction done in [0, 1])
_INPUTS_CACHE_SIZE = 64
_MISSING_MODULE = re.compile(r"^(ModuleNotFoundError|ImportError)\b")


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
        self, config: CheckConfig, *, provider=None, cache: SampleCache | None = None, executor: Executor | None = None
    ):
        self.config = config.validated()
        self._provider = provider
        self._cache = cache
        self._executor = executor
        self._inputs_cache: dict[tuple, tuple[list[Input], list[int]]] = {}
        self._inputs_lock = threading.Lock()
        self._inputs_pending: dict[tuple, concurrent.futures.Future] = {}

    # Built lazily: a replay-only or skipped check must not pay for litellm or a cache file.
    @property
    def provider(self):
        if self._provider is None:
            self._provider = make_provider(
                model=self.config.model,
                models=self.config.models,
                api_base=self.config.api_base,
                replay=self.config.replay,
                temperature=self.config.temperature,
                timeout=self.config.llm_timeout,
                max_concurrency=self.config.max_concurrency,
            )
        return self._provider

    @property
    def cache(self) -> SampleCache | None:
        if self._cache is None and getattr(self.provider, "cacheable", False):
            self._cache = SampleCache(self.config.cache_dir)
        return self._cache

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            limits = ExecutionLimits(
                call_timeout=self.config.call_timeout,
                program_budget=self.config.program_budget,
                run_budget=self.config.run_budget,
            )
            self._executor = Executor(python=self.config.python, limits=limits, sandbox=self.config.sandbox)
        return self._executor

    def _inputs_for(self, target: Target, early: _EarlyRerun | None = None) -> tuple[list[Input], list[int]]:
        """The inputs, and those of them to run last (``inputs.likely``).  Inputs depend on the
        spec alone (never the body), so a body edit reuses them.  ``early`` gets the first inputs
        as soon as they exist, when this call makes them."""
        cfg = self.config
        key = (target.spec.spec_hash, cfg.inputs, cfg.seed, cfg.workspace)
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
            # Packed here (3-7 ms a thousand, cached on each input), they cost nothing once the
            # LLM has answered: this thread runs while it does.
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

    async def check_source(self, source: str, path: str, **kw) -> list[CheckResult]:
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
        early = _EarlyRerun(self.config.rerun_inputs) if self.config.rerun_inputs > 0 else None
        if not target.skip_reason:
            inputs_task = asyncio.ensure_future(asyncio.to_thread(self._inputs_for, target, early))
            inputs_task.add_done_callback(_retrieve)
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
        inputs_task,
        *,
        progress: Progress | None,
        cancel: threading.Event | None,
        samples: SampleSet | None,
        early: _EarlyRerun | None = None,
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
        # The workers load the module and the programs while the inputs are still being made
        # (with cached or replayed samples, nothing else hides their generation).
        starting = asyncio.ensure_future(
            asyncio.to_thread(
                self.executor.prepare,
                module,
                programs,
                rerun_program=0 if cfg.rerun_inputs > 0 else -1,
                seed=cfg.seed,
                anchor=0,
            )
        )
        try:
            prepared = await asyncio.shield(starting)
        except asyncio.CancelledError:  # the start goes on in its thread: what it starts is given up
            starting.add_done_callback(_close_when_started)
            raise
        if early is not None:
            early.run_prepared(prepared)
        try:
            report_progress(f"{target.name}: generating inputs", 0.2)
            inputs, last = await inputs_task  # "inputs" below is what it added after sampling
            if not inputs:
                result.reason = "could not build any input from the signature"
                result.seconds = time.monotonic() - started
                return result
            _raise_if_cancelled(cancel)
            timings["inputs"] = round(time.monotonic() - stage, 4)
            stage = time.monotonic()
            report_progress(f"{target.name}: running {len(programs)} programs × {len(inputs)} inputs", 0.3)
            rerun = list(range(min(len(inputs), cfg.rerun_inputs)))
            report = await asyncio.to_thread(prepared.run, inputs, rerun=rerun, cancel=cancel, last=last)
        finally:
            if prepared.pending:  # it never got its inputs
                _close_in_background(prepared)
        result.sandbox = report.sandbox
        timings["execution"] = round(time.monotonic() - stage, 4)
        stage = time.monotonic()
        # Scoring runs in a thread like the rest: on outputs that are long lists of floats, grouping
        # them within tolerance took HumanEval/130 0.4-0.75 s of CPU, and the language server's
        # event loop (hover, edits) must not wait for it.
        scored = await asyncio.to_thread(self._score, target, result, report, programs, valid, inputs, rerun, started)
        if scored is None:
            return result
        timings["metrics"] = round(time.monotonic() - stage, 4)
        # The docstring's worked examples are part of the spec: a function that contradicts one
        # is wrong or documented wrongly, whatever the alternatives say (``verdict.from_examples``).
        # (Only where the programs disagree: a coherent function that contradicts its docstring
        # is not reported yet.)
        if result.status == "incoherent":
            stage = time.monotonic()
            if target.accept:
                await asyncio.to_thread(self._accepted, target, module, scored, cancel)
                result.accepted = scored.result_accepted
            examples = await asyncio.to_thread(self._stated, target, module, scored, report, cancel)
            # an example the user accepted yours on (a comment, the baseline) is no evidence
            accepted = {inp.key() for _, inp in accepted_inputs(target)} if target.accept else set()
            examples = [e for e in examples if e[1].key() not in accepted]
            votes = [_example_votes(i, ex, row) for i, (ex, _, row) in enumerate(examples)]
            stated = verdict.from_examples(votes, len(scored.programs) - 1)
            discredited = _discredited(votes)
            # in a thread, like scoring: a thousand disagreeing inputs cost it milliseconds
            evidence = await asyncio.to_thread(_judge, scored, discredited)
            if stated is not None:
                evidence = verdict.stronger(stated, evidence)
            result.severity = evidence.severity
            result.evidence = evidence.to_dict()
            if evidence.kind != "example" and discredited:
                result.evidence["discredited"] = len(discredited)  # alternatives without a vote
            if evidence.severity == "hint" and result.accepted:
                result.evidence["why"] = "you accepted this disagreement as intended"
            if evidence.kind == "example" and evidence.input is not None:
                result.counterexample, result.disagreeing_code = _example_counterexample(
                    target, scored, examples[evidence.input], evidence
                )
                timings["counterexample"] = round(time.monotonic() - stage, 4)
                result.seconds = time.monotonic() - started
                report_progress(f"{target.name}: done", 1.0)
                return result
            report_progress(f"{target.name}: shrinking a counterexample", 0.85)
            result.counterexample, where, rival, outcomes = await asyncio.to_thread(
                self._counterexample, target, module, scored, report, evidence, cancel
            )
            if outcomes is not None:
                shown = cx.render_outcomes(outcomes, target.spec.receiver)
                for cluster, members in zip(result.clusters, scored.metrics.cluster_members):
                    cluster.output = shown[members[0]]
            if rival is not None and scored.programs[rival].source:
                result.disagreeing_code = scored.programs[rival].source  # the side the counterexample shows
            if scored.inside is not None and where:
                result.outside_domain = where
            timings["counterexample"] = round(time.monotonic() - stage, 4)
        result.seconds = time.monotonic() - started
        report_progress(f"{target.name}: done", 1.0)
        return result

    def _score(
        self,
        target: Target,
        result: CheckResult,
        report: ExecutionReport,
        programs: list[Program],
        valid: list,
        inputs: list[Input],
        rerun: list[int],
        started: float,
    ):
        """The outcome matrix to metrics, status and domain, filled into ``result``; None when the
        result is final (an error: nothing ran, nothing left to compare)."""
        if report.module_error:
            result.status = "error"
            result.reason = f"your module failed to load in the sandbox: {report.module_error}"
            result.seconds = time.monotonic() - started
            return None

        # Alternatives that import a module this interpreter lacks say nothing about the task.
        dropped = [i for i, err in enumerate(report.load_errors) if i > 0 and err and _MISSING_MODULE.match(err)]
        if dropped:
            programs, valid, _ = _drop_programs(dropped, programs, valid, report)
            result.sampling += f"; {len(dropped)} dropped: needs a module that is not installed"
        if len(programs) < 2:
            result.status = "error"
            result.reason = f"no runnable alternative implementations ({result.sampling})"
            result.seconds = time.monotonic() - started
            return None

        unstable = _nondeterminism(report, rerun)
        if unstable is not None:
            x, first, second = unstable
            receiver = target.spec.receiver
            unstable_reason = (
                f"your function gave two different results for {inputs[x].call(target.spec.callee)}: "
                f"{first.render(receiver=receiver)} then {second.render(receiver=receiver)}"
            )

        # Inputs some program never reached within its time budget are left out for everyone:
        # n shrinks, rather than one slow program "disagreeing" on every input it skipped.
        ids, distinct = outcome_ids(report.outcomes)
        over_budget = np.fromiter((o.error == BUDGET_EXCEEDED for o in distinct), dtype=bool, count=len(distinct))
        if over_budget.any():
            # But an alternative that ran out of time long before the others (one that hangs on
            # small inputs) would take most inputs away from everyone: it goes instead, and says so.
            reach = (~over_budget[ids]).sum(axis=1)
            out_of_time = np.fromiter((o.error in OUT_OF_TIME for o in distinct), dtype=bool, count=len(distinct))
            slow = too_slow(~over_budget[ids], ~out_of_time[ids])
            if slow and len(programs) - len(slow) >= 2:
                programs, valid, keep = _drop_programs(slow, programs, valid, report)
                ids = ids[keep]
                result.sampling += f"; {len(slow)} dropped: too slow (reached {int(reach[slow].max())} of {len(inputs)} inputs in time)"
                result.too_slow = len(slow)
            reached = np.flatnonzero(~over_budget[ids].any(axis=0))
            result.inputs_over_budget = len(inputs) - len(reached)
            ids = ids[:, reached]
            reached = reached.tolist()
            inputs = [inputs[x] for x in reached]
            report.outcomes = [[row[x] for x in reached] for row in report.outcomes]
        if not inputs:
            result.status = "error"
            result.reason = "every input ran out of the time budget: the programs are too slow for these inputs"
            result.seconds = time.monotonic() - started
            return None

        labels = labels_from_ids(ids, distinct)
        raised, errors = _raise_matrices(ids, distinct)
        metrics = score(labels, raised, errors, delta=self.config.delta)
        result.samples = metrics.programs
        result.inputs = metrics.inputs
        result.incoherence = metrics.incoherence
        result.incoherence_interval = list(metrics.incoherence_interval)
        result.disagreement = metrics.disagreement
        result.error_lower_bound = metrics.error_lower_bound
        result.pac_bound = metrics.pac_bound
        result.sde = metrics.sde
        result.dsde = metrics.dsde
        result.trust_raw = metrics.trust
        result.trust = calibrated_trust(metrics.dsde)
        result.clusters = describe_clusters(metrics, programs)
        result.user_cluster = metrics.user_cluster
        result.load_errors = {programs[i].label: e for i, e in enumerate(report.load_errors) if e}
        result.timeouts = sum(report.timeouts)
        result.extra["programs_run"] = report.programs_run  # copies of one alternative run once

        if unstable is not None:
            result.status = "nondeterministic"
            result.reason = unstable_reason
            result.severity = "information"
        elif metrics.incoherence > 0:
            result.status = "incoherent"
        elif thin := thin_evidence(metrics.programs - 1, self.config, result.sampling):
            result.status = "error"
            result.reason = thin
        else:
            result.status = "coherent"

        members = metrics.cluster_members
        others = [g for i, g in enumerate(members) if i != metrics.user_cluster]
        if others:
            result.disagreeing_code = programs[others[0][0]].source
            if members[0] is not members[metrics.user_cluster] and len(members[0]) > len(members[metrics.user_cluster]):
                result.majority_code = programs[members[0][0]].source

        # The stated domain: the docstring's preconditions and examples, the workspace's tests, the
        # user's ``assume``.  Disagreement outside it is still disagreement, but no evidence against
        # the user's function (``verdict``), and the counterexample comes from inside when it can.
        domain = Domain(target.spec, inputs, assume=user_assumptions(target)) if result.status == "incoherent" else None
        inside = None
        disagree = metrics.per_input > 0
        if domain is not None and not domain.empty:
            inside = inside_mask(domain, inputs, disagree)
            result.domain = domain.describe()
        return Scored(programs, inputs, labels, raised, metrics, domain, inside, disagree)

    def _accepted(self, target: Target, module: ModuleContext, scored: Scored, cancel) -> None:
        """Apply the user's ``accept`` statements: each names a call on which the user declared
        their function's behaviour intended.  The alternatives that disagree with it there are the
        accepted readings of the spec; an input where only they disagree is no evidence
        (``scored.ignore``).  A disagreement of any other alternative still counts."""
        accepted = accepted_inputs(target)
        if not accepted:
            return
        report = self.executor.run(
            module, scored.programs, [inp for _, inp in accepted], seed=self.config.seed, cancel=cancel
        )
        if report.module_error:
            return
        readers = np.zeros(len(scored.programs), dtype=bool)
        matched = []
        for a, (call, _) in enumerate(accepted):
            mine = report.outcomes[0][a]
            differ = [j for j in range(1, len(scored.programs)) if not outcomes_equal(report.outcomes[j][a], mine)]
            if differ:
                readers[differ] = True
                matched.append(call)
        if not matched:
            return
        scored.result_accepted = matched
        differs = scored.labels[1:] != scored.labels[0]
        scored.ignore = ~(differs & ~readers[1:, None]).any(axis=0)

    def _stated(
        self, target: Target, module: ModuleContext, scored: Scored, report: ExecutionReport, cancel
    ) -> list[tuple[StatedExample, Input, list[Outcome]]]:
        """Each worked example of the docstring that coherence can rebuild, with every program's
        outcome on it: from the run when the example was among the inputs (doctests are), else
        from a small run of its own.  Examples on which yours ran out of time are left out."""
        spec = target.spec
        if spec.owner:  # a method's examples call it on an object the example builds
            return []
        examples = stated_examples(spec.docstring, spec.name)
        if not examples:
            return []
        where = {inp.key(): x for x, inp in enumerate(scored.inputs)}
        found, missing = [], []
        for ex in examples:
            inp = input_from_call(target, ex.call)
            if inp is None:
                continue
            x = where.get(inp.key())
            if x is not None:
                found.append((ex, inp, [row[x] for row in report.outcomes]))
            else:
                missing.append((ex, inp))
        if missing:
            run = self.executor.run(
                module, scored.programs, [inp for _, inp in missing], seed=self.config.seed, cancel=cancel
            )
            if not run.module_error:
                found.extend((ex, inp, [row[a] for row in run.outcomes]) for a, (ex, inp) in enumerate(missing))
        return [
            (ex, inp, row)
            for ex, inp, row in found
            if row[0].error not in OUT_OF_TIME and row[0].error != BUDGET_EXCEEDED
        ]

    def _counterexample(
        self,
        target: Target,
        module: ModuleContext,
        scored: Scored,
        report: ExecutionReport,
        evidence: verdict.Evidence,
        cancel,
    ):
        """The counterexample, why its input lies outside the stated domain ("" inside), and the
        program whose outcome it sets against yours.

        It is the verdict's own input when the verdict rests on one (a bloc that outvotes yours, or
        disagrees with it, inside the domain, both sides returning when they can); else the
        general choice among all inputs (``counterexample.choose``)."""
        inputs, domain, inside = scored.inputs, scored.domain, scored.inside
        picked: tuple[int, int] | None
        if evidence.input is not None and evidence.rival is not None:  # the verdict sets both
            picked = (evidence.input, evidence.rival)
        else:
            picked = cx.choose(scored.labels, scored.raised, inputs, scored.metrics, prefer=inside)
        if picked is None:
            return None, "", None, None
        x, rival = picked
        start = inputs[x]
        # an input from inside the domain stays inside while it shrinks, and one with the examples'
        # magnitudes keeps them (shrinking toward 0 turns is_leap(1900) into is_leap(0))
        keep = _keeper(
            domain,
            inside is not None and bool(inside[x]),
            domain is not None and bool(domain.bands) and domain.typical(start),
        )
        if domain is not None and domain.ordered_pairs and not domain.crossed(start):
            # nor does one whose intervals are ordered, like the examples', shrink into (1, 0)
            keep = _and(keep, lambda c: not domain.crossed(c))
        start_outcomes = [row[x] for row in report.outcomes]
        try:
            shrunk, outcomes = cx.shrink(
                self.executor,
                module,
                scored.programs,
                rival,
                start,
                start_outcomes,
                rounds=self.config.shrink_rounds,
                seed=self.config.seed,
                cancel=cancel,
                keep=keep,
                known=cx.KnownOutcomes(inputs, report.outcomes),
            )
        except CheckCancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - shrinking is a nicety; the unshrunk input stands
            log.debug("shrinking failed: %s", exc)
            shrunk, outcomes = start, start_outcomes
        if domain is not None and domain.crossed(shrunk) and not domain.crossed(start):
            shrunk, outcomes = start, start_outcomes  # the input before shrinking, which the reader would not dismiss
        if domain is not None and domain.bands and not domain.typical(shrunk):
            shrunk, outcomes = cx.toward_examples(
                self.executor,
                module,
                scored.programs,
                rival,
                shrunk,
                outcomes,
                [c for c in domain.toward_examples(shrunk) if keep is None or keep(c)],
                seed=self.config.seed,
                cancel=cancel,
            )
        where = "; ".join(domain.violations(shrunk)) if domain is not None else ""
        described = cx.describe(
            target.spec.callee, shrunk, outcomes, rival, shrunk_from=start, receiver=target.spec.receiver
        )
        return described, where, rival, outcomes


def _example_votes(i: int, ex: StatedExample, row: list[Outcome]) -> tuple[int, bool, list[bool], list[bool]]:
    """(index, yours gives the stated result, which alternatives do, which agree with yours)."""

    def said(o: Outcome) -> bool:
        return gives(o, ex.value, ex.raises, ex.expected)

    return i, said(row[0]), [said(o) for o in row[1:]], [outcomes_equal(o, row[0]) for o in row[1:]]


def _example_counterexample(
    target: Target, scored: Scored, found: tuple[StatedExample, Input, list[Outcome]], evidence: verdict.Evidence
):
    """The counterexample of a contradicted worked example: the example's own call, yours
    against what the docstring states; and the source of an alternative that reproduces it."""
    ex, inp, row = found
    receiver = target.spec.receiver
    ce = cx.describe(target.spec.callee, inp, row, evidence.rival or 1, receiver=receiver)
    said = Outcome("raise", error=ex.raises) if ex.raises else Outcome("ok", value=canonical(ex.value))
    ce.theirs = said.render(receiver=receiver)
    ce.stated = ex.expected
    ce.call = ex.call  # as the docstring writes it
    code = scored.programs[evidence.rival].source if evidence.rival else None
    return ce, code


def thin_evidence(alternatives: int, config: CheckConfig, sampling: str) -> str:
    """Why agreement with ``alternatives`` alternatives is too little to call a function coherent
    ("" when it is enough): fewer than ``min_alternatives``, or than all that were asked for when
    fewer were (``--samples 2`` asks for one)."""
    needed = min(config.min_alternatives, config.samples - 1)
    if alternatives >= needed:
        return ""
    return (
        f"too little evidence to call it coherent: it agrees with {alternatives} alternative"
        f"{'' if alternatives == 1 else 's'} only ({sampling}), and min_alternatives is {needed}"
    )


def describe_clusters(metrics: Metrics, programs: list[Program]) -> list[Cluster]:
    """The behaviour clusters as a result shows them: size, whose, where their alternatives
    came from, and one alternative's source to read (``--show-alternatives``, the editor's diff)."""
    out = []
    for i, members in enumerate(metrics.cluster_members):
        alternatives = [programs[j] for j in members if j != 0]
        out.append(
            Cluster(
                size=len(members),
                yours=i == metrics.user_cluster,
                models=dict(Counter(p.origin or "unknown" for p in alternatives)),
                representative_source=alternatives[0].source if alternatives else None,
            )
        )
    return out


@dataclass
class Scored:
    """What scoring leaves for the verdict and the counterexample: the programs and inputs that
    remain (too-slow alternatives and over-budget inputs left out), their outcome labels, the
    metrics, and the stated domain."""

    programs: list[Program]
    inputs: list[Input]
    labels: np.ndarray
    raised: np.ndarray
    metrics: Metrics
    domain: Domain | None
    inside: np.ndarray | None  # inputs inside the domain (asked only where programs disagree)
    disagree: np.ndarray  # inputs where some programs disagree
    ignore: np.ndarray | None = None  # inputs whose disagreements the user accepted
    result_accepted: list[str] = field(default_factory=list)


def _judge(scored: Scored, discredited: set[int] | frozenset[int] = frozenset()) -> verdict.Evidence:
    """The verdict on a scored check; inputs like the examples' magnitudes are preferred as its
    evidence.  ``discredited`` alternatives (they contradict a worked example of the docstring)
    have no vote, as long as two alternatives keep theirs."""
    typical = None
    if scored.domain is not None and scored.domain.bands:
        typical = np.zeros(len(scored.inputs), dtype=bool)
        for x in np.flatnonzero(scored.disagree).tolist():
            typical[x] = scored.domain.typical(scored.inputs[x])
    rows = [j for j in range(len(scored.programs)) if j not in discredited]
    if len(rows) < 3:
        rows = list(range(len(scored.programs)))
    labels, raised = scored.labels[rows], scored.raised[rows]
    incoherent = bool((labels != labels[:1]).any())
    models = [scored.programs[j].origin for j in rows]  # who wrote each row: a panel's term needs it
    evidence = verdict.judge(
        labels,
        raised,
        inside=scored.inside,
        incoherent=incoherent,
        ignore=scored.ignore,
        typical=typical,
        models=models,
        model_backs=verdict.PANEL_MODEL_BACKS,
    )
    if evidence.severity == "none":  # only the discredited ones disagree with yours
        return verdict.Evidence(
            "hint",
            alternatives=len(rows) - 1,
            why="only alternatives that contradict the docstring's worked examples disagree with yours",
        )
    if evidence.rival is not None:
        evidence.rival = rows[evidence.rival]  # back to the program's own index
    return evidence


def _discredited(votes: list[tuple[int, bool, list[bool], list[bool]]]) -> set[int]:
    """The alternatives that contradict a worked example of the docstring which some program
    (yours or another) does give: known wrong on the spec's own example, they lose their vote.
    (An example no program gives is more likely sloppy than a verdict on them all.)  Replayed on
    the recorded HumanEval corpus this moved warning precision from 0.826 to 0.837 and took
    diagnostics off 14 passing functions, at the same recall."""
    out: set[int] = set()
    for _, mine_gives, support, _ in votes:  # (``_example_votes``)
        if mine_gives or any(support):
            out.update(1 + j for j, gave in enumerate(support) if not gave)
    return out


def _and(first, second):
    return second if first is None else (lambda c: first(c) and second(c))


def _keeper(domain: Domain | None, inside: bool, typical: bool):
    if domain is None or not (inside or typical):
        return None
    if inside and typical:
        return lambda c: domain.contains(c) and domain.typical(c)
    return domain.contains if inside else domain.typical


def user_assumptions(target: Target) -> list[Assumption]:
    """The preconditions the user stated outside the docstring (decorator, comment)."""
    out = []
    for expr in target.assume:
        a = assumption(expr, "your assume")
        if a is None:
            log.warning(
                "%s: ignoring assume %r: not an expression over the parameters coherence can evaluate",
                target.name,
                expr,
            )
        else:
            out.append(a)
    return out


def input_from_call(target: Target, call: str) -> Input | None:
    """The input a call of this function spells (``clamp(0, 1, 0)``, ``Cart().add('', 0)``),
    read the way the docstring's examples are; None when it is not such a call."""
    spec = dataclasses.replace(target.spec, docstring=f">>> {call}")
    found = doctest_seeds(spec, target.module_source)
    return found[0] if found else None


def accepted_inputs(target: Target) -> list[tuple[str, Input]]:
    """(call text, input) for each ``accept`` statement that parses as a call of this function."""
    out = []
    for call in target.accept:
        inp = input_from_call(target, call)
        if inp is not None:
            out.append((call, inp))
        else:
            log.warning(
                "%s: ignoring accept %r: not a call of %s with values coherence can rebuild",
                target.name,
                call,
                target.spec.callee,
            )
    return out


class _EarlyRerun:
    """The nondeterminism re-run takes a check's first ``count`` inputs, final long before the
    others are made.  Of those inputs (from the generating thread) and the prepared run (from
    the check), whichever comes second hands them over (``PreparedRun.start_rerun``): the re-run
    then runs while the rest are generated, on a core that would wait, not during the run."""

    def __init__(self, count: int):
        self.count = count
        self._lock = threading.Lock()
        self._inputs: list[Input] | None = None
        self._run: PreparedRun | None = None

    def inputs_made(self, inputs: list[Input]) -> None:
        with self._lock:
            self._inputs = inputs
            run = self._run
        if run is not None:
            self._start(run, inputs)

    def run_prepared(self, run: PreparedRun) -> None:
        with self._lock:
            self._run = run
            inputs = self._inputs
        if inputs is not None:
            self._start(run, inputs)

    @staticmethod
    def _start(run: PreparedRun, inputs: list[Input]) -> None:
        try:
            run.start_rerun(inputs)
        except Exception:  # the re-run then starts with the others, as it did
            log.warning("starting the re-run early failed", exc_info=True)


def _retrieve(task: asyncio.Future) -> None:
    """Mark a background task's exception as seen (asyncio logs unseen ones)."""
    if not task.cancelled():
        task.exception()


def _close_in_background(prepared: PreparedRun) -> None:
    """Let the workers of a run that never got its inputs go (``PreparedRun.close`` waits for
    their jobs to end), off the event loop."""
    asyncio.get_running_loop().run_in_executor(None, prepared.close).add_done_callback(_retrieve)


def _close_when_started(starting: asyncio.Future) -> None:
    """Give up, in the background, a run whose start outlived the check that asked for it."""
    if starting.cancelled() or starting.exception() is not None:
        return
    _close_in_background(starting.result())


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


def inside_mask(domain: Domain, inputs: list[Input], disagree: np.ndarray) -> np.ndarray:
    """Which inputs lie inside ``domain``, asked only of those some programs disagree on: the
    rest are never a counterexample, and asking all of a thousand cost an incoherent check
    several milliseconds on its critical path.  False elsewhere."""
    inside = np.zeros(len(inputs), dtype=bool)
    for x in np.flatnonzero(disagree).tolist():
        inside[x] = domain.contains(inputs[x])
    return inside


# An alternative is dropped as too slow when it reached fewer than this share of the inputs the
# median program reached within its time budget.
_SLOW_REACH = 0.5


def too_slow(reached: np.ndarray, finished: np.ndarray) -> list[int]:
    """The alternatives (rows after the user's, row 0) that ran out of time long before the others.

    ``reached[p, x]``: program p got to input x within its budget; ``finished[p, x]``: it also
    returned or raised there (no timeout).  Reach is measured against the median program: when
    most programs are slow, the inputs are what is too big, and they go instead.  And a short
    reach alone is not enough, because where a run stops is noisy when the calls take about the
    timeout (one brute-force alternative stops after 5 inputs, an identical one after 22): the
    inputs the program gave up on must mostly be ones that most other programs finished."""
    reach = reached.sum(axis=1)
    bar = _SLOW_REACH * np.median(reach)
    slow = []
    for p in range(1, len(reach)):
        if reach[p] >= bar:
            continue
        gave_up = ~finished[p]
        others = np.delete(finished, p, axis=0)[:, gave_up]
        finished_by_most = 2 * others.sum(axis=0) > len(others)
        if 2 * finished_by_most.sum() > gave_up.sum():
            slow.append(p)
    return slow


def _drop_programs(
    drop: list[int], programs: list[Program], valid: list, report: ExecutionReport
) -> tuple[list[Program], list, list[int]]:
    """Leave the alternatives ``drop`` out of the programs, their samples and the report's rows;
    returns (programs, samples, indices kept)."""
    keep = [p for p in range(len(programs)) if p not in drop]
    report.outcomes = [report.outcomes[p] for p in keep]
    report.load_errors = [report.load_errors[p] for p in keep]
    return [programs[p] for p in keep], [valid[p - 1] for p in keep[1:]], keep


def _raise_matrices(ids: np.ndarray, distinct: list[Outcome]) -> tuple[np.ndarray, np.ndarray]:
    """Which calls raised, and an integer code of the exception type (-1 where none was)."""
    codes: dict[str, int] = {}
    raised = np.array([o.kind == "raise" for o in distinct], dtype=bool)
    errors = np.array(
        [codes.setdefault(o.error or "", len(codes)) if o.kind == "raise" else -1 for o in distinct], dtype=np.int64
    )
    return raised[ids], errors[ids]


def _nondeterminism(report: ExecutionReport, rerun: list[int]) -> tuple[int, Outcome, Outcome] | None:
    for x, again in zip(rerun, report.rerun):
        first = report.outcomes[0][x]
        if {again.error, first.error} & OUT_OF_TIME:
            continue  # a slow call, or one never made, is not evidence of nondeterminism
        if not outcomes_equal(first, again):
            return x, first, again
    return None


def _raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CheckCancelled("check cancelled")


def results_key(target: Target, config: CheckConfig) -> str:
    """Results depend on the spec (samples), the body, the module around it, and the settings.

    "The module around it" leaves out the other marked functions this one does not mention, so
    editing one function does not re-run its unrelated neighbours.
    """
    return results_keys([target], config)[0]


def results_keys(targets: list[Target], config: CheckConfig) -> list[str]:
    """``results_key`` of each target; the module's own work (its marked functions, its lines)
    is done once per module, not once per function: the language server keys every function of a
    document each time it parses it, hover included."""
    settings = repr(config)
    modules: dict[tuple[str | None, str], tuple[list[str], list[tuple[int, int, str, bool]]]] = {}
    keys = []
    for target in targets:
        module = modules.get((target.module_source, target.path))
        if module is None:
            module = modules[(target.module_source, target.path)] = _module_facts(target, config.mode)
        # what the user accepted (comments, a baseline file) changes the verdict, so the key
        parts = [
            target.spec.spec_hash,
            target.body_hash,
            _context_hash(target, *module),
            settings,
            "\n".join(target.accept),
        ]
        keys.append(hashlib.sha256("|".join(parts).encode()).hexdigest()[:32])
    return keys


def _module_facts(target: Target, mode: str) -> tuple[list[str], list[tuple[int, int, str, bool]]]:
    """The module's lines, and each marked function's (first line, end line, name, whether
    the name is all word characters)."""
    try:
        siblings = find_targets(target.module_source, target.path, mode=mode)
    except SyntaxError:
        siblings = []
    return target.module_source.splitlines(), [
        (t.line, t.end_line, t.name, _WORD.fullmatch(t.name) is not None) for t in siblings
    ]


_WORD = re.compile(r"\w+")


def _context_hash(target: Target, lines: list[str], siblings: list[tuple[int, int, str, bool]]) -> str:
    source = target.function_source
    words = set(_WORD.findall(source))
    keep = bytearray(b"\x01") * len(lines)
    for line, end_line, name, wordy in siblings:
        if line == target.line:
            continue
        # The name as a whole word: for an identifier, one of the source's runs of word characters.
        if name in words if wordy else re.search(rf"\b{re.escape(name)}\b", source):
            continue
        span = keep[line - 1 : end_line]
        keep[line - 1 : end_line] = bytes(len(span))
    kept = "\n".join(itertools.compress(lines, keep))
    return hashlib.sha256(kept.encode()).hexdigest()


__all__ = ["Checker", "CoherenceError", "Input", "module_context_for", "result_for", "results_key", "results_keys"]
