"""LLM faults and a damaged sample cache, seen through the language server (a real
``python -m coherence serve``, litellm's real HTTP path to the loopback server): the user gets one
message per problem, not one per function, and the lens says what is missing."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter

import pytest
from lsprotocol import types

from tests.conftest import EXAMPLES
from tests.lsp.conftest import start, workspace  # noqa: F401 - fixtures
from tests.support.openai_loopback import LoopbackServer, code_reply, rate_limited

KEY_ENV = {"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"}
PARTIAL = "7 of 10 samples; 3 failed: rate limited (429)"


@pytest.fixture
def client_name() -> str:
    return "vscode"  # one client is enough here; tests/lsp covers both


def partial_responder():
    """Per function: the first request (n=9, answered with one choice: the server ignores n) and
    five single requests are served the function's recorded candidates, the other three get a 429
    with a Retry-After far beyond the retry budget."""
    candidates = {}
    for line in (EXAMPLES / "recorded_samples.jsonl").read_text().splitlines():
        row = json.loads(line)
        candidates[row["entry_point"]] = row["candidates"]
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(req):
        # The module context shows the neighbours too: the instruction names the one asked for.
        name = re.search(r"Write the function `(\w+)`", req.text).group(1)
        with lock:
            seen[name] += 1
            k = seen[name]
        if k > 6:
            return rate_limited(retry_after=3600)
        return code_reply(candidates[name][k % len(candidates[name])].replace("# End of python code", ""))

    return respond


async def test_partial_samples_and_a_rebuilt_cache_are_one_message_each(start, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "samples.sqlite3").write_bytes(b"\x13\x37 not a database " * 400)
    server = LoopbackServer(responder=partial_responder(), ignore_n=True).start()
    try:
        lsp = await start({"model": "openai/loopback-model", "apiBase": server.url}, env=KEY_ENV)
        uri = lsp.open("textutils.py")
        warnings = lambda: [m for m in lsp.client.messages if m.type == types.MessageType.Warning]  # noqa: E731
        await lsp.wait_for(lambda: len(warnings()) >= 2, "two warnings")
        await lsp.wait_idle()
        await asyncio.sleep(0.5)
        assert server.request_count == 2 * 9  # per function: 1 + 8, nothing retried
        shown = warnings()
        # besides the two warnings, only the notice that the user's model replaces the project's replay
        others = [m.message for m in lsp.client.messages if m.type != types.MessageType.Warning]
        assert len(shown) == 2 and len(others) <= 1, [m.message for m in lsp.client.messages]
        assert all("replaces the project's recorded samples" in m for m in others), others
        partial = [m.message for m in shown if PARTIAL in m.message]
        damaged = [m.message for m in shown if "sample cache" in m.message]
        assert len(partial) == 1 and len(damaged) == 1, [m.message for m in shown]
        assert "rate-limiting" in partial[0]
        assert "damaged" in damaged[0] and "rebuilding it" in damaged[0]
        # The log has the partial-sample line for each function, and the cache line once.
        logged = [m.message for m in lsp.client.log_messages]
        assert sum(PARTIAL in m for m in logged) == 2
        assert sum("sample cache" in m for m in logged) == 1
        # Each function's lens says what is missing.
        lenses = await lsp.code_lens(uri)
        assert len(lenses) == 2 and all(PARTIAL in lens.command.title for lens in lenses)
        assert list(cache.glob("samples.sqlite3.corrupt-*"))
    finally:
        server.stop()
