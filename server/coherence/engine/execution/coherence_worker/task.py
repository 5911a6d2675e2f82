"""A task: one program to run over the inputs, and what its children so far left it."""

from __future__ import annotations

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from .loading import Program


class Task:
    """One program to run over the inputs, by one child after another (a child that dies in a
    call is replaced by one for the inputs left)."""

    __slots__ = ("t", "program", "deadline", "seed", "restarts", "stalls", "queued_at", "careful")

    def __init__(self, t: int, program: Program, seed: int) -> None:
        self.t = t  # the task's number in the records
        self.program = program  # a loading.Program
        self.deadline: float | None = None  # when its budget runs out (set when its first child gets a slot)
        self.seed = seed
        self.restarts = 0  # children forked for it so far
        self.stalls = 0  # children that died between calls in a row (see watch.finish_child)
        self.queued_at: float | None = None  # when its restart was queued: that wait is not charged
        self.careful = False  # a child of it was killed in a call: the next writes every record
