"""Outcomes a program already gave on an input, kept between checks (``SeenOutcomes``).

A re-check of an unchanged function shrinks from the same input through the same candidates: the
programs' outcomes on them are those of the check before, and running them again cost each
re-check a sandbox job per shrink round.  An outcome is kept under a fingerprint of everything it
depends on (the module the program loads on, the program, the seed, the call limits) and the
input's key; an outcome the machine's load or the worker decided (a timeout, a crash, a load
error) is never kept.  Where a shrink ended is kept too, under the same fingerprints: walking the
candidates again, even with every outcome known, cost a re-check tens of milliseconds.

After an edit of your body, an alternative's outcomes still hold when nothing else in the module
names your function (``beside``); the inputs the last shrink had to run are kept per spec, so
the next check runs yours on them ahead, and its shrink takes the last path again when every
outcome that path read is the same (``KnownOutcomes.agrees``).

The main run's rows are kept the same way (``KeptRows``): after an edit of your body, with the
same inputs, the alternatives' rows are those of the check before, and only yours runs.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from coherence.engine.execution.program import ExecutionLimits, ExecutionReport, ModuleContext, Program
from coherence.engine.execution.worker_run import LOAD_ERROR, OUT_OF_TIME, WORKER_CRASH
from coherence.engine.inputs import Input
from coherence.engine.outcomes import Outcome

_K = TypeVar("_K")
_V = TypeVar("_V")
_NOT_KEPT = OUT_OF_TIME | {LOAD_ERROR.error, WORKER_CRASH.error}
SEEN_SIZE = 20_000  # shrink candidates are small inputs: a few MB at most
SHRINKS_SIZE = 256
RAN_KEPT = 512  # shrink inputs run ahead of an edited body's shrink: beyond these it runs its own
ROWS_SIZE = 8  # main runs whose alternatives' rows are kept: a few functions edited in turn
ROWS_TEXT = 4 << 20  # characters of outcome text in one run's rows, at most (long outputs are not kept)


def fingerprint(
    module: ModuleContext, program: Program, seed: int, limits: ExecutionLimits, source: str | None = None
) -> str:
    """What a program's outcome on one input depends on, besides the input (``source``: the
    module's text as far as the program can reach it, when not all of it)."""
    parts = (
        module.source if source is None else source,
        module.filename,
        module.module_name,
        module.sys_path,
        program.entry_point,
        program.source,
        program.owner,
        program.method_kind,
        seed,
        limits.call_timeout,
        limits.memory_mb,
        limits.file_size_mb,
    )
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()


class SeenOutcomes:
    """A bounded map (program fingerprint, input key) -> Outcome, shared by the checks of one
    ``Checker`` (their threads)."""

    def __init__(self, size: int = SEEN_SIZE):
        self._map: _Recent[tuple[str, str], Outcome] = _Recent(size)
        self._shrinks: _Recent[tuple[object, ...], tuple[Input, list[Outcome]]] = _Recent(SHRINKS_SIZE)
        self._ran: dict[tuple[object, ...], list[Input]] = {}
        self._paths: _Recent[tuple[object, ...], tuple[Input, dict[tuple[int, str], str]]] = _Recent(SHRINKS_SIZE)
        self._rows: _Recent[tuple[tuple[str, ...], object], KeptRows] = _Recent(ROWS_SIZE)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._map)

    def get(self, program: str, key: str) -> Outcome | None:
        with self._lock:
            return self._map.recall((program, key))

    def put(self, program: str, key: str, outcome: Outcome) -> None:
        if outcome.kind == "raise" and outcome.error in _NOT_KEPT:
            return
        with self._lock:
            self._map.keep((program, key), outcome)

    def shrunk(self, key: tuple[object, ...]) -> tuple[Input, list[Outcome]] | None:
        """Where the shrink ``key`` names ended, and every program's outcome there."""
        with self._lock:
            return self._shrinks.recall(key)

    def keep_shrunk(self, key: tuple[object, ...], shrunk: Input, outcomes: Sequence[Outcome]) -> None:
        if any(o.kind == "raise" and o.error in _NOT_KEPT for o in outcomes):
            return  # the machine's load had a say in it
        with self._lock:
            self._shrinks.keep(key, (shrunk, list(outcomes)))

    def for_run(
        self,
        module: ModuleContext,
        programs: Sequence[Program],
        seed: int,
        limits: ExecutionLimits,
        yours: tuple[str, str] | None = None,
    ) -> SeenView:
        """This map as one run's programs see it, by their index.  ``yours`` (the function's
        source as it stands in the module, and its name): an alternative's outcome does not
        depend on your function's body when nothing else in the module names it (the
        alternative takes its place), so an edit of your body keeps the alternatives' outcomes."""
        around = beside(module.source, yours)
        return SeenView(
            self, [fingerprint(module, p, seed, limits, None if p.source is None else around) for p in programs]
        )

    def path(self, key: tuple[object, ...]) -> tuple[Input, dict[tuple[int, str], str]] | None:
        """Where the shrink ``key`` names (its alternatives, not yours) ended, and every outcome
        it read on the way: the same outcomes there, yours included, end it in the same place."""
        with self._lock:
            return self._paths.get(key)

    def keep_path(self, key: tuple[object, ...], shrunk: Input, consulted: dict[tuple[int, str], str]) -> None:
        with self._lock:
            self._paths.keep(key, (shrunk, dict(consulted)))

    def ran_for(self, key: tuple[object, ...]) -> list[Input]:
        """The inputs the last shrink under ``key`` (a spec) had to run: a check of an edited
        body runs them ahead, beside its main run."""
        with self._lock:
            return list(self._ran.get(key, ()))

    def keep_ran(self, key: tuple[object, ...], inputs: Sequence[Input]) -> None:
        if not inputs:
            return
        with self._lock:
            self._ran[key] = list(inputs)[:RAN_KEPT]
            while len(self._ran) > SHRINKS_SIZE:
                self._ran.pop(next(iter(self._ran)))

    def rows(self, prints: Sequence[str], spec: object) -> KeptRows | None:
        """The rows these programs (by fingerprint) gave in the last main run for ``spec`` (what
        its inputs are made from), when every outcome in them was kept."""
        with self._lock:
            return self._rows.recall((tuple(prints), spec))

    def keep_rows(
        self,
        prints: Sequence[str],
        spec: object,
        inputs: Sequence[Input],
        rows: Sequence[Sequence[Outcome]],
        shared: int,
    ) -> None:
        """``shared``: the distinct programs of the run, whose limits (``Executor.limits_for``)
        the next run of yours alone keeps."""
        if not rows:
            return
        distinct = {id(o): o for row in rows for o in row}  # a run decodes each distinct record once
        if any(o.kind == "raise" and o.error in _NOT_KEPT for o in distinct.values()):
            return  # the machine's load had a say in them
        if sum(len(o.key) for o in distinct.values()) > ROWS_TEXT:
            return
        kept = KeptRows(tuple(tuple(row) for row in rows), shared, inputs_digest(inputs))
        with self._lock:
            self._rows.keep((tuple(prints), spec), kept)


@dataclass(frozen=True)
class KeptRows:
    """The alternatives' rows of a main run, how many distinct programs shared its limits, and
    its inputs (``inputs_digest``): a spec's inputs change with the workspace's tests."""

    rows: tuple[tuple[Outcome, ...], ...]
    shared: int
    inputs: str

    def hold_for(self, inputs: Sequence[Input]) -> bool:
        return self.inputs == inputs_digest(inputs)

    def beside(self, report: ExecutionReport) -> ExecutionReport:
        """A run of yours alone (row 0 of ``report``) as the run of every program: the kept rows
        after yours.  A module that no longer loads fails every program, as in a whole run."""
        n = len(report.outcomes[0]) if report.outcomes else 0
        if report.module_error is not None or any(len(row) != n for row in self.rows):
            rows = [list(report.outcomes[0])] * len(self.rows) if report.outcomes else [[] for _ in self.rows]
            errors = [report.module_error] * len(self.rows)
        else:
            rows, errors = [list(row) for row in self.rows], [None] * len(self.rows)
        return replace(
            report,
            outcomes=report.outcomes[:1] + rows,
            load_errors=report.load_errors[:1] + errors,
            timeouts=report.timeouts[:1] + [0] * len(self.rows),
        )


def inputs_digest(inputs: Sequence[Input]) -> str:
    """What identifies a run's inputs, in their order."""
    digest = hashlib.blake2b(digest_size=16)
    for inp in inputs:
        digest.update(inp.source().encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


class _Recent(OrderedDict[_K, _V]):
    """At most ``size`` items, the least recently kept or recalled going first."""

    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def recall(self, key: _K) -> _V | None:
        found = self.get(key)
        if found is not None:
            self.move_to_end(key)
        return found

    def keep(self, key: _K, value: _V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


def beside(source: str | None, yours: tuple[str, str] | None) -> str | None:
    """The module's text without your function, when no other part of it names the function;
    else the whole text (None: there is no function to leave out)."""
    if source is None or yours is None:
        return source
    function_source, name = yours
    if function_source not in source:
        return source
    rest = source.replace(function_source, "\0", 1)
    return source if re.search(rf"\b{re.escape(name)}\b", rest) else rest


class SeenView:
    """``SeenOutcomes`` by program index (0 is yours), for the programs of one check."""

    def __init__(self, seen: SeenOutcomes, prints: list[str]):
        self._seen, self._prints = seen, prints

    @property
    def prints(self) -> tuple[str, ...]:
        """Every program's fingerprint, by index."""
        return tuple(self._prints)

    def get(self, program: int, key: str) -> Outcome | None:
        return self._seen.get(self._prints[program], key)

    def put(self, program: int, key: str, outcome: Outcome) -> None:
        self._seen.put(self._prints[program], key, outcome)
