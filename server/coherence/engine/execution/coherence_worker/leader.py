"""A job's leader: it loads the module context and the programs once, then forks a child per
program (``child.py``) into a few slots, parks spare ones, forwards their records to coherence,
and replaces a child that died in a call (``watch.py``).  One leader per job: the one-shot
worker itself, or a fork of the warm worker (``serve.py``).
"""

from __future__ import annotations

import gc
import os
import select
import signal
import struct
import sys
import time

from . import ahead, disk, guard, kernel, landlock, loading, protocol, sealed, spawn, watch
from .canon import make_canonicalizer
from .protocol import BUDGET_EXCEEDED, CRASH_DISK, DONE_RECORD, META, MODULE, SANDBOX, TOLD_HANGS
from .timer import Timer, handle_quietly

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    import mmap
    from collections.abc import Iterable
    from typing import Any

    from .protocol import Job


class Refused(Exception):
    """The job asked for a sandbox layer this kernel does not give."""


class Task:
    """One program to run over the inputs, by one child after another (a child that dies in a
    call is replaced by one for the inputs left)."""

    __slots__ = ("t", "program", "deadline", "seed", "restarts", "stalls", "queued_at", "careful")

    def __init__(self, t: int, program: loading.Program, seed: int) -> None:
        self.t = t  # the task's number in the records
        self.program = program  # a loading.Program
        self.deadline: float | None = None  # when its budget runs out (set when its first child gets a slot)
        self.seed = seed
        self.restarts = 0  # children forked for it so far
        self.stalls = 0  # children that died between calls in a row (see watch.finish_child)
        self.queued_at: float | None = None  # when its restart was queued: that wait is not charged
        self.careful = False  # a child of it was killed in a call: the next writes every record


class Leader:
    """One job: its limits, what it loaded, its tasks and its children."""

    def __init__(self, job: Job) -> None:
        # the worker's scrubbed environment, before anything of the job runs: each child starts
        # from it again, whatever the module context (a load_dotenv()) put in os.environ
        self.base_env = dict(os.environ)
        self.job = job
        self.out_fd = job["fd"]
        lim = job.get("limits") or {}
        self.call_timeout = float(lim.get("call_timeout", 1.0))
        self.program_budget = float(lim.get("program_budget", 20.0))
        self.load_timeout = float(lim.get("load_timeout", 30.0))
        self.prog_load_timeout = min(self.load_timeout, max(5.0, 2 * self.call_timeout))
        self.memory_mb = int(lim.get("memory_mb", 1024))
        self.file_size_mb = int(lim.get("file_size_mb", 16))
        self.disk_mb = int(lim.get("disk_mb", 256))  # what the job's directory may hold (disk.py)
        jobs = int(lim.get("jobs", 0) or 0)
        if jobs <= 0:
            try:
                jobs = len(os.sched_getaffinity(0))
            except BaseException:
                jobs = os.cpu_count() or 1
        self.jobs = max(1, jobs)
        # children forked ahead and parked until a slot frees up (see schedule)
        self.max_parked = min(16, 4 * self.jobs)
        self.seed = int(job.get("seed", 0))
        self.read_order(job)
        self.cuts = [1 << 60, 1 << 60]
        self.rank: list[int] = []  # input index -> position in the order (set by schedule)
        self.order: list[int] | None = None  # see input_order
        self.allowed_all: watch.Allowed | None = None  # see watch.allowed_for
        self.child_fds: set[int] = set()  # descriptors a new child closes (its siblings' pipes)
        self.told: mmap.mmap | None = None  # see share_told
        self.told_ro: mmap.mmap | None = None  # the told map, read-only: the children's (see forget_others)
        self.preforked: dict[
            int, watch.Child
        ] = {}  # task number -> child forked before the inputs came (see ahead.prefork)
        self.tasks: list[Task] | None = None  # see make_tasks
        self.next_uid: int | None = None  # see before_forks
        self.memfd: int | None = None  # see ahead.prefork
        self.input_codes: list[tuple[str, Any] | None] = []  # see loading.prepare_inputs (none yet)
        self.tmp = job["tmp"]
        self.out_buf: list[bytes] = []
        self.running: dict[int, watch.Child] = {}  # fd -> child
        self.disk: disk.Budget | None = None  # measured where no tmpfs bounds the directory (setup)
        self.guard: guard.Guard = {"mode": guard.LOAD, "root": os.path.realpath(self.tmp)}
        self.timer = Timer()
        workspace = (job.get("module") or {}).get("sys_path") or ()
        self.loader = loading.Loader(
            self.timer, self.load_timeout, self.prog_load_timeout, workspace, job.get("site_dirs") or ()
        )
        self.streams = guard.plain_streams()

    def read_order(self, job: Job) -> None:
        # inputs run after all others (the executor ordered them last): see child.call_loop
        self.late = frozenset(i for i in job.get("late") or () if isinstance(i, int))
        # The task whose left-out inputs are left out for every program (the caller drops an
        # input any program did not reach, and never drops this program): once it leaves inputs
        # out, the others skip them.  cuts: the first position in the order it left out, among
        # the likely inputs and among the late ones (see note_left_out).
        anchor = job.get("anchor")
        self.anchor = anchor if isinstance(anchor, int) and not isinstance(anchor, bool) else None

    # -- output to coherence -----------------------------------------------------------------
    def emit(self, line: bytes) -> None:
        self.out_buf.append(line)

    def flush(self) -> None:
        if not self.out_buf:
            return
        data = b"".join(self.out_buf)
        self.out_buf = []
        protocol.write_all(self.out_fd, data)

    def emit_json(self, t: int, i: int, obj: object) -> None:
        self.emit(protocol.record(t, i, obj))

    def _on_term(self, signum: int, frame: object) -> None:
        self.guard["mode"] = guard.LEADER
        watch.kill_all(self)
        os._exit(1)

    # -- setup -------------------------------------------------------------------------------
    def setup(self) -> None:
        job = self.job
        try:
            if hasattr(sys, "set_int_max_str_digits"):
                sys.set_int_max_str_digits(0)
        except BaseException:
            pass
        sys.dont_write_bytecode = True
        os.makedirs(self.tmp, exist_ok=True)
        try:
            os.chmod(self.tmp, 0o711)
        except OSError:
            pass
        memcg = kernel.enter_memcg(job, self.memory_mb, self.jobs)  # before the namespaces below
        bounded = job.get("sandbox") == "bwrap"  # its /tmp is a tmpfs of disk_mb (sandbox.py)
        if job.get("isolate", True):
            self.isolation_problems, mounted = guard.isolate_as_root(self.tmp, self.disk_mb, disk.MAX_FILES)
            bounded = bounded or mounted
        if not bounded:
            self.disk = disk.Budget(self.tmp, self.disk_mb * 1024 * 1024, disk.MAX_FILES)
        loading.set_path(job)
        self.timer.install()
        sig = getattr(signal, "SIGHUP", None)
        if sig is not None:
            try:
                signal.signal(sig, signal.SIG_DFL)
            except BaseException:
                pass
        # SIGTERM from coherence: kill and reap the children, then leave (nothing orphaned).
        # SIGINT keeps the interpreter's handler, as in a script (no terminal reaches this
        # session); neither tells the module it is being checked (see timer.handle_quietly).
        handle_quietly(signal.SIGTERM, self._on_term)
        if guard.resource is not None:
            guard.setrlimit(guard.resource.RLIMIT_CORE, 0)
        self.set_pdeathsig = guard.prctl_pdeathsig()
        if self.set_pdeathsig is not None and job.get("die_with_parent", True):
            try:
                self.set_pdeathsig()
            except BaseException:
                pass
        guard.arm(self.guard, job)
        self.layers = kernel.plan(
            job, [p for p in self.guard["allow"] if p != self.guard["root"]], self.guard["hidden"]
        )
        self.layers.memcg = memcg
        if self.guard["not_granted"]:
            self.emit_json(
                META,
                protocol.DIAGNOSTIC,
                "not readable by the programs: %s, which holds your home folder (what they need below "
                "it, such as the interpreter and its packages, is granted on its own)"
                % ", ".join(self.guard["not_granted"][:3]),
            )
        if self.layers.left_out:
            left = self.layers.left_out
            self.emit_json(
                META,
                protocol.DIAGNOSTIC,
                f"Landlock: {len(left)} paths left unreadable, past {landlock.MAX_RULES} rules "
                f"(the workspace's hidden entries are many): {', '.join(left[:3])}",
            )
        # which kernel layers the children apply, so coherence can name the sandbox that ran
        names = self.layers.names()
        self.emit_json(META, SANDBOX, names)
        missing = [x for x in job.get("require") or () if x not in names]
        if missing:
            raise Refused('sandbox "strict": the kernel refused ' + " and ".join(missing))
        self.canon, self.dump = make_canonicalizer()
        # from here on the leader runs code of the job: it reads what its children may
        refused = kernel.confine_leader(self.layers, self.tmp, job.get("sandbox") == "bwrap")
        if refused is not None:
            raise Refused(refused)
        guard.use_streams(self.streams)

    def run(self) -> None:
        try:
            self.setup()
        except Refused as e:
            # nothing runs weaker than "strict" asked: the module is reported as not loaded
            self.guard["mode"] = guard.LEADER
            self.emit_json(META, MODULE, str(e))
            self.emit(DONE_RECORD)
            self.flush()
            return
        loader = self.loader
        loader.preimport(loading.PREIMPORT_CORE)
        if not loading.children_can_import():
            loader.preimport(loading.PREIMPORT)
        mod_spec = self.job.get("module") or {}
        self.module, err = loader.load_module(mod_spec)
        self.guard["mode"] = guard.LEADER
        self.emit_json(META, MODULE, err)
        if err is not None:
            self.emit(DONE_RECORD)
            self.flush()
            return
        self.guard["mode"] = guard.LOAD
        texts = [p.get("source") or "" for p in self.job["programs"]]
        texts.append(mod_spec.get("source") or "")
        if any("async" in t for t in texts):
            loader.preimport(("asyncio",))
        self.programs = loader.prepare_programs(self.job["programs"], self.module)
        # read here, where the workspace is readable: children of root run as nobody
        dirs = [d for d in mod_spec.get("sys_path") or () if d]
        self.workspace_roots = tuple({os.path.join(x, "") for d in dirs for x in (d, os.path.realpath(d))})
        self.scanned = {mod_spec.get("filename")}  # the module's source is checked as text already
        self.workspace_draws = bool(self.workspace_roots) and loading.draws(self.workspace_roots, self.scanned)
        self.modules_scanned = loading.modules_mark()
        self.guard["mode"] = guard.LEADER
        guard.use_streams(self.streams)
        self.flush()
        if self.job.get("inputs_fd") is not None:
            ahead.prefork(self)
        if not ahead.receive_inputs(self):
            ahead.drop_preforked(self)  # and their directories: the job's must be left empty
            return
        self.input_codes = loading.prepare_inputs(self.job["inputs"], self.job.get("packed"))
        if self.preforked:
            ahead.publish_inputs(self)
        self.schedule()
        self.emit(DONE_RECORD)
        self.flush()

    def make_tasks(self) -> list[Task]:
        """One task per program to run (the job's "tasks", or one per program), made once."""
        if self.tasks is None:
            specs = self.job.get("tasks")
            if specs is None:
                specs = [{"program": p} for p in range(len(self.programs))]
            self.tasks = [
                Task(t, self.programs[int(spec.get("program", t))], int(spec.get("seed", self.seed)))
                for t, spec in enumerate(specs)
            ]
        return self.tasks

    def input_order(self) -> list[int]:
        """The order every program runs the inputs in (the job's, when it is one); checked once
        (ahead.publish_inputs and schedule both ask)."""
        n = len(self.input_codes)
        if self.order is None or len(self.order) != n:
            order = self.job.get("order")
            if not (isinstance(order, list) and len(order) == n and sorted(order) == list(range(n))):
                order = list(range(n))
            self.order = order
        return self.order

    def share_told(self, n: int) -> None:
        """What the anchor task tells the other programs, shared with every child: its cuts (see
        note_left_out), then one byte per input it timed out on (see child.call_loop: a program
        that hangs on one of them too skips the others), for ``n`` inputs.  Children forked
        before the inputs came (see ahead.prefork) keep the one made then, which is large
        enough."""
        if self.told is None or len(self.told) < TOLD_HANGS + n:
            self.told, self.told_ro = sealed.shared_for_reading(TOLD_HANGS + max(1, n), self.tmp)
        struct.pack_into("qq", self.told, 0, *self.cuts)

    def before_forks(self) -> None:
        """What every child is forked with: the shared objects out of the collector's sight, the
        address-space limit, the first child uid."""
        # Everything built so far is shared with every child.  Out of the collector's sight, it is
        # not traversed (and so not copied page by page) each time a child's allocations trigger
        # a collection, which delayed a child's first call (docs/results.md#worker-start).
        gc.freeze()
        vm = guard.vm_bytes()
        self.as_limit = vm + self.memory_mb * 1024 * 1024 if vm else self.memory_mb * 1024 * 1024
        if self.next_uid is None:
            try:
                self.next_uid = guard.CHILD_UID_BASE + int.from_bytes(os.urandom(4), "big") % (
                    guard.CHILD_UID_SPAN - 1000000
                )
            except BaseException:
                self.next_uid = guard.CHILD_UID_BASE + os.getpid() * 1000 % guard.CHILD_UID_SPAN

    # -- scheduling --------------------------------------------------------------------------
    def schedule(self) -> None:
        n = len(self.input_codes)
        queue = []
        order = self.input_order()
        self.rank = rank = [0] * n
        for p, i in enumerate(order):
            rank[i] = p
        self.share_told(n)
        running = self.running
        for task in self.make_tasks():
            t = task.t
            info = task.program
            if info.error is not None:
                self.emit_json(t, protocol.LOADED, info.error)
                continue
            child = self.preforked.get(t)
            if child is not None:  # parked with its program loaded: released in this order
                child.indices = list(order)
                child.allowed = watch.allowed_for(self, child.indices)
                running[child.fd] = child
                continue
            queue.append((task, list(order)))
        self.flush()
        self.before_forks()
        while queue or running:
            now = time.monotonic()
            waiting = [c for c in running.values() if c.parked]  # in the queue's order
            active = len(running) - len(waiting)
            # A restarted task (its child died in a call) goes before the parked ones: its budget
            # is running, and theirs has not started.
            restart_first = bool(queue) and queue[0][0].deadline is not None
            while waiting and active < self.jobs and not restart_first:
                self.release(waiting.pop(0), now)
                active += 1
            parked = len(waiting)
            wanted = []
            while queue and active < self.jobs:
                task, indices = queue.pop(0)
                wanted.append((task, indices, False))
                active += 1
            # Spare children, forked while the others run and parked with their programs loaded,
            # take the next free slots at once, so that a fork, the program's load and the child's
            # setup are not paid in a slot (docs/results.md#worker-start).  They are forked
            # several at a time: see spawn.spawn_all.  A restart waits in the queue for the next
            # slot instead, ahead of them.
            if queue and parked < self.jobs:
                while queue and parked < self.max_parked and queue[0][0].deadline is None:
                    task, indices = queue.pop(0)
                    wanted.append((task, indices, True))
                    parked += 1
            for child in spawn.spawn_all(self, wanted):
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
                watch.read_child(self, running[fd])
            now = time.monotonic()
            for fd in list(running):
                c = running[fd]
                if watch.check_child(self, c, now):
                    del running[fd]
                    self.child_fds.discard(fd)
                    follow = watch.finish_child(self, c)
                    if follow is not None:
                        queue.insert(0, follow)
            if self.disk is not None and self.disk.due(now):
                self.check_disk(running.values())
            self.flush()

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
            deadline = now + self.program_budget
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

    # -- what the anchor task tells the others ------------------------------------------------
    def timeout_rest(self, task: Task, indices: list[int]) -> None:
        # Not "Timeout": these inputs were never tried.  The caller leaves them out of the metrics
        # instead of reading the program's slowness as disagreement on every one of them.
        key = protocol.reserved(BUDGET_EXCEEDED)
        t = task.t
        for i in indices:
            self.emit(b"%d %d %s\n" % (t, i, key))
        if t == self.anchor:
            self.note_left_out(indices)

    def note_left_out(self, indices: list[int]) -> None:
        """The anchor task left these inputs out: so does every program from now on (the children
        read the cuts from the map they share with the leader)."""
        cuts = self.cuts
        old = list(cuts)
        rank, late = self.rank, self.late
        for i in indices:
            r = rank[i] if 0 <= i < len(rank) else None
            if r is not None:
                g = 1 if i in late else 0
                if r < cuts[g]:
                    cuts[g] = r
        if cuts != old and self.told is not None:  # (shared before any child ran)
            struct.pack_into("qq", self.told, 0, cuts[0], cuts[1])

    def note_anchor_hang(self, i: int) -> None:
        told = self.told
        if told is not None and 0 <= i < len(told) - TOLD_HANGS:
            told[TOLD_HANGS + i] = 1


def run_job(job: Job) -> None:
    """One run, start to finish, in this process (the one-shot worker or a job leader)."""
    z = Leader(job)
    forked = None
    try:
        z.run()
    except spawn.Forked as f:
        forked = f.args
    except BaseException:
        try:
            z.guard["mode"] = guard.LEADER
            import traceback

            z.emit(protocol.record(META, protocol.DIAGNOSTIC, traceback.format_exc()[-4000:]))
            z.flush()
        except BaseException:
            pass
        kernel.leave(getattr(z, "layers", None))
        os._exit(3)
    if forked is not None:  # a child, its leader's frames gone with the exception
        spawn.become_child(z, *forked)
    kernel.leave(getattr(z, "layers", None))  # (its children are reaped)
    os._exit(0)
