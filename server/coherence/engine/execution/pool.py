"""A pool of warm workers (``worker.py --serve``), so a run does not pay for starting Python.

A check makes several runs: the main run and the re-run in parallel, then a few shrinking
rounds one after another.  Each one-shot worker costs an interpreter start under bubblewrap
(tens of milliseconds, more on a busy machine).  A warm worker takes one job at a time and forks
a fresh job leader for each (see ``coherence_worker/serve.py``), so reusing it shares nothing between jobs
but the interpreter's own start-up.

Workers are keyed by everything fixed at their start: interpreter, sandbox mode, the paths bound
into the sandbox, and the hash seed.  A worker that was killed (deadline, cancel), that left
something behind, or that ran ``MAX_JOBS`` jobs is retired, never reused.

Every worker is started from one long-lived thread: ``PR_SET_PDEATHSIG`` (bubblewrap's
``--die-with-parent``, and the guard-mode worker's own) fires when the *thread* that started the
process ends, and the threads that run checks come and go.
"""

from __future__ import annotations

import atexit
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from coherence.engine.execution import procs
from coherence.engine.execution.coherence_worker import protocol
from coherence.engine.execution.launch import start_worker

MAX_IDLE_PER_KEY = 2
MAX_IDLE = 6  # over all keys
IDLE_SECONDS = 300.0  # an idle worker older than this is retired when the pool is next used
MAX_JOBS = 200


@dataclass(eq=False)
class WarmWorker:
    key: tuple[Any, ...]
    proc: subprocess.Popen[bytes]
    fd: int  # read end of the result pipe
    fd_number: int  # the write end's number inside the worker (the job's "fd")
    home: str | None  # guard mode: the worker's own temp dir
    jobs: int = 0
    retired: bool = False
    idle_since: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None  # started with stdin=PIPE
        return self.proc.stdin

    def alive(self) -> bool:
        return not self.retired and self.proc.poll() is None

    def send(self, data: bytes) -> bool:
        """Frame ``data`` to the worker; False when it cannot take it.  A worker that has exited
        may still take the bytes (the job leader it forked holds the read end of its stdin), and
        then nothing would run them."""
        if self.proc.poll() is not None:
            return False
        try:
            self.stdin.write(protocol.frame(data))
            self.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        """Stop it for good: EOF first (it exits by itself), then the whole process group."""
        self.retired = True
        tree = procs.descendants(self.proc.pid)
        try:
            self.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        # bubblewrap's inner processes live in a pid namespace of their own and may outlast
        # the outer one for a moment
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(procs.running(pid) for pid in tree):
            time.sleep(0.01)
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)


class _Spawner:
    """The one thread that starts workers (see the module docstring)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def call(self, fn: Callable[[], object]) -> object:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="coherence-worker-spawner", daemon=True)
                self._thread.start()
        done = threading.Event()
        box: list[Any] = [None, None]
        self._queue.put((fn, box, done))
        done.wait()
        if box[1] is not None:
            raise box[1]
        return box[0]

    def _loop(self) -> None:
        while True:
            fn, box, done = self._queue.get()
            try:
                box[0] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                box[1] = exc
            done.set()


class WorkerPool:
    def __init__(self) -> None:
        self._idle: dict[tuple[Any, ...], list[WarmWorker]] = {}
        self._lock = threading.Lock()
        self._spawner = _Spawner()
        self._all: set[WarmWorker] = set()

    def checkout(
        self, key: tuple[Any, ...], cmd: Callable[[], list[str]], env: dict[str, str], guard_home: bool
    ) -> WarmWorker:
        """An idle worker for ``key``, or a new one started with the command ``cmd()`` makes
        (raises OSError if it cannot start).  The command is made only then: bubblewrap's
        resolves some forty paths, which a check taking an idle worker would waste."""
        stale = self._expire()
        picked = None
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                w = idle.pop()
                if w.alive():
                    picked = w
                    break
                self._all.discard(w)
                stale.append(w)
        for w in stale:
            w.close()
        if picked is not None:
            return picked
        return self._spawner.call(lambda: self._start(key, cmd, env, guard_home))  # type: ignore[return-value]

    def checkin(self, w: WarmWorker, reusable: bool) -> None:
        w.jobs += 1
        if reusable and w.jobs < MAX_JOBS and w.alive():
            evicted: WarmWorker | None = None
            with self._lock:
                idle = self._idle.setdefault(w.key, [])
                if len(idle) < MAX_IDLE_PER_KEY:
                    w.idle_since = time.monotonic()
                    idle.append(w)
                    if sum(len(v) for v in self._idle.values()) > MAX_IDLE:
                        evicted = min((x for v in self._idle.values() for x in v), key=lambda x: x.idle_since)
                        self._drop(evicted)
                    if evicted is None:
                        return
                    w = evicted  # kept; the longest idle one goes instead
        self.retire(w)

    def _expire(self) -> list[WarmWorker]:
        now = time.monotonic()
        with self._lock:
            old = [x for v in self._idle.values() for x in v if now - x.idle_since > IDLE_SECONDS]
            for x in old:
                self._drop(x)
        return old

    def pids(self) -> set[int]:
        """The processes of the idle workers themselves: bubblewrap's and the serving
        interpreter's, never anything below that (a job's leftovers would be there, and those
        are not the pool's)."""
        with self._lock:
            roots = [w.proc.pid for v in self._idle.values() for w in v if w.proc.poll() is None]
        table = procs.proc_table()
        children = procs.children_map(table)
        out: set[int] = set()
        todo = list(roots)
        while todo:
            pid = todo.pop()
            if pid in out:
                continue
            out.add(pid)
            if pid in table and table[pid].comm == b"bwrap":  # bubblewrap, or its pid namespace's init
                todo.extend(children.get(pid, []))
        return out

    def retire(self, w: WarmWorker) -> None:
        with self._lock:
            self._drop(w)
        w.close()

    def close_all(self) -> None:
        with self._lock:
            workers = list(self._all)
            self._all.clear()
            self._idle.clear()
        for w in workers:
            w.close()

    def idle_count(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._idle.values())

    def _drop(self, w: WarmWorker) -> None:
        self._all.discard(w)
        idle = self._idle.get(w.key)
        if idle and w in idle:
            idle.remove(w)

    def _start(
        self, key: tuple[Any, ...], make_cmd: Callable[[], list[str]], env: dict[str, str], guard_home: bool
    ) -> WarmWorker:
        cmd = make_cmd()
        home = tempfile.mkdtemp(prefix="coherence-worker-") if guard_home else None
        if home:
            env = dict(env, HOME=home, TMPDIR=home)
        try:
            proc, r, w = start_worker(cmd + ["--serve"], env=env, cwd=home or "/", stderr=subprocess.DEVNULL)
        except OSError:
            if home:
                shutil.rmtree(home, ignore_errors=True)
            raise
        worker = WarmWorker(key=key, proc=proc, fd=r, fd_number=w, home=home)
        with self._lock:
            self._all.add(worker)
        return worker


POOL = WorkerPool()
atexit.register(POOL.close_all)
