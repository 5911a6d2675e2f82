"""The eval's progress bar on stderr (one line every 15 s when stderr is not a terminal)."""

from __future__ import annotations

import sys
import time


def _fmt_secs(s: float) -> str:
    s = int(max(0, s))
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class ProgressBar:
    """``label [#####.....] 45/150 · 1.3 tasks/s · ETA 1m20s`` on stderr (a line every 15 s when
    stderr is not a terminal)."""

    def __init__(self, total: int, done: int = 0, label: str = "", stream=None, width: int = 28):
        self.total, self.done, self.label = total, done, label
        self.start_done = done
        self.stream = stream or sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0
        self.extra = ""

    def text(self) -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = round(frac * self.width)
        elapsed = time.monotonic() - self.start
        new = self.done - self.start_done
        rate = new / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else None
        parts = [f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] {self.done}/{self.total}"]
        parts.append(f"{rate:.2f} tasks/s" if new else "starting")
        parts.append(f"ETA {_fmt_secs(eta)}" if eta is not None else "ETA ?")
        parts.append(f"elapsed {_fmt_secs(elapsed)}")
        if self.extra:
            parts.append(self.extra)
        return " · ".join(parts)

    def update(self, done: int | None = None, force: bool = False) -> None:
        if done is not None:
            self.done = done
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r\033[K" + self.text())
            self.stream.flush()
        elif force or now - self._last >= 15 or self.done == self.total:
            self.stream.write(self.text() + "\n")
            self.stream.flush()
            self._last = now

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
