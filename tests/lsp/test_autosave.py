"""No spend on autosave (issue 48): code-server saves ~1 s after every pause in typing
(``files.autoSave: afterDelay``).  Under ``runOn: save`` an autosave (willSave reason AfterDelay)
checks a body edit at once from the cached samples, and a spec edit typed with pauses buys one
batch, for the spec it ends with.  The real server, engine and sample cache; the LLM is the loopback
OpenAI-compatible server serving the examples' recorded samples, counting requests."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.support.openai_loopback import LoopbackServer, corpus_responder

from .conftest import EXAMPLES

KEY_ENV = {"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"}
DOC = "Count the vowels (a, e, i, o, u) in s"


@pytest.fixture
def loopback():
    server = LoopbackServer(responder=corpus_responder(EXAMPLES / "recorded_samples.jsonl")).start()
    yield server
    server.stop()


def autosave(lsp, uri: str) -> None:
    """What VS Code sends for ``files.autoSave: afterDelay``: willSave (AfterDelay), then didSave."""
    lsp.client.text_document_will_save(
        types.WillSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri), reason=types.TextDocumentSaveReason.AfterDelay
        )
    )
    lsp.save(uri)


def batch(requests, needle: str) -> int:
    return sum(1 for r in requests if needle in r.text)


async def test_autosave_buys_nothing_for_a_body_edit_and_one_batch_for_a_spec_edit(start, loopback):
    lsp = await start({"model": "openai/loopback-model", "apiBase": loopback.url, "runOn": "save"}, env=KEY_ENV)
    uri = lsp.open("textutils.py")
    lsp.save(uri)  # a save the user made (no willSave): checked at once, samples bought
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the first check")
    await lsp.wait_idle()
    calls = loopback.request_count
    one_batch = batch(loopback.chat_requests, "def count_vowels(")
    assert calls > 0 and one_batch > 0

    # A body edit, autosaved: checked from the cached samples, nothing requested.
    lsp.change(uri, lsp.texts[uri].replace('for ch in s if ch in "aeiou"', 'for ch in s.lower() if ch in "aeiou"'))
    autosave(lsp, uri)
    await lsp.wait_for(
        lambda: lsp.client.statuses[-1]["checking"] == 0 and lsp.client.statuses[-1].get("warning") == 0,
        "the body edit's check",
    )
    assert loopback.request_count == calls

    # A docstring typed with a pause: the autosave in the pause starts a check that waits for the
    # spec to settle, and the next keystroke cancels it before it asks for anything.
    lsp.change(uri, lsp.texts[uri].replace(DOC, "Count the vowels (a, e, i, o, u) in text s"))
    autosave(lsp, uri)
    await lsp.wait_for(lambda: lsp.client.statuses[-1]["checking"] > 0, "the autosave's check to wait")
    lsp.change(uri, lsp.texts[uri].replace("in text s", "in the string s"))
    autosave(lsp, uri)
    await lsp.wait_for(lambda: loopback.request_count > calls, "samples for the settled spec")
    await lsp.wait_idle()
    new = loopback.chat_requests[calls:]
    assert batch(new, "in text s") == 0, "the spec of the pause bought samples"
    assert batch(new, "in the string s") == len(new) == one_batch  # one batch, for count_vowels only
