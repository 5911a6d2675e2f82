"""Where the eval's tasks run, behind one interface: threads on this machine (``--jobs``,
:mod:`.local`) or the tasks of a Ray cluster (``--ray``, :mod:`.cluster`).

The runner hands a backend every task of a run at once (``start``, with the run's options), polls it for the records that
finished, in any order (``poll``), and on an interruption asks it to cancel the rest and return
what finished meanwhile (``stop``).  Only the runner writes ``tasks.jsonl``: a backend never sees
the output folder, so resuming works the same however the tasks ran.  Every backend runs the same
``evaluate_task`` with the same options and the same number of sandbox slots per task, so a task's
record does not depend on where it ran.
"""

from __future__ import annotations

from typing import Protocol

from coherence.eval.corpus import BenchmarkTask, SampleTask
from coherence.eval.task import EvalOptions

# A task to run: its samples, its benchmark task, and the paper's log row for it (or None).
Job = tuple[SampleTask, BenchmarkTask, "dict | None"]
# A finished task: its record, or what it raised (CheckCancelled, KeyboardInterrupt, a bug).
Finished = tuple[SampleTask, "dict | BaseException"]


class Backend(Protocol):
    label: str  # what runs the tasks, for the progress bar ("2 threads", "ray: 3 nodes, 24 CPUs")

    def start(self, jobs: list[Job], opts: EvalOptions) -> None: ...

    def poll(self, timeout: float) -> list[Finished]: ...

    def pending(self) -> int: ...

    def stop(self) -> list[Finished]: ...

    def close(self) -> None: ...
