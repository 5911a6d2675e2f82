"""What a check costs, before and after (issue 30): Check Workspace says how many functions and
samples it would request and what they would cost (litellm's prices) and asks first; a window's
spending stops at ``coherence.maxCostUsd`` with a way to raise it; results persist across a restart
of the server, so reopening a file shows them at no cost; ``coherence.enable`` is honoured by the
server for every editor.  The real server, with both recorded clients; the LLM is the replay file
or the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from coherence.lsp.budget import money
from tests.support.openai_loopback import LoopbackServer, corpus_responder

from .conftest import EXAMPLES

# a model litellm has a price for, served by the loopback server
PRICED = {"model": "openai/gpt-4o-mini", "runOn": "save"}
KEY_ENV = {"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"}
QUIET_SECONDS = 1.0


@pytest.fixture
def loopback():
    server = LoopbackServer(responder=corpus_responder(EXAMPLES / "recorded_samples.jsonl")).start()
    yield server
    server.stop()


def answer_requests(lsp, title: str | None) -> list[types.ShowMessageRequestParams]:
    """Answer every ``window/showMessageRequest`` with the action called ``title`` (None: dismiss);
    returns the list the requests are recorded in."""
    asked: list[types.ShowMessageRequestParams] = []

    @lsp.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(ls, params: types.ShowMessageRequestParams):
        asked.append(params)
        for action in params.actions or []:
            if title is not None and action.title.startswith(title):
                return action
        return None

    return asked


def change_settings(lsp, settings: dict) -> None:
    """New settings, as each client sends them: pulled (VS Code) or in the notification (Neovim 0.7)."""
    lsp.client.set_configuration(settings, section="coherence")
    lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"coherence": settings}))


async def stats(lsp) -> dict:
    return await lsp.command("coherence.serverStats")


async def test_check_workspace_says_what_it_would_cost_and_cancel_runs_nothing(start, loopback):
    lsp = await start({**PRICED, "apiBase": loopback.url}, env=KEY_ENV)
    asked = answer_requests(lsp, "Cancel")
    est = await lsp.command("coherence.estimateWorkspace")
    # examples/: textutils.py, intervals.py and cart.py hold the marked functions...
    assert est["functions"] >= 3 and est["toCheck"] == est["functions"] and est["cachedResults"] == 0
    # ... 9 alternatives each (samples = 10 counts yours), none cached yet, at gpt-4o-mini's price
    assert est["samples"] == 9 * est["toCheck"] and est["cachedSamples"] == 0
    assert 0 < est["usd"] < 0.05
    assert f"check {est['functions']} functions" in est["message"] and "openai/gpt-4o-mini" in est["message"]
    assert loopback.request_count == 0  # an estimate sends nothing

    summary = await lsp.command("coherence.checkWorkspace")
    assert summary["cancelled"] is True
    assert len(asked) == 1 and asked[0].message == est["message"]
    assert [a.title for a in asked[0].actions] == ["Continue", "Cancel"]
    await asyncio.sleep(QUIET_SECONDS)
    assert (await stats(lsp))["checksQueued"] == 0 and loopback.request_count == 0


@pytest.mark.slow  # the cancelled case above runs by default
async def test_check_workspace_continues_when_confirmed(start, loopback):
    lsp = await start({**PRICED, "apiBase": loopback.url}, env=KEY_ENV)
    asked = answer_requests(lsp, "Continue")
    summary = await lsp.command("coherence.checkWorkspace")
    assert len(asked) == 1 and summary["functions"] >= 3 and summary["counts"].get("incoherent")
    assert lsp.client.statuses[-1]["spentUsd"] > 0  # the window's running total
    # Everything is cached now: the estimate says so, and a second run asks nothing.
    est = await lsp.command("coherence.estimateWorkspace")
    assert est["samples"] == 0 and est["cachedResults"] == est["functions"]
    calls = loopback.request_count
    await lsp.command("coherence.checkWorkspace")
    assert len(asked) == 1 and loopback.request_count == calls


async def test_replayed_samples_cost_nothing_and_say_so(lsp):
    est = await lsp.command("coherence.estimateWorkspace")
    assert est["toCheck"] >= 3 and est["samples"] == 0 and est["usd"] == 0
    assert "recorded samples" in est["message"] and "$0" in est["message"]
    # the files read to count them are not kept as documents (their results are no status counts)
    assert (await stats(lsp))["documents"] == 0


@pytest.mark.slow  # the written cap below raises the cap and checks by default
async def test_a_check_past_the_cost_cap_is_not_started_until_the_cap_is_raised(start, loopback):
    lsp = await start({**PRICED, "apiBase": loopback.url, "maxCostUsd": 0.000001}, env=KEY_ENV)
    asked = answer_requests(lsp, "Raise the cap")
    uri = lsp.open("textutils.py")
    lsp.save(uri, write=False)
    await lsp.wait_for(lambda: asked, "the question whether to raise the cap")
    assert "not checked" in asked[0].message and "coherence.maxCostUsd" in asked[0].message
    # this client cannot write the setting: the raise lasts as long as the server, and it says so
    assert "for as long as the server runs" in asked[0].message
    # Raised: the refused functions are checked, and the spending shows in the status.
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the check after raising the cap")
    await lsp.wait_idle()
    status = lsp.client.statuses[-1]
    assert status["spentUsd"] > 0 and status["maxCostUsd"] >= 0.01
    assert loopback.request_count >= 2


def param(params, name: str):
    return params.get(name) if isinstance(params, dict) else getattr(params, name, None)


async def test_a_client_that_can_write_the_cap_is_asked_to_and_a_lower_setting_ends_the_raise(start, loopback):
    settings = {**PRICED, "apiBase": loopback.url, "maxCostUsd": 0.000001}
    lsp = await start(settings, options={"raiseCostCap": True}, env=KEY_ENV)
    asked = answer_requests(lsp, "Raise the cap")
    written: list[float] = []

    @lsp.client.feature("coherence/raiseCostCap")
    def raise_cost_cap(ls, params):
        # what the VS Code client does: write the setting, whose change then reaches the server
        written.append(param(params, "maxCostUsd"))
        change_settings(lsp, {**settings, "maxCostUsd": written[-1]})
        return {"written": True}

    uri = lsp.open("textutils.py")
    lsp.save(uri, write=False)
    await lsp.wait_for(lambda: asked, "the question whether to raise the cap")
    assert "written to coherence.maxCostUsd in the workspace settings" in asked[0].message
    new_cap = float(asked[0].actions[0].title.removeprefix("Raise the cap to $"))
    # the refused functions are checked (the setting's change did not cut the checks short), and
    # the client was asked to write the new cap
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the check after raising the cap")
    await lsp.wait_idle()
    assert written == [new_cap] and loopback.request_count >= 1
    await lsp.wait_for(lambda: lsp.client.statuses[-1].get("maxCostUsd") == new_cap, "the written cap in the status")
    assert not [m for m in lsp.client.messages if "could not write" in m.message]
    # The user lowers the setting again: that is their word, the raise ends.
    change_settings(lsp, settings)
    await lsp.wait_for(lambda: lsp.client.statuses[-1].get("maxCostUsd") == 0.000001, "the lowered cap")


@pytest.mark.slow  # the written cap above runs by default
async def test_a_client_that_fails_to_write_the_cap_leaves_the_raise_for_the_servers_lifetime(start, loopback):
    lsp = await start(
        {**PRICED, "apiBase": loopback.url, "maxCostUsd": 0.000001}, options={"raiseCostCap": True}, env=KEY_ENV
    )
    asked = answer_requests(lsp, "Raise the cap")

    @lsp.client.feature("coherence/raiseCostCap")
    def raise_cost_cap(ls, params):
        return {"written": False, "error": "no workspace is open"}

    uri = lsp.open("textutils.py")
    lsp.save(uri, write=False)
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the check after raising the cap")
    await lsp.wait_for(
        lambda: [
            m for m in lsp.client.messages if "could not write coherence.maxCostUsd (no workspace is open)" in m.message
        ],
        "the message that the setting was not written",
    )
    assert lsp.client.statuses[-1]["maxCostUsd"] >= 0.01 and len(asked) == 1


async def test_a_refused_check_shows_why_and_buys_nothing(start, loopback):
    lsp = await start({**PRICED, "apiBase": loopback.url, "maxCostUsd": 0.000001}, env=KEY_ENV)
    asked = answer_requests(lsp, None)
    uri = lsp.open("textutils.py")
    results = await lsp.command("coherence.checkFile", uri)
    # the status says "not checked"; the reason says why, once ("add was not checked: its samples …")
    assert results and all(r["status"] == "skipped" and "would cost" in r["reason"] for r in results)
    assert not any("not checked" in r["reason"] for r in results)
    assert "maxCostUsd" in results[0]["reason"]
    assert loopback.request_count == 0 and asked
    # not cached: with the cap raised in the settings, the next save checks
    change_settings(lsp, {**PRICED, "apiBase": loopback.url, "maxCostUsd": 5})
    await asyncio.sleep(QUIET_SECONDS)
    lsp.save(uri, write=False)
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the check under the raised cap")


async def test_results_show_on_open_after_a_restart_with_no_check(start, tmp_path):
    first = await start({"runOn": "save"})
    uri = first.open("textutils.py")
    first.save(uri, write=False)
    await first.wait_for(lambda: first.coherence_diagnostics(uri, "incoherent"), "a diagnostic after the save")
    await first.wait_idle()
    assert await first.shutdown() == 0
    assert (tmp_path / "cache" / "results.sqlite3").is_file()

    second = await start({"runOn": "save"})
    second.open("textutils.py")
    d = await second.wait_for(lambda: second.coherence_diagnostics(uri, "incoherent"), "the saved result on open")
    assert d[0].data["name"] == "count_vowels"
    await asyncio.sleep(QUIET_SECONDS)
    assert (await stats(second))["checksQueued"] == 0


async def test_a_corrupt_results_cache_is_a_message_and_is_rebuilt(start, tmp_path):
    db = Path(tmp_path / "cache" / "results.sqlite3")
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    lsp = await start({"runOn": "save"})
    uri = lsp.open("textutils.py")
    lsp.save(uri, write=False)
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "a diagnostic despite the damaged file")
    messages = [m.message for m in lsp.client.messages]
    assert any("results cache" in m and "damaged" in m for m in messages), messages
    assert list(db.parent.glob("results.sqlite3.corrupt-*"))  # kept aside, not deleted


async def test_enable_false_is_honoured_by_the_server(start):
    lsp = await start({"enable": False, "runOn": "open"})
    uri = lsp.open("textutils.py")
    await asyncio.sleep(QUIET_SECONDS)
    assert (await stats(lsp))["checksQueued"] == 0
    assert lsp.coherence_diagnostics(uri) == [] and await lsp.code_lens(uri) == []
    assert await lsp.command("coherence.checkFile", uri) == []
    assert any("coherence.enable" in m.message for m in lsp.client.messages)
    # Turned back on: runOn "open" checks the open document again.
    change_settings(lsp, {"enable": True, "runOn": "open", "inputs": 200})
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "a diagnostic once enabled")


def test_money_shows_a_tiny_cap_with_two_significant_digits():
    # the question quoted a $0.000001 cap as "$0.0000"
    assert money(0.000001) == "$0.0000010"
    assert money(0.0000123) == "$0.000012"
    assert money(0.0001) == "$0.0001"
    assert money(0.5) == "$0.5000"
    assert money(0) == "$0.0000"
