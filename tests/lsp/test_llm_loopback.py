"""The LLM path: litellm talking to the loopback OpenAI-compatible server (tests/support), with
the engine's SQLite sample cache.  A body-only edit re-runs with zero LLM calls; a bad key is one
message, not one per function."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.support.openai_loopback import Fault, LoopbackServer, corpus_responder

from .conftest import EXAMPLES

KEY_ENV = {"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"}


@pytest.fixture
def loopback():
    server = LoopbackServer(responder=corpus_responder(EXAMPLES / "recorded_samples.jsonl")).start()
    yield server
    server.stop()


@pytest.mark.slow  # test_autosave.py's body edit checks from the cached samples with no request by default
@pytest.mark.fresh_server  # litellm's import in the server's thread is part of what it checks
async def test_samples_from_the_llm_are_cached_so_body_edits_cost_no_call(start, loopback):
    # The editor names a model: the pyproject's replay file is not used.
    lsp = await start({"model": "openai/loopback-model", "apiBase": loopback.url}, env=KEY_ENV)
    uri = lsp.open("textutils.py")
    # litellm is imported (seconds) in a thread: the server keeps answering meanwhile.
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] > 0, "the checks to start")
    slowest = 0.0
    for _ in range(10):
        t = asyncio.get_running_loop().time()
        await lsp.hover(uri, 4, 6)
        slowest = max(slowest, asyncio.get_running_loop().time() - t)
        await asyncio.sleep(0.1)
    assert slowest < 1.0
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic"))[0]
    await lsp.wait_idle()
    assert d.data["model"] == "openai/loopback-model" and d.data["samples"] == 10
    calls = loopback.request_count
    assert calls >= 2  # one per function at least
    prompts = "\n".join(r.text for r in loopback.chat_requests)
    assert (
        "def count_vowels(" in prompts and 'return sum(1 for ch in s if ch in "aeiou")' not in prompts
    )  # never the body

    # Body-only edit of both functions' module: re-checked from the sample cache.
    text = lsp.texts[uri]
    lsp.change(uri, text.replace('for ch in s if ch in "aeiou"', 'for ch in s.lower() if ch in "aeiou"'))
    lsp.save(uri)
    # the fixed function agrees with the alternatives: no warning left (a hint or coherent)
    await lsp.wait_for(
        lambda: lsp.client.statuses[-1]["checking"] == 0 and lsp.client.statuses[-1].get("warning") == 0, "the re-check"
    )
    await lsp.wait_idle()
    assert loopback.request_count == calls

    # A docstring edit changes the spec: new samples are requested.
    lsp.change(
        uri,
        lsp.texts[uri].replace(
            "Count the vowels (a, e, i, o, u) in s", "Count the vowels (a, e, i, o, u) in the string s"
        ),
    )
    lsp.save(uri)
    await lsp.wait_for(lambda: loopback.request_count > calls, "new LLM calls")
    await lsp.wait_idle()


async def test_a_bad_key_is_one_message(start):
    server = LoopbackServer(then=Fault(status=401, message="Incorrect API key provided")).start()
    try:
        lsp = await start({"model": "openai/loopback-model", "apiBase": server.url}, env=KEY_ENV)
        uri = lsp.open("textutils.py")
        intervals = lsp.open("intervals.py")
        # (the first message may be the info that the model replaces the project's replay file)
        await lsp.wait_for(
            lambda: [m for m in lsp.client.messages if m.type in (types.MessageType.Warning, types.MessageType.Error)],
            "the refusal",
        )
        await lsp.wait_idle()
        await asyncio.sleep(0.5)
        errors = [m for m in lsp.client.messages if m.type in (types.MessageType.Warning, types.MessageType.Error)]
        assert len(errors) == 1, [m.message for m in lsp.client.messages]
        assert "auth" in errors[0].message.lower() or "key" in errors[0].message.lower()
        # No per-function diagnostics for a configuration problem; the lens says what is wrong.
        assert not lsp.coherence_diagnostics(uri) and not lsp.coherence_diagnostics(intervals)
        lenses = await lsp.code_lens(uri)
        assert len(lenses) == 2 and all(lens.command.title.startswith("coherence: error — ") for lens in lenses)
        # ...and it is in the log.
        assert any(errors[0].message == m.message for m in lsp.client.log_messages)
    finally:
        server.stop()
