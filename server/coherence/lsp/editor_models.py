"""The editor's own chat models as a source of samples (``coherence.model = "editor"``): the
server asks its client with ``coherence/sample`` (``engine/sampling/editor.py`` says what is sent
and answered).  A client says it answers with ``initializationOptions`` ``{"sampleRequest": true}``
or the experimental capability ``coherenceSample``; with any other client such a model is a
configuration error whose message says why."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from coherence.engine.sampling.editor import SAMPLE_REQUEST

if TYPE_CHECKING:
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)

FLAG = "sampleRequest"
EXPERIMENTAL = "coherenceSample"


def client_lends_models(options: Any, capabilities: Any) -> bool:
    """Whether the client answers ``coherence/sample`` (its ``initializationOptions`` or
    ``capabilities.experimental`` say so)."""
    if isinstance(options, dict) and options.get(FLAG) is True:
        return True
    experimental = getattr(capabilities, "experimental", None)
    return isinstance(experimental, dict) and experimental.get(EXPERIMENTAL) is True


def transport(ls: CoherenceLanguageServer):
    """The engine's ``Transport``: one ``coherence/sample`` request, cancelled in the client too
    (``$/cancelRequest``) when the check stops waiting for it; the late answer is dropped
    (``CoherenceProtocol._handle_response``)."""

    async def ask(request: dict[str, Any]) -> Any:
        msg_id = f"coherence-sample-{uuid.uuid4()}"
        try:
            return await ls.protocol.send_request_async(SAMPLE_REQUEST, request, msg_id=msg_id)
        except asyncio.CancelledError:
            if not ls.stopping:
                try:
                    ls.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
                except Exception:  # a client gone away needs no cancel
                    log.debug("cancelling %s failed", msg_id, exc_info=True)
            raise

    return ask
