"""Timeouts decide no verdict (``verdict.timeouts``): an input where a call ran out of time is left
out, unless the timeout is a hang beside programs that answer at once.  Real checks in the real
sandbox; a call's time is set by the programs themselves (they sleep on one input), and a busy
machine is played by a shorter call timeout."""

from __future__ import annotations

import json

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.markers import find_targets
from coherence.engine.outcomes import Outcome
from coherence.engine.verdict.timeouts import timed_out_with_finishers

# The docstring's example seeds x = 7, once, among the generated inputs.
DOC = '    """Twice x.\n\n    >>> double(7)\n    14\n    """\n'
INPUTS = 60


def _source(body: str) -> str:
    return "import time\n\n\n# coherence\ndef double(x: int) -> int:\n" + DOC + body


def _alternative(body: str) -> str:
    return "import time\n\n\ndef double(x):\n" + body


HONEST = _alternative("    return 2 * x\n")
# as slow as the user's function on x = 7: both well over a tenth of the call timeouts below
SLOWISH = _alternative("    if x == 7:\n        time.sleep(0.1)\n    return 2 * x\n")


async def _check(tmp_path, user_body: str, alternatives: list[str], call_timeout: float):
    root = tmp_path / f"t{call_timeout}"
    root.mkdir()
    replay = root / "samples.jsonl"
    replay.write_text(json.dumps({"entry_point": "double", "candidates": alternatives}) + "\n")
    source = _source(user_body)
    (target,) = find_targets(source, str(root / "m.py"))
    config = CheckConfig(
        replay=str(replay),
        samples=len(alternatives) + 1,
        inputs=INPUTS,
        call_timeout=call_timeout,
        min_alternatives=2,
        workspace=str(root),
    )
    return await Checker(config).check(target)


async def test_a_call_near_its_limit_gives_the_same_verdict_either_side_of_it(tmp_path):
    # Every program takes a while on x = 7, one a little longer: with a generous call timeout all
    # finish; with a tight one (a busy machine) that one times out there.  Same verdict.
    near = _alternative("    if x == 7:\n        time.sleep(0.3)\n    return 2 * x\n")
    user = "    if x == 7:\n        time.sleep(0.1)\n    return 2 * x\n"
    alternatives = [SLOWISH, near, SLOWISH, HONEST]
    calm = await _check(tmp_path, user, alternatives, call_timeout=1.0)
    busy = await _check(tmp_path, user, alternatives, call_timeout=0.25)
    assert calm.status == busy.status == "coherent", (busy.status, busy.reason, busy.sampling)
    assert calm.severity == busy.severity and calm.trust == busy.trust
    assert (calm.inputs, calm.inputs_over_budget, calm.timeouts) == (INPUTS, 0, 0)
    # the timed-out input is left out for everyone, and n counts only the inputs kept
    assert busy.timeouts >= 1 and busy.inputs_over_budget == 1 and busy.inputs == INPUTS - 1
    assert busy.samples == calm.samples == 5


async def test_your_timeout_beside_slow_alternatives_is_left_out(tmp_path):
    user = "    if x == 7:\n        time.sleep(0.6)\n    return 2 * x\n"
    result = await _check(tmp_path, user, [SLOWISH, SLOWISH, SLOWISH], call_timeout=0.25)
    assert result.status == "coherent", (result.status, result.reason)
    assert result.inputs == INPUTS - 1 and result.inputs_over_budget == 1


async def test_your_hang_where_the_others_answer_at_once_is_reported(tmp_path):
    # an infinite loop is a bug, not noise: the input stays, and the verdict says so (at most
    # an information: a timeout says nothing of what your function would return)
    user = "    if x == 7:\n        while True:\n            pass\n    return 2 * x\n"
    result = await _check(tmp_path, user, [HONEST, HONEST, HONEST], call_timeout=0.25)
    assert result.status == "incoherent", (result.status, result.reason)
    assert result.inputs == INPUTS and result.inputs_over_budget == 0
    assert result.severity == "information", (result.severity, result.reason)


async def test_an_alternative_that_hangs_where_yours_is_wrong_cannot_take_the_input_away(tmp_path):
    user = "    if x == 7:\n        return 0\n    return 2 * x\n"
    hang = _alternative("    if x == 7:\n        while True:\n            pass\n    return 2 * x\n")
    result = await _check(tmp_path, user, [hang, HONEST, HONEST, HONEST], call_timeout=0.25)
    assert result.status == "incoherent", (result.status, result.reason)
    assert result.inputs == INPUTS and result.inputs_over_budget == 0
    assert result.samples == 5 and result.too_slow == 0  # its vote elsewhere stays too
    assert result.severity == "warning", (result.severity, result.reason)
    assert result.counterexample is not None and result.counterexample.call == "double(7)"
    assert result.counterexample.yours == "0"


def test_only_inputs_with_a_timeout_and_a_finisher_can_be_hangs():
    ok, timeout = Outcome.returned(["I", "1"]), Outcome.raised("Timeout")
    never = Outcome.raised("BudgetExceeded")
    rows = [[ok, timeout, timeout, ok], [timeout, timeout, never, Outcome.raised("ValueError")]]
    assert timed_out_with_finishers(rows) == [0]
