"""A job's leader: it keeps the job's children and the schedule loop.  It forks a child per
program (``spawn.py``, ``child.py``) into a few slots, parks spare ones, forwards their records
to coherence, and replaces a child that died in a call (``watch.py``).  What it set up and loaded
before the first fork is the job's context (``context.py``), built by the job's phases
(``job.py``).  One leader per job: the one-shot worker itself, or a fork of the warm worker
(``serve.py``).
"""

from __future__ import annotations

import gc
import os
import select
import struct
import time

from . import guard, protocol, spawn, watch
from .anchor import Anchor
from .context import JobContext
from .output import Output
from .protocol import CRASH_DISK
from .task import Task

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .disk import Budget
    from .protocol import Job


class Leader:
    """One job's children and its schedule, over the job's context (``ctx``), its output
    (``out``) and the anchor task's shared state (``anchor``)."""

    def __init__(self, job: Job) -> None:
        self.ctx = JobContext(job)  # first: it takes the worker's environment before the job runs
        self.out = Output(job["fd"])
        self.anchor = Anchor(job)
        self.order: list[int] | None = None  # see input_order
        self.tasks: list[Task] | None = None  # see make_tasks
        self.allowed_all: watch.Allowed | None = None  # see allowed_for
        self.child_fds: set[int] = set()  # descriptors a new child closes (its siblings' pipes)
        # task number -> child forked before the inputs came (see ahead.prefork)
        self.preforked: dict[int, watch.Child] = {}
        self.running: dict[int, watch.Child] = {}  # fd -> child
        self.next_uid: int | None = None  # see before_forks
        self.memfd: int | None = None  # see ahead.prefork
        self.disk: Budget | None = None  # measured where no tmpfs bounds the directory (job.setup)

    def on_term(self, signum: int, frame: object) -> None:
        self.ctx.guard["mode"] = guard.LEADER
        watch.kill_all(list(self.running.values()) + list(self.preforked.values()))
        os._exit(1)

    def make_tasks(self) -> list[Task]:
        """One task per program to run (the job's "tasks", or one per program), made once."""
        if self.tasks is None:
            ctx = self.ctx
            specs = ctx.job.get("tasks")
            if specs is None:
                specs = [{"program": p} for p in range(len(ctx.programs))]
            self.tasks = [
                Task(t, ctx.programs[int(spec.get("program", t))], int(spec.get("seed", ctx.seed)))
                for t, spec in enumerate(specs)
            ]
        return self.tasks

    def input_order(self) -> list[int]:
        """The order every program runs the inputs in (the job's, when it is one); checked once
        (ahead.publish_inputs and schedule both ask)."""
        n = len(self.ctx.input_codes)
        if self.order is None or len(self.order) != n:
            order = self.ctx.job.get("order")
            if not (isinstance(order, list) and len(order) == n and sorted(order) == list(range(n))):
                order = list(range(n))
            self.order = order
        return self.order

    def allowed_for(self, indices: list[int]) -> watch.Allowed:
        """The input indices a child may write records for (and -1, its load line), as ints and
        as the bytes its records spell them in.  A child that runs every input (all but
        restarts) shares one pair per job, because the sets cost more to build than to test, and
        indices are tested as bytes, faster than as ints (docs/results.md#call-costs)."""
        full = len(indices) == len(self.ctx.input_codes)
        if full and self.allowed_all is not None:
            return self.allowed_all
        pair = (set(indices) | {protocol.LOADED}, {b"%d" % i for i in indices} | {b"%d" % protocol.LOADED})
        if full:
            self.allowed_all = pair
        return pair

    def before_forks(self) -> None:
        """What every child is forked with: the shared objects out of the collector's sight, the
        address-space limit, the first child uid."""
        # Everything built so far is shared with every child.  Out of the collector's sight, it is
        # not traversed (and so not copied page by page) each time a child's allocations trigger
        # a collection, which delayed a child's first call (docs/results.md#worker-start).
        gc.freeze()
        vm = guard.vm_bytes()
        memory = self.ctx.limits.memory_mb * 1024 * 1024
        self.ctx.as_limit = vm + memory if vm else memory
        if self.next_uid is None:
            try:
                self.next_uid = guard.CHILD_UID_BASE + int.from_bytes(os.urandom(4), "big") % (
                    guard.CHILD_UID_SPAN - 1000000
                )
            except BaseException:
                self.next_uid = guard.CHILD_UID_BASE + os.getpid() * 1000 % guard.CHILD_UID_SPAN

    def spawn_all(self, wanted: Sequence[tuple[Task, list[int] | None, bool]]) -> list[watch.Child | None]:
        """Fork a child for each ``(task, indices, park)`` of ``wanted`` (None for a task whose
        budget is gone), in one batch (see spawn.fork_all).  A parked child loads its program,
        then waits for ``release`` to send its deadline; its time budget starts then.
        ``indices`` None: forked before the inputs exist (see ahead.prefork)."""
        now = time.monotonic()
        made: list[spawn.Spec | None] = []  # None for a task whose budget is gone
        batch: list[int] = []
        for task, indices, park in wanted:
            # a parked child's clock starts at its release; the others' now
            if not park and now >= self.start_clock(task, now):
                self.anchor.timeout_rest(self.out, task, indices or [])  # (one not parked has its inputs)
                made.append(None)
                continue
            uid = self.next_uid
            assert uid is not None  # (before_forks set it)
            self.next_uid = uid + 1
            spec = spawn.prepare(task, indices, park, self.ctx.tmp, uid)
            made.append(spec)
            batch += [fd for fd in spec[6:] if fd is not None]
        self.out.flush()
        pids = spawn.fork_all(made, batch)
        out: list[watch.Child | None] = []
        for made_spec, child_pid in zip(made, pids):
            if made_spec is None or child_pid is None:  # (both or neither)
                out.append(None)
                continue
            spawn.adopt(made_spec, child_pid)
            task, indices, park, slot, cwd, _uid, r, _w, _go_r, go_w = made_spec
            # what every child forked later closes (see child.enter)
            self.child_fds.add(r)
            if go_w is not None:
                self.child_fds.add(go_w)
            allowed = None if indices is None else self.allowed_for(indices)
            out.append(watch.Child(child_pid, r, slot, task, indices, cwd, allowed, park, go_w, now))
        return out

    def forget_others(self) -> None:
        """In a child: nothing of the other programs, and nothing another program reads, left
        where Python code reaches it.  The other children's slots are unmapped, the told map's
        writable mapping too (the read-only one stays: see sealed.py), and the other programs'
        tasks, sources and code are dropped, and so freed."""
        for c in list(self.running.values()) + list(self.preforked.values()):
            try:
                c.slot.close()
            except BaseException:
                pass
        self.running = {}
        self.preforked = {}
        self.tasks = None
        ctx = self.ctx
        ctx.programs = []
        ctx.job["programs"] = None
        ctx.job.pop("tasks", None)
        ctx.loader.tried = set()
        self.anchor.drop_writable()

    # -- scheduling --------------------------------------------------------------------------
    def schedule(self) -> None:
        ctx, out, anchor, limits = self.ctx, self.out, self.anchor, self.ctx.limits
        n = len(ctx.input_codes)
        queue = []
        order = self.input_order()
        anchor.rank_by(order)
        anchor.share(n, ctx.tmp)
        running = self.running
        for task in self.make_tasks():
            t = task.t
            info = task.program
            if info.error is not None:
                out.emit_json(t, protocol.LOADED, info.error)
                continue
            child = self.preforked.get(t)
            if child is not None:  # parked with its program loaded: released in this order
                child.indices = list(order)
                child.allowed = self.allowed_for(child.indices)
                running[child.fd] = child
                continue
            queue.append((task, list(order)))
        out.flush()
        self.before_forks()
        while queue or running:
            now = time.monotonic()
            waiting = [c for c in running.values() if c.parked]  # in the queue's order
            active = len(running) - len(waiting)
            # A restarted task (its child died in a call) goes before the parked ones: its budget
            # is running, and theirs has not started.
            restart_first = bool(queue) and queue[0][0].deadline is not None
            while waiting and active < limits.jobs and not restart_first:
                self.release(waiting.pop(0), now)
                active += 1
            parked = len(waiting)
            wanted = []
            while queue and active < limits.jobs:
                task, indices = queue.pop(0)
                wanted.append((task, indices, False))
                active += 1
            # Spare children, forked while the others run and parked with their programs loaded,
            # take the next free slots at once, so that a fork, the program's load and the child's
            # setup are not paid in a slot (docs/results.md#worker-start).  They are forked
            # several at a time: see spawn_all.  A restart waits in the queue for the next
            # slot instead, ahead of them.
            if queue and parked < limits.jobs:
                while queue and parked < limits.max_parked and queue[0][0].deadline is None:
                    task, indices = queue.pop(0)
                    wanted.append((task, indices, True))
                    parked += 1
            for child in self.spawn_all(wanted):
                if child is not None:
                    running[child.fd] = child
            if not running:
                continue
            fds = [fd for fd, c in running.items() if not c.eof]
            # short ticks while a child is gone from its pipe but not yet reaped
            tick = 0.02 if len(fds) == len(running) else 0.002
            try:
                ready = select.select(fds, [], [], tick)[0] if fds else []
            except InterruptedError:
                ready = []
            if not fds:
                time.sleep(tick)
            for fd in ready:
                watch.read_child(running[fd], out, anchor, limits)
            now = time.monotonic()
            for fd in list(running):
                c = running[fd]
                if watch.check_child(c, now, out, anchor, limits):
                    del running[fd]
                    self.child_fds.discard(fd)
                    follow = watch.finish_child(c, out, anchor, self.child_fds, ctx.tmp)
                    if follow is not None:
                        queue.insert(0, follow)
            if self.disk is not None and self.disk.due(now):
                self.check_disk(running.values())
            out.flush()

    def check_disk(self, children: Iterable[watch.Child]) -> None:
        """Kill the children that hold the most of the job's directory while it holds more than
        its budget (disk.py); each one's input in progress gets ``Crash(disk)``."""
        assert self.disk is not None
        live = [c for c in children if c.status is None and c.kill_reason is None]
        for k in self.disk.over([(c.cwd, c.pid) for c in live]):
            live[k].kill_reason = CRASH_DISK
            watch.kill(live[k])

    def start_clock(self, task: Task, now: float) -> float:
        """A task's budget runs while one of its children holds a slot: it starts with the first
        child, and a restart (its child died in a call) is not charged for the time it waited for
        a slot, parked or queued.  Returns its deadline."""
        if task.deadline is None:
            deadline = now + self.ctx.limits.program_budget
        elif task.queued_at is not None:
            deadline = task.deadline + (now - task.queued_at)
        else:
            deadline = task.deadline
        task.deadline = deadline
        task.queued_at = None
        return deadline

    def release(self, c: watch.Child, now: float) -> None:
        """Let a parked child start its calls: its time budget starts now (or went on from an
        earlier child of the same task)."""
        deadline = self.start_clock(c.task, now)
        c.parked = False
        c.seen_time = c.began = now
        go, c.go = c.go, None
        if go is None:  # (a parked child always has its pipe)
            return
        self.child_fds.discard(go)
        try:
            os.write(go, struct.pack("d", deadline))
        except OSError:
            pass  # it died while parked: it is reaped like any other
        try:
            os.close(go)
        except OSError:
            pass
