"""Two language servers on one workspace at once (two editor windows on one folder): both real
``python -m coherence serve`` processes share the workspace and the sample cache, sample through
litellm's real HTTP path to the loopback server at the same time, and each gets its results,
with no lock error, no lost or foreign samples, and an intact cache file afterwards."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from coherence.engine.markers import find_targets
from tests.conftest import EXAMPLES
from tests.lsp.conftest import start, workspace  # noqa: F401 - fixtures
from tests.support.openai_loopback import LoopbackServer, corpus_responder

KEY_ENV = {"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"}


@pytest.fixture
def client_name() -> str:
    return "vscode"


@pytest.fixture
def loopback():
    server = LoopbackServer(responder=corpus_responder(EXAMPLES / "recorded_samples.jsonl")).start()
    yield server
    server.stop()


@pytest.mark.slow  # test_cache_integrity.py opens one cache from several processes by default
async def test_two_servers_on_one_workspace_share_the_cache(start, loopback, tmp_path):
    settings = {"model": "openai/loopback-model", "apiBase": loopback.url}
    a = await start(settings, env=KEY_ENV, capture_stderr=True)
    b = await start(settings, env=KEY_ENV, capture_stderr=True)
    uri_a = a.open("textutils.py")
    uri_b = b.open("textutils.py")

    async def incoherent(lsp, uri):
        found = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
        await lsp.wait_idle()
        return found

    da, db = await asyncio.gather(incoherent(a, uri_a), incoherent(b, uri_b))
    for d in (da[0], db[0]):
        assert d.data["name"] == "count_vowels" and d.data["samples"] == 10
    # the same samples and inputs: the same verdict, the same counterexample
    assert da[0].data["counterexample"]["call"] == db[0].data["counterexample"]["call"]
    first = loopback.request_count
    # At most one batch per function per server (both may miss the cache at the same moment).
    assert 2 <= first <= 2 * 2 * 3

    # A third look from either server is served from the shared cache: no new request.
    text = a.texts[uri_a].replace('for ch in s if ch in "aeiou"', 'for ch in s.lower() if ch in "aeiou"')
    a.change(uri_a, text)
    a.save(uri_a)
    # the fixed function agrees with the alternatives: no warning left (a hint or coherent)
    await a.wait_for(
        lambda: a.client.statuses[-1]["checking"] == 0 and a.client.statuses[-1].get("warning") == 0, "the re-check"
    )
    await a.wait_idle()
    assert loopback.request_count == first

    for lsp in (a, b):
        stderr = lsp.stderr_path.read_text() if lsp.stderr_path and lsp.stderr_path.exists() else ""
        assert "Traceback" not in stderr and "locked" not in stderr.lower(), stderr[-2000:]

    # The one sample cache is intact, and each function's rows define that function only; the
    # results store both servers write beside it is intact too.
    [path] = list((tmp_path / "cache").rglob("samples.sqlite3"))
    for store in (tmp_path / "cache").rglob("results.sqlite3"):
        with sqlite3.connect(store) as check:
            assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT spec_hash, code FROM samples WHERE status = 'ok'").fetchall()
    finally:
        conn.close()
    names = {t.name for t in find_targets(b.texts[uri_b], "textutils.py")}
    assert len(names) == 2, names
    by_spec: dict[str, set[str]] = {}
    for spec_hash, code in rows:
        by_spec.setdefault(spec_hash, set()).update(n for n in names if f"def {n}(" in code)
    assert len(by_spec) == 2 and all(len(v) == 1 for v in by_spec.values()), by_spec
    assert set().union(*by_spec.values()) == names
