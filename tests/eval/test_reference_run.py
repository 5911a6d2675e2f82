"""The eval's reference solution runs beside the check, never inside it: the check's run holds the
programs a user's check would hold, with their budgets (the budgets of m programs, not m + 1), so
what the eval measures is what a user's check does."""

import pytest

from coherence.engine.execution.executor import Executor
from coherence.eval.corpus import BenchmarkTask, SampleTask
from coherence.eval.task import EvalOptions, evaluate_task

RIGHT = "def f(x):\n    return x + 1\n"
# the same function, written differently each time (copies of one program run once)
ALTERNATIVES = [RIGHT, "def f(x):\n    y = x\n    return y + 1\n", "def f(x):\n    return 1 + x\n"]
HANGS = "def f(x):\n    while True:\n        pass\n"


def _evaluate(reference: str) -> dict:
    sample = SampleTask("MBPP", "fake", 0.0, 1, "f", "(x: int)", "Return x plus one.", ALTERNATIVES)
    task = BenchmarkTask("MBPP", 1, "", code=reference, test_list=["assert f(1) == 2"])
    opts = EvalOptions(samples=3, inputs=40, call_timeout=0.2, program_budget=2.0, run_budget=2.0, label_timeout=2.0)
    # one slot, as each task gets with --jobs as many as the cores
    return evaluate_task(sample, task, opts, workers=1)


def test_the_check_runs_its_own_programs_and_the_reference_runs_apart(monkeypatch):
    runs: list[list[str]] = []
    prepare = Executor.prepare

    def spy(self, module, programs, **kw):
        runs.append([p.label for p in programs])
        return prepare(self, module, programs, **kw)

    monkeypatch.setattr(Executor, "prepare", spy)
    rec = _evaluate(RIGHT)
    assert rec["status"] == "coherent" and rec["error"] == 0.0
    assert ["yours", "alternative 1", "alternative 2"] in runs  # the check's run: no reference in it
    assert ["reference"] in runs  # the reference's own run
    assert not any("reference" in labels and len(labels) > 1 for labels in runs)


@pytest.mark.parametrize("reference", [RIGHT, HANGS], ids=["fast", "hangs"])
def test_a_reference_that_hangs_takes_no_input_from_the_check(reference):
    rec = _evaluate(reference)
    assert rec["status"] == "coherent" and rec["inputs"] == 40
    # and the measure against the reference says where it never answered
    assert (rec["reference_timeouts"] == 0) == (reference == RIGHT)
