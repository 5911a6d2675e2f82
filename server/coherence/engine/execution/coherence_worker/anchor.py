"""The anchor task's shared state: what the task of the user's own function tells the other
programs.  Inputs it leaves out are left out by every program (its cuts, the first position in
the input order it left out among the likely inputs and among the late ones), and a program that
hangs where it hangs skips its other hangs (one byte per input it timed out on).  Both live in
the told map the leader writes and every child reads (see sealed.py)."""

from __future__ import annotations

import struct

from . import protocol, sealed
from .protocol import BUDGET_EXCEEDED, TOLD_HANGS

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    import mmap

    from .output import Output
    from .protocol import Job
    from .task import Task


class Anchor:
    """The anchor task (``t``), the input order's ranks and late inputs, and the told map."""

    __slots__ = ("t", "late", "rank", "cuts", "told", "told_ro")

    def __init__(self, job: Job) -> None:
        self.cuts = [1 << 60, 1 << 60]
        self.rank: list[int] = []  # input index -> position in the order (see rank_by)
        self.told: mmap.mmap | None = None  # see share
        self.told_ro: mmap.mmap | None = None  # the told map, read-only: the children's (see drop_writable)
        self.read(job)

    def read(self, job: Job) -> None:
        # inputs run after all others (the executor ordered them last): see child.call_loop
        self.late = frozenset(i for i in job.get("late") or () if isinstance(i, int))
        # The task whose left-out inputs are left out for every program (the caller drops an
        # input any program did not reach, and never drops this program): once it leaves inputs
        # out, the others skip them.
        anchor = job.get("anchor")
        self.t = anchor if isinstance(anchor, int) and not isinstance(anchor, bool) else None

    def rank_by(self, order: list[int]) -> None:
        self.rank = rank = [0] * len(order)
        for p, i in enumerate(order):
            rank[i] = p

    def share(self, n: int, tmp: str) -> None:
        """The told map, shared with every child: the cuts (see note_left_out), then one byte per
        input the anchor timed out on (see child.call_loop: a program that hangs on one of them
        too skips the others), for ``n`` inputs.  Children forked before the inputs came (see
        ahead.prefork) keep the one made then, which is large enough."""
        if self.told is None or len(self.told) < TOLD_HANGS + n:
            self.told, self.told_ro = sealed.shared_for_reading(TOLD_HANGS + max(1, n), tmp)
        struct.pack_into("qq", self.told, 0, *self.cuts)

    def drop_writable(self) -> None:
        """In a child: only the read-only mapping of the told map stays (see sealed.py)."""
        if self.told_ro is not None and self.told is not None:
            self.told.close()
            self.told = self.told_ro

    def timeout_rest(self, out: Output, task: Task, indices: list[int]) -> None:
        # Not "Timeout": these inputs were never tried.  The caller leaves them out of the metrics
        # instead of reading the program's slowness as disagreement on every one of them.
        key = protocol.reserved(BUDGET_EXCEEDED)
        t = task.t
        for i in indices:
            out.emit(b"%d %d %s\n" % (t, i, key))
        if t == self.t:
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

    def note_hang(self, i: int) -> None:
        told = self.told
        if told is not None and 0 <= i < len(told) - TOLD_HANGS:
            told[TOLD_HANGS + i] = 1
