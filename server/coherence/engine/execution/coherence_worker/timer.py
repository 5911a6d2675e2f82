"""The per-call timer: one SIGALRM timer per process, whose handler raises ``Timeout`` inside a
call (or a load) that has run too long.

Two ways to use it.  ``timed(seconds, fn, *args)`` arms a one-shot timer around one call (the
module's import, a program's load).  The call loop instead starts one periodic timer for all its
calls (``start_ticks``) and marks each call in the fields directly: ``start`` when it began,
``armed`` while it runs; each tick checks the call in progress, so a call times out between
``limit`` and ``limit`` + one tick.  Two setitimer calls per call were a third of the per-call
overhead of a fast function.
"""

from __future__ import annotations

import signal
import time

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Timeout(BaseException):
    """Raised by the SIGALRM handler inside a call that ran out of time.  A BaseException, so
    that code which swallows ``Exception`` does not swallow it (and the canonicalizer lets it
    through: see canon.py)."""


class Timer:
    __slots__ = ("armed", "fired", "start", "limit")

    def __init__(self) -> None:
        self.armed = False  # a call (or load) is in progress under this timer
        self.fired = False  # it ran out of time (the call may have swallowed the Timeout)
        self.start = 0.0  # when the call in progress began (periodic ticks)
        self.limit: float | None = None  # seconds a call may take (periodic ticks); None: a one-shot timer

    def install(self) -> None:
        signal.signal(signal.SIGALRM, self.on_alarm)

    def on_alarm(self, signum: int, frame: object) -> None:
        if not self.armed:
            return
        if self.limit is None:  # a one-shot timer ran out (see timed)
            self.fired = True
            signal.setitimer(signal.ITIMER_REAL, 0.05)  # keep poking code that swallows it
            raise Timeout()
        if time.monotonic() - self.start >= self.limit:  # a tick of the calls' timer
            self.fired = True
            raise Timeout()  # the next tick pokes again if the code swallows it

    def timed(self, seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) under the timer; raises Timeout when it ran out of time."""
        self.fired = False
        try:
            self.armed = True
            signal.setitimer(signal.ITIMER_REAL, seconds)
            result = fn(*args)
        finally:
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            if self.fired:
                self.fired = False
                raise Timeout()
        return result

    def start_ticks(self, limit: float) -> None:
        """One periodic timer for every call from now on, each allowed ``limit`` seconds."""
        tick = min(0.05, limit / 4)
        self.limit = limit
        signal.setitimer(signal.ITIMER_REAL, tick, tick)

    def stop_ticks(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.limit = None
