"""A third real editor: headless Emacs 28 with eglot (Debian's ``emacs-nox`` and ``elpa-eglot``)
starts the server, opens examples/textutils.py, and Flymake shows the diagnostic; the hover
answers too.  Skipped when ``emacs`` or eglot is not installed (``apt-get install emacs-nox
elpa-eglot``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import copy_examples, editor_env

HERE = Path(__file__).resolve().parent

# a real editor starting a real server, once per test: CI runs it, the default run does not
pytestmark = pytest.mark.slow


@pytest.fixture
def emacs() -> str:
    path = shutil.which("emacs")
    if path is None:
        pytest.skip("emacs is not installed (apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run(
        [path, "--batch", "--eval", "(require 'eglot)"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    if probe.returncode != 0:
        pytest.skip(f"eglot is not installed (apt-get install elpa-eglot): {probe.stderr[-300:]}")
    return path


def test_emacs_eglot_gets_the_diagnostic_and_hover(emacs, tmp_path):
    ws = copy_examples(tmp_path / "ws")
    out = tmp_path / "report.json"
    env = editor_env(tmp_path, ws, out)  # HOME too: no user init, no ~/.emacs.d written in the real home
    run = subprocess.run(
        [emacs, "--batch", "-l", str(HERE / "emacs" / "check.el")],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert out.is_file(), f"no report; emacs exited {run.returncode}: {run.stdout[-2000:]} {run.stderr[-2000:]}"
    report = json.loads(out.read_text())
    assert report["errors"] is None, (report["errors"], run.stderr[-2000:])
    assert report["mode"] == "python-mode" and report["managed"] is True

    # What Flymake shows: one warning on count_vowels' name, with the evidence first.
    diags = report["diagnostics"]
    assert len(diags) == 1, (diags, run.stderr[-2000:])
    d = diags[0]
    text = (ws / "textutils.py").read_text().splitlines()
    assert d["line"] == text.index("def count_vowels(s: str) -> int:") + 1 and d["text"] == "count_vowels"
    assert d["type"] == "eglot-warning"  # severity 2: a bloc of alternatives outvotes yours
    assert d["message"].startswith("coherence [incoherent]: ")
    assert "alternatives disagree with yours on count_vowels(" in d["message"] and ": yours 0, theirs 1" in d["message"]

    assert "counterexample: `count_vowels(" in report["hover"] and "- yours: `0`" in report["hover"]
    # "Show alternatives": eglot 1.9 cannot show a document, so the server names the unified diff
    assert report["alternatives"] == 2
    [where] = [m for m in report["messages"] if m.startswith("coherence: open ")]
    diff = Path(where.removeprefix("coherence: open "))
    assert diff.name == "count_vowels.alternatives.diff" and "--- yours\n+++ alternative 1\n" in diff.read_text()
    assert report["stopped"] is True
