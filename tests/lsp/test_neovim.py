"""A real editor: headless Neovim (Debian's 0.7, ``vim.lsp.start_client``) starts the server,
opens examples/textutils.py, and gets the diagnostic, the hover text and the code lenses.
Skipped when ``nvim`` is not installed (``apt-get install neovim``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from coherence.engine.calibration import calibrated_trust

from .conftest import copy_examples, editor_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROBES = REPO / "tests" / "probes"

# a real editor starting a real server, once per test: CI runs it, the default run does not
pytestmark = pytest.mark.slow


@pytest.fixture
def nvim() -> str:
    path = shutil.which("nvim")
    if path is None:
        pytest.skip("nvim is not installed (apt-get install neovim)")
    return path


def run_neovim(nvim: str, ws: Path, tmp_path: Path, **extra: str) -> dict:
    """Neovim opens a file of ``ws`` with the server attached (``neovim/check.lua``); what it
    got, as JSON."""
    out = tmp_path / "report.json"
    env = {**editor_env(tmp_path, ws, out), **extra}
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {HERE / 'neovim' / 'check.lua'}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert out.is_file(), f"no report; nvim exited {run.returncode}: {run.stdout[-2000:]} {run.stderr[-2000:]}"
    return json.loads(out.read_text())


def test_neovim_gets_diagnostic_hover_and_lenses(nvim, tmp_path):
    ws = copy_examples(tmp_path / "ws")
    report = run_neovim(nvim, ws, tmp_path)
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
    assert "- yours: `0`" in hover and "10 samples × 200 inputs" in hover

    assert re.match(
        r"coherence: warning · \d of 9 alternatives disagree with yours on count_vowels\(", report["lenses"][0]
    ), report["lenses"]
    assert (
        report["lenses"][1]
        == f"coherence: trust {calibrated_trust(0.0, True, 'none', False):.2f} · 10 samples × 200 inputs"
    )
    assert report["stopped"]


def test_neovim_shows_each_verdict_with_its_severity(nvim, tmp_path):
    """The probe module (hand-written alternatives, replayed) in a real editor: the outvoted
    function and the one that contradicts its docstring's example are warnings, the split spec is
    information, as are the coherent function whose docstring example every program contradicts,
    the one whose wrong example the alternatives special-case and the one outvoted only on an
    empty substring, and the hints (a stated precondition, in symbols, in words or as a Raises
    entry, exception types only, an accepted disagreement, a bloc that contradicts the docstring's
    example) get no diagnostic, only a lens."""
    ws = tmp_path / "probes"
    ws.mkdir()
    for name in ("verdicts.py", "samples.jsonl", "pyproject.toml"):
        shutil.copy(PROBES / name, ws / name)
    report = run_neovim(nvim, ws, tmp_path, COHERENCE_FILE="verdicts.py", COHERENCE_HOVER="is_leap")
    assert report["errors"] == [], report["errors"]
    lines = (ws / "verdicts.py").read_text().splitlines()
    def_line = {ln.split("(")[0][4:]: i for i, ln in enumerate(lines) if ln.startswith("def ")}
    by_function = {
        name: d["severity"]
        for d in report["final_diagnostics"]
        if d["source"] == "coherence"
        for name, i in def_line.items()
        if d["lnum"] == i
    }
    # vim.diagnostic.severity: 2 WARN, 3 INFO
    assert by_function == {
        "is_leap": 2,
        "word_count": 2,
        "halve": 3,
        "minutes": 3,
        "middle": 3,
        "occurrences": 3,
    }, report["final_diagnostics"]
    # an example the alternatives special-case: information, and the message says how they agree with it
    middle = next(d["message"] for d in report["final_diagnostics"] if d["lnum"] == def_line["middle"])
    assert (
        "gives 15.0, yours gives 8.0 (6 of 9 alternatives agree with the docstring, special-casing that call" in middle
    )
    minutes = next(d["message"] for d in report["final_diagnostics"] if d["lnum"] == def_line["minutes"])
    assert "the docstring says minutes(150) gives 3, yours gives 2" in minutes
    word_count = next(d["message"] for d in report["final_diagnostics"] if d["lnum"] == def_line["word_count"])
    assert 'the docstring says word_count("a  b") gives 2, yours gives 3' in word_count
    hints = [t for t in report["lenses"] if t.startswith("coherence: hint")]
    assert len(hints) == 5, report["lenses"]
    # the accepted disagreement's lens says what was accepted, not the disagreement as evidence
    accepted = [t for t in report["lenses"] if t.startswith("coherence: accepted as intended: ")]
    assert len(accepted) == 1, report["lenses"]
