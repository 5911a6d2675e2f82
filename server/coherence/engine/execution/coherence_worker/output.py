"""What a job's leader sends coherence: records gathered in a buffer and written to the job's
descriptor in one write per tick of the schedule loop (see ``Leader.schedule``)."""

from __future__ import annotations

from . import protocol


class Output:
    """The job's record descriptor and the records not yet written to it."""

    __slots__ = ("fd", "buf")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf: list[bytes] = []

    def emit(self, line: bytes) -> None:
        self.buf.append(line)

    def emit_json(self, t: int, i: int, obj: object) -> None:
        self.buf.append(protocol.record(t, i, obj))

    def flush(self) -> None:
        if not self.buf:
            return
        data = b"".join(self.buf)
        self.buf = []
        protocol.write_all(self.fd, data)
