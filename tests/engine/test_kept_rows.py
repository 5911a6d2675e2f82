"""A body edit runs yours alone: the alternatives' rows of the check before are kept
(``execution.seen.KeptRows``), and the result is the one a checker that kept nothing gives."""

from __future__ import annotations

import json
import textwrap

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution.executor import BUDGET_EXCEEDED, ExecutionReport
from coherence.engine.execution.seen import SeenOutcomes
from coherence.engine.execution.worker_run import LOAD_ERROR, TIMEOUT
from coherence.engine.inputs import Input
from coherence.engine.markers import find_targets
from coherence.engine.outcomes import Outcome
from tests.conftest import EXAMPLES
from tests.engine.test_check import counting, examples_checker

SAME = ("sampling", "status", "severity", "incoherence", "trust", "inputs", "counterexample", "error_lower_bound")


def same_result(a, b) -> None:
    assert {k: getattr(a, k) for k in SAME} == {k: getattr(b, k) for k in SAME}


@pytest.mark.parametrize(
    "edit",
    [
        'ch in "aeiou") + 0',  # the same function
        'ch in "aeiou") + (s.count("A") if len(s) == 2 else 0)',  # yours now differs elsewhere
        'ch.lower() in "aeiou")',  # yours is now right
    ],
)
async def test_a_body_edit_runs_yours_alone_and_finds_what_a_fresh_check_finds(edit):
    source = (EXAMPLES / "textutils.py").read_text()
    path = str(EXAMPLES / "textutils.py")
    edited = source.replace('ch in "aeiou")', edit)
    assert edited != source
    checker, executor = counting(examples_checker())
    first = await checker.check(find_targets(source, path)[0])
    assert executor.jobs[0] == first.samples
    executor.jobs.clear()
    kept = await checker.check(find_targets(edited, path)[0])
    assert executor.jobs[0] == 1  # the main run: yours alone
    fresh = await examples_checker().check(find_targets(edited, path)[0])
    same_result(kept, fresh)


async def test_a_module_that_names_your_function_elsewhere_runs_every_program(tmp_path):
    """An alternative takes your function's place in the module: where another function calls
    it, what the alternatives return depends on your body, and none of their rows is kept."""
    source = textwrap.dedent(
        '''
        # coherence
        def double(n: int) -> int:
            """Twice n."""
            return 2 * n if n < 10 else 2 * n + 1


        def quadruple(n):
            return double(double(n))
        '''
    )
    alternative = "def double(n):\n    return quadruple(n) // 2\n"
    replay = tmp_path / "s.jsonl"
    replay.write_text(json.dumps({"entry_point": "double", "candidates": [alternative] * 3}) + "\n")
    config = CheckConfig(replay=str(replay), samples=4, inputs=200)
    checker, executor = counting(Checker(config))
    path = str(tmp_path / "m.py")
    await checker.check(find_targets(source, path)[0])
    executor.jobs.clear()
    edited = source.replace("2 * n + 1", "2 * n + 3")
    kept = await checker.check(find_targets(edited, path)[0])
    assert executor.jobs[0] == 4
    same_result(kept, await Checker(config).check(find_targets(edited, path)[0]))


async def test_new_test_files_run_every_program_on_the_new_inputs(tmp_path):
    """The workspace's tests seed inputs: with a new test file the spec's inputs change, and
    the rows kept for the old ones are not used."""
    source = textwrap.dedent(
        '''
        # coherence
        def double(n: int) -> int:
            """Twice n."""
            return 2 * n if n != 31415926 else 1
        '''
    )
    (tmp_path / "m.py").write_text(source)
    replay = tmp_path / "s.jsonl"
    replay.write_text(json.dumps({"entry_point": "double", "candidates": ["def double(n):\n    return 2 * n\n"] * 3}))
    config = CheckConfig(replay=str(replay), samples=4, inputs=200, workspace=str(tmp_path))
    checker, executor = counting(Checker(config))
    path = str(tmp_path / "m.py")
    first = await checker.check(find_targets(source, path)[0])
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text("from m import double\n\n\ndef test_big():\n    double(31415926)\n")
    executor.jobs.clear()
    edited = source.replace("else 1", "else 3")
    kept = await checker.check(find_targets(edited, path)[0])
    assert executor.jobs[0] == 1 and 4 in executor.jobs  # yours alone was started, then every program
    fresh = await Checker(config).check(find_targets(edited, path)[0])
    same_result(kept, fresh)
    assert kept.status == "incoherent" and first.status == "coherent"  # the test's input is the one


def _report(rows, module_error=None) -> ExecutionReport:
    return ExecutionReport(
        outcomes=[list(r) for r in rows],
        rerun=[],
        load_errors=[module_error] * len(rows),
        module_error=module_error,
        sandbox="guard",
        seconds=0.0,
        timeouts=[0] * len(rows),
    )


@pytest.mark.parametrize("lost", [Outcome.raised(BUDGET_EXCEEDED), TIMEOUT, LOAD_ERROR])
def test_rows_the_machine_had_a_say_in_are_not_kept(lost):
    seen, inputs = SeenOutcomes(), [Input((1,), ()), Input((2,), ())]
    seen.keep_rows(["a", "b"], "spec", inputs, [[Outcome.returned(1), lost], [Outcome.returned(1)] * 2], 2)
    assert seen.rows(["a", "b"], "spec") is None
    seen.keep_rows(["a", "b"], "spec", inputs, [[Outcome.returned(1), Outcome.returned(2)]] * 2, 3)
    kept = seen.rows(["a", "b"], "spec")
    assert kept is not None and kept.shared == 3 and kept.hold_for(inputs) and not kept.hold_for(inputs[:1])


def test_a_module_that_no_longer_loads_fails_the_kept_rows_too():
    seen, inputs = SeenOutcomes(), [Input((1,), ())]
    seen.keep_rows(["a"], "spec", inputs, [[Outcome.returned(1)]], 2)
    kept = seen.rows(["a"], "spec")
    assert kept is not None
    whole = kept.beside(_report([[LOAD_ERROR]], module_error="NameError: x"))
    assert whole.outcomes == [[LOAD_ERROR], [LOAD_ERROR]] and whole.load_errors == ["NameError: x"] * 2
    whole = kept.beside(_report([[Outcome.returned(2)]]))
    assert whole.outcomes == [[Outcome.returned(2)], [Outcome.returned(1)]] and whole.timeouts == [0, 0]


def test_rows_of_long_outputs_are_not_kept():
    seen, inputs = SeenOutcomes(), [Input((i,), ()) for i in range(3)]
    long = [Outcome.returned("x" * (2 << 20) + str(i)) for i in range(3)]
    seen.keep_rows(["a"], "spec", inputs, [long], 2)
    assert seen.rows(["a"], "spec") is None
    seen.keep_rows(["a"], "spec", inputs, [long[:1] * 3], 2)  # one distinct outcome, 2 MB
    assert seen.rows(["a"], "spec") is not None
