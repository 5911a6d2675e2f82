"""Shutdown and exit with checks in flight (issue 5, pygls#606): shutdown + exit, exit without
shutdown, and the client's end of stdin closing abruptly.  The server must end promptly with the
right code, leave no worker process behind and print no traceback."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

# The server's own process is the subject: it starts as itself, not forked from the test zygote.
pytestmark = pytest.mark.fresh_server

# Every call of the user's function sleeps: a check runs for many seconds unless stopped.
SLOW = '''import time


# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case."""
    time.sleep(0.05)
    return sum(1 for ch in s if ch in "aeiou")


# coherence
def is_palindrome(s: str) -> bool:
    """Return True if s reads the same forwards and backwards (characters compared exactly)."""
    time.sleep(0.05)
    return s == s[::-1]
'''


@pytest.fixture
def client_name() -> str:
    return "vscode"


def children_of(pid: int) -> dict[int, int]:
    table: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = int(fields[1])
    out: dict[int, int] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in table.items():
            if ppid == parent and child not in out:
                out[child] = ppid
                frontier.append(child)
    return out


def serving(pid: int) -> bool:
    """A warm sandbox worker (``worker.py --serve``, under bubblewrap or not)."""
    try:
        return b"--serve" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def running(pid: int) -> bool:
    """Alive and not a zombie (bwrap leaves zombies reparented to pid 1 on some machines)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def start_slow_checks(start) -> tuple:
    lsp = await start({"maxConcurrentChecks": 2}, capture_stderr=True)
    (lsp.workspace / "slow.py").write_text(SLOW)
    lsp.open("slow.py")
    lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] >= 2, "checks to start")
    pid = (await lsp.command("coherence.serverStats"))["pid"]
    # Wait for the sandbox workers of the running checks to exist.  A short-lived child (the
    # interpreter or bubblewrap probe) is no worker: it can be gone by the next look, so the
    # wait is for a process serving jobs, and what it returns is the look that found one.
    deadline = time.monotonic() + 90  # a busy CI machine: seen once not to have them after 30 s
    workers = children_of(pid)
    while not any(serving(p) for p in workers) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        workers = children_of(pid)
    if not any(serving(p) for p in workers):
        stats = await lsp.command("coherence.serverStats")
        raise AssertionError(
            f"no worker processes under the server: {await lsp.describe()} {stats} {lsp.stderr()[-3000:]}"
        )
    return lsp, pid, workers


async def wait_gone(pids, timeout: float = 15.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if running(p)]
        if not left:
            return []
        await asyncio.sleep(0.1)
    return [p for p in pids if running(p)]


def assert_clean(err: str) -> None:
    for bad in ("Traceback", "Task was destroyed", "never retrieved", "did not stop in time"):
        assert bad not in err, err[-3000:]


async def test_shutdown_and_exit_with_checks_in_flight(start):
    lsp, pid, workers = await start_slow_checks(start)
    started = time.monotonic()
    code = await lsp.shutdown()
    assert code == 0
    assert time.monotonic() - started < 8
    assert await wait_gone([pid, *workers]) == []
    assert_clean(lsp.stderr())


async def test_exit_without_shutdown(start):
    lsp, pid, workers = await start_slow_checks(start)
    server = lsp.client._server
    started = time.monotonic()
    lsp.client.protocol.notify("exit", None)
    code = await asyncio.wait_for(server.wait(), timeout=15)
    assert code == 1  # exit without shutdown: 1, as the LSP specifies
    assert time.monotonic() - started < 8
    lsp.closed = True
    await lsp.client.stop()
    assert await wait_gone([pid, *workers]) == []
    assert_clean(lsp.stderr())


async def test_client_vanishes(start):
    lsp, pid, workers = await start_slow_checks(start)
    server = lsp.client._server
    started = time.monotonic()
    server.stdin.close()  # the editor died: its end of the pipe closes
    code = await asyncio.wait_for(server.wait(), timeout=15)
    assert code in (0, 1)
    assert time.monotonic() - started < 8
    lsp.closed = True
    await lsp.client.stop()
    assert await wait_gone([pid, *workers]) == []
    assert_clean(lsp.stderr())


async def test_client_vanishes_while_the_server_waits_for_its_answer(start):
    # The server asks the client to register for configuration changes as it starts; a client
    # that dies before answering leaves that handler waiting when the server exits.
    lsp = await start(capture_stderr=True, answer_registrations=False)
    await asyncio.wait_for(lsp.client.registration_asked.wait(), timeout=30)
    server = lsp.client._server
    server.stdin.close()
    # the test client's handler ends too, its answer lost with the pipe (pygls' client fails to
    # clean up a request whose handler still runs when the server exits)
    lsp.client.registration_answer.set()
    code = await asyncio.wait_for(server.wait(), timeout=15)
    assert code in (0, 1)
    lsp.closed = True
    await lsp.client.stop()
    assert_clean(lsp.stderr())
