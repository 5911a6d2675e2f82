"""A child that fills its own directory: RLIMIT_FSIZE bounds each file (16 MiB), not how many.

Under bubblewrap the children's directories are in the sandbox's /tmp, a tmpfs of
``sandbox.TMPFS_MB``: before its size was set, one child wrote 384 MiB there against a 256 MiB
memory limit in 2.5 s.  In guard mode as root the leader mounts a tmpfs of the same size over the
job's directory; the write past it fails (ENOSPC), and the program says how far it got.  In guard
mode as an ordinary user, who can mount nothing, the leader measures the directory and kills the
child past the budget: its input's outcome is ``Crash(disk)`` (coherence_worker/disk.py).  Either
way what the job's directory held, sampled from here every few milliseconds, stays near the
budget, and nothing is left behind.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time

import pytest

from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.coherence_worker import disk, protocol
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.outcomes import Outcome

MIB = 1 << 20
LIMITS = ExecutionLimits(call_timeout=30.0, program_budget=40.0, memory_mb=256)
FILES = 64  # x 16 MiB: 1 GiB, four times the budget (and over the memory limit)
# What a child may write past the budget before the leader's next measure kills it: the measure's
# period at 1.5 GB/s (page cache), and a tick of the leader's loop
SLACK = int((disk.SCAN_EVERY + 0.05) * 1500 * MIB)

FLOOD = (
    """
def f(x):
    block = b"x" * (1 << 20)
    n = 0
    try:
        for i in range(%d):
            with open("flood-%%d" %% i, "wb") as fh:
                for _ in range(16):
                    fh.write(block)
            n += 16
    except OSError as e:
        if e.errno != 28:  # ENOSPC: the bound held (the outcome names how far it got)
            raise
        raise type("StoppedAt%%dMiB" %% n, (Exception,), {})() from None
    return "wrote %%d MiB" %% n
"""
    % FILES
)


class Peak(threading.Thread):
    """The most bytes seen under ``root`` while it runs (blocks held, each inode once)."""

    def __init__(self, root: str) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.most = 0
        self.now = 0  # at the last look
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.003):
            seen: set[int] = set()
            total = 0
            for top, _dirs, files in os.walk(self.root):
                for name in files:
                    try:
                        st = os.lstat(os.path.join(top, name))
                    except OSError:
                        continue
                    if st.st_ino not in seen:
                        seen.add(st.st_ino)
                        total += st.st_blocks * 512
            self.now = total
            self.most = max(self.most, total)


@pytest.fixture
def temp_dir(monkeypatch):
    """Where the guard's job directories go, watched alone (pytest's own tmp_path is in a
    directory of mode 0700, which the children of a root worker, each a uid of its own, could
    not enter)."""
    path = tempfile.mkdtemp(prefix="coherence-flood-")
    os.chmod(path, 0o755)
    monkeypatch.setattr(tempfile, "tempdir", path)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_child_cannot_fill_its_directory_beyond_a_bound(mode, temp_dir):
    peak = Peak(temp_dir)
    peak.start()
    try:
        report = Executor(limits=LIMITS, sandbox=mode).run(ModuleContext(), [Program("f", FLOOD)], ["((1,), {})"])
    finally:
        peak.done.set()
        peak.join()
    (outcome,) = report.outcomes[0]
    text = outcome.render(400)
    found = re.search(r"StoppedAt(\d+)MiB", text)
    if found:  # a tmpfs of TMPFS_MB: bubblewrap's, or the guard's as root
        assert outcome.kind == "raise" and int(found.group(1)) <= sb.TMPFS_MB, text
    else:  # the leader's measure (guard mode, an ordinary user): the child is killed past it
        assert mode == "guard" and outcome == Outcome.raised(protocol.CRASH_DISK), text
    assert peak.most <= sb.TMPFS_MB * MIB + SLACK, "the job's directory held %d MiB" % (peak.most // MIB)
    print("%s as uid %d: %s; most seen on the host's disk %d MiB" % (mode, os.getuid(), text, peak.most // MIB))
    # the job's directory is removed after (the worker's own copy stays for the next run)
    assert [n for n in os.listdir(temp_dir) if not n.startswith("coherence-worker-")] == []


def test_a_program_that_floods_as_it_loads_does_not_load(mode, temp_dir):
    # Its top-level code runs in its child before any call.  The inputs come once the job's
    # directory stops changing, as when coherence still makes them: the child is forked ahead and
    # loads while its leader waits for them (coherence_worker/ahead.py), and the budget holds then
    # too (unchecked, the child would finish its flood and load).
    source = FLOOD.replace("def f(x):", "def flood(x):") + "\nflood(0)\n\ndef f(x):\n    return x\n"
    peak = Peak(temp_dir)
    peak.start()
    prepared = Executor(limits=LIMITS, sandbox=mode).prepare(ModuleContext(), [Program("f", source)])
    try:
        quiet, last, until = 0, -1, time.monotonic() + 30
        while quiet < 4 and time.monotonic() < until:
            time.sleep(0.25)
            quiet, last = (quiet + 1, last) if peak.now == last else (0, peak.now)
        report = prepared.run(["((1,), {})"])
    finally:
        prepared.close()
        peak.done.set()
        peak.join()
    assert peak.most <= sb.TMPFS_MB * MIB + SLACK, "the job's directory held %d MiB" % (peak.most // MIB)
    (error,) = report.load_errors
    found = re.search(r"StoppedAt(\d+)MiB", error or "")
    if found:
        assert int(found.group(1)) <= sb.TMPFS_MB, error
    else:
        assert mode == "guard" and error is not None and protocol.CRASH_DISK in error, error
    print("%s as uid %d: %s" % (mode, os.getuid(), error))
    assert [n for n in os.listdir(temp_dir) if not n.startswith("coherence-worker-")] == []


HIDDEN = """
def f(x):
    import ctypes, os
    try:  # not dumpable: /proc/<pid>/fd, where its leader sees the files it holds, is then closed to it
        undumpable = ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
    except Exception:
        undumpable = False
    block = b"x" * (1 << 20)
    held, n = [], 0
    try:
        for i in range(%d):
            fh = open("hidden-%%d" %% i, "wb")
            held.append(fh)
            os.unlink("hidden-%%d" %% i)  # in no directory any more, and still on the disk
            for _ in range(16):
                fh.write(block)
            fh.flush()
            n += 16
    except OSError as e:
        if e.errno != 28:
            raise
        raise type("StoppedAt%%dMiB" %% n, (Exception,), {})() from None
    return "held %%d MiB unlinked (undumpable: %%s)" %% (n, undumpable)
""" % (FILES - 8)  # under RLIMIT_NOFILE (64 descriptors)


def test_files_unlinked_but_held_open_count_too(mode, temp_dir):
    report = Executor(limits=LIMITS, sandbox=mode).run(ModuleContext(), [Program("f", HIDDEN)], ["((1,), {})"])
    (outcome,) = report.outcomes[0]
    text = outcome.render(400)
    found = re.search(r"StoppedAt(\d+)MiB", text)
    if found:
        assert outcome.kind == "raise" and int(found.group(1)) <= sb.TMPFS_MB, text
    else:
        assert mode == "guard" and outcome == Outcome.raised(protocol.CRASH_DISK), text
    print("%s as uid %d: %s" % (mode, os.getuid(), text))
    assert [n for n in os.listdir(temp_dir) if not n.startswith("coherence-worker-")] == []
