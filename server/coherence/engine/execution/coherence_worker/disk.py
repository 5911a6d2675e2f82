"""A job's disk budget where the children's directories are on the host's disk.

RLIMIT_FSIZE bounds each file a child writes (16 MiB), not how many.  Under bubblewrap the job's
directory is in a tmpfs of ``disk_mb``, and in guard mode as root the leader mounts one of the
same size over it (guard.isolate_as_root): the kernel then counts everything, unlinked files
still open included, and a write past it fails with ENOSPC.  That is the bound to prefer.

An ordinary user in guard mode can mount nothing (no user namespaces is why guard mode runs),
so the leader measures instead (``Budget``): every ``SCAN_EVERY`` seconds it adds up what is
under the job's directory (blocks of every entry, each inode once) and the files each live
child holds open that no directory names any more (unlinked or O_TMPFILE: each of its
descriptors, taken through a pidfd: the leader does not read its children's /proc entries),
and when the total passes the budget it kills the children holding the most, biggest first,
until what is left is within it.  The input in progress gets the reserved outcome
``Crash(disk)`` (written by the leader, see watch.finish_child), and the child's directory is
removed with it.  What this leaves:

- slack: a child writes for up to ``SCAN_EVERY`` seconds (plus a tick of the leader's loop)
  past the budget before it is killed (tests/hostile/test_disk_flood.py;
  docs/results.md#disk-budget);
- the walk stops after ``max_files`` entries and counts that as over the budget (a flood of
  empty files costs inodes, and an unbounded walk would stall the leader's watchdog);
- a file mapped and then closed and unlinked is not seen (it counts against RLIMIT_AS, the
  child's memory limit), nor the open files of a child that made itself non-dumpable, which
  its seccomp filter forbids (seccomp.PR_SET_DUMPABLE), or where Yama's ``ptrace_scope`` is 2
  or more (pidfd_getfd needs ptrace's attach right): at most RLIMIT_NOFILE x RLIMIT_FSIZE
  (1 GiB).
"""

from __future__ import annotations

import ctypes
import errno
import os
from stat import S_ISREG

try:
    import resource
except ImportError:  # (not on Windows, where no worker runs this)
    resource = None  # type: ignore[assignment]

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Sequence

# Seconds between two measures: often enough to keep the slack small, rarely enough that the
# leader's measures cost little of a core (docs/results.md#disk-budget).  The bound's slack is
# what a child writes in this time.
SCAN_EVERY = 0.1
# Entries the job's directory may hold (the tmpfs's nr_inodes as root): no program run on a few
# inputs needs more, and the walk that finds a flood of empty files stops here, so that it stays
# short on the leader's watchdog (docs/results.md#disk-budget).
MAX_FILES = 2048
PIDFD_OPEN, PIDFD_GETFD = 434, 438  # (the same numbers on every architecture)
_libc: list[ctypes.CDLL] = []


def _syscall(*args: int) -> int:
    """The raw call, or -errno."""
    if not _libc:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        _libc.append(lib)
    result: int = _libc[0].syscall(*args)
    return result if result >= 0 else -ctypes.get_errno()


def _size(st: os.stat_result) -> int:
    # The larger of the blocks held and the length: blocks alone miss data a file system has
    # not allocated yet on some file systems (FUSE), and a sparse file counts as what it may
    # hold (RLIMIT_FSIZE caps that at 16 MiB a file).
    return max(st.st_blocks * 512, st.st_size)


class Budget:
    """The bytes and entries the job's directory ``root`` may hold, and when to measure next."""

    __slots__ = ("root", "dev", "max_bytes", "max_files", "next_at")

    def __init__(self, root: str, max_bytes: int, max_files: int) -> None:
        self.root = root
        self.dev = os.stat(root).st_dev  # the file system the budget is about
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.next_at = 0.0

    def due(self, now: float) -> bool:
        if now < self.next_at:
            return False
        self.next_at = now + SCAN_EVERY
        return True

    def over(self, holders: Sequence[tuple[str, int]]) -> list[int]:
        """Which ``holders`` (a live child's directory and pid) to kill, biggest first, so that
        what is left is within the budget; none while it holds."""
        seen: set[int] = set()  # inodes counted (hard links, a file open and also in a directory)
        count = [0]  # entries walked, across the walks: the walk stops past max_files
        shares = []
        for cwd, pid in holders:
            before = count[0]
            size = (self._walk(cwd, seen, count) if cwd != self.root else 0) + self._held(pid, seen)
            shares.append((size, count[0] - before))
        # what is in the job's directory outside the children's own (only a child without
        # Landlock can write there): nobody's in particular, counted in the total
        size = self._walk(self.root, seen, count, skip={cwd for cwd, _ in holders})
        used, files = size + sum(s for s, _ in shares), count[0]
        victims: list[int] = []
        # the biggest share of either budget first
        order = sorted(
            range(len(shares)), key=lambda k: -max(shares[k][0] / self.max_bytes, shares[k][1] / self.max_files)
        )
        for k in order:
            if used <= self.max_bytes and files <= self.max_files:
                break
            victims.append(k)
            used -= shares[k][0]
            files -= shares[k][1]
        return victims

    def _walk(self, top: str, seen: set[int], count: list[int], skip: set[str] | None = None) -> int:
        """Bytes under ``top``, each inode once; ``count[0]`` counts the entries, and the walk
        stops once it passes max_files (its cost stays bounded whatever a child made)."""
        total = 0
        stack = [top]
        limit = self.max_files
        while stack and count[0] <= limit:
            try:
                it = os.scandir(stack.pop())
            except OSError:
                continue
            with it:
                for entry in it:
                    count[0] += 1
                    if count[0] > limit:
                        break
                    try:
                        if entry.is_dir(follow_symlinks=False):  # (no system call: the entry's type)
                            if skip is None or entry.path not in skip:
                                stack.append(entry.path)
                                total += _size(entry.stat(follow_symlinks=False))
                            continue
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if st.st_dev != self.dev or st.st_ino in seen:
                        continue
                    seen.add(st.st_ino)
                    total += _size(st)
        return total

    def _held(self, pid: int, seen: set[int]) -> int:
        """Bytes of the files on this file system that ``pid`` holds open and no directory names
        (a program that unlinks what it wrote and keeps it open hides it from ``_walk``): each
        descriptor under its RLIMIT_NOFILE, taken through a pidfd (the child is this process's,
        not yet reaped: its pid is its own)."""
        pidfd = _syscall(PIDFD_OPEN, pid, 0)
        if pidfd < 0:
            return 0  # gone
        total = 0
        try:
            try:
                nofile = min(resource.prlimit(pid, resource.RLIMIT_NOFILE)[0], 4096)
            except (AttributeError, OSError, ValueError):
                nofile = 1024
            for n in range(nofile):
                fd = _syscall(PIDFD_GETFD, pidfd, n, 0)
                if fd < 0:
                    if fd == -errno.EBADF:
                        continue  # not open
                    break  # not dumpable, or no such call: see the module's docstring
                try:
                    st = os.fstat(fd)
                finally:
                    os.close(fd)
                if st.st_nlink == 0 and st.st_dev == self.dev and st.st_ino not in seen and S_ISREG(st.st_mode):
                    seen.add(st.st_ino)
                    total += _size(st)
        finally:
            os.close(pidfd)
        return total
