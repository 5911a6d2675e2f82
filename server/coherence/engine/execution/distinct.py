"""Samples that are the same program run once.

At temperature 0.6 an LLM often writes the same code more than once, up to comments and
formatting: a fifth of the alternatives of the first 20 HumanEval tasks of gpt-4o's recorded
samples, over a third across all 150.  Programs with the same syntax tree run the same way on the
same inputs in the same sandbox (calls are seeded, and the children of one run share their hash
seed), so each distinct program runs once and its row of outcomes stands for every copy.  The
metrics still count every sample: a program the LLM wrote three times is three votes.

The user's own function (``source=None``) is never merged with anything: it runs against its
module, not against its own text.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from coherence.engine.execution.program import Program

if TYPE_CHECKING:
    from coherence.engine.execution.executor import ExecutionReport


def program_key(program: Program) -> tuple | None:
    """What makes two programs the same: how they are called and the syntax tree of their code
    (comments, blank lines and formatting left out).  None for the user's own function."""
    if program.source is None:
        return None
    return (program.entry_point, program.owner, program.method_kind, _tree(program.source))


# A check runs the same alternatives again and again (the main run, every shrinking round, the
# run that describes the counterexample): each source is parsed once.
@functools.lru_cache(maxsize=512)
def _tree(source: str) -> str:
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source  # loading it will fail the same way for every exact copy


def distinct_programs(programs: Sequence[Program]) -> tuple[list[Program], list[int]]:
    """The programs to run, and for each of ``programs`` the index of the one that runs for it."""
    first: dict[tuple, int] = {}
    run: list[Program] = []
    runs_for: list[int] = []
    for program in programs:
        key = program_key(program)
        if key is not None and key in first:
            runs_for.append(first[key])
            continue
        if key is not None:
            first[key] = len(run)
        runs_for.append(len(run))
        run.append(program)
    return run, runs_for


def copy_rows(report: ExecutionReport, runs_for: Sequence[int]) -> ExecutionReport:
    """The report of the distinct programs, with a row per original program (copies share the
    outcome lists, which nothing downstream changes in place)."""
    report.outcomes = [report.outcomes[r] for r in runs_for]
    report.load_errors = [report.load_errors[r] for r in runs_for]
    report.timeouts = [report.timeouts[r] for r in runs_for]
    return report


__all__ = ["copy_rows", "distinct_programs", "program_key"]
