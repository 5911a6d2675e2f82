"""A job's memory cgroup (cgroup v2), where this process may make one.

RLIMIT_AS bounds a child's address space, not its memory: pages held by a memfd, SysV or POSIX
shared memory, or files in a tmpfs are charged to no rlimit.  The kernel charges all of them to
the writer's memory cgroup, so where a cgroup v2 ``memory.max`` can be set, the job's leader makes
a child cgroup of its own with that limit and enters it before it forks (its children inherit
it), and leaves and removes it when the job is over.

Where: ``/sys/fs/cgroup`` must be cgroup2 (not v1 or hybrid), and above this process's own
cgroup there must be one this user can write whose ``cgroup.subtree_control`` delegates the
memory controller (systemd's ``Delegate=yes`` for user@UID.service gives an ordinary user such a
subtree; root has the whole tree).  Moving a process between two cgroups needs write access to
their common ancestor's ``cgroup.procs``: that ancestor is the one found.  Anything else:
``find`` says why not, and the seccomp filter is what holds (no memfd_create, shmget, mq_open;
see seccomp.py); the sandbox's name says which (``memcg`` is in it only when the cgroup held).

The descriptors the leader keeps (the parent directory, to remove the job's cgroup, and its own
former cgroup's ``cgroup.procs``, to leave) are opened before any namespace of the job's, so they
still work when the leader's mounts are read-only (guard mode as root); every child closes them
before it runs anything (``forget``): cgroup v2 checks a move with the credentials of whoever
opened ``cgroup.procs``.
"""

from __future__ import annotations

import os
import time

ROOT = "/sys/fs/cgroup"
PREFIX = "coherence-job-"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def own_cgroup(self_cgroup: str) -> str | None:
    """This process's cgroup v2 path (``/user.slice/...``) from ``/proc/self/cgroup``'s text."""
    for line in self_cgroup.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def is_cgroup2(mounts: str, root: str = ROOT) -> bool:
    """Whether ``root`` is a cgroup2 mount, from ``/proc/self/mounts``' text (the last mount on a
    path is the one seen)."""
    kind = None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == root:
            kind = parts[2]
    return kind == "cgroup2"


def find(root: str = ROOT, mounts: str | None = None, self_cgroup: str | None = None) -> tuple[str | None, str]:
    """The cgroup directory under which a job's cgroup can go, and a reason when there is none.
    The nearest one at or above this process's own cgroup that delegates ``memory`` to its
    children and whose ``cgroup.procs`` this user may write."""
    if mounts is None:
        mounts = _read("/proc/self/mounts")
    if not is_cgroup2(mounts, root):
        return None, f"{root} is not cgroup v2 (v1 or hybrid)"
    rel = own_cgroup(_read("/proc/self/cgroup") if self_cgroup is None else self_cgroup)
    if rel is None:
        return None, "this process is in no cgroup v2"
    path = os.path.normpath(root + "/" + rel.strip("/")) if rel.strip("/") else root
    while True:
        if (
            "memory" in _read(os.path.join(path, "cgroup.subtree_control")).split()
            and os.access(path, os.W_OK | os.X_OK)
            and os.access(os.path.join(path, "cgroup.procs"), os.W_OK)
        ):
            return path, ""
        if path == root or not path.startswith(root + "/"):
            return None, "no cgroup above this process delegates the memory controller to this user"
        path = os.path.dirname(path)


def sweep(parent: str, dir_fd: int | None = None) -> int:
    """Remove the job cgroups under ``parent`` that are empty (a leader killed before it could
    remove its own).  How many went."""
    gone = 0
    try:
        names = os.listdir(parent if dir_fd is None else dir_fd)
    except OSError:
        return 0
    for name in names:
        if name.startswith(PREFIX):
            try:
                os.rmdir(name if dir_fd is not None else os.path.join(parent, name), dir_fd=dir_fd)
                gone += 1
            except OSError:
                pass  # still populated (its job runs), or not ours
    return gone


class JobCgroup:
    """One job's cgroup: made and entered by ``enter``, left and removed by ``leave``."""

    __slots__ = ("name", "parent_fd", "home_fd")

    def __init__(self, name: str, parent_fd: int, home_fd: int) -> None:
        self.name = name
        self.parent_fd = parent_fd
        self.home_fd = home_fd

    @classmethod
    def enter(cls, parent: str, memory_max: int, root: str = ROOT) -> tuple[JobCgroup | None, str]:
        """Make ``parent``/coherence-job-PID with ``memory.max`` and move this process into it."""
        name = PREFIX + str(os.getpid())
        rel = own_cgroup(_read("/proc/self/cgroup")) or "/"
        home = os.path.normpath(root + "/" + rel.strip("/")) if rel.strip("/") else root
        fds: list[int] = []
        try:
            fds.append(os.open(parent, os.O_RDONLY | os.O_DIRECTORY))
            fds.append(os.open(os.path.join(home, "cgroup.procs"), os.O_WRONLY))
            sweep(parent, fds[0])
            os.mkdir(name, 0o755, dir_fd=fds[0])
        except OSError as e:
            for fd in fds:
                os.close(fd)
            return None, f"cgroup {parent}: {e.strerror}"
        job = cls(name, fds[0], fds[1])
        problem = job._limit(memory_max)
        if problem:
            job.leave()
            return None, problem
        return job, ""

    def _write(self, leaf: str, data: bytes) -> None:
        fd = os.open(self.name + "/" + leaf, os.O_WRONLY, dir_fd=self.parent_fd)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _limit(self, memory_max: int) -> str:
        try:
            self._write("memory.max", b"%d" % memory_max)
        except OSError as e:
            return f"memory.max: {e.strerror}"
        try:
            self._write("memory.swap.max", b"0")  # (swap would let the job hold more than its limit)
        except OSError:
            pass  # no swap accounting here
        try:
            self._write("cgroup.procs", b"0")  # this process; its children inherit the cgroup
        except OSError as e:
            return f"entering the job's cgroup: {e.strerror}"
        return ""

    def forget(self) -> None:
        """In a child: close the leader's descriptors before anything else runs."""
        for fd in (self.parent_fd, self.home_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def leave(self, wait: float = 1.0) -> bool:
        """In the leader, its children reaped: back to its former cgroup, and the job's removed
        (a child that has not quite exited yet is waited for up to ``wait`` seconds; what stays
        is swept by the next job).  True when it is gone."""
        try:
            os.write(self.home_fd, b"0")
        except OSError:
            pass
        gone = False
        deadline = time.monotonic() + wait
        while True:
            try:
                os.rmdir(self.name, dir_fd=self.parent_fd)
                gone = True
            except FileNotFoundError:
                gone = True
            except OSError:
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
            break
        self.forget()
        return gone
