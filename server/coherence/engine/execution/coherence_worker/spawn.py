"""A leader's children come into being: ``spawn_all`` forks a batch of them (each with its slot,
its folder, its uid and its pipes), and in each fork ``become_child`` drops what the leader held
of the other programs (``forget_others``) before ``child.child_main`` runs the program.
"""

from __future__ import annotations

import mmap
import os
import struct
import time

from . import child, protocol, watch
from .protocol import LOAD_PENDING, META, SLOT_SIZE

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .leader import Leader, Task

    # what a fork needs: (task, indices, park, slot, cwd, uid, r, w, go_r, go_w)
    Spec = tuple[Task, list[int] | None, bool, mmap.mmap, str, int, int, int, int | None, int | None]


class Forked(BaseException):
    """Raised in a freshly forked child to leave its leader's stack (see run_job): what the
    leader's frames held (every program's task, the queue, the batch) is then freed, out of
    reach of the generated code the child runs.  Its args: the child's spec and the descriptors
    of its batch."""


def spawn_all(leader: Leader, wanted: Sequence[tuple[Task, list[int] | None, bool]]) -> list[watch.Child | None]:
    """Fork a child for each ``(task, indices, park)`` of ``wanted`` (None for a task whose
    budget is gone).  A parked child loads its program, then waits for ``release`` to send
    its deadline; its time budget starts then.  ``indices`` None: forked before the inputs
    exist (see ahead.prefork).

    The forks come one right after the other.  After a fork every page of this process is
    copy-on-write again, so each page it writes until the next fork costs it a page fault
    and a copy: one fork per program, each after the previous program ended, cost a leader
    several times the page faults of forking them together (docs/results.md#worker-start)."""
    now = time.monotonic()
    made: list[Spec | None] = []  # None for a task whose budget is gone
    batch: list[int] = []
    for task, indices, park in wanted:
        # a parked child's clock starts at its release; the others' now
        if not park and now >= leader.start_clock(task, now):
            leader.timeout_rest(task, indices or [])  # (one not parked has its inputs)
            made.append(None)
            continue
        slot = mmap.mmap(-1, SLOT_SIZE)
        struct.pack_into("qqq", slot, 0, -1, 0, LOAD_PENDING)
        cwd = os.path.join(leader.tmp, "p%d-%d" % (task.t, task.restarts))
        task.restarts += 1
        uid = leader.next_uid
        assert uid is not None  # (before_forks set it)
        leader.next_uid = uid + 1
        try:
            os.mkdir(cwd, 0o700)
            if os.geteuid() == 0:
                try:
                    os.chown(cwd, uid, uid)
                except OSError:
                    os.chmod(cwd, 0o777)
        except OSError:
            cwd = leader.tmp
        r, w = os.pipe()
        go_r, go_w = os.pipe() if park else (None, None)
        made.append((task, indices, park, slot, cwd, uid, r, w, go_r, go_w))
        batch += [fd for fd in (r, w, go_r, go_w) if fd is not None]
    leader.flush()
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
    out: list[watch.Child | None] = []
    for spec, child_pid in zip(made, pids):
        if spec is None or child_pid is None:  # (both or neither)
            out.append(None)
            continue
        task, indices, park, slot, cwd, uid, r, w, go_r, go_w = spec
        os.close(w)
        if go_r is not None:
            os.close(go_r)
        try:
            os.setpgid(child_pid, child_pid)
        except OSError:
            pass
        # what every child forked later closes (see child.enter)
        leader.child_fds.add(r)
        if go_w is not None:
            leader.child_fds.add(go_w)
        allowed = None if indices is None else watch.allowed_for(leader, indices)
        out.append(watch.Child(child_pid, r, slot, task, indices, cwd, allowed, park, go_w, now))
    return out


def become_child(leader: Leader, spec: Spec, batch: list[int]) -> None:
    """A forked child, out of its leader's stack (see Forked): never returns."""
    task, indices, _park, slot, cwd, uid, _r, w, go_r, _go_w = spec
    code = 1
    try:
        for fd in batch:  # its siblings' pipes: held here, they would never see EOF
            if fd != w and fd != go_r:
                os.close(fd)
        # forked before the inputs came (ahead.prefork): the stdin its leader reads them
        # from (the stack it left took it out of child_fds on the way)
        stdin = leader.job.pop("inputs_fd", None)
        if stdin is not None:
            os.close(stdin)
        forget_others(leader, task)
        child.child_main(leader, task, indices, w, slot, cwd, uid, go_r)
        code = 0
    except BaseException:
        try:
            import traceback

            os.write(w, protocol.record(META, protocol.DIAGNOSTIC, traceback.format_exc()[-2000:]))
        except BaseException:
            pass
    finally:
        os._exit(code)


def forget_others(leader: Leader, task: Task) -> None:
    """In a child: nothing of the other programs, and nothing another program reads, left
    where Python code reaches it.  The other children's slots are unmapped, the told map's
    writable mapping too (the read-only one stays: see sealed.py), and the other programs'
    tasks, sources and code are dropped, and so freed."""
    for c in list(leader.running.values()) + list(leader.preforked.values()):
        try:
            c.slot.close()
        except BaseException:
            pass
    leader.running = {}
    leader.preforked = {}
    leader.tasks = None
    leader.programs = []
    leader.job["programs"] = None
    leader.job.pop("tasks", None)
    leader.loader.tried = set()
    if leader.told_ro is not None and leader.told is not None:
        leader.told.close()
        leader.told = leader.told_ro
