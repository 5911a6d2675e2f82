"""One module per feature.  Each feature is a ``LanguageFeature``; the server has one handler per
LSP method and fans document and configuration events out to every feature's hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsprotocol import types

    from coherence.lsp.language_server import CoherenceLanguageServer


class LanguageFeature:
    """Base class: every hook is optional."""

    def __init__(self, ls: CoherenceLanguageServer):
        self.ls = ls

    def document_open(self, params: types.DidOpenTextDocumentParams) -> None: ...

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None: ...

    def document_save(self, params: types.DidSaveTextDocumentParams) -> None: ...

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None: ...

    def settings_changed(self) -> None: ...

    def results_changed(self, uris: set[str]) -> None:
        """Results, checks in flight or parse state of these documents changed."""

    def shutdown(self) -> None: ...
