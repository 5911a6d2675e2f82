"""A leader's children come into being: ``prepare`` readies a child's slot, folder and pipes,
and ``fork_all`` forks a batch of them, one right after the other; in each fork it raises
``Forked`` to leave the leader's stack (see job.become_child).
"""

from __future__ import annotations

import mmap
import os
import struct

from .protocol import LOAD_PENDING, SLOT_SIZE

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from .task import Task

    # what a fork needs: (task, indices, park, slot, cwd, uid, r, w, go_r, go_w)
    Spec = tuple[Task, list[int] | None, bool, mmap.mmap, str, int, int, int, int | None, int | None]


class Forked(BaseException):
    """Raised in a freshly forked child to leave its leader's stack (see job.run_job): what the
    leader's frames held (every program's task, the queue, the batch) is then freed, out of
    reach of the generated code the child runs.  Its args: the child's spec and the descriptors
    of its batch."""


def prepare(task: Task, indices: list[int] | None, park: bool, tmp: str, uid: int) -> Spec:
    """A child's slot, its own folder in the job's ``tmp`` (owned by ``uid``), its record pipe
    and, for a parked child, the pipe that releases it."""
    slot = mmap.mmap(-1, SLOT_SIZE)
    struct.pack_into("qqq", slot, 0, -1, 0, LOAD_PENDING)
    cwd = os.path.join(tmp, "p%d-%d" % (task.t, task.restarts))
    task.restarts += 1
    try:
        os.mkdir(cwd, 0o700)
        if os.geteuid() == 0:
            try:
                os.chown(cwd, uid, uid)
            except OSError:
                os.chmod(cwd, 0o777)
    except OSError:
        cwd = tmp
    r, w = os.pipe()
    go_r, go_w = os.pipe() if park else (None, None)
    return (task, indices, park, slot, cwd, uid, r, w, go_r, go_w)


def fork_all(made: list[Spec | None], batch: list[int]) -> list[int | None]:
    """Fork a child for each spec of ``made`` (None for none); the pids, in its order.

    The forks come one right after the other.  After a fork every page of this process is
    copy-on-write again, so each page it writes until the next fork costs it a page fault
    and a copy: one fork per program, each after the previous program ended, cost a leader
    several times the page faults of forking them together (docs/results.md#worker-start)."""
    pids: list[int | None] = []
    fork = os.fork
    for spec in made:
        if spec is None:
            pids.append(None)
            continue
        pid = fork()
        if pid == 0:
            # none of its siblings' slots stays mapped in it (they would be its to write)
            for other in made:
                if other is not None and other is not spec:
                    other[3].close()
            raise Forked(spec, batch)
        pids.append(pid)
    return pids


def adopt(spec: Spec, pid: int) -> None:
    """In the leader, after the fork: the child's ends of its pipes closed, its own process
    group."""
    w, go_r = spec[7], spec[8]
    os.close(w)
    if go_r is not None:
        os.close(go_r)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
