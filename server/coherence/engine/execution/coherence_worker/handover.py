"""The inputs handed to children forked before they came (see ahead.prefork): the leader
marshals them into a memfd and seals it against writes (``publish``); each such child reads
them back once released (``receive``)."""

from __future__ import annotations

import marshal
import os

from . import protocol

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from typing import Any

    # (the order the inputs run in, the late inputs, the anchor task, each input's maker)
    Inputs = tuple[list[int], list[int], int | None, list[tuple[str, Any] | None]]

try:
    import fcntl
except ImportError:  # pragma: no cover - non-Unix
    fcntl = None  # type: ignore[assignment]  # checked before each use (available)


def available() -> bool:
    """Whether inputs can be handed over this way here (a memfd and file seals)."""
    return fcntl is not None and hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS")


def make() -> int:
    return os.memfd_create("coherence-inputs", os.MFD_ALLOW_SEALING)


def publish(fd: int, inputs: Inputs) -> bool:
    """Write ``inputs`` into the memfd ``fd``, seal it against writes and read it back.
    Generated code ran in the children that hold it (each loaded its program), and could have
    written to it: whatever it wrote is overwritten or cut off before the seal, and after it
    nothing can be written.  False if any of this failed."""
    try:
        blob = marshal.dumps(inputs)
        view = memoryview(blob)
        done = 0
        while done < len(blob):
            done += os.pwrite(fd, view[done:], done)
        os.ftruncate(fd, len(blob))
        fcntl.fcntl(
            fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        )
        return os.fstat(fd).st_size == len(blob) and protocol.pread_all(fd, len(blob)) == blob
    except (OSError, ValueError, TypeError):
        return False


def receive(fd: int) -> Inputs:
    """In a child forked before the inputs came: what ``publish`` wrote (it closes ``fd``)."""
    try:
        blob = protocol.pread_all(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    inputs: Inputs = marshal.loads(blob)
    return inputs
