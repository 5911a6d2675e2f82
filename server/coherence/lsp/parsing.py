"""Reading and parsing a document: its text (the editor's, or the file's), its marked
functions, and the cached result of each (by ``results_key``), for the ``Scheduler``."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from coherence.engine.config import CheckConfig
from coherence.engine.errors import ConfigurationError
from coherence.engine.markers import find_targets
from coherence.engine.selection import names_for
from coherence.lsp.state import MAX_FILE_BYTES, DocumentState, ResultCache
from coherence.lsp.uris import uri_to_path

if TYPE_CHECKING:
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)


class FileProblem(Exception):
    """The whole file is not checked (too large, not UTF-8, unreadable)."""


class DocumentParsing:
    """The documents the server knows, parsed on demand (cheap when the text did not change)."""

    ls: CoherenceLanguageServer
    docs: dict[str, DocumentState]
    cache: ResultCache

    def config_for(self, state: DocumentState) -> CheckConfig:  # pragma: no cover - the Scheduler's
        raise NotImplementedError

    def recheck_stale(self, state: DocumentState, qualnames: list[str]) -> None:  # pragma: no cover - the Scheduler's
        raise NotImplementedError

    def open_store(self) -> None:  # pragma: no cover - the Scheduler's
        raise NotImplementedError

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
        """Parse ``text`` into ``state``; a large document is analysed on a thread instead
        (``parse_settled`` waits for it), keeping the last parse meanwhile."""
        work = self._prepare(state, text)
        if work is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test calling in): analyse here
            work.large = False
        if not work.large:
            self._apply(state, work, _analyse(work))
            return

        async def analyse_on_a_thread() -> None:
            try:
                analysis = await asyncio.to_thread(_analyse, work)
            except Exception:  # _analyse reports what it expects; anything else is logged
                log.exception("analysing %s failed", state.uri)
                return
            if state.parsed_text_hash == work.text_hash:  # not superseded by a newer text
                self._apply(state, work, analysis)
                self.ls.refresh(state.uri)

        state.parsing = self.ls.run_task(analyse_on_a_thread(), name=f"parse {state.uri}")

    async def parse_settled(self, state: DocumentState, text: str) -> None:
        """``_parse``, and for a large document the wait for its analysis."""
        self._parse(state, text)
        task = state.parsing
        if task is not None and not task.done():
            await asyncio.shield(task)

    def _prepare(self, state: DocumentState, text: str) -> _Work | None:
        """What analysing ``text`` needs from the server (its settings, its configuration), or
        None when there is nothing to analyse (the same text, a file problem, disabled)."""
        text_hash = hash(text)
        if state.parsed_text_hash == text_hash:
            return None
        state.parsed_text_hash = text_hash
        if len(text) > MAX_FILE_BYTES:
            state.file_problem = (
                f"the file is too large to check ({len(text) // 1024} KB; the limit is {MAX_FILE_BYTES // 1024} KB)"
            )
            state.targets = {}
            return None
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            state.file_problem = "the file holds characters that are not valid UTF-8; it is not checked"
            state.targets = {}
            return None
        state.file_problem = None
        settings = self.ls.settings_for(state.path)
        if not settings.enable:
            # coherence.enable is false (for this document's folder): no marked functions, so
            # nothing is checked or shown
            state.targets, state.current_keys, state.syntax_error = {}, {}, None
            state.results.clear()
            state.result_keys.clear()
            state.failed.clear()
            return None
        try:
            config: CheckConfig | None = self.config_for(state)
        except ConfigurationError:
            config = None  # check_document reports it; the markers still show which functions
        mode = settings.markers
        include: tuple[str, ...] = ()
        exclude: tuple[str, ...] = ()
        if config is not None:
            # the configuration's mode: the editor's markers when set there, else the pyproject's
            mode = config.mode
            if state.path:
                include = names_for(state.path, config.include, config.workspace) if config.include else ()
                exclude = names_for(state.path, config.exclude, config.workspace) if config.exclude else ()
        root = self.ls.workspace_root(state.path) if state.path else None
        return _Work(text, text_hash, state.path, state.uri, mode, include, exclude, config, root, state.version)

    def _apply(self, state: DocumentState, work: _Work, analysis: _Analysis) -> None:
        """``analysis`` of ``work`` into ``state``, and the cached result of each function."""
        if analysis.syntax_error is not None:
            # Mid-typing: keep the last good functions and results.
            state.syntax_error = analysis.syntax_error
            return
        if analysis.baseline_problem:
            # shown, not only logged: a broken baseline would otherwise hide why accepted
            # disagreements come back (once per file and problem)
            self.ls.notify_problem(analysis.baseline_problem, once_key=("baseline", analysis.baseline_problem))
        state.syntax_error = None
        state.parsed_version = work.version
        state.targets = {t.qualname or t.name: t for t in analysis.targets}
        for gone in set(state.results) - set(state.targets):
            state.results.pop(gone, None)
            state.result_keys.pop(gone, None)
            state.failed.pop(gone, None)
        state.current_keys = {}
        if work.config is None:
            return
        self.open_store()
        stale: list[str] = []
        whys: dict[str, str] = {}  # by the test files' fingerprint a stale result was made with
        for q, key in zip(state.targets, analysis.keys):
            state.current_keys[q] = key
            cached = self.cache.get(key)
            if cached is not None and state.results.get(q) is not cached:
                state.show(q, cached, key)
            elif cached is None:
                stale += self._show_stale(state, q, key, work.config.workspace, whys)
        if stale:
            self.recheck_stale(state, stale)

    def _show_stale(
        self, state: DocumentState, q: str, key: str, workspace: str | None, whys: dict[str, str]
    ) -> list[str]:
        """Show the newest result of the same function checked with other workspace test files,
        marked stale; [q] when there is one (it is to be checked again), else [].  ``whys``:
        what this parse already said of each earlier fingerprint (one walk of the test files)."""
        from coherence.engine.inputs.seeds.workspace import tests_changed_since
        from coherence.engine.results_key import tests_part

        found = self.cache.newest_before(key)
        if found is None:
            return []
        old_key, result = found
        shown = state.results.get(q)
        if shown is not None and state.result_keys.get(q) == old_key and q in state.stale_why:
            return []  # shown already, and its check asked for
        if shown is not None and shown.checked_at > result.checked_at:
            return []  # a newer result (of an edit since) stays
        before = tests_part(old_key)
        if before not in whys:
            whys[before] = _why_stale(tests_changed_since(before, workspace))
        state.show_stale(q, result, old_key, whys[before])
        return [q]


def _why_stale(changed: list[str]) -> str:
    """What a stale result says of the test files ``changed`` since it was made."""
    if len(changed) == 1:
        return f"checked before {changed[0]} changed"
    if changed:
        return f"checked before {changed[0]} and {len(changed) - 1} other test files changed"
    return "checked before the workspace's test files changed"


# A document with this many characters is analysed on a thread: thousands of marked functions
# take seconds to find and key, and the event loop must keep answering meanwhile.
LARGE_DOCUMENT = 100_000


@dataclass
class _Work:
    text: str
    text_hash: int
    path: str | None
    uri: str
    mode: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    config: CheckConfig | None
    root: str | None
    version: int | None
    large: bool = False

    def __post_init__(self) -> None:
        self.large = len(self.text) >= LARGE_DOCUMENT


@dataclass
class _Analysis:
    targets: list = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    syntax_error: tuple[int, str] | None = None
    baseline_problem: str | None = None


def _analyse(work: _Work) -> _Analysis:
    """The marked functions of ``work``'s text, its baseline applied, and their results keys:
    the parse's costly part, touching no server state (it may run on a thread)."""
    try:
        targets = find_targets(
            work.text, work.path or work.uri, mode=work.mode, include=work.include, exclude=work.exclude
        )
    except SyntaxError as exc:
        return _Analysis(syntax_error=(exc.lineno or 1, exc.msg or "invalid syntax"))
    except Exception as exc:  # never let a strange file take the server down
        log.exception("finding marked functions in %s failed", work.uri)
        return _Analysis(syntax_error=(1, f"could not analyse the file: {exc}"))
    found, problem = _with_baseline(work, targets)
    targets = list({t.qualname or t.name: t for t in found}.values())  # as the state holds them
    keys: list[str] = []
    if work.config is not None:
        from coherence.engine.results_key import results_keys

        # found in the configuration's mode with no include or exclude: they are the module's siblings
        plain = work.mode == work.config.mode and not work.include and not work.exclude
        keys = results_keys(targets, work.config, siblings=found if plain else None)
    return _Analysis(targets, keys, None, problem)


def _with_baseline(work: _Work, targets: list) -> tuple[list, str | None]:
    """The targets with the disagreements of the nearest baseline file accepted, as ``coherence
    check`` does (``.coherence-baseline.json``, up to the workspace root), and what was wrong
    with that file when it cannot be used."""
    if not work.path:
        return targets, None
    from coherence.engine import baseline

    try:
        found = baseline.nearest(work.path, work.root)
        if found is None:
            return targets, None
        accepted = baseline.load_cached(found)
    except (OSError, baseline.BaselineError) as exc:
        return targets, f"coherence: ignoring the baseline for {Path(work.path).name}: {exc}"
    return [accepted.apply(t) for t in targets], None
