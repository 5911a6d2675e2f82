"""Thin evidence: a function that agrees with the one alternative left after the others failed
to parse is not called coherent (``min_alternatives``); the result says what it rests on."""

from __future__ import annotations

import json

from tests.cli.test_cli_newcomer import functions, run_cli

TRIPLE = '''# coherence
def triple(x: int) -> int:
    """Three times x.

    >>> triple(2)
    6
    """
    return 3 * x
'''
GOOD = "def triple(x: int) -> int:\n    return x + x + x\n"
BROKEN = "def triple(x: int) -> int:\n    return x *\n"  # a syntax error: not an alternative


def project(tmp_path, good: int, broken: int, setting: str = ""):
    line = {
        "entry_point": "triple",
        "task_id": "t/triple",
        "model": "m",
        "candidates": [GOOD] * good + [BROKEN] * broken,
    }
    (tmp_path / "samples.jsonl").write_text(json.dumps(line) + "\n")
    (tmp_path / "pyproject.toml").write_text(f'[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 60\n{setting}')
    (tmp_path / "m.py").write_text(TRIPLE)


def test_one_alternative_of_nine_is_not_coherent(tmp_path):
    project(tmp_path, good=1, broken=8)
    proc = run_cli("check", "m.py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # not checked enough: CI must not pass it
    result = functions(proc)["triple"]
    assert result["status"] == "error"
    assert result["reason"] == (
        "too little evidence to call it coherent: it agrees with 1 alternative only "
        "(2 of 10 samples; 8 with a syntax error), and min_alternatives is 3"
    )
    assert result["incoherence"] == 0.0 and result["samples"] == 2  # the measurement is still reported
    text = run_cli("check", "m.py", cwd=tmp_path)
    assert "triple: error — too little evidence to call it coherent" in text.stdout


def test_enough_alternatives_or_a_lower_minimum_is_coherent(tmp_path):
    project(tmp_path, good=3, broken=6)
    assert functions(run_cli("check", "m.py", "--format", "json", cwd=tmp_path))["triple"]["status"] == "coherent"
    project(tmp_path, good=1, broken=8, setting="min_alternatives = 1\n")
    assert functions(run_cli("check", "m.py", "--format", "json", cwd=tmp_path))["triple"]["status"] == "coherent"


def test_asking_for_fewer_alternatives_than_the_minimum_is_the_users_choice(tmp_path):
    project(tmp_path, good=1, broken=0)
    proc = run_cli("check", "m.py", "--samples", "2", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert functions(proc)["triple"]["status"] == "coherent"


def test_a_bad_minimum_is_a_usage_error(tmp_path):
    project(tmp_path, good=3, broken=0, setting="min_alternatives = 0\n")
    proc = run_cli("check", "m.py", cwd=tmp_path)
    assert proc.returncode == 2 and "min_alternatives must be at least 1, got 0" in proc.stderr
