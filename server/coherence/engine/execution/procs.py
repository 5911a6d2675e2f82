"""The process table from Linux ``/proc``, for finding and killing what a run left behind.

Empty elsewhere: the callers then fall back to killing the process group they know of.
"""

from __future__ import annotations

import os
from typing import NamedTuple


class Proc(NamedTuple):
    ppid: int
    session: int
    state: bytes  # b"R", b"S", b"Z", ...
    comm: bytes  # the executable's name, as /proc/<pid>/stat gives it


def _read_stat(pid: int | str) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        close = stat.rfind(b")")
        fields = stat[close + 2 :].split()
        return Proc(int(fields[1]), int(fields[3]), fields[0], stat[stat.find(b"(") + 1 : close])
    except (OSError, ValueError, IndexError):
        return None


def proc_table() -> dict[int, Proc]:
    """Every process, by pid."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    table = {}
    for name in names:
        if name.isdigit():
            info = _read_stat(name)
            if info is not None:
                table[int(name)] = info
    return table


def children_map(table: dict[int, Proc]) -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.ppid, []).append(pid)
    return children


def descendants(root: int, table: dict[int, Proc] | None = None) -> list[int]:
    """All processes below ``root`` (not ``root`` itself), parents before children."""
    children = children_map(proc_table() if table is None else table)
    out, todo = [], [root]
    while todo:
        for child in sorted(children.get(todo.pop(0), [])):
            out.append(child)
            todo.append(child)
    return out


def session_members(sid: int, table: dict[int, Proc] | None = None) -> list[int]:
    return [pid for pid, info in (proc_table() if table is None else table).items() if info.session == sid]


def running(pid: int) -> bool:
    """Alive and not a zombie (a zombie reparented to an init that never reaps is gone enough)."""
    info = _read_stat(pid)
    return info is not None and info.state != b"Z"
