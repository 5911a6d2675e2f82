"""When and how functions are checked: parsing documents, the results cache, bounded concurrency,
cancellation of superseded work, progress, and dropping results of old document versions.

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
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from coherence.engine.config import CheckConfig
from coherence.engine.errors import CheckCancelled, CoherenceError, ConfigurationError
from coherence.engine.execution import sandbox as sb
from coherence.engine.markers import find_targets
from coherence.engine.result import CheckResult
from coherence.engine.selection import names_for, walk_python_files
from coherence.lsp.progress import BatchProgress, NullProgress
from coherence.lsp.settings import build_config
from coherence.lsp.state import MAX_FILE_BYTES, DocumentState, Job, ResultCache
from coherence.lsp.uris import uri_to_path

if TYPE_CHECKING:
    from coherence.engine.check import Checker
    from coherence.engine.spec import Target
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)

MAX_WORKSPACE_FILES = 2000
_CACHEABLE = ("coherent", "incoherent", "nondeterministic", "skipped")
# A check waits until its document has been still this long: in a burst of edits (saves while
# typing, an edit storm) the next change would supersede it anyway, and a check that has started
# competes with the event loop (hover) for the CPU and the GIL.
SETTLE_SECONDS = 0.25
# After a save with no edit since, a shorter wait: long enough that an edit arriving right
# behind the save (format on save, an edit storm) still cancels the check before it starts.
SAVE_SETTLE_SECONDS = 0.05


class FileProblem(Exception):
    """The whole file is not checked (too large, not UTF-8, unreadable)."""


class Scheduler:
    def __init__(self, ls: CoherenceLanguageServer):
        self.ls = ls
        self.docs: dict[str, DocumentState] = {}
        self.cache = ResultCache()
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

    # -- settings ---------------------------------------------------------------------------
    def settings_changed(self) -> None:
        """Drop what depends on the settings: configs, checkers (closing their executors)."""
        self.settings_generation += 1
        self._configs.clear()
        self._providers.clear()
        old = list(self._checkers.values())
        self._checkers.clear()
        for checker in old:
            _close_checker(checker)
        for state in self.docs.values():
            state.parsed_text_hash = None  # re-parse: the marker mode may have changed
            state.config_error = None

    @property
    def semaphore(self) -> asyncio.Semaphore:
        size = self.ls.settings.maxConcurrentChecks
        if self._semaphore is None or size != self._semaphore_size:
            # Jobs already waiting keep the old semaphore; new ones use the new size.
            self._semaphore = asyncio.Semaphore(size)
            self._semaphore_size = size
        return self._semaphore

    def config_for(self, state: DocumentState) -> CheckConfig:
        folder = str(Path(state.path).parent) if state.path else None
        key = (self.settings_generation, folder)
        cached = self._configs.get(key)
        if cached is None:
            try:
                resolved = build_config(
                    self.ls.settings, state.path, self.ls.workspace_root(state.path), self.ls.client_trust
                )
                if resolved.notice:  # a repository setting refused for want of trust: say so once
                    self.ls.notify_problem(resolved.notice, level="info")
                cached = resolved.config
            except ConfigurationError as exc:
                cached = exc
            except Exception as exc:  # noqa: BLE001 - e.g. a pyproject with a bad value type
                cached = ConfigurationError(f"coherence: cannot build the configuration: {exc}")
            self._configs[key] = cached
        if isinstance(cached, ConfigurationError):
            raise cached
        return cached

    def checker_for(self, config: CheckConfig) -> Checker:
        from coherence.engine.check import Checker

        key = repr(config)
        checker = self._checkers.get(key)
        if checker is None:
            checker = Checker(config)
            self._checkers[key] = checker
        return checker

    async def ready(self, checker: Checker) -> None:
        """Build the checker's provider in a thread, once: importing litellm takes seconds and
        must not block the event loop (hover, other documents)."""
        fut = self._providers.get(id(checker))
        if fut is None or (fut.done() and (fut.cancelled() or fut.exception() is not None)):
            fut = asyncio.ensure_future(asyncio.to_thread(lambda: checker.provider))
            self._providers[id(checker)] = fut
        await asyncio.shield(fut)

    def checkers(self) -> list[Checker]:
        return list(self._checkers.values())

    # -- documents --------------------------------------------------------------------------
    def state(self, uri: str, *, open_: bool | None = None) -> DocumentState:
        state = self.docs.get(uri)
        if state is None:
            state = DocumentState(uri=uri, path=uri_to_path(uri), open=bool(open_))
            self.docs[uri] = state
        elif open_ is not None:
            state.open = open_
        return state

    def source(self, uri: str) -> tuple[str, int | None]:
        """The text of a document (the editor's, when open) and its version."""
        doc = self.ls.workspace.text_documents.get(unquote(uri))
        if doc is not None:
            return doc.source, doc.version
        path = uri_to_path(uri)
        if path is None:
            raise FileProblem("not a file on disk")
        try:
            size = os.path.getsize(path)
            if size > MAX_FILE_BYTES:
                raise FileProblem(
                    f"the file is too large to check ({size // 1024} KB; the limit is {MAX_FILE_BYTES // 1024} KB)"
                )
            data = Path(path).read_bytes()
        except OSError as exc:
            raise FileProblem(f"cannot read the file: {exc.strerror or exc}") from exc
        try:
            return data.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            raise FileProblem(f"the file is not valid UTF-8 (byte {exc.start}); it is not checked") from exc

    def refresh_parse(self, uri: str) -> DocumentState:
        """Parse the current text if it changed since the last parse (cheap when it did not)."""
        state = self.state(uri)
        try:
            text, version = self.source(uri)
        except FileProblem as exc:
            state.file_problem = str(exc)
            return state
        state.version = version
        self._parse(state, text)
        return state

    def _parse(self, state: DocumentState, text: str) -> None:
        text_hash = hash(text)
        if state.parsed_text_hash == text_hash:
            return
        state.parsed_text_hash = text_hash
        if len(text) > MAX_FILE_BYTES:
            state.file_problem = (
                f"the file is too large to check ({len(text) // 1024} KB; the limit is {MAX_FILE_BYTES // 1024} KB)"
            )
            state.targets = {}
            return
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            state.file_problem = "the file holds characters that are not valid UTF-8; it is not checked"
            state.targets = {}
            return
        state.file_problem = None
        try:
            config: CheckConfig | None = self.config_for(state)
        except ConfigurationError:
            config = None  # check_document reports it; the markers still show which functions
        mode = self.ls.settings.markers
        include: tuple[str, ...] = ()
        exclude: tuple[str, ...] = ()
        if config is not None:
            # the configuration's mode: the editor's markers when set there, else the pyproject's
            mode = config.mode
            if state.path:
                include = names_for(state.path, config.include, config.workspace) if config.include else ()
                exclude = names_for(state.path, config.exclude, config.workspace) if config.exclude else ()
        try:
            targets = find_targets(text, state.path or state.uri, mode=mode, include=include, exclude=exclude)
        except SyntaxError as exc:
            # Mid-typing: keep the last good functions and results.
            state.syntax_error = (exc.lineno or 1, exc.msg or "invalid syntax")
            return
        except Exception as exc:  # never let a strange file take the server down
            log.exception("finding marked functions in %s failed", state.uri)
            state.syntax_error = (1, f"could not analyse the file: {exc}")
            return
        state.syntax_error = None
        state.parsed_version = state.version
        targets = self._with_baseline(state, targets)
        state.targets = {t.qualname or t.name: t for t in targets}
        for gone in set(state.results) - set(state.targets):
            state.results.pop(gone, None)
            state.result_keys.pop(gone, None)
        state.current_keys = {}
        if config is None:
            return
        from coherence.engine.results_key import results_keys

        for q, key in zip(state.targets, results_keys(list(state.targets.values()), config)):
            state.current_keys[q] = key
            cached = self.cache.get(key)
            if cached is not None:
                state.results[q] = cached
                state.result_keys[q] = key

    def _with_baseline(self, state, targets: list) -> list:
        """The targets with the disagreements of the nearest baseline file accepted, as
        ``coherence check`` does (``.coherence-baseline.json``, up to the workspace root)."""
        if not state.path:
            return targets
        from coherence.engine import baseline

        try:
            found = baseline.nearest(state.path, self.ls.workspace_root(state.path))
            if found is None:
                return targets
            accepted = baseline.load_cached(found)
        except (OSError, baseline.BaselineError) as exc:
            log.warning("ignoring the baseline for %s: %s", state.path, exc)
            return targets
        return [accepted.apply(t) for t in targets]

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
        if self.ls.stopping:
            return []
        state = self.state(uri)
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
        self._parse(state, text)
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
            self.ls.notify_problem(str(exc))
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
                state.results[q] = cached
                state.result_keys[q] = key
                results[q] = cached
                continue
            if target.skip_reason:
                # No await here: the document must not change under this loop.
                result = _error_result(target, target.skip_reason)
                result.status = "skipped"
                result.delta = config.delta
                self.cache.put(key, result)
                state.results[q] = result
                state.result_keys[q] = key
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

    async def _run_job(
        self, job: Job, checker: Checker, progress: BatchProgress | NullProgress, remaining: dict
    ) -> CheckResult | None:
        result: CheckResult | None = None
        try:
            if not job.urgent:
                while self._urgent > 0 and not job.cancel.is_set():
                    if self._urgent_done is None or self._urgent_done.is_set():
                        self._urgent_done = asyncio.Event()
                    await self._urgent_done.wait()
            if not job.forced:
                await self._settle(job)
            async with self.semaphore:
                if job.cancel.is_set() or self.ls.stopping:
                    raise CheckCancelled("superseded before it started")
                job.started = True
                self.stats["checksStarted"] += 1
                self.ls.refresh_status()
                await self.ready(checker)

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
            self.ls.notify_problem(str(exc), once_key=(type(exc).__name__, kind) if kind else str(exc))
            result = _error_result(job.target, str(exc))
            result.config_error = True
        except Exception as exc:  # a bug must not take the server down
            log.exception("checking %s failed", job.qualname)
            result = _error_result(job.target, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._finish(job, progress, remaining)

        if result is None:
            return None
        if result.sandbox and sb.is_weak(result.sandbox):
            # once per server: the plain truth about what generated code can reach here
            self.ls.notify_problem(sb.WEAK_NOTICE.format(name=result.sandbox), once_key="weak sandbox")
        if result.status in _CACHEABLE:
            self.cache.put(job.key, result)
        state = self.docs.get(job.uri)
        if job.cancel.is_set() or state is None:
            return result
        if state.version != job.version:
            log.debug("dropping the result of %s for version %s (now %s)", job.qualname, job.version, state.version)
            return result
        state.results[job.qualname] = result
        state.result_keys[job.qualname] = job.key
        self.last_checked = (job.uri, job.qualname)
        if not self.ls.stopping:
            self.ls.refresh(job.uri)
        return result

    # -- workspace --------------------------------------------------------------------------
    def workspace_files(self) -> list[str]:
        from pygls.uris import from_fs_path

        roots = self.ls.workspace_roots()
        seen: set[str] = set()
        out: list[str] = []
        for root in roots:
            for path in walk_python_files(root):
                uri = from_fs_path(str(path)) or ""
                if uri and uri not in seen:
                    seen.add(uri)
                    out.append(uri)
                    if len(out) >= MAX_WORKSPACE_FILES:
                        return out
        return out

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

    def close_checkers(self) -> None:
        for checker in self._checkers.values():
            _close_checker(checker)
        self._checkers.clear()

    def sandboxes(self) -> list[str]:
        """The sandboxes the shown results ran in (``bwrap+landlock+seccomp``, ...), for the status."""
        return sorted({r.sandbox for state in self.docs.values() for r in state.results.values() if r.sandbox})

    def counts(self) -> dict[str, int]:
        # "incoherent" counts every incoherent function; "warning", "information" and "hint" split
        # them by the verdict's severity, the one scale the CLI, SARIF and the diagnostics use.
        counts = {
            "checking": 0,
            "incoherent": 0,
            "warning": 0,
            "information": 0,
            "hint": 0,
            "coherent": 0,
            "skipped": 0,
            "nondeterministic": 0,
            "errors": 0,
        }
        for state in self.docs.values():
            counts["checking"] += state.checking()
            for q in state.targets:
                if q in state.jobs:
                    continue
                r = state.results.get(q)
                if r is None:
                    continue
                if r.status in ("incoherent", "coherent", "skipped", "nondeterministic"):
                    counts[r.status] += 1
                    if r.finding in ("warning", "information", "hint"):
                        counts[r.finding] += 1
                else:
                    counts["errors"] += 1
        return counts


def _error_result(target: Target, reason: str) -> CheckResult:
    from coherence.engine.check import result_for

    return result_for(target, "error", reason)


def _close_checker(checker) -> None:
    executor = getattr(checker, "_executor", None)
    for obj in (executor, getattr(checker, "_cache", None)):
        close = getattr(obj, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                log.debug("closing %r failed", obj, exc_info=True)
