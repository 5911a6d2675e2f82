"""Benchmark labels, run in the sandbox: canonical solutions pass, known-wrong candidates fail, and
the pointwise error excludes inputs where the reference raises."""

import pytest

from coherence.engine.outcomes import Outcome
from coherence.engine.sampling import extract_program
from coherence.eval.labels import label_executor, pointwise_error, run_labels
from coherence.eval.labels import test_file_source as benchmark_test_file

pytestmark = pytest.mark.corpus

# A few tasks of each benchmark, including ones whose tests need a helper of the prompt (poly,
# encode_cyclic) or whose MBPP tests need test_imports.
HUMANEVAL_IDS = ["HumanEval/0", "HumanEval/32", "HumanEval/38", "HumanEval/50", "HumanEval/101"]


@pytest.fixture(scope="module")
def executor():
    return label_executor(timeout=10.0)


def test_humaneval_canonical_solutions_pass_and_wrong_fails(executor, humaneval_tasks):
    for tid in HUMANEVAL_IDS:
        task = humaneval_tasks[tid]
        wrong = f"def {task.entry_point}(*args, **kwargs):\n    return None\n"
        res = run_labels(executor, task, [task.reference, wrong, None], task.entry_point)
        assert res.reference_passed is True, (tid, res.reference_detail)
        assert res.passed == [True, False, False], (tid, res.details)
        assert res.details[2] == "no program"


def test_humaneval_known_wrong_recorded_candidate(executor, humaneval_tasks):
    # A plausible bug: closeness measured only between neighbours in the original order (no
    # sorting); check() catches it on [1.0, 2.0, 5.9, 4.0, 5.0] with threshold 0.95.
    task = humaneval_tasks["HumanEval/0"]
    wrong = (
        "def has_close_elements(numbers, threshold):\n"
        "    return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))\n"
    )
    res = run_labels(executor, task, [wrong], task.entry_point, with_reference=False)
    assert res.passed == [False] and res.details[0] == "raises AssertionError"


def test_mbpp_reference_passes_and_wrong_fails_per_assert(executor, mbpp_tasks):
    checked = 0
    for task in list(mbpp_tasks.values())[:8]:
        import ast

        name = next(
            n.name
            for n in ast.parse(task.code).body
            if isinstance(n, ast.FunctionDef) and n.name in " ".join(task.test_list)
        )
        wrong = f"def {name}(*args, **kwargs):\n    return 'surely wrong'\n"
        res = run_labels(executor, task, [task.reference, wrong], name)
        assert res.passed[0] is True and res.reference_passed is True, (task.task_id, res.details)
        assert res.passed[1] is False and res.details[1].startswith("asserts: "), (task.task_id, res.details)
        assert len(res.details[1].split(", ")) == len(task.test_list)
        checked += 1
    assert checked == 8


def test_mbpp_test_imports_are_available(executor, mbpp_tasks):
    with_imports = [t for t in mbpp_tasks.values() if t.test_imports][:3]
    assert with_imports
    for task in with_imports:
        import ast

        name = next(
            n.name
            for n in ast.parse(task.code).body
            if isinstance(n, ast.FunctionDef) and n.name in " ".join(task.test_list)
        )
        res = run_labels(executor, task, [task.reference], name)
        assert res.passed == [True], (task.task_id, res.details)


def test_recorded_candidates_get_labels(executor, humaneval_tasks, humaneval_samples):
    st = next(s for s in humaneval_samples if s.key == "HumanEval/0")
    codes = [extract_program(c, st.entry_point).code for c in st.candidates[:3]]
    res = run_labels(executor, humaneval_tasks[st.key], codes, st.entry_point)
    assert res.passed == [True, True, True]


def test_test_file_renames_candidate(humaneval_tasks):
    text = benchmark_test_file(humaneval_tasks["HumanEval/0"], "has_close_elements")
    assert "candidate" not in text and "has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)" in text


def test_pointwise_error_excludes_reference_raises():
    ok = lambda v: Outcome.returned(["I", str(v)])  # noqa: E731
    boom = Outcome.raised("ValueError")
    ref = [ok(1), ok(2), boom, ok(4)]
    prog = [ok(1), ok(3), ok(0), boom]
    pw = pointwise_error(prog, ref)
    assert pw.counted == 3 and pw.wrong == [1, 3]
    assert pw.error == pytest.approx(2 / 3)
    assert pointwise_error([boom], [boom]).error is None


def test_pointwise_error_value_only_ignores_mutation():
    ref = [Outcome.returned(["B", False])]
    prog = [Outcome.returned(["B", False], mutated=["T", [["L", [["I", "1"]]]]])]
    pw = pointwise_error(prog, ref)
    assert pw.error == 1.0 and pw.error_value == 0.0
