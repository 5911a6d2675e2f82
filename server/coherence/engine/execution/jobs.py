"""What a job sends the worker besides its limits: the programs, the inputs (as sources, or packed
when they can be), and the order the inputs run in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from coherence.engine.execution.program import Program


class Packable(Protocol):
    """An input the worker can load from marshal data (``packed``, base64, or None when it
    cannot) instead of compiling its source; ``inputs.values.Input`` is one."""

    def source(self) -> str: ...

    @property
    def packed(self) -> str | None: ...


def cheapest_first(sources: Sequence[str], last: Sequence[int] = ()) -> list[int]:
    """The order each program runs the inputs in: shortest source first, a cheap stand-in for the
    cost of a call.  A program that runs out of time (its budget, or timeouts in a row) then leaves
    out the largest inputs, the same ones for every program, instead of whatever came last.  The
    inputs ``last`` (ones the function is likely not meant for, see ``inputs.likely``) come after
    all the others, so that hangs on them cannot take the others away."""
    late = set(last)
    return sorted(range(len(sources)), key=lambda i: (i in late, len(sources[i])))


def input_sources(inputs: Sequence[str | Packable]) -> list[str]:
    """The source of each input (``run`` takes sources or ``Packable`` inputs)."""
    return [s if isinstance(s, str) else s.source() for s in inputs]


def encode(job: dict[str, Any]) -> bytes:
    return json.dumps(job).encode("utf-8")


def program_spec(p: Program) -> dict[str, Any]:
    spec = {"entry_point": p.entry_point, "source": p.source, "label": p.label}
    if p.owner:
        spec["owner"] = p.owner
        spec["kind"] = p.method_kind or "instance"
    return spec
