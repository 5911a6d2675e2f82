"""A workspace test is evidence like a docstring's worked example, and the check is a function of
the workspace's tests as they are now: a test that asserts what yours contradicts is a warning on
that example, never higher trust, and deleting it gives back the result before it existed."""

from __future__ import annotations

import shutil

from coherence.engine.check import Checker
from coherence.engine.config import load_project_config
from coherence.engine.inputs.seeds.workspace import asserted_examples
from coherence.engine.markers import find_targets
from tests.conftest import EXAMPLES

# what "Add counterexample as a regression test expecting theirs" writes for the demo's count_vowels
REGRESSION_TEST = "from textutils import count_vowels\n\n\ndef test_theirs():\n    assert count_vowels('A') == 1\n"


def count_vowels(folder):
    source = (folder / "textutils.py").read_text()
    return next(t for t in find_targets(source, str(folder / "textutils.py")) if t.name == "count_vowels")


def test_asserts_of_the_function_are_its_worked_examples(tmp_path):
    (tmp_path / "test_mod.py").write_text(
        "def test_f():\n    assert f(2, b=[1]) == 3\n    assert 'x' == f('y')\n    assert f(g()) == 1\n    assert other(1) == 2\n"
    )
    target = find_targets("# coherence\ndef f(a, b=None):\n    return a\n", str(tmp_path / "mod.py"))[0]
    found = [(ex.call, ex.value) for ex in asserted_examples(target.spec, tmp_path)]
    assert found == [("f(2, b=[1])", 3), ("f('y')", "x")]


async def test_a_failing_workspace_test_is_a_contradicted_example_and_leaves_no_trace(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(EXAMPLES, ws, ignore=shutil.ignore_patterns("__pycache__", "test_*"))
    checker = Checker(load_project_config(ws).merged(inputs=300, workspace=str(ws)))
    alone = await checker.check(count_vowels(ws))
    assert alone.severity == "warning"

    (ws / "test_textutils_coherence.py").write_text(REGRESSION_TEST)
    tested = await checker.check(count_vowels(ws))
    assert tested.severity == "warning" and tested.evidence["kind"] == "example"
    assert tested.counterexample is not None and tested.counterexample.call == "count_vowels('A')"
    assert tested.trust <= alone.trust  # a test yours fails is never evidence for it

    (ws / "test_textutils_coherence.py").unlink()
    again = await checker.check(count_vowels(ws))  # the same checker: its caches hold the test's inputs
    assert (again.severity, again.evidence, again.trust) == (alone.severity, alone.evidence, alone.trust)
    assert again.counterexample is not None and alone.counterexample is not None
    assert again.counterexample.call == alone.counterexample.call
