"""Scheduling: progress, cancellation on edit and from the client, dropped stale results, the
results cache, and the server's bookkeeping not growing."""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types

# Each call of the user's function sleeps: 200 inputs make a check last ~10 s unless cancelled.
SLOW = '''import time


# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case."""
    time.sleep(0.05)
    return sum(1 for ch in s if ch in "aeiou")
'''


def progress_tokens_with(lsp, kind) -> list:
    return [t for t, reports in lsp.client.progress_reports.items() if any(isinstance(r, kind) for r in reports)]


async def test_progress_is_reported_and_ends(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    ended = await lsp.wait_for(lambda: progress_tokens_with(lsp, types.WorkDoneProgressEnd), "progress to end")
    reports = lsp.client.progress_reports[ended[0]]
    begin = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin)
    assert begin.title == "coherence: checking count_vowels, is_palindrome" and begin.cancellable
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    # Reports made before the editor answered the create request are folded into "begin".
    messages = [r.message for r in reports[:-1] if r.message]
    assert messages and all(m.split(":")[0] in ("count_vowels", "is_palindrome") for m in messages), messages
    assert "count_vowels: done" in messages and "is_palindrome: done" in messages
    percents = [r.percentage for r in reports[:-1] if r.percentage is not None]
    assert percents == sorted(percents) and percents[-1] <= 100


async def test_an_edit_cancels_the_check_and_drops_its_result(lsp):
    (lsp.workspace / "slow.py").write_text(SLOW)
    uri = lsp.open("slow.py")
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] == 1, "the check to start")
    await asyncio.sleep(0.5)  # well inside the sandbox run
    started = time.monotonic()
    lsp.change(uri, SLOW.replace("Count the vowels", "Count the vowels (a, e, i, o, u)"))
    await lsp.wait_for(lambda: lsp.client.statuses[-1]["checking"] == 0, "the check to be cancelled", timeout=10)
    assert time.monotonic() - started < 5
    stats = await lsp.command("coherence.serverStats")
    assert stats["jobs"] == 0
    # The cancelled check never publishes a result, for version 1 or any other.
    await asyncio.sleep(1.0)
    assert not lsp.coherence_diagnostics(uri)
    assert all(
        not [d for d in p.diagnostics if d.source == "coherence"] for p in lsp.client.diagnostic_log if p.uri == uri
    )


async def test_results_of_an_old_version_are_not_shown(start):
    lsp = await start({"runOn": "manual"})
    (lsp.workspace / "slow.py").write_text(SLOW)
    uri = lsp.open("slow.py")
    task = asyncio.ensure_future(lsp.command("coherence.checkFile", uri))
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] == 1, "the check to start")
    lsp.change(uri, SLOW + "\n# an edit\n")  # a new version: the running check is superseded
    results = await asyncio.wait_for(task, 30)
    assert results == []  # cancelled: nothing to return
    assert not lsp.coherence_diagnostics(uri)


async def test_cancel_from_the_client_stops_the_check(lsp):
    (lsp.workspace / "slow.py").write_text(SLOW)
    uri = lsp.open("slow.py")
    begun = await lsp.wait_for(lambda: progress_tokens_with(lsp, types.WorkDoneProgressBegin), "progress to begin")
    await asyncio.sleep(0.3)
    lsp.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=begun[0]))
    await lsp.wait_for(lambda: lsp.client.statuses[-1]["checking"] == 0, "the check to stop", timeout=10)
    await lsp.wait_for(lambda: progress_tokens_with(lsp, types.WorkDoneProgressEnd), "progress to end", timeout=10)
    assert not lsp.coherence_diagnostics(uri)


async def test_unchanged_functions_are_not_rerun(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    first = lsp.coherence_diagnostics(uri, "incoherent")[0].data
    n_progress = len(lsp.client.progress_reports)
    text = lsp.texts[uri]

    # Saving the same text: results come from the cache (no progress, same result).
    lsp.save(uri)
    await asyncio.sleep(0.5)
    await lsp.wait_idle()
    assert len(lsp.client.progress_reports) == n_progress
    assert lsp.coherence_diagnostics(uri, "incoherent")[0].data["checked_at"] == first["checked_at"]

    # An edit of the module re-runs the checks...
    lsp.change(uri, text + "\nLIMIT = 3\n")
    lsp.save(uri)
    await lsp.wait_for(lambda: len(lsp.client.progress_reports) > n_progress, "a new check")
    await lsp.wait_for(
        lambda: (
            lsp.coherence_diagnostics(uri, "incoherent")
            and lsp.coherence_diagnostics(uri, "incoherent")[0].data["checked_at"] != first["checked_at"]
        ),
        "the new result",
    )
    await lsp.wait_idle()
    n_after_edit = len(lsp.client.progress_reports)

    # ...and undoing it brings back the cached results of the first text at once.
    lsp.change(uri, text)
    lsp.save(uri)
    await lsp.wait_for(
        lambda: (
            lsp.coherence_diagnostics(uri, "incoherent")
            and lsp.coherence_diagnostics(uri, "incoherent")[0].data["checked_at"] == first["checked_at"]
        ),
        "the cached result",
    )
    await asyncio.sleep(0.3)
    assert len(lsp.client.progress_reports) == n_after_edit


async def test_bookkeeping_does_not_grow(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    text = lsp.texts[uri]
    for i in range(200):  # notifications: pygls would keep a future for each
        lsp.change(uri, text + f"\n# {i}\n")
    lsp.change(uri, text)
    lsp.save(uri)
    await asyncio.sleep(0.5)
    await lsp.wait_idle()
    stats = await lsp.command("coherence.serverStats")
    assert stats["requestFutures"] <= 2, stats  # the executeCommand request in flight
    assert stats["progressTokens"] == 0, stats
    assert stats["jobs"] == 0 and stats["documents"] == 1, stats
    assert stats["tasks"] <= 1, stats


async def test_concurrency_is_bounded(start):
    lsp = await start({"maxConcurrentChecks": 1, "runOn": "manual"})
    uri = lsp.open("textutils.py")
    results = await lsp.command("coherence.checkFile", uri)
    assert [r["name"] for r in results] == ["count_vowels", "is_palindrome"]
    # With one slot, the two checks ran one after the other.
    a, b = sorted(results, key=lambda r: r["checked_at"])
    assert b["checked_at"] >= a["checked_at"] + a["seconds"] - 0.05


async def test_shutdown_with_work_in_flight_is_clean(start):
    lsp = await start(capture_stderr=True)
    (lsp.workspace / "slow.py").write_text(SLOW)
    lsp.open("slow.py")
    lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] > 0, "checks to start")
    await asyncio.sleep(0.3)
    started = time.monotonic()
    code = await lsp.shutdown()
    assert code == 0
    assert time.monotonic() - started < 8
    err = lsp.stderr()
    assert "Traceback" not in err and "Task was destroyed" not in err and "never retrieved" not in err, err


SLOW_TWO = (
    SLOW
    + '''

# coherence
def is_palindrome(s: str) -> bool:
    """Return True if s reads the same forwards and backwards (characters compared exactly)."""
    time.sleep(0.05)
    return s == s[::-1]
'''
)


async def test_an_edit_cancels_queued_and_running_checks(start):
    lsp = await start({"maxConcurrentChecks": 1})
    (lsp.workspace / "slow.py").write_text(SLOW_TWO)
    uri = lsp.open("slow.py")
    await lsp.wait_for(
        lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] == 2, "two checks (one running, one queued)"
    )
    begun = await lsp.wait_for(lambda: progress_tokens_with(lsp, types.WorkDoneProgressBegin), "progress to begin")
    lsp.change(uri, SLOW_TWO + "\n# edited\n")
    await lsp.wait_for(lambda: lsp.client.statuses[-1]["checking"] == 0, "both checks to be cancelled", timeout=10)
    await lsp.wait_for(
        lambda: any(isinstance(r, types.WorkDoneProgressEnd) for r in lsp.client.progress_reports[begun[0]]),
        "progress to end",
        timeout=10,
    )
    await asyncio.sleep(0.5)
    stats = await lsp.command("coherence.serverStats")
    assert stats["jobs"] == 0 and stats["progressTokens"] == 0 and stats["tasks"] <= 1, stats
    assert not lsp.coherence_diagnostics(uri)
