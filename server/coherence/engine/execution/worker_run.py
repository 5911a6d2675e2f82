"""One worker process of a run, as the parent sees it: the records it streamed, parsed into a row
of outcomes per program, its load errors, its diagnostics (bounded) and how its job ended; and
the outcomes the parent itself fills in for calls that never reported (timeouts, crashes).
"""

from __future__ import annotations

import json
import subprocess
from typing import IO, Any

from coherence.engine.execution.coherence_worker import protocol
from coherence.engine.execution.pool import WarmWorker
from coherence.engine.execution.records import RunRecords, reserved_outcome
from coherence.engine.outcomes import Outcome

LOAD_ERROR = Outcome.raised(protocol.LOAD_ERROR)
TIMEOUT = Outcome.raised(protocol.TIMEOUT)
# Inputs a program never got to because it used up its time budget (see ExecutionLimits).
BUDGET_EXCEEDED = protocol.BUDGET_EXCEEDED
# Outcomes that say a call was slow (or never made), not what it computes.
OUT_OF_TIME = frozenset((TIMEOUT.error, BUDGET_EXCEEDED))
WORKER_CRASH = Outcome.raised(protocol.CRASH_WORKER)
# What a run keeps of its workers' diagnostics (its records are bounded by ``RunRecords``)
_DIAGNOSTICS = 20
_DIAGNOSTIC_CHARS = 2000


class WorkerRun:
    """One worker process and the results it streamed."""

    def __init__(self, label: str, n_tasks: int, n_inputs: int):
        self.label = label
        self.proc: subprocess.Popen[bytes] | None = None
        self.fd = -1
        self.buf = b""
        self.module_status_seen = False
        self.module_error: str | None = None
        self.load_errors: list[str | None] = [None] * n_tasks
        self.results: list[list[Outcome | None]] = []
        self.expect(n_inputs)
        self.done = False
        self.eof = False
        self.diagnostics: list[str] = []
        self.tmp: str | None = None
        self.stderr: IO[bytes] | None = None  # the worker's stderr, a temporary file
        self.records = RunRecords()
        self.diagnostics_dropped = 0
        self.warm: WarmWorker | None = None
        self.over = False  # warm worker: the job is over (its leader exited and was swept)
        self.over_status: int | None = None
        self.over_clean = False
        self.over_cpu: float | None = None
        self.killed = False
        self.layers: list[str] = []  # the kernel layers its children applied (protocol.SANDBOX)

    def expect(self, n_inputs: int) -> None:
        """Room for the outcomes of ``n_inputs`` inputs (a run started ahead learns how many
        when they are sent)."""
        self.results = [[None] * n_inputs for _ in range(len(self.load_errors))]

    def feed(self, data: bytes) -> None:
        buf = self.buf + data
        k = buf.rfind(b"\n")
        if k < 0:
            self.buf = buf
            return
        self.buf = buf[k + 1 :]
        outcome = self.records.outcome
        mark, reserved = protocol.RESERVED_MARK, reserved_outcome
        results = self.results
        n_tasks = len(results)
        for line in buf[:k].split(b"\n"):
            try:
                t_s, i_s, rest = line.split(b" ", 2)
                t, i = int(t_s), int(i_s)
            except ValueError:
                continue
            if t >= 0:
                if t >= n_tasks:
                    continue
                if i >= 0:
                    row = results[t]
                    if i < len(row) and row[i] is None:  # the first record wins (re-runs repeat)
                        row[i] = reserved(rest) if rest[:1] == mark else outcome(rest)
                elif i == protocol.LOADED:
                    msg = _loads(rest)
                    if msg is not None:
                        self.load_errors[t] = str(msg)[:_DIAGNOSTIC_CHARS]
            elif i == protocol.MODULE:  # t < 0: protocol.META
                self.module_status_seen = True
                msg = _loads(rest)
                self.module_error = None if msg is None else str(msg)
            elif i == protocol.DIAGNOSTIC:
                self.note(rest)
            elif i == protocol.DONE:
                self.done = True
            elif i == protocol.SANDBOX:
                layers = _loads(rest)
                self.layers = [x for x in layers if isinstance(x, str)][:8] if isinstance(layers, list) else []
            elif i == protocol.OVER:
                info = _loads(rest)
                self.over = True
                if isinstance(info, dict):
                    self.over_status = info.get("status")
                    self.over_clean = bool(info.get("clean"))
                    cpu = info.get("cpu")
                    if isinstance(cpu, (int, float)) and not isinstance(cpu, bool) and cpu >= 0:
                        self.over_cpu = float(cpu)

    def note(self, raw: bytes) -> None:
        """Keep a worker's diagnostic, within bounds: every crashed child may send a few, and
        unbounded they once filled memory for nobody to read (docs/results.md#stored-sizes)."""
        if len(self.diagnostics) >= _DIAGNOSTICS:
            self.diagnostics_dropped += 1
            if self.diagnostics_dropped == 1:
                self.diagnostics.append(f"{self.label}: (more diagnostics left out)")
            return
        self.diagnostics.append(f"{self.label}: {str(_loads(raw))[:_DIAGNOSTIC_CHARS]}")


def _loads(raw: bytes) -> Any:  # a JSON value, or the text when it is not JSON
    try:
        return json.loads(raw)
    except Exception:  # noqa: BLE001 - not only ValueError: deep nesting is a RecursionError
        return raw.decode("utf-8", "replace")[:2000]
