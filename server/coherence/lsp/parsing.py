"""Reading and parsing a document: its text (the editor's, or the file's), its marked
functions, and the cached result of each (by ``results_key``), for the ``Scheduler``."""

from __future__ import annotations

import logging
import os
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
        settings = self.ls.settings_for(state.path)
        if not settings.enable:
            # coherence.enable is false (for this document's folder): no marked functions, so
            # nothing is checked or shown
            state.targets, state.current_keys, state.syntax_error = {}, {}, None
            state.results.clear()
            state.result_keys.clear()
            return
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

        self.open_store()

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
            # shown, not only logged: a broken baseline would otherwise hide why accepted
            # disagreements come back (once per file and problem)
            message = f"coherence: ignoring the baseline for {Path(state.path).name}: {exc}"
            self.ls.notify_problem(message, once_key=("baseline", str(exc)))
            return targets
        return [accepted.apply(t) for t in targets]
