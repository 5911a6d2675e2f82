"""The command line's configuration: each file uses the config nearest to it, Python 3.10 reads
pyproject.toml (tomli), and the sandboxed worker runs under every supported interpreter as
``--python``.  .ci/run runs this file under 3.10 and 3.13 as well as the default interpreter."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.zygote import coherence_argv

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
# --python: the worker is stdlib-only and says it needs CPython 3.8 or newer (sandbox.py's probe);
# coherence itself requires 3.10.  CI proves every version the worker claims.
WORKER_PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13")


def coherence(*args: str, cwd: Path, python: str = sys.executable) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_")}
    env["PYTHONPATH"] = str(REPO / "server")
    return subprocess.run(
        [*(coherence_argv(env) if python == sys.executable else [python, "-m", "coherence"]), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def interpreter(version: str) -> str | None:
    """A CPython of that version: pyenv's, else one on PATH."""
    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    return found[-1] if found else shutil.which(f"python{version}")


def python310_env() -> str | None:
    """A Python 3.10 that has coherence's dependencies: the venv .ci/run makes from pyenv's 3.10
    (or COHERENCE_TEST_PY310)."""
    for cand in (os.environ.get("COHERENCE_TEST_PY310"), str(REPO / ".venv-3.10" / "bin" / "python")):
        if cand and Path(cand).is_file():
            return cand
    return None


def test_each_file_uses_the_config_nearest_to_it(tmp_path):
    """`coherence check .` at a repository's root used the root's settings for examples/ too."""
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'root'\n\n[tool.coherence]\nsamples = 3\n")
    (tmp_path / "top.py").write_text("# coherence\ndef count_vowels(s: str) -> int:\n    return 0\n")
    (tmp_path / "examples" / "pyproject.toml").write_text(
        '[tool.coherence]\nreplay = "recorded_samples.jsonl"\nsamples = 6\ninputs = 200\n'
    )
    proc = coherence(
        "check", ".", "--format", "json", "--replay", str(EXAMPLES / "recorded_samples.jsonl"), cwd=tmp_path
    )
    funcs = json.loads(proc.stdout)["functions"]
    by_file = {(f["path"], f["name"]): f for f in funcs}
    assert by_file[("top.py", "count_vowels")]["samples"] == 3
    examples = [f for (path, _), f in by_file.items() if path.startswith("examples/")]
    assert len(examples) == 5 and {f["samples"] for f in examples} == {6} and {f["inputs"] for f in examples} == {200}
    assert proc.returncode == 1, proc.stderr


def test_a_broken_config_anywhere_stops_the_run_before_any_work(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "m.py").write_text("# coherence\ndef f(x: int) -> int:\n    return x\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "pyproject.toml").write_text("[tool.coherence]\nsamples = 3\nsamples = 4\n")
    (tmp_path / "b" / "n.py").write_text("x = 1\n")
    proc = coherence("check", ".", "--replay", str(EXAMPLES / "recorded_samples.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert (
        proc.stderr.startswith(f"coherence: {tmp_path / 'b' / 'pyproject.toml'} is not valid TOML")
        and "line 3" in proc.stderr
    )


def test_python_3_10_reads_tool_coherence(tmp_path):
    """On 3.10 pyproject.toml was skipped silently (no tomllib): the demo exited 2, "No model
    configured".  Runs the CLI under pyenv's 3.10.13 (in the venv .ci/run makes of it)."""
    py = python310_env()
    if py is None:
        pytest.skip(
            "no Python 3.10 environment with coherence's dependencies (.ci/run makes .venv-3.10 from pyenv's 3.10)"
        )
    version = subprocess.run(
        [py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip()
    assert version == "3.10"
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    pyproject = tmp_path / "examples" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("inputs = 1000", "inputs = 150"))
    proc = coherence("check", "examples/textutils.py", cwd=tmp_path, python=py)
    assert proc.returncode == 1, proc.stderr
    assert "count_vowels: warning · " in proc.stdout and "10 samples × 150 inputs" in proc.stdout
    pyproject.write_text(pyproject.read_text() + "seed = = 3\nrerun-inputs = 10\n")
    proc = coherence("check", "examples/textutils.py", cwd=tmp_path, python=py)
    assert proc.returncode == 2 and str(pyproject) in proc.stderr and "line 8" in proc.stderr, proc.stderr


@pytest.mark.parametrize("version", WORKER_PYTHONS)
def test_the_sandboxed_worker_runs_under_every_supported_python(version):
    py = interpreter(version)
    if py is None:
        pytest.skip(f"no Python {version} here (pyenv or python{version} on PATH)")
    proc = coherence(
        "check", str(EXAMPLES / "textutils.py"), "--python", py, "--inputs", "100", "--format", "json", cwd=REPO
    )
    assert proc.returncode == 1, proc.stderr
    status = {f["name"]: f["status"] for f in json.loads(proc.stdout)["functions"]}
    assert status == {"count_vowels": "incoherent", "is_palindrome": "coherent"}


def test_an_interpreter_the_worker_does_not_support_is_refused_before_any_work(tmp_path):
    """The boundary of that claim: 3.7 ran the whole check and gave every function the same
    error; now it is a usage error, said once, with nothing checked."""
    py = interpreter("3.7")
    if py is None:
        pytest.skip("no Python 3.7 here (pyenv or python3.7 on PATH)")
    proc = coherence("check", str(EXAMPLES / "textutils.py"), "--python", py, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"coherence: The Python interpreter {py!r} is cpython 3.7.")
    assert line.endswith("coherence needs CPython 3.8 or newer to run code.")
