"""The tail budget: past its first TAIL_HEAD inputs (the smallest), each program's calls share a few
CPU seconds, and the inputs they have no time for are left out for every program.  Real sandbox."""

from __future__ import annotations

import json

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution.executor import TAIL_FLOOR, TAIL_HEAD, Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.markers import find_targets
from coherence.engine.outcomes import Outcome, canonical

MODULE = ModuleContext()
# ints 0..149 in the cheapest-first order: 0..9, then 10..99, then 100..149
INPUTS = [f"(({i},), {{}})" for i in range(150)]
# CPU-bound (the tail budget is CPU time, which a sleep does not spend): about 10^7 loop steps,
# a few tenths of a second, from x = 120 on; microseconds below
GROWING = "def grow(x):\n    n = 0\n    for _ in range(10 ** 7 if x >= 120 else x):\n        n += 1\n    return x + 1\n"
CHEAP = "def grow(x):\n    return x + 1\n"


def executor(**limits) -> Executor:
    # a share is tail_budget / programs; call_timeout far above a costly call's cost
    base = dict(call_timeout=10.0, program_budget=60.0, jobs=1, sandbox_mode="guard")
    base.update(limits)
    sandbox = base.pop("sandbox_mode")
    return Executor(limits=ExecutionLimits(**base), sandbox=sandbox)


def ok(value) -> Outcome:
    return Outcome.returned(canonical(value))


def errors(row) -> list[str | None]:
    return [o.error for o in row]


def test_the_costly_largest_inputs_are_left_out_for_every_program_and_the_cheap_ones_kept():
    """Yours (the anchor) runs out of its share on x = 120, the first costly call: that input
    and every later one are BudgetExceeded, for the cheap alternative too (it skips them), and
    every input before is compared as usual."""
    run = executor(tail_budget=0.1)  # (0.05 s each: two programs in one slot)
    grow, cheap = Program("grow", GROWING), Program("grow", CHEAP)
    shared = run.run(MODULE, [grow, cheap], INPUTS, anchor=0).outcomes
    expected = [ok(x + 1) for x in range(120)]
    assert shared[0][:120] == shared[1][:120] == expected
    assert errors(shared[0][120:]) == errors(shared[1][120:]) == ["BudgetExceeded"] * 30


def test_without_a_tail_budget_every_input_runs():
    run = executor()
    inputs = INPUTS[:122]  # (two costly calls per program)
    shared = run.run(MODULE, [Program("grow", GROWING), Program("grow", CHEAP)], inputs, anchor=0).outcomes
    assert shared[0] == shared[1] == [ok(x + 1) for x in range(122)]


def test_the_first_inputs_run_whatever_they_cost():
    """A function slow on every input keeps its first TAIL_HEAD inputs (under its program
    budget), then stops within its share: one contiguous run of left-out inputs at the end."""
    slow = "def grow(x):\n    n = 0\n    for _ in range(2 * 10 ** 5):\n        n += 1\n    return x + 1\n"
    run = executor(tail_budget=0.1)
    shared = run.run(MODULE, [Program("grow", slow), Program("grow", CHEAP)], INPUTS, anchor=0).outcomes
    assert shared[0][:TAIL_HEAD] == [ok(x + 1) for x in range(TAIL_HEAD)]
    kept = errors(shared[0]).index("BudgetExceeded")
    assert TAIL_HEAD <= kept < 150
    assert shared[0][:kept] == [ok(x + 1) for x in range(kept)]
    assert errors(shared[0][kept:]) == ["BudgetExceeded"] * (150 - kept)


@pytest.mark.parametrize("m", [2, 10, 40])
def test_a_programs_share_is_the_same_on_one_slot_or_many(m):
    """A share of CPU time per program, not of wall time per slot: a check on a one-CPU Ray task
    keeps the inputs it keeps on a laptop's eight cores (CI compares the two)."""
    shares = {executor(tail_budget=1.0, jobs=jobs).limits_for(m).program_tail for jobs in (1, 2, 8)}
    assert shares == {max(TAIL_FLOOR, 1.0 / m)}


def test_an_alternative_is_bound_by_its_own_share_too():
    """The anchor is cheap; the alternative is costly from x = 120: the alternative stops there
    by its own share instead of running its costly calls to the end."""
    run = executor(tail_budget=0.1)
    shared = run.run(MODULE, [Program("grow", CHEAP), Program("grow", GROWING)], INPUTS, anchor=0).outcomes
    assert shared[0] == [ok(x + 1) for x in range(150)]
    assert shared[1][:120] == [ok(x + 1) for x in range(120)]
    assert errors(shared[1][120:]) == ["BudgetExceeded"] * 30


async def test_a_disagreement_on_small_inputs_is_still_found(tmp_path):
    """Yours is wrong on x = 7 and, like every alternative, costly from x = 120: the check keeps
    the inputs below the costly ones, finds the disagreement, and its PAC bound's n counts only
    the inputs kept."""
    src = (
        "# coherence\n"
        "def grow(x: int) -> int:\n"
        '    """x + 1, counted the long way for large x."""\n'
        "    n = 0\n"
        "    for _ in range(3 * 10 ** 6 if x >= 120 else 0):\n"
        "        n += 1\n"
        "    return x + 2 if x == 7 else x + 1\n"
    )
    replay = tmp_path / "s.jsonl"
    alternative = GROWING.replace("10 ** 7", "3 * 10 ** 6")  # (a tenth of a second: over any share here)
    replay.write_text(json.dumps({"entry_point": "grow", "candidates": [alternative] * 3}) + "\n")
    (target,) = find_targets(src, str(tmp_path / "m.py"))
    config = CheckConfig(replay=str(replay), samples=4, inputs=300, call_timeout=10.0, tail_budget=0.1)
    result = await Checker(config).check(target)
    assert result.status == "incoherent", (result.status, result.reason)
    assert result.counterexample is not None and result.counterexample.call == "grow(7)"
    assert TAIL_HEAD <= result.inputs < 300
    assert result.inputs_over_budget == 300 - result.inputs


def test_an_alternative_that_hangs_is_dropped_though_yours_left_the_large_inputs_out():
    """Yours' tail budget left inputs 8.. out, so every program skipped them; the alternative
    that hung on the first inputs is still too slow, judged on the inputs yours reached (what
    HumanEval/100's check with llama's samples kept 2 inputs for)."""
    import numpy as np

    from coherence.engine.verdict.scoring import too_slow

    def runs(*rows: str):  # '.' finished, 'T' timed out, '-' never reached
        return np.array([[c != "-" for c in r] for r in rows]), np.array([[c == "." for c in r] for r in rows])

    yours = "." * 8 + "-" * 22
    assert too_slow(*runs(yours, "TTT" + "-" * 27, yours, yours)) == [1]
