"""The kernel-level layers of a child's sandbox, and their names.

The leader plans them once per job (``plan``): which the kernel offers, the Landlock rules, the
seccomp program.  Each child applies them right after its privilege drop (``apply``), in the
order that makes each possible: the capability bounding set (root only, before the uid change,
see guard.drop_privileges), ``no_new_privs`` (no exec gains privileges again, and what lets an
unprivileged process install the next two), Landlock (guard mode: file access), seccomp (system
calls).  A child that cannot apply a layer its leader announced refuses to run its program: the
name coherence reports (``names``) is then never more than what held.
"""

from __future__ import annotations

import os

from . import landlock, seccomp

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from .protocol import Job


class Layers:
    __slots__ = ("seccomp", "pid_at", "landlock")

    def __init__(self) -> None:
        self.seccomp: bytes | None = None  # the filter, when the kernel takes it (see seccomp.program)
        self.pid_at: list[int] = []  # where the child's pid goes in it
        self.landlock: landlock.Prepared | None = None  # a landlock.Prepared, when the kernel has Landlock

    def names(self) -> list[str]:
        """What the children apply, in the sandbox's name: ``["landlock", "seccomp"]``."""
        out: list[str] = []
        if self.landlock is not None:
            out.append("landlock")
        if self.seccomp is not None:
            out.append("seccomp")
        return out


def plan(job: Job, readable: list[str], hidden: list[str]) -> Layers:
    """The layers of this job's children.  ``readable``: what a child may read (the
    interpreter, its packages, the workspace); ``hidden``: what in there it may not (the
    workspace's dotfiles and VCS directories)."""
    layers = Layers()
    if os.uname().sysname != "Linux" or job.get("kernel_layers") is False:
        return layers
    if seccomp.available():
        layers.seccomp = seccomp.program()
        layers.pid_at = seccomp.pid_offsets(layers.seccomp)
    # Landlock: in guard mode for every file access; under bubblewrap, whose mounts decide what
    # is seen, for writes outside the child's directory (its /tmp and /dev/shm are memory) and,
    # from ABI 6, signals to processes outside the child (an ordinary user's children share a uid:
    # kill(-1) would reach them all)
    version = landlock.abi()
    if version:
        reads = job.get("sandbox") != "bwrap"
        rules = landlock.open_rules(landlock.plan(readable, hidden)) if reads else []
        layers.landlock = landlock.Prepared(version, rules, reads)
    return layers


def warm() -> None:
    """Ask the kernel once (a warm worker does, before it forks its job leaders)."""
    try:
        if os.uname().sysname == "Linux":
            landlock.abi()
            if seccomp.available():
                seccomp.program()
    except BaseException:
        pass


def apply(layers: Layers, own_dir: str) -> str | None:
    """In a child, after its privilege drop: every planned layer, or the reason one failed."""
    if not seccomp.no_new_privs():
        return "no_new_privs could not be set"
    if layers.landlock is not None:
        ok = landlock.restrict(layers.landlock, own_dir)
        layers.landlock.close()  # the child's copies of the leader's descriptors
        if not ok:
            return "the Landlock rules could not be applied"
    if layers.seccomp is not None and not seccomp.install(
        seccomp.for_process(layers.seccomp, os.getpid(), layers.pid_at)
    ):
        return "the seccomp filter could not be installed"
    return None
