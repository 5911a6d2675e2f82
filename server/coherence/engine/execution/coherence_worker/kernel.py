"""The kernel-level layers of a child's sandbox, and their names.

The leader plans them once per job (``plan``): which the kernel offers, the Landlock rules, the
seccomp program.  Each child applies them right after its privilege drop (``apply``), in the
order that makes each possible: the capability bounding set (root only, before the uid change,
see guard.drop_privileges), ``no_new_privs`` (no exec gains privileges again, and what lets an
unprivileged process install the next two), Landlock (guard mode: file access), seccomp (system
calls).  A child that cannot apply a layer its leader announced refuses to run its program: the
name coherence reports (``names``) is then never more than what held.
"""

import os

from . import landlock, seccomp


class Layers(object):
    __slots__ = ("seccomp", "landlock", "rules")

    def __init__(self):
        self.seccomp = None  # the filter's bytes, when the kernel takes it
        self.landlock = 0  # the Landlock ABI to use (0: none)
        self.rules = []  # see landlock.open_rules

    def names(self):
        """What the children apply, in the sandbox's name: ``["landlock", "seccomp"]``."""
        out = []
        if self.landlock:
            out.append("landlock")
        if self.seccomp is not None:
            out.append("seccomp")
        return out


def plan(job, readable, hidden):
    """The layers of this job's children.  ``readable``: what a child may read (the
    interpreter, its packages, the workspace); ``hidden``: what in there it may not (the
    workspace's dotfiles and VCS directories)."""
    layers = Layers()
    if os.uname().sysname != "Linux" or job.get("kernel_layers") is False:
        return layers
    if seccomp.available():
        layers.seccomp = seccomp.program()
    # Landlock where nothing else confines file access: guard mode (bubblewrap's mounts do it)
    if job.get("sandbox") == "guard":
        version = landlock.abi()
        if version:
            layers.landlock = version
            layers.rules = landlock.open_rules(landlock.plan(readable, hidden))
    return layers


def apply(layers, own_dir):
    """In a child, after its privilege drop: every planned layer, or the reason one failed."""
    if not seccomp.no_new_privs():
        return "no_new_privs could not be set"
    if layers.landlock:
        ok = landlock.restrict(layers.landlock, layers.rules, own_dir)
        for fd, _, _ in layers.rules:
            try:
                os.close(fd)
            except OSError:
                pass
        if not ok:
            return "the Landlock rules could not be applied"
    if layers.seccomp is not None and not seccomp.install(layers.seccomp):
        return "the seccomp filter could not be installed"
    return None
