"""litellm is the ``llm`` extra (issue 49, item 7): replaying recorded samples never imports it,
and a model configured without it is one message that names the fix.  The real CLI in a
subprocess whose Python cannot import litellm (``tests.support.no_litellm``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO
from tests.support.no_litellm import refused, without_litellm

FIX = "pip install 'coherence[llm]'"


def run_cli(*args, cwd: Path, tmp_path: Path, env: dict | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_") and not k.endswith("_API_KEY")}
    base.update(env or {}, XDG_CACHE_HOME=str(tmp_path / "xdg-cache"))
    full, log = without_litellm(tmp_path / "no-litellm", base)
    proc = subprocess.run(
        [sys.executable, "-m", "coherence", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=600,
    )
    return proc, log


def test_the_blocker_refuses_litellm(tmp_path):
    env, log = without_litellm(tmp_path / "no-litellm")
    proc = subprocess.run([sys.executable, "-c", "import litellm"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1 and "ModuleNotFoundError: No module named 'litellm'" in proc.stderr
    assert refused(log) == ["litellm"]


def test_the_demo_runs_without_litellm(tmp_path):
    proc, log = run_cli("check", "examples/", cwd=REPO, tmp_path=tmp_path)
    assert proc.returncode == 1, proc.stderr  # the demo's three warnings
    assert "5 function(s): 3 warning, 2 coherent" in proc.stdout
    assert "count_vowels: warning · 9 of 9 alternatives disagree with yours" in proc.stdout
    assert refused(log) == []  # nothing on the replay path even tried


def test_a_replay_file_checks_without_litellm(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(EXAMPLES / "textutils.py", project / "textutils.py")
    samples = tmp_path / "samples.jsonl"
    shutil.copy(EXAMPLES / "recorded_samples.jsonl", samples)
    proc, log = run_cli(
        "check",
        "textutils.py",
        "--replay",
        samples,
        "--inputs",
        "200",
        "--format",
        "json",
        cwd=project,
        tmp_path=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert '"status": "incoherent"' in proc.stdout and '"name": "count_vowels"' in proc.stdout
    assert refused(log) == []


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_model_without_litellm_is_one_message_with_the_fix(tmp_path, dry_run):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES, project, ignore=shutil.ignore_patterns("pyproject.toml", "__pycache__"))
    args = ["check", ".", "--model", "openai/gpt-4o-mini", *(["--dry-run"] if dry_run else [])]
    proc, log = run_cli(*args, cwd=project, tmp_path=tmp_path, env={"OPENAI_API_KEY": "sk-test"})
    assert proc.returncode == 2, proc.stdout + proc.stderr  # the run's configuration, before any work
    said = [line for line in proc.stderr.splitlines() if line.strip()]
    assert said == [
        "coherence: The model openai/gpt-4o-mini is reached through litellm, which is not installed here: "
        f"{FIX} (replaying recorded samples needs no litellm)."
    ]
    assert proc.stdout == ""
    assert refused(log) == ["litellm"]  # looked for once, before any work


def test_under_pre_commit_the_fix_is_the_hooks_dependency(tmp_path):
    source = (EXAMPLES / "textutils.py").read_text()
    (tmp_path / "m.py").write_text(source)
    proc, _ = run_cli(
        "check", "m.py", "--model", "ollama/qwen2.5-coder", "--api-base", "http://127.0.0.1:9",
        cwd=tmp_path, tmp_path=tmp_path, env={"PRE_COMMIT": "1"},
    )  # fmt: skip
    assert proc.returncode == 2
    assert "additional_dependencies: ['litellm>=1.50']" in proc.stderr and FIX not in proc.stderr
    assert proc.stderr.count("litellm, which is not installed") == 1
