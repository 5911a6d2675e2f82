"""Issue 28: the language server's pop-ups (``window/showMessage``) and its output channel
(``window/logMessage``) are redacted and escaped like every report.  A provider's error text,
a worker's diagnostic or an exception's message can quote a credential (an LLM endpoint that
echoes the key it was sent, generated code that printed ``.env``) or a terminal escape.

A real ``python -m coherence serve``; the LLM is the loopback server, reached through litellm's
real HTTP path, and it answers every request with an error that quotes a key."""

from __future__ import annotations

import asyncio

import pytest

from tests.lsp.conftest import copy_examples, start  # noqa: F401 - fixtures
from tests.support.openai_loopback import Fault, LoopbackServer

LEAKED = "sk-proj-" + "Zq7" * 10  # what a provider's error message quotes back
ERROR = f"Incorrect API key provided: {LEAKED}.\x1b]52;c;cHduZWQ=\x07 See your account settings."


@pytest.fixture
def workspace(tmp_path):
    return copy_examples(tmp_path / "ws")


async def test_messages_to_the_editor_are_redacted_and_escaped(start):
    server = LoopbackServer(ignore_n=True).start()
    server.set_replies([Fault(status=400, message=ERROR)] * 200)
    try:
        lsp = await start(
            {"model": "openai/loopback-model", "apiBase": server.url},
            env={"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"},
        )
        lsp.open("textutils.py")
        await lsp.wait_for(lambda: lsp.client.messages, "a message about the provider's error")
        await lsp.wait_idle()
        await asyncio.sleep(0.3)
        assert server.request_count > 0
        texts = [m.message for m in lsp.client.messages] + [m.message for m in lsp.client.log_messages]
        assert any("Incorrect API key provided" in t for t in texts), texts
        assert not any(LEAKED in t or "\x1b" in t or "\x07" in t for t in texts), texts
    finally:
        server.stop()
