"""Counting processes in tests: every descendant of the test process seen during a run."""

from __future__ import annotations

import os
import threading
import time


def _stat(pid: int) -> tuple[int, int, bytes, int] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    return int(fields[1]), int(fields[19]), fields[0], uid  # ppid, start time, state, uid


def _table() -> dict[int, tuple[int, int, bytes, int]]:
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


class ProcessWatch:
    """Records every descendant of this process (and its uid) while a run is going on; then
    ``survivors`` lists those still alive plus any live process running under one of the uids
    the sandbox's children used (a double fork that reparented itself away from us still has
    its uid).  Zombies are not counted: with a pid namespace, bubblewrap's namespace init is
    reparented to pid 1 when it exits and this VM's init never reaps it (a normal init does)."""

    def __init__(self):
        self.seen: dict[int, int] = {}
        self.uids: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _scan(self):
        table = _table()
        children: dict[int, list[int]] = {}
        for pid, st in table.items():
            children.setdefault(st[0], []).append(pid)
        todo = [os.getpid()]
        while todo:
            for child in children.get(todo.pop(), []):
                st = table[child]
                self.seen[child] = st[1]
                if st[3] != os.getuid():
                    self.uids.add(st[3])
                todo.append(child)

    def _loop(self):
        while not self._stop.is_set():
            self._scan()
            time.sleep(0.01)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._scan()

    def survivors(self) -> list[int]:
        table = _table()
        alive = set()
        for pid, start in self.seen.items():
            st = table.get(pid)
            if st is not None and st[1] == start and st[2] != b"Z":
                alive.add(pid)
        sandbox_uids = self.uids - {0, os.getuid()}
        for pid, st in table.items():
            if st[3] in sandbox_uids and st[2] != b"Z":
                alive.add(pid)
        return sorted(alive)
