"""The kernel-level layers of a child's sandbox, and their names.

The leader plans them once per job (``plan``): which the kernel offers, the Landlock rules, the
seccomp program.  Each child applies them right after its privilege drop (``apply``), in the
order that makes each possible: the capability bounding set (root only, before the uid change,
see guard.drop_privileges), ``no_new_privs`` (no exec gains privileges again, and what lets an
unprivileged process install the next two), Landlock (guard mode: file access), seccomp (system
calls).  Before all of that, the leader may enter a memory cgroup of the job's own
(``enter_memcg``, cgroup.py), which the children inherit.  The leader itself applies the
same Landlock reads and a seccomp filter of its own (``confine_leader``) before it imports
anything of the job: what the module context and the packages the programs name do at import
runs confined too, and hands no secret down to the children.  A child that cannot apply a layer its leader announced refuses to run its program: the
name coherence reports (``names``) is then never more than what held.
"""

from __future__ import annotations

import os

from . import cgroup, landlock, seccomp

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .protocol import Job


class Layers:
    __slots__ = ("seccomp", "landlock", "memcg", "left_out", "leader_seccomp")

    def __init__(self) -> None:
        self.seccomp: seccomp.Prepared | None = None  # the filter, when the kernel takes it (see seccomp.program)
        self.landlock: landlock.Prepared | None = None  # a landlock.Prepared, when the kernel has Landlock
        self.memcg: cgroup.JobCgroup | None = None  # the job's cgroup, when one could be made (enter_memcg)
        self.left_out: list[str] = []  # paths Landlock leaves unreadable: the plan ran out of rules
        self.leader_seccomp: seccomp.Prepared | None = None  # the leader's own filter (confine_leader)

    def names(self) -> list[str]:
        """What the children apply, in the sandbox's name: ``["landlock", "seccomp"]``."""
        out: list[str] = []
        if self.memcg is not None:
            out.append("memcg")
        if self.landlock is not None:
            out.append("landlock")
        if self.seccomp is not None:
            out.append("seccomp")
        return out


def plan(job: Job, readable: list[str], hidden: Iterable[str]) -> Layers:
    """The layers of this job's children.  ``readable``: what a child may read (the
    interpreter, its packages, the workspace); ``hidden``: what in there it may not (the
    workspace's dotfiles and VCS directories)."""
    layers = Layers()
    if os.uname().sysname != "Linux" or job.get("kernel_layers") is False:
        return layers
    if seccomp.available():
        layers.seccomp = seccomp.Prepared(seccomp.program())
        layers.leader_seccomp = seccomp.Prepared(seccomp.leader_program())
    # Landlock: every file access, in both modes.  Under bubblewrap the mounts decide what is
    # seen, and Landlock what of it is read: an ordinary user's bubblewrap binds the whole file
    # system, the user's own private files outside the home included.  Writes stay in the
    # child's directory (its /tmp and /dev/shm are memory) and, from ABI 6, signals inside the
    # child (an ordinary user's children share a uid: kill(-1) would reach them all).
    version = landlock.abi()
    if version:
        reads = job.get("landlock_reads", True) is not False
        planned = landlock.plan(readable, hidden) if reads else landlock.Plan()
        layers.left_out = planned.left_out
        rules = landlock.open_rules(planned)
        layers.landlock = landlock.Prepared(version, rules, reads)
    return layers


_parent: list[str | None] = []  # where job cgroups go (cgroup.find), looked up once per worker: leaders are its forks


def _memcg_parent() -> str | None:
    if not _parent:
        _parent.append(cgroup.find()[0])
    return _parent[0]


def enter_memcg(job: Job, memory_mb: int, running: int) -> cgroup.JobCgroup | None:
    """In the leader, before any namespace of its own (guard mode as root makes its mounts
    read-only): a cgroup v2 of the job's own with ``memory.max`` for the leader and ``running``
    children at ``memory_mb`` each, entered.  None where none can be made (then the seccomp
    filter's denials of memfd and shared memory hold; see cgroup.py).  Not under bubblewrap,
    whose view of /sys/fs/cgroup is read-only."""
    if os.uname().sysname != "Linux" or job.get("kernel_layers") is False or job.get("sandbox") == "bwrap":
        return None
    parent = _memcg_parent()
    if parent is None:
        return None
    made, _why = cgroup.JobCgroup.enter(parent, (running + 1) * memory_mb * 1024 * 1024)
    return made


def leave(layers: Layers | None) -> None:
    """In the leader, at the end of the job: out of the job's cgroup, and the cgroup removed."""
    if layers is not None and layers.memcg is not None:
        try:
            layers.memcg.leave()
        except BaseException:
            pass
        layers.memcg = None


def warm() -> None:
    """Ask the kernel once (a warm worker does, before it forks its job leaders)."""
    try:
        if os.uname().sysname == "Linux":
            landlock.abi()
            _memcg_parent()
            if seccomp.available():
                seccomp.program()
    except BaseException:
        pass


def confine_leader(layers: Layers, job_dir: str, private_proc: bool) -> str | None:
    """In the job leader, after its setup and before it imports anything of the job: the
    children's Landlock reads (plus the job's directory and the leader's own /proc entry) and its
    own seccomp filter (seccomp.leader_program).  What it imports then (the module context, what
    it imports, a package a program names) reads no hidden file, private folder or other
    process's /proc entry and starts no process, and so hands no secret down to the children.
    ``private_proc``: /proc shows only the sandbox's own processes (bubblewrap's pid namespace),
    so it stays readable whole and the children (which inherit this domain) keep their own
    entries.  Otherwise no process of the job reads another's: a child's own entry is not
    granted here either (a Landlock rule names a process that exists), and the leader watches
    its children through pidfds (disk.Budget).  None, or why a layer could not be applied."""
    if layers.landlock is None and layers.leader_seccomp is None:
        return None
    if not seccomp.no_new_privs():
        return "no_new_privs could not be set"
    reads = layers.landlock is not None and layers.landlock.reads
    proc = "/proc" if private_proc else "/proc/%d" % os.getpid()
    if reads and not landlock.restrict_reads(layers.landlock, (job_dir, proc)):  # type: ignore[arg-type]
        return "the Landlock rules could not be applied to the job's leader"
    if layers.leader_seccomp is not None and not layers.leader_seccomp.install(os.getpid()):
        return "the seccomp filter could not be installed in the job's leader"
    return None


def apply(layers: Layers, own_dir: str) -> str | None:
    """In a child, after its privilege drop: every planned layer, or the reason one failed."""
    if layers.memcg is not None:
        layers.memcg.forget()  # the leader's way out of the job's cgroup is not the child's
    if not seccomp.no_new_privs():
        return "no_new_privs could not be set"
    if layers.landlock is not None:
        ok = landlock.restrict(layers.landlock, own_dir)
        layers.landlock.close()  # the child's copies of the leader's descriptors
        if not ok:
            return "the Landlock rules could not be applied"
    if layers.seccomp is not None and not layers.seccomp.install(os.getpid()):
        return "the seccomp filter could not be installed"
    return None
