"""The worker package (``execution/coherence_worker``): stdlib only, relative imports only, the
wire format both sides share, and nothing of coherence within a program's reach."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from coherence.engine.errors import ConfigurationError
from coherence.engine.execution import records
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.coherence_worker import protocol
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.outcomes import Outcome
from tests.support.imports import imports

PACKAGE = Path(sb.WORKER).with_name("coherence_worker")


def _imports(path: Path) -> tuple[list[str], list[int]]:
    """(absolute module names, relative import levels) of every import in a source file."""
    found = imports(path)
    return [i.module for i in found if not i.level], [i.level for i in found if i.level]


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_each_module_imports_the_standard_library_and_its_siblings_only(path):
    names, levels = _imports(path)
    outside = [n for n in names if n.split(".")[0] not in sys.stdlib_module_names]
    assert outside == [], f"{path.name} imports {outside}: the worker runs under the user's interpreter"
    assert all(level == 1 for level in levels), f"{path.name} reaches outside the package"


def test_the_launcher_only_imports_the_package():
    names, levels = _imports(Path(sb.WORKER))
    assert names == ["coherence_worker.__main__"] and levels == []


def test_the_job_s_input_frame_has_the_keys_the_worker_reads():
    frame = Executor._job_inputs(["((1,), {})", "((2,), {})"], [None, None], last=[1], anchor=0)
    assert tuple(frame) == protocol.INPUT_KEYS
    assert frame["order"] == [0, 1] and frame["late"] == [1] and frame["anchor"] == 0


def test_reserved_outcomes_travel_out_of_band_and_exception_names_never_become_one():
    # "!<word>" records are the only way to a reserved outcome; only a leader writes them
    assert records.reserved_outcome(protocol.reserved(protocol.BUDGET_EXCEEDED)) == Outcome.raised(
        protocol.BUDGET_EXCEEDED
    )
    assert records.reserved_outcome(protocol.reserved("Crash(SIGSEGV)")) == Outcome.raised("Crash(SIGSEGV)")
    assert records.reserved_outcome(b"!Whatever") == records.FORGED
    # a program's own exception spelled like one stays the program's, in any JSON spelling
    for key in (
        protocol.raised(protocol.BUDGET_EXCEEDED),
        b'["raise",null,null,"Budget\\u0045xceeded"]',
        protocol.raised("Crash(SIGKILL)"),
    ):
        o = records.outcome_from_record(key)
        assert o.kind == "raise" and not protocol.is_reserved(o.error) and o.error.startswith("the program's own ")
    assert records.outcome_from_record(protocol.raised("ValueError")) == Outcome.raised("ValueError")
    # the leader finds a child's claims in a chunk by this mark, which every claim line holds
    assert protocol.CLAIM_HINT in b"3 7 " + protocol.reserved(protocol.TIMEOUT)


def _bwrap_ok() -> bool:
    try:
        return sb.bwrap_works(sb.probe_interpreter())
    except ConfigurationError:
        return False


# The default run keeps the guard (it works on every machine, and bwrap adds its layers on top of
# the same guards); the bubblewrap runs are marked slow, and CI runs them.
@pytest.fixture(params=["guard", pytest.param("bwrap", marks=pytest.mark.slow)])
def mode(request) -> str:
    if request.param == "bwrap" and not _bwrap_ok():
        pytest.skip("bubblewrap does not work here")
    return request.param


PEEK = """
def f(name):
    try:
        __import__(name)
    except ImportError:
        return "hidden"
    return "visible"
"""


def test_a_program_cannot_import_coherence_s_modules_beside_the_launcher(mode):
    """The launcher's directory holds the rest of coherence's execution code (program.py,
    sandbox.py, ...): the worker takes it off ``sys.path`` before any program loads, so those
    names stay free for the user's own modules.  The standard library stays importable."""
    names = ["program", "procs", "sandbox", "json"]
    report = Executor(limits=ExecutionLimits(call_timeout=2.0), sandbox=mode).run(
        ModuleContext(), [Program("f", PEEK)], [f"(({n!r},), {{}})" for n in names]
    )
    assert report.load_errors == [None], report.diagnostics
    got = [o.value for o in report.outcomes[0]]
    assert got == [["S", "hidden"]] * 3 + [["S", "visible"]]
