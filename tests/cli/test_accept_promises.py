"""What an accept and a baseline promise, on a copy of the demo (``examples/``, replayed samples),
through the real command line: a baseline silences the findings it was written from, an accept of
a call never sits beside a warning on that call, and a new bug after an accept still shows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.zygote import coherence_argv

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NEW_BUG = 'return sum(1 for ch in s if ch in "aeiou") + (1 if len(s) > 5 else 0)'


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_")}
    env.update(PYTHONPATH=str(REPO / "server"), LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1")
    return subprocess.run(
        [*coherence_argv(env), "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def functions(proc: subprocess.CompletedProcess) -> dict[str, dict]:
    return {f["qualname"]: f for f in json.loads(proc.stdout)["functions"]}


def demo(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLES, tmp_path / "ex", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "ex"


def accept(path: Path, marker: str, call: str) -> None:
    """Put ``# coherence: accept <call>`` under the marker line that starts with ``marker``."""
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "# coherence" and marker in lines[i + 1])
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at + 1, f"{indent}# coherence: accept {call}")
    path.write_text("\n".join(lines) + "\n")


def test_the_demo_s_baseline_silences_every_finding_it_was_written_from(tmp_path):
    ex = demo(tmp_path)
    wrote = check(ex, ".", "--write-baseline", "--format", "json")
    assert wrote.returncode == 0, wrote.stderr
    warned = {name for name, f in functions(wrote).items() if f["severity"] == "warning"}
    assert "Cart.add" in warned  # the demo's findings, written down
    again = check(ex, ".", "--format", "json")
    assert again.returncode == 0, again.stdout
    after = functions(again)
    for name in warned:
        assert after[name]["severity"] == "hint", after[name]
        assert after[name]["accepted"] and "accepted" in after[name]["evidence"]["why"]


def test_accepting_the_shown_call_makes_it_a_hint_and_never_a_warning_beside_its_accept(tmp_path):
    ex = demo(tmp_path)
    first = functions(check(ex, "cart.py", "--format", "json"))["Cart.add"]
    assert first["severity"] == "warning"
    shown = first["counterexample"]["call"]
    accept(ex / "cart.py", "def add", shown)
    f = functions(check(ex, "cart.py", "--format", "json"))["Cart.add"]
    assert f["severity"] == "hint" and f["accepted"] == [shown]
    # an accept of another disagreement (the object keeps another item) is not this finding's:
    # whatever the report says, it never warns on a call it also calls accepted
    (ex / "cart.py").write_text((EXAMPLES / "cart.py").read_text())
    accept(ex / "cart.py", "def add", "Cart().add('H', 0)")
    f = functions(check(ex, "cart.py", "--format", "json"))["Cart.add"]
    if f["severity"] == "warning":
        assert f["accepted"] == []
    else:
        assert f["accepted"] == ["Cart().add('H', 0)"]


def test_a_new_bug_in_the_body_after_an_accept_is_still_a_warning(tmp_path):
    ex = demo(tmp_path)
    accept(ex / "textutils.py", "def count_vowels", "count_vowels('A')")
    before = functions(check(ex, "textutils.py", "--format", "json"))["count_vowels"]
    assert before["severity"] == "hint" and before["accepted"] == ["count_vowels('A')"]
    src = (ex / "textutils.py").read_text()
    (ex / "textutils.py").write_text(src.replace('return sum(1 for ch in s if ch in "aeiou")', NEW_BUG))
    proc = check(ex, "textutils.py", "--format", "json")
    after = functions(proc)["count_vowels"]
    assert proc.returncode == 1
    assert after["severity"] == "warning" and after["accepted"] == []
