"""The composite GitHub action (action.yml), its steps run by .ci/action_local.py: install,
spec hashes, the sample cache, the check, the SARIF upload and the verdict, against a loopback
OpenAI-compatible server.  The second run restores the cache by its spec-hash key and buys
nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.cli.test_cli_newcomer import COUNT_VOWELS
from tests.conftest import REPO
from tests.support.openai_loopback import LoopbackServer, code_reply
from tests.support.sarif import valid_sarif

pytestmark = pytest.mark.slow

REPLY = code_reply('def count_vowels(s: str) -> int:\n    return sum(ch in "aeiouAEIOU" for ch in s)')


def run_action(workspace, store, report, **inputs):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_") and not k.endswith("_API_KEY")}
    args = [arg for name, value in inputs.items() for arg in ("--input", f"{name.replace('_', '-')}={value}")]
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / ".ci" / "action_local.py"),
            "--workspace",
            str(workspace),
            "--cache-store",
            str(store),
            "--report",
            str(report),
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    return proc, json.loads(report.read_text())


def test_the_action_checks_uploads_sarif_and_does_not_buy_samples_twice(tmp_path):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "src").mkdir()
    (workspace / "src" / "m.py").write_text(COUNT_VOWELS)
    store = tmp_path / "store"
    with LoopbackServer([REPLY]) as server:
        inputs = dict(
            paths="src",
            model="openai/gpt-4o-mini",
            api_key="sk-loopback",
            sarif="out/coherence.sarif",
            args=f"--api-base {server.url} --inputs 50",
        )
        first, report = run_action(workspace, store, tmp_path / "first.json", **inputs)
        assert server.request_count == 1, first.stdout + first.stderr  # nine samples in one request (n)
        assert first.returncode == 1  # count_vowels is a warning: the job fails, after the upload
        steps = {s["name"]: s for s in report["steps"]}
        assert steps["Install coherence"]["status"] == 0 and steps["Spec hashes"]["status"] == 0
        assert steps["Verdict"]["status"] == 1 and report["outputs"]["exit-code"] == "1"
        assert report["cache"]["hit"] is False and report["cache"]["saved"] == report["cache"]["key"]
        doc = valid_sarif((store / "uploaded.sarif").read_text())
        (result,) = doc["runs"][0]["results"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/m.py"
        assert "sk-loopback" not in first.stdout + first.stderr

        server.reset_requests()
        second, again = run_action(workspace, store, tmp_path / "second.json", **inputs)
        assert again["cache"] == {"key": report["cache"]["key"], "hit": True, "restored": report["cache"]["key"]}
        assert server.request_count == 0, second.stdout + second.stderr  # the samples came from the cache
        assert second.returncode == 1 and again["outputs"]["exit-code"] == "1"

        # a changed docstring is a new key; the older cache is restored for the rest
        (workspace / "src" / "m.py").write_text(COUNT_VOWELS.replace("ignoring case", "in any case"))
        third, changed = run_action(workspace, store, tmp_path / "third.json", **inputs)
        assert (
            changed["cache"]["key"] != report["cache"]["key"] and changed["cache"]["restored"] == report["cache"]["key"]
        )
        assert server.request_count == 1, third.stdout + third.stderr


def test_a_configuration_error_fails_the_job_with_its_exit_code(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc, report = run_action(
        tmp_path, tmp_path / "store", tmp_path / "r.json", paths="m.py", install=str(REPO), upload_sarif="false"
    )
    steps = {s["name"]: s for s in report["steps"]}
    assert proc.returncode == 1 and steps["Spec hashes"]["status"] == 2  # no model configured
    assert "No model configured" in proc.stderr + proc.stdout
    assert steps["Check"].get("skipped") and steps["github/codeql-action/upload-sarif@v3"].get("skipped")
