"""The pre-commit hook (.pre-commit-hooks.yaml), as a user's repository runs it: ``pre-commit
try-repo`` of this checkout in a temporary git repository whose pyproject.toml replays recorded
samples (no LLM).  pre-commit builds the hook's own environment from this checkout, as it would
from a release: minutes, once per test run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.cli.test_cli_newcomer import COUNT_VOWELS
from tests.conftest import EXAMPLES, REPO

pytestmark = pytest.mark.slow

SOURCE = (EXAMPLES / "textutils.py").read_text()
PALINDROME = SOURCE[SOURCE.index("# coherence\ndef is_palindrome") :]


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_hook_checks_the_python_files_it_is_given(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("pre-commit try-repo needs this checkout to be a git repository")
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(EXAMPLES / "recorded_samples.jsonl", repo / "samples.jsonl")
    (repo / "pyproject.toml").write_text('[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 100\n')
    (repo / "good.py").write_text(PALINDROME)
    (repo / "bad.py").write_text(COUNT_VOWELS)
    (repo / "notes.md").write_text("# coherence\ndef not_python(): pass\n")
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init", cwd=repo)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_") and not k.endswith("_API_KEY")}
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )

    # one run (pre-commit builds the hook's environment per run of a dirty checkout: minutes each)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(REPO),
            "coherence",
            "--verbose",
            "--files",
            "good.py",
            "bad.py",
            "notes.md",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr  # bad.py's warning fails the commit
    assert "- hook id: coherence" in out and "Failed" in out and "- exit code: 1" in out
    assert "count_vowels: warning · 9 of 9 alternatives disagree with yours" in out
    assert "is_palindrome: coherent" in out  # every Python file given is checked, in one process
    assert "not_python" not in out and "notes.md" not in out.split("- exit code: 1")[1]  # types: [python]
    assert "2 function(s): 1 warning, 1 coherent" in out
