"""The local backend: ``--jobs`` tasks at once, in threads of this process.

The heavy work is in each task's sandbox processes; the machine's cores are divided among the
jobs (``cpu_count() // jobs`` sandbox slots per task)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from coherence.engine.execution.executor import cpu_count
from coherence.eval.backends import Finished, Job
from coherence.eval.corpus import SampleTask
from coherence.eval.task import EvalOptions


class LocalBackend:
    def __init__(self, evaluate: Callable[..., dict], jobs: int, cancel: threading.Event | None = None):
        self.evaluate = evaluate
        self.jobs = max(1, jobs)
        self.workers = max(1, cpu_count() // self.jobs)
        self.cancel = cancel or threading.Event()
        self.pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="coherence-eval")
        self.futures: dict[Future, SampleTask] = {}
        self.label = f"{self.jobs} job(s) here"

    def start(self, jobs: list[Job], opts: EvalOptions) -> None:
        for st, bt, paper in jobs:
            fut = self.pool.submit(self.evaluate, st, bt, opts, cancel=self.cancel, paper=paper, workers=self.workers)
            self.futures[fut] = st

    def pending(self) -> int:
        return len(self.futures)

    def poll(self, timeout: float) -> list[Finished]:
        finished, _ = wait(list(self.futures), timeout=timeout, return_when=FIRST_COMPLETED)
        return [self._take(f) for f in finished]

    def _take(self, fut: Future) -> Finished:
        st = self.futures.pop(fut)
        try:
            return st, fut.result()
        except BaseException as exc:  # noqa: BLE001 - handed to the runner, which says what failed
            return st, exc

    def stop(self) -> list[Finished]:
        """Cancel the running tasks (they see ``cancel``) and drop the queued ones; the tasks that
        finished before the cancellation reached them are returned."""
        self.cancel.set()
        self.pool.shutdown(wait=True, cancel_futures=True)
        done = [f for f in self.futures if f.done() and not f.cancelled()]
        return [self._take(f) for f in done]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
