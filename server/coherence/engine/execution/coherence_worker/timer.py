"""The per-call timer: one timer per process, whose signal handler raises ``Timeout`` inside a
call (or a load) that has run too long.

Two ways to use it.  ``timed(seconds, fn, *args)`` arms a one-shot timer around one call (the
module's import, a program's load).  The call loop instead starts one periodic timer for all its
calls (``start_ticks``) and marks each call in the fields directly: ``start`` when it began,
``armed`` while it runs; each tick checks the call in progress, so a call times out between
``limit`` and ``limit`` + one tick.  Two timer calls per call were a third of the per-call
overhead of a fast function.

The timer is a POSIX timer of the process's own (timer_create) that sends ``SIGRTMAX``, not
setitimer's SIGALRM: the checked code finds SIGALRM and ``signal.getitimer`` as in a run
without a check (its own ``signal.alarm`` works as there), and ``signal.getsignal`` reports the
default for SIGRTMAX too (see ``_LikeTheDefault``).  Where timer_create cannot be had (no known
system call numbers, not Linux), SIGALRM and setitimer as before.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import ctypes
import os
import platform
import signal
import struct
import time

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# timer_create, timer_settime (the same struct layouts on both: 64-bit longs)
_CALLS = {"x86_64": (222, 223), "aarch64": (107, 110), "arm64": (107, 110)}
_CLOCK_MONOTONIC = 1
_SIGEV_SIGNAL = 0
_libc: list[Any] = []  # (loaded once, in the leader: its children inherit it)


class Timeout(BaseException):
    """Raised by the timer's handler inside a call that ran out of time.  A BaseException, so
    that code which swallows ``Exception`` does not swallow it (and the canonicalizer lets it
    through: see canon.py)."""


class _LikeTheDefault(int):
    """A signal's handler: an int the interpreter calls like any handler, and which
    ``signal.getsignal`` (it maps ints to ``signal.Handlers``) then reports as
    ``signal.SIG_DFL``, as for a signal nobody handles.  It equals 0 only once installed: the
    interpreter must not take it for the default itself."""

    def __eq__(self, other: object) -> bool:
        return bool(self.__dict__.get("shown")) and isinstance(other, int) and int(other) == 0

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return 0

    def __call__(self, signum: int, frame: object) -> None:
        self.__dict__["fn"](signum, frame)


def handle_quietly(signum: int, fn: Callable[[int, object], None]) -> None:
    """``fn`` handles ``signum``, and ``signal.getsignal(signum)`` says ``SIG_DFL``."""
    handler = _LikeTheDefault(0)
    handler.__dict__["fn"] = fn
    # (the C module's: signal.signal would turn the int into a plain 0, the default)
    _signal.signal(signum, handler)
    handler.__dict__["shown"] = True


class Timer:
    __slots__ = ("armed", "fired", "start", "limit", "cpu_end", "over", "_posix")

    def __init__(self) -> None:
        self.armed = False  # a call (or load) is in progress under this timer
        self.fired = False  # it ran out of time (the call may have swallowed the Timeout)
        self.start = 0.0  # when the call in progress began (periodic ticks)
        self.limit: float | None = None  # seconds a call may take (periodic ticks); None: a one-shot timer
        # the process's CPU time (time.process_time) at which its tail budget runs out, checked
        # by the ticks in a call; ``over`` says that is why the call was stopped
        self.cpu_end = float("inf")
        self.over = False
        self._posix: tuple[Any, int] | None = None  # (timer_settime, the timer's id): see install

    def install(self) -> None:
        """This process's timer and handler (a POSIX timer is not inherited by a fork: each
        process installs its own)."""
        self._posix = None
        sig = getattr(signal, "SIGRTMAX", None)
        calls = _CALLS.get(platform.machine()) if os.uname().sysname == "Linux" else None
        if sig is not None and calls is not None:
            try:
                if not _libc:
                    lib = ctypes.CDLL(None, use_errno=True)
                    lib.syscall.restype = ctypes.c_long
                    _libc.append(lib)
                libc = _libc[0]
                # struct sigevent: sigev_value, sigev_signo, sigev_notify, padding to 64 bytes
                event = ctypes.create_string_buffer(struct.pack("qii", 0, sig, _SIGEV_SIGNAL), 64)
                made = ctypes.c_int(-1)
                if libc.syscall(calls[0], _CLOCK_MONOTONIC, event, ctypes.byref(made)) == 0:
                    self._posix = (libc.syscall, calls[1], made.value)  # type: ignore[assignment]
            except (OSError, AttributeError):
                self._posix = None
        if self._posix is not None:
            handle_quietly(sig, self.on_alarm)  # type: ignore[arg-type]  # (sig is set: see above)
        else:
            signal.signal(signal.SIGALRM, self.on_alarm)

    def _set(self, seconds: float, interval: float = 0.0) -> None:
        """Arm (or, with 0, disarm) the timer: once after ``seconds``, then every ``interval``."""
        posix = self._posix
        if posix is None:
            signal.setitimer(signal.ITIMER_REAL, seconds, interval)
            return
        syscall, nr, timer_id = posix  # type: ignore[misc]
        spec = struct.pack("qqqq", int(interval), int(interval % 1 * 1e9), int(seconds), int(seconds % 1 * 1e9))
        syscall(nr, timer_id, 0, spec, None)

    def on_alarm(self, signum: int, frame: object) -> None:
        if not self.armed:
            return
        if self.limit is None:  # a one-shot timer ran out (see timed)
            self.fired = True
            self._set(0.05)  # keep poking code that swallows it
            raise Timeout()
        if time.monotonic() - self.start >= self.limit:  # a tick of the calls' timer
            self.fired = True
            raise Timeout()  # the next tick pokes again if the code swallows it
        if time.process_time() >= self.cpu_end:
            self.fired = self.over = True
            raise Timeout()

    def timed(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) under the timer; raises Timeout when it ran out of time."""
        self.fired = False
        try:
            self.armed = True
            self._set(seconds)
            result = fn(*args)
        finally:
            self.armed = False
            self._set(0)
            if self.fired:
                self.fired = False
                raise Timeout()
        return result

    def start_ticks(self, limit: float) -> None:
        """One periodic timer for every call from now on, each allowed ``limit`` seconds."""
        tick = min(0.05, limit / 4)
        self.limit = limit
        self._set(tick, tick)

    def stop_ticks(self) -> None:
        self._set(0)
        self.limit = None
