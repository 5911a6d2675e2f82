"""Work-done progress for a batch of checks, cancellable from the editor.

pygls keeps every progress token in ``Progress.tokens`` forever; a batch removes its token when
it ends.  Creating the token is a request to the client, so it runs in the background: the checks
do not wait for the editor to answer, and reports made before it answers are folded into the
``begin`` message.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from coherence.lsp.language_server import CoherenceLanguageServer

log = logging.getLogger(__name__)


def client_supports_progress(ls: CoherenceLanguageServer) -> bool:
    try:
        window = ls.client_capabilities.window
    except Exception:  # noqa: BLE001 - not initialized
        return False
    return bool(window and window.work_done_progress)


class NullProgress:
    """For checks that are part of a larger batch with its own progress (check workspace)."""

    def start(self) -> None: ...

    def report(self, key: str, message: str, fraction: float) -> None: ...

    def finish_one(self, key: str) -> None: ...

    def end(self, message: str) -> None: ...


class BatchProgress:
    def __init__(self, ls: CoherenceLanguageServer, title: str, total: int, on_cancel: Callable[[], object]):
        self.ls = ls
        self.title = title
        self.total = max(1, total)
        self.on_cancel = on_cancel
        self.token: str | None = None
        self.begun = False
        self.ended = False
        self.done = 0
        self.fractions: dict[str, float] = {}
        self.message = ""
        self._last_percent = -1
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if not client_supports_progress(self.ls) or self.ls.stopping:
            return
        self._task = self.ls.run_task(self._create(), name="progress-create")

    async def _create(self) -> None:
        token = f"coherence-{uuid.uuid4().hex[:12]}"
        try:
            await asyncio.wait_for(self.ls.work_done_progress.create_async(token), timeout=10)
        except Exception as exc:  # noqa: BLE001 - the client may refuse; checks go on without progress
            log.debug("work done progress not created: %s", exc)
            return
        if self.ended or self.ls.stopping:
            self._forget(token)
            return
        self.token = token
        future = self.ls.work_done_progress.tokens.get(token)
        if future is not None:
            future.add_done_callback(lambda f: self._cancelled() if f.cancelled() else None)
        self.ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=self.title, cancellable=True, message=self.message or None, percentage=self._percent()
            ),
        )
        self.begun = True

    def _cancelled(self) -> None:
        if not self.ended:
            log.info("progress %s cancelled by the client", self.token)
            self.on_cancel()

    def _percent(self) -> int:
        frac = (self.done + sum(self.fractions.values())) / self.total
        return max(0, min(100, int(frac * 100)))

    def report(self, key: str, message: str, fraction: float) -> None:
        self.fractions[key] = max(0.0, min(1.0, fraction))
        self.message = message
        if not self.begun or self.ended or self.ls.stopping or self.token is None:
            return
        percent = self._percent()
        if percent == self._last_percent and not message:
            return
        self._last_percent = percent
        self.ls.work_done_progress.report(
            self.token, types.WorkDoneProgressReport(message=message, percentage=percent, cancellable=True)
        )

    def finish_one(self, key: str) -> None:
        self.fractions.pop(key, None)
        self.done += 1

    def end(self, message: str) -> None:
        if self.ended:
            return
        self.ended = True
        if self._task is not None and not self._task.done() and not self.begun:
            self._task.cancel()
        if self.begun and self.token is not None and not self.ls.stopping:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        if self.token is not None:
            self._forget(self.token)

    def _forget(self, token: str) -> None:
        future = self.ls.work_done_progress.tokens.pop(token, None)
        if future is not None and not future.done():
            # Resolve it so nothing waits on it; its done-callback ignores non-cancelled ends.
            future.set_result(None)
