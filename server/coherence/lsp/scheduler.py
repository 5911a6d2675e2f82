"""When and how functions are checked: the results cache, bounded concurrency, cancellation of
superseded work, progress, the window's cost cap (``budget``), and dropping results of old document
versions.  Reading and parsing documents is ``parsing``; configurations and checkers ``checkers``.

Every check is one ``Job`` (a function of one document version) run as a task held by
``server.run_task``.  A new edit sets the cancel event of the document's jobs (the engine stops
at its next step and kills its sandbox processes); a job still waiting for a slot is cancelled
outright.  A finished job's result goes into the content-addressed cache (so an unchanged
function is never re-run, and undo is free) but is shown only if the document is still at the
version the job was started for.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from coherence.engine.config import CheckConfig
from coherence.engine.errors import CheckCancelled, CoherenceError, ConfigurationError
from coherence.engine.execution import sandbox as sb
from coherence.engine.result import CheckResult
from coherence.engine.sampling.quiet_litellm import LiteLLMMissing
from coherence.lsp.budget import WindowBudget
from coherence.lsp.checkers import CheckerPool
from coherence.lsp.parsing import DocumentParsing, FileProblem
from coherence.lsp.progress import BatchProgress, NullProgress
from coherence.lsp.render import failed_note
from coherence.lsp.settings import NoModel
from coherence.lsp.state import DocumentState, Job, ResultCache, is_finding

if TYPE_CHECKING:
    from coherence.engine.check import Checker
    from coherence.engine.spec import Target
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)

DISABLED = "coherence: turned off here (coherence.enable is false); nothing is checked"
_CACHEABLE = ("coherent", "incoherent", "nondeterministic", "skipped")
# A check waits until its document has been still this long: in a burst of edits (saves while
# typing, an edit storm) the next change would supersede it anyway, and a check that has started
# competes with the event loop (hover) for the CPU and the GIL.
SETTLE_SECONDS = 0.25
# After a save with no edit since, a shorter wait: long enough that what the client sent in the
# same burst as the save (an edit storm's next change) cancels the check before it starts; a
# later edit cancels it running, and a check of an edited body is now cheaper than this wait was.
SAVE_SETTLE_SECONDS = 0.015
# After an autosave, a check that would buy samples (its function's spec changed) waits until the
# document has been still this long: code-server's default autosave saves ~1 s after every pause
# in typing, and each pause in a docstring edit would otherwise buy a batch.
SPEC_SETTLE_SECONDS = 5.0


class Scheduler(CheckerPool, DocumentParsing):
    def __init__(self, ls: CoherenceLanguageServer):
        self.ls = ls
        self.docs: dict[str, DocumentState] = {}
        self.cache = ResultCache(on_notice=lambda message: ls.notify_problem(f"coherence: {message}"))
        self._store_generation = -1  # the settings generation the results store was opened for
        self.budget = WindowBudget(ls)
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_size = 0
        self._checkers: dict[str, Checker] = {}
        self._configs: dict[tuple, CheckConfig | ConfigurationError] = {}
        self._debounce: dict[str, asyncio.Task] = {}
        self.last_checked: tuple[str, str] | None = None  # (uri, qualname) of the latest result
        self._urgent = 0
        self._urgent_done: asyncio.Event | None = None
        self._providers: dict[int, asyncio.Future] = {}
        self.settings_generation = 0
        # Counters for serverStats: jobs created, run (got a slot), cancelled, finished with a result.
        self.stats = {"checksQueued": 0, "checksStarted": 0, "checksCancelled": 0, "checksCompleted": 0}

    # -- scheduling -------------------------------------------------------------------------
    def cancel(self, uri: str, *, reason: str) -> int:
        """Cancel the document's checks (a new edit supersedes them)."""
        state = self.docs.get(uri)
        timer = self._debounce.pop(uri, None)
        if timer is not None:
            timer.cancel()
        if state is None:
            return 0
        n = 0
        for job in list(state.jobs.values()):
            if not job.cancel.is_set():
                log.debug("cancelling %s in %s: %s", job.qualname, uri, reason)
                job.cancel.set()
                n += 1
            if not job.started and job.task is not None:
                job.task.cancel()
        state.jobs.clear()
        return n

    def cancel_debounce(self, uri: str) -> None:
        timer = self._debounce.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def debounce(self, uri: str, delay: float) -> None:
        old = self._debounce.pop(uri, None)
        if old is not None:
            old.cancel()

        async def later() -> None:
            await asyncio.sleep(delay)
            if self._debounce.get(uri) is task:
                del self._debounce[uri]
            await self.check_document(uri, reason="change")

        task = self.ls.run_task(later(), name=f"debounce {uri}")
        self._debounce[uri] = task

    async def check_document(
        self,
        uri: str,
        *,
        force: bool = False,
        qualnames: list[str] | None = None,
        reason: str = "save",
        own_progress: bool = True,
    ) -> list[CheckResult]:
        """Check the marked functions of a document (those in ``qualnames`` if given).

        Returns the results (cached or new) of the functions checked; [] if the document cannot
        be checked now (syntax error, file problem, configuration problem)."""
        await self.ls.wait_configured()
        if self.ls.stopping:
            return []
        state = self.state(uri)
        if not self.ls.settings_for(state.path).enable:
            if reason in ("command", "workspace"):
                self.ls.notify_problem(DISABLED, once_key=None if reason == "command" else DISABLED, level="info")
            return []
        try:
            text, version = self.source(uri)
        except FileProblem as exc:
            state.file_problem = str(exc)
            self.ls.notify_problem(
                f"coherence: {Path(state.path or uri).name}: {exc}", once_key=("file", uri, str(exc)), level="info"
            )
            self.ls.refresh(uri)
            return []
        state.version = version
        await self.parse_settled(state, text)
        if state.file_problem:
            self.ls.notify_problem(
                f"coherence: {Path(state.path or uri).name}: {state.file_problem}",
                once_key=("file", uri, state.file_problem),
                level="info",
            )
            self.ls.refresh(uri)
            return []
        if state.syntax_error is not None:
            self.ls.refresh(uri)
            return []
        try:
            config = self.config_for(state)
        except ConfigurationError as exc:
            state.config_error = str(exc)
            for q, target in state.targets.items():  # the findings shown stay, marked as older
                if qualnames is None or q in qualnames:
                    failure = _error_result(target, str(exc))
                    failure.config_error = True
                    if q in state.results:
                        state.show_failure(q, failure, "")
            # "model": the client may offer the editor's own models beside Open Settings
            self.ls.notify_problem(str(exc), actions=True, needs="model" if isinstance(exc, NoModel) else None)
            self.ls.refresh(uri)
            return []
        state.config_error = None
        checker = self.checker_for(config)

        # Jobs for other versions are superseded.
        for q, job in list(state.jobs.items()):
            if job.version != version:
                job.cancel.set()
                if not job.started and job.task is not None:
                    job.task.cancel()
                del state.jobs[q]

        wanted = [t for q, t in state.targets.items() if qualnames is None or q in qualnames]
        waits: list[asyncio.Task] = []
        new_jobs: list[Job] = []
        results: dict[str, CheckResult] = {}
        for target in wanted:
            q = target.qualname or target.name
            key = state.current_keys.get(q)
            if key is None:
                continue
            cached = self.cache.get(key)
            if cached is not None and not force:
                state.show(q, cached, key)
                results[q] = cached
                continue
            if target.skip_reason:
                # No await here: the document must not change under this loop.
                result = _error_result(target, target.skip_reason)
                result.status = "skipped"
                result.delta = config.delta
                self.cache.put(key, result)
                state.show(q, result, key)
                results[q] = result
                continue
            running = state.jobs.get(q)
            if (
                running is not None
                and running.key == key
                and not running.cancel.is_set()
                and not force
                and running.task is not None
            ):
                waits.append(running.task)
                continue
            if running is not None:
                running.cancel.set()
                if not running.started and running.task is not None:
                    running.task.cancel()
            shown = state.results.get(q)
            unchanged = (
                shown is not None and shown.spec_hash == target.spec.spec_hash and shown.body_hash == target.body_hash
            )
            job = Job(
                uri=uri,
                qualname=q,
                key=key,
                version=version,
                target=target,
                forced=force,
                urgent=force or not unchanged,
                autosave=reason == "autosave",
            )
            state.jobs[q] = job
            self.stats["checksQueued"] += 1
            new_jobs.append(job)

        if new_jobs:
            names = ", ".join(j.target.name for j in new_jobs[:3]) + ("…" if len(new_jobs) > 3 else "")
            progress: BatchProgress | NullProgress
            if own_progress:
                progress = BatchProgress(
                    self.ls,
                    f"coherence: checking {names}",
                    len(new_jobs),
                    on_cancel=lambda jobs=tuple(new_jobs): self._cancel_jobs(jobs),  # type: ignore[misc]  # a lambda's default arguments
                )
            else:
                progress = NullProgress()
            progress.start()
            remaining = {"n": len(new_jobs)}
            for job in new_jobs:
                if job.urgent:
                    self._urgent += 1
                job.task = self.ls.run_task(
                    self._run_job(job, checker, progress, remaining), name=f"check {job.qualname}"
                )
                job.task.add_done_callback(
                    lambda _t, job=job, progress=progress, remaining=remaining: self._finish(job, progress, remaining)  # type: ignore[misc]  # a lambda's default arguments
                )
                waits.append(job.task)
        self.ls.refresh(uri)

        if waits:
            done = await asyncio.gather(*waits, return_exceptions=True)
            for item in done:
                if isinstance(item, CheckResult):
                    results[item.qualname or item.name] = item
        order = [t.qualname or t.name for t in wanted]
        return [results[q] for q in order if q in results]

    def recheck_stale(self, state: DocumentState, qualnames: list[str]) -> None:
        """Check again the functions whose results were shown stale (only the workspace's test
        files changed since), unless checks run only on command.  No progress of its own: the
        function is unchanged, and its result stays shown meanwhile."""
        if self.ls.settings_for(state.path).runOn == "manual":
            return
        self.ls.run_task(
            self.check_document(state.uri, qualnames=qualnames, reason="stale", own_progress=False),
            name=f"re-check {state.uri}",
        )

    def _cancel_jobs(self, jobs: tuple[Job, ...]) -> None:
        for job in jobs:
            job.cancel.set()
            if not job.started and job.task is not None:
                job.task.cancel()
        for uri in {j.uri for j in jobs}:
            state = self.docs.get(uri)
            if state is not None:
                for job in jobs:
                    if state.jobs.get(job.qualname) is job:
                        del state.jobs[job.qualname]
                self.ls.refresh(uri)

    def _finish(self, job: Job, progress: BatchProgress | NullProgress, remaining: dict) -> None:
        """Bookkeeping when a job ends, however it ends (also for a task cancelled before it
        ever ran, whose coroutine body never executes: then the task's done-callback calls this)."""
        if job.finished:
            return
        job.finished = True
        self.stats[
            "checksCancelled"
            if job.cancel.is_set() or (job.task is not None and job.task.cancelled())
            else "checksCompleted"
        ] += 1
        if job.urgent:
            self._urgent -= 1
            if self._urgent <= 0 and self._urgent_done is not None:
                self._urgent_done.set()
        progress.finish_one(job.qualname)
        remaining["n"] -= 1
        if remaining["n"] <= 0:
            progress.end("done")
        state = self.docs.get(job.uri)
        if state is not None and state.jobs.get(job.qualname) is job:
            del state.jobs[job.qualname]
        if not self.ls.stopping:
            self.ls.refresh(job.uri)

    async def _settle(self, job: Job) -> None:
        """Wait until the document has not changed for SETTLE_SECONDS, or SAVE_SETTLE_SECONDS
        after a save that no edit followed (a change cancels the job)."""
        loop = asyncio.get_running_loop()
        while not job.cancel.is_set():
            state = self.docs.get(job.uri)
            if state is None:
                return
            now = loop.time()
            wait = SETTLE_SECONDS - (now - state.changed_at)
            if state.saved_at >= state.changed_at:
                wait = min(wait, SAVE_SETTLE_SECONDS - (now - state.saved_at))
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    async def _settle_spec(self, job: Job, checker: Checker) -> None:
        """An autosave's check that would request samples waits until the document has been
        still for SPEC_SETTLE_SECONDS (a change cancels it meanwhile); one using cached or
        replayed samples does not wait."""
        if job.target.skip_reason or not await self.needs_samples(job.target, checker):
            return
        log.debug("%s needs new samples: waiting until the document is still", job.qualname)
        loop = asyncio.get_running_loop()
        while not job.cancel.is_set():
            state = self.docs.get(job.uri)
            if state is None:
                return
            wait = SPEC_SETTLE_SECONDS - (loop.time() - max(state.changed_at, state.saved_at))
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    async def needs_samples(self, target: Target, checker: Checker) -> bool:
        """Whether checking ``target`` would request samples from the model (none are cached)."""
        await self.ready(checker)
        if not getattr(checker.provider, "cacheable", False):
            return False  # a replay file
        from coherence.engine.sampling.cost import estimate_provider

        cfg = checker.config
        try:
            est = await asyncio.to_thread(
                estimate_provider,
                checker.provider,
                [target],
                samples=cfg.samples,
                temperature=cfg.temperature,
                cache=checker.cache,
            )
        except Exception:  # an estimate that fails must not stop the check
            log.debug("estimating the samples of %s failed", target.name, exc_info=True)
            return True
        return any(f.requested > 0 for f in est.functions)

    async def _run_job(
        self, job: Job, checker: Checker, progress: BatchProgress | NullProgress, remaining: dict
    ) -> CheckResult | None:
        result: CheckResult | None = None
        refused: CheckResult | None = None
        try:
            if not job.urgent:
                while self._urgent > 0 and not job.cancel.is_set():
                    if self._urgent_done is None or self._urgent_done.is_set():
                        self._urgent_done = asyncio.Event()
                    await self._urgent_done.wait()
            if not job.forced:
                await self._settle(job)
            if job.autosave:
                await self._settle_spec(job, checker)
            async with self.semaphore:
                if job.cancel.is_set() or self.ls.stopping:
                    raise CheckCancelled("superseded before it started")
                job.started = True
                self.stats["checksStarted"] += 1
                self.ls.refresh_status()
                await self.ready(checker)
                refusal = await self.budget.admit(job, checker)
                if refusal:  # past the window's cost cap: shown, never cached
                    refused = result = _error_result(job.target, refusal)
                    result.status = "skipped"
                    result.extra["refused"] = True
                else:

                    def report(message: str, fraction: float) -> None:
                        self.ls.call_soon(progress.report, job.qualname, message, fraction)

                    result = await checker.check(job.target, progress=report, cancel=job.cancel)
        except CheckCancelled:
            log.debug("check of %s cancelled", job.qualname)
        except asyncio.CancelledError:
            job.cancel.set()
            raise
        except CoherenceError as exc:
            # Configuration, key, provider: one message per distinct problem, not per function
            # (a provider failure is one problem however many functions hit it).
            kind = getattr(exc, "kind", None)
            self.ls.notify_problem(
                str(exc),
                once_key=(type(exc).__name__, kind) if kind else str(exc),
                actions=True,
                needs="llm" if isinstance(exc, LiteLLMMissing) else None,
            )
            result = _error_result(job.target, str(exc))
            result.config_error = True
        except Exception as exc:  # a bug must not take the server down
            log.exception("checking %s failed", job.qualname)
            result = _error_result(job.target, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self.budget.settle(job, result.cost_usd if result is not None else 0.0)
            self._finish(job, progress, remaining)

        if result is None:
            return None
        if result.sandbox and sb.is_weak(result.sandbox):
            # once per server: the plain truth about what generated code can reach here
            self.ls.notify_problem(sb.WEAK_NOTICE.format(name=result.sandbox), once_key="weak sandbox")
        if result.status in _CACHEABLE and result is not refused:
            self.cache.put(job.key, result)
        state = self.docs.get(job.uri)
        if job.cancel.is_set() or state is None:
            return result
        if state.version != job.version:
            log.debug("dropping the result of %s for version %s (now %s)", job.qualname, job.version, state.version)
            return result
        if is_finding(result):
            state.show(job.qualname, result, job.key)
        elif state.show_failure(job.qualname, result, job.key) and not result.config_error and result is not refused:
            # a finding stays shown; the failure is said once per reason (config errors and the
            # cost cap already were, above and in ``budget``)
            self.ls.notify_problem(
                f"coherence: checking {job.target.name} failed: {result.reason}. {failed_note(state.results[job.qualname])}",
                once_key=("check failed", result.reason),
                actions=True,
            )
        self.last_checked = (job.uri, job.qualname)
        if not self.ls.stopping:
            self.ls.refresh(job.uri)
        return result

    def close(self, uri: str) -> None:
        self.cancel(uri, reason="closed")
        self.docs.pop(uri, None)

    # -- shutdown ---------------------------------------------------------------------------
    def cancel_everything(self) -> None:
        for timer in self._debounce.values():
            timer.cancel()
        self._debounce.clear()
        for state in self.docs.values():
            for job in state.jobs.values():
                job.cancel.set()
                if job.task is not None:
                    job.task.cancel()


def _error_result(target: Target, reason: str) -> CheckResult:
    from coherence.engine.check import result_for

    return result_for(target, "error", reason)
