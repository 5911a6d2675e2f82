"""A shared map that the leader writes and its children can only read (the told map, see
``Anchor.share``).

Children are forks of the leader, so they inherit its writable mapping: each closes it and keeps
the read-only one made here (``Anchor.drop_writable``).  The read-only map is made from a read-only
descriptor, so ``mprotect`` cannot make it writable again, and the memfd behind both is sealed
against every future write (``F_SEAL_FUTURE_WRITE``, Linux >= 5.1): the descriptor a read-only
map holds, reopened read-write through ``/proc/self/fd``, cannot write it either.  Only the
mapping the leader made before the seal can.
"""

from __future__ import annotations

import mmap
import os

try:
    import fcntl
except ImportError:  # pragma: no cover - non-Unix
    fcntl = None  # type: ignore[assignment]  # no sealing there: callers check for None

# (not every Python names them)
_ALLOW_SEALING = getattr(os, "MFD_ALLOW_SEALING", 2)
_CLOEXEC = getattr(os, "MFD_CLOEXEC", 1)
_F_ADD_SEALS = 1033
_SEALS = 0x0001 | 0x0002 | 0x0004 | 0x0010  # SEAL, SHRINK, GROW, FUTURE_WRITE


def shared_for_reading(size: int, tmp: str) -> tuple[mmap.mmap, mmap.mmap | None]:
    """``(map, read-only map)`` of the same ``size`` bytes: a memfd, else a file in ``tmp``
    unlinked at once (the same user as the leader may then reopen it for writing: only the audit
    hook stops that).  The read-only map is None where neither can be made (the children then
    share the writable map)."""
    try:
        fd = os.memfd_create("coherence-told", _CLOEXEC | _ALLOW_SEALING)
        path = "/proc/self/fd/%d" % fd
    except (AttributeError, OSError):
        path = os.path.join(tmp, ".told-%d" % os.getpid())
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError:
            return mmap.mmap(-1, size), None
    try:
        os.ftruncate(fd, size)
        shared = mmap.mmap(fd, size)
        if fcntl is not None and path.startswith("/proc/"):
            try:
                fcntl.fcntl(fd, getattr(fcntl, "F_ADD_SEALS", _F_ADD_SEALS), _SEALS)
            except OSError:
                pass  # an older kernel: the read-only map alone
        ro = os.open(path, os.O_RDONLY)
        try:
            reading = mmap.mmap(ro, size, access=mmap.ACCESS_READ)
        finally:
            os.close(ro)
    except OSError:
        return mmap.mmap(-1, size), None
    finally:
        os.close(fd)
        if not path.startswith("/proc/"):
            try:
                os.unlink(path)
            except OSError:
                pass
    return shared, reading
