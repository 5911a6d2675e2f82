"""pygls' protocol with its leaks and crashes mended: one future kept per handled notification,
changes to documents that are not open (or that do not fit their text), and late answers to
requests we stopped waiting for."""

from __future__ import annotations

import logging
from functools import partial
from urllib.parse import unquote

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)


class CoherenceProtocol(LanguageServerProtocol):
    """pygls' protocol, minus the leak of one future per handled notification."""

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        if future.done():
            self._forget(msg_id, future)
        else:
            future.add_done_callback(partial(self._forget, msg_id))

    def _forget(self, msg_id, future) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        """pygls' own, but a change to a document that is not open, or one that does not fit its
        text, is logged and left out: pygls raised, and the user saw "internal error: KeyError"."""
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            log.warning("ignoring a change to %s, which is not open", uri)
            return
        try:
            for change in params.content_changes:
                self.workspace.update_text_document(params.text_document, change)
        except Exception as exc:  # noqa: BLE001 - a range beyond the text, a malformed change
            log.warning("ignoring a change to %s that does not fit its text: %s: %s", uri, type(exc).__name__, exc)
            return
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    def _handle_response(self, msg_id, result=None, error=None):
        # A request of ours that we stopped waiting for (a progress token whose batch ended
        # before the editor answered, a timed-out wait) has a cancelled future: pygls would call
        # set_result on it, log "Unable to handle message" with a traceback and show the user an
        # internal error.  Drop the late answer instead.
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            del self._request_futures[msg_id]
            log.debug("ignoring a late response to %s", msg_id)
            return
        super()._handle_response(msg_id, result, error)
