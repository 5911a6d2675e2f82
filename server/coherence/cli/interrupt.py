"""SIGINT and SIGTERM during ``coherence check``: the run stops and writes what is done."""

from __future__ import annotations

import asyncio
import signal
from typing import ClassVar


class Interrupt:
    """SIGINT or SIGTERM during the checks: the check in progress is cancelled (its workers
    stopped by the engine) and the run writes what is done.  A second signal ends it at once."""

    EXIT: ClassVar[dict[int, int]] = {signal.SIGINT: 130, signal.SIGTERM: 143}

    def __init__(self) -> None:
        self.signum = 0
        self._task: asyncio.Task | None = None
        self._installed: list[int] = []

    def install(self, task: asyncio.Task) -> None:
        """Catch the signals for ``task`` (the checks), which a signal cancels."""
        loop = asyncio.get_running_loop()
        self._task = task
        for sig in self.EXIT:
            try:
                loop.add_signal_handler(sig, self._caught, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
                continue
            self._installed.append(sig)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed = []

    def _caught(self, signum: int) -> None:
        self.signum = signum
        self.remove()  # a second Ctrl-C is Python's KeyboardInterrupt again; SIGTERM's default ends it
        if signum == signal.SIGTERM:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if self._task is not None:
            self._task.cancel()

    def uncancel(self) -> None:
        if self._task is not None and hasattr(self._task, "uncancel"):
            self._task.uncancel()

    @property
    def exit_status(self) -> int:
        return self.EXIT.get(self.signum, 130) if self.signum else 0

    def notice(self, done: int, total: int) -> str:
        name = signal.Signals(self.signum).name if self.signum else "a signal"
        return f"interrupted by {name} after {done} of {total} item(s); the report holds the {done} finished"
