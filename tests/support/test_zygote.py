"""The test zygote (zygote.py beside this file) stands in for ``python -m coherence``: a forked
command must answer as the real one does, in its output, exit code, working directory,
environment and signals, and an environment that changes what Python imports gets the real one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.zygote import coherence_argv, forked_command

REAL = [sys.executable, "-m", "coherence"]


def both(args: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    env = kwargs.pop("env", dict(os.environ))
    forked = forked_command(env)
    if forked is None:
        pytest.skip("COHERENCE_TEST_ZYGOTE=0: no zygote")
    run = dict(capture_output=True, text=True, timeout=120, env=env, **kwargs)
    return subprocess.run([*forked, *args], **run), subprocess.run([*REAL, *args], **run)


def test_a_forked_command_prints_and_exits_as_the_real_one(tmp_path):
    (tmp_path / "m.py").write_text("# coherence\ndef f(x: int) -> int:\n    return x\n")
    for args in (["check", "--help"], ["check", "missing.py"], ["check", "m.py", "--samples", "0"]):
        forked, real = both(args, cwd=tmp_path)
        assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr), args


def test_the_child_gets_the_callers_directory_environment_and_stdin(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.coherence]\nsamples = 'many'\n")
    (tmp_path / "m.py").write_text("# coherence\ndef f(x: int) -> int:\n    return x\n")
    forked, real = both(["check", "m.py"], cwd=tmp_path, input="ignored\n")
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert str(tmp_path / "pyproject.toml") in forked.stderr  # found from the working directory
    (tmp_path / "pyproject.toml").unlink()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    forked, real = both(["check", "m.py"], cwd=tmp_path, env={**env, "COHERENCE_MODEL": "openai/x-1"})
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert "No API key for openai/x-1" in forked.stderr  # the model named by its environment


def test_signals_reach_the_child_and_its_end_is_the_launchers():
    codes = []
    for argv in (coherence_argv(), REAL):
        proc = subprocess.Popen([*argv, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.0)  # the server is reading its stdin
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        codes.append(proc.returncode)
    assert codes[0] == codes[1]


def test_an_environment_that_changes_imports_gets_the_real_command(tmp_path):
    assert forked_command({**os.environ, "PYTHONPATH": str(tmp_path)}) is None
    assert forked_command({**os.environ, "PYTHONIOENCODING": "cp1252"}) is None
    assert coherence_argv({**os.environ, "PYTHONSAFEPATH": "1"}) == REAL


def test_the_zygote_is_not_a_descendant_of_the_tests_process():
    argv = forked_command(dict(os.environ))
    if argv is None:
        pytest.skip("COHERENCE_TEST_ZYGOTE=0: no zygote")
    proc = subprocess.Popen([*argv, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)
        # the launcher has no children: the server it stands for is the zygote's
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert children == []
    finally:
        proc.communicate(timeout=30)  # its stdin closes: the editor went away
    assert proc.returncode in (0, 1)
