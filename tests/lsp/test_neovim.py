"""A real editor: headless Neovim (Debian's 0.7, ``vim.lsp.start_client``) starts the server,
opens examples/textutils.py, and gets the diagnostic, the hover text and the code lenses.
Skipped when ``nvim`` is not installed (``apt-get install neovim``)."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coherence.engine.calibration import calibrated_trust

from .conftest import copy_examples

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


@pytest.fixture
def nvim() -> str:
    path = shutil.which("nvim")
    if path is None:
        pytest.skip("nvim is not installed (apt-get install neovim)")
    return path


def test_neovim_gets_diagnostic_hover_and_lenses(nvim, tmp_path):
    ws = copy_examples(tmp_path / "ws")
    out = tmp_path / "report.json"
    env = dict(os.environ)
    env.update(
        {
            "COHERENCE_PY": sys.executable,
            "COHERENCE_WS": str(ws),
            "COHERENCE_OUT": str(out),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "PYTHONPATH": os.pathsep.join([str(REPO / "server"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
    )
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {HERE / 'neovim' / 'check.lua'}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert out.is_file(), f"no report; nvim exited {run.returncode}: {run.stdout[-2000:]} {run.stderr[-2000:]}"
    report = json.loads(out.read_text())
    assert report["errors"] == [], report["errors"]
    assert report["waited"], report

    diags = [d for d in report["diagnostics"] if d["source"] == "coherence"]
    assert len(diags) == 1, diags
    d = diags[0]
    text = (ws / "textutils.py").read_text().splitlines()
    assert d["lnum"] == text.index("def count_vowels(s: str) -> int:") and (d["col"], d["end_col"]) == (4, 16)
    # vim.diagnostic.severity 2 is WARN: the verdict's severity (a bloc of alternatives outvotes yours)
    assert d["code"] == "incoherent" and d["severity"] == 2
    assert "alternatives disagree with yours on count_vowels(" in d["message"] and ": yours 0, theirs 1" in d["message"]

    hover = "\n".join(report["hover_lines"])
    assert "**warning**" in hover and "counterexample: `count_vowels(" in hover
    assert "- yours: `0`" in hover and "```python" in hover and "10 samples × 200 inputs" in hover

    assert re.match(r"coherence: warning · \d of 9 alternatives disagree with yours on count_vowels\(", report["lenses"][0]), report["lenses"]
    assert report["lenses"][1] == f"coherence: trust {calibrated_trust(0.0):.2f} · 10 samples × 200 inputs"
    assert report["stopped"]
