"""The commit-msg hook: a subject over 72 characters is refused, the body may be as long as it
needs, and git's comment lines are not the subject."""

from __future__ import annotations

import subprocess
import sys

import yaml

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "check_commit_subject.py"


def check(tmp_path, message: str) -> subprocess.CompletedProcess:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, timeout=60)


def test_a_subject_of_72_characters_passes_and_73_fails(tmp_path):
    assert check(tmp_path, "A" * 72 + "\n\n" + "a long body line " * 40 + "\n").returncode == 0
    refused = check(tmp_path, "A" * 73 + "\n")
    assert refused.returncode == 1
    assert "73 characters, at most 72" in refused.stderr


def test_git_comment_lines_are_not_the_subject(tmp_path):
    message = "# Please enter the commit message for your changes." + "x" * 80 + "\nKeep it short\n"
    assert check(tmp_path, message).returncode == 0
    assert check(tmp_path, "\n# " + "x" * 80 + "\n" + "B" * 80 + "\n").returncode == 1


def test_the_hook_runs_at_the_commit_msg_stage_and_is_installed_by_default():
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert "commit-msg" in config["default_install_hook_types"]
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert hooks["commit-subject"]["stages"] == ["commit-msg"]
    assert hooks["commit-subject"]["entry"] == "python scripts/check_commit_subject.py"
    # the lint hooks stay at the pre-commit stage (the message file is not Python)
    assert config["default_stages"] == ["pre-commit"]
