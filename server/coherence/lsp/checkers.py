"""The engine side of the scheduler: the ``CheckConfig`` of each document's folder, one ``Checker``
per configuration (its provider built in a thread, once), the concurrency limit, the results store,
and the workspace's files.  All of it depends on the settings and is dropped when they change."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from coherence.engine.config import CheckConfig
from coherence.engine.errors import ConfigurationError
from coherence.engine.sampling.editor import UNSUPPORTED_CLIENT, is_editor_model
from coherence.engine.selection import walk_python_files
from coherence.lsp import editor_models
from coherence.lsp.settings import build_config
from coherence.lsp.state import DocumentState, ResultCache

if TYPE_CHECKING:
    from coherence.engine.check import Checker
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)

MAX_WORKSPACE_FILES = 2000


class CheckerPool:
    ls: CoherenceLanguageServer
    docs: dict[str, DocumentState]
    cache: ResultCache
    settings_generation: int
    _store_generation: int
    _semaphore: asyncio.Semaphore | None
    _semaphore_size: int
    _checkers: dict[str, Checker]
    _configs: dict[tuple, CheckConfig | ConfigurationError]
    _providers: dict[int, asyncio.Future]

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

    def open_store(self) -> None:
        """Keep results on disk beside the sample cache (``cacheDir``, else the default cache
        directory), reopened when the settings change: the editor's cacheDir may have."""
        if self._store_generation == self.settings_generation:
            return
        self._store_generation = self.settings_generation
        from coherence.lsp.result_store import ResultStore
        from coherence.lsp.settings import resolve_path

        cache_dir = self.ls.settings.cacheDir
        path = resolve_path(cache_dir, self.ls.workspace_root()) if cache_dir else None
        current = self.cache.store
        wanted = ResultStore(path).path if path else ResultStore().path
        if current is None or current.path != wanted:
            self.cache.use_store(ResultStore(path))

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
                    self.ls.settings_for(state.path),
                    state.path,
                    self.ls.workspace_root(state.path),
                    self.ls.client_trust,
                )
                if resolved.notice:  # a repository setting refused for want of trust: say so once
                    self.ls.notify_problem(resolved.notice, level="info")
                cached = resolved.config
                if not self.ls.client_lends_models and _asks_the_editor(cached):
                    cached = ConfigurationError("coherence: " + UNSUPPORTED_CLIENT.format(model=cached.model))
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
            editor = editor_models.transport(self.ls) if self.ls.client_lends_models else None
            checker = Checker(config, editor=editor)
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

    def close_checkers(self) -> None:
        for checker in self._checkers.values():
            _close_checker(checker)
        self._checkers.clear()
        self.cache.use_store(None)

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


def _asks_the_editor(config: CheckConfig) -> bool:
    """Whether ``config`` samples from the editor's models (a replay file wins over any model)."""
    return config.replay is None and not config.models and is_editor_model(config.model)


def _close_checker(checker) -> None:
    executor = getattr(checker, "_executor", None)
    for obj in (executor, getattr(checker, "_cache", None)):
        close = getattr(obj, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                log.debug("closing %r failed", obj, exc_info=True)
