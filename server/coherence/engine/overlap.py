"""Work of a check that overlaps the LLM's answer, and what is given up in the background when
a check ends early: the nondeterminism re-run started as soon as its inputs exist, and the
workers of a run that never got its inputs."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from coherence.engine.execution.executor import PreparedRun
from coherence.engine.inputs import Input

log = logging.getLogger(__name__)


class EarlyRerun:
    """The nondeterminism re-run takes a check's first ``count`` inputs, final long before the
    others are made.  Of those inputs (from the generating thread) and the prepared run (from
    the check), whichever comes second hands them over (``PreparedRun.start_rerun``): the re-run
    then runs while the rest are generated, on a core that would wait, not during the run."""

    def __init__(self, count: int):
        self.count = count
        self._lock = threading.Lock()
        self._inputs: list[Input] | None = None
        self._run: PreparedRun | None = None

    def inputs_made(self, inputs: list[Input]) -> None:
        with self._lock:
            self._inputs = inputs
            run = self._run
        if run is not None:
            self._start(run, inputs)

    def run_prepared(self, run: PreparedRun) -> None:
        with self._lock:
            self._run = run
            inputs = self._inputs
        if inputs is not None:
            self._start(run, inputs)

    @staticmethod
    def _start(run: PreparedRun, inputs: list[Input]) -> None:
        try:
            run.start_rerun(inputs)
        except Exception:  # the re-run then starts with the others, as it did
            log.warning("starting the re-run early failed", exc_info=True)


def retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a background task's exception as seen (asyncio logs unseen ones)."""
    if not task.cancelled():
        task.exception()


def close_in_background(prepared: PreparedRun) -> None:
    """Let the workers of a run that never got its inputs go (``PreparedRun.close`` waits for
    their jobs to end), off the event loop."""
    asyncio.get_running_loop().run_in_executor(None, prepared.close).add_done_callback(retrieve)


def close_when_started(starting: asyncio.Future[Any]) -> None:
    """Give up, in the background, a run whose start outlived the check that asked for it."""
    if starting.cancelled() or starting.exception() is not None:
        return
    close_in_background(starting.result())
