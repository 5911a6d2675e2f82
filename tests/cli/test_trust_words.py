"""Trust in words on real checks of ``examples/``: the CLI's line gives the evidence and what each
side returns first, then trust and what it means as a frequency."""

from __future__ import annotations

import json
import re

from coherence.engine.calibration import EXAMPLES as WITH_EXAMPLES
from coherence.engine.frequency import in_words
from tests.cli.test_cli_newcomer import run_cli
from tests.conftest import EXAMPLES


def test_the_cli_line_says_the_evidence_then_trust_in_words():
    text = run_cli("check", "textutils.py", cwd=EXAMPLES)
    assert text.returncode == 1, text.stderr
    data = json.loads(run_cli("check", "textutils.py", "--format", "json", cwd=EXAMPLES).stdout)
    found = {f["name"]: f for f in data["functions"]}
    cv, pal = found["count_vowels"], found["is_palindrome"]
    lines = text.stdout.splitlines()

    head = next(ln for ln in lines if " count_vowels: " in ln)
    evidence = "count_vowels: warning · 9 of 9 alternatives disagree with yours on count_vowels('A'): yours 0, theirs 1"
    words = f"trust {cv['trust']:.2f}: {in_words(cv['trust'])}"
    assert head.endswith(f"{evidence} · {words}"), head
    assert head.index("count_vowels('A')") < head.index("yours 0") < head.index("trust ")
    # a warning on a spec with examples reads as what it is: most functions told this were wrong
    assert cv["trust"] < 0.5 and re.search(r"about 1 in \d+ was right$", head), head
    assert cv["trust_map"].startswith(f"warning · {WITH_EXAMPLES}")
    # the raw score stays beside it
    assert cv["trust_raw"] == 1 - cv["dsde"] and cv["trust_raw"] > cv["trust"]

    calm = next(ln for ln in lines if " is_palindrome: " in ln)
    assert calm.endswith(f"is_palindrome: coherent · trust {pal['trust']:.2f}: {in_words(pal['trust'])}"), calm
    assert pal["trust"] > 0.9 and pal["trust_map"].startswith(f"none · {WITH_EXAMPLES}")


def test_each_result_gives_one_interval_for_its_incoherence():
    """A coherent result's interval is the bound of no disagreement on n inputs, as in the hover:
    the Hoeffding interval beside it (0.043 wide at n = 1000) read as a contradiction."""
    text = run_cli("check", "textutils.py", cwd=EXAMPLES).stdout
    blocks: dict[str, list[str]] = {}
    for line in text.splitlines():
        if re.match(r"\S+\.py:\d+  ", line):
            blocks[line.split()[1].rstrip(":")] = []
        elif blocks and line.startswith("    "):
            blocks[list(blocks)[-1]].append(line.strip())
    warned = next(ln for ln in blocks["count_vowels"] if ln.startswith("incoherence "))
    assert re.match(
        r"incoherence 0\.\d+ \(95% CI 0\.\d+–0\.\d+\) · disagreement with yours 0\.\d+ · error ≥ 0\.\d+$", warned
    )
    calm = blocks["is_palindrome"]
    assert "incoherence 0.000 · disagreement with yours 0.000" in calm, calm
    assert not any("CI" in ln or "error ≥" in ln for ln in calm), calm
    assert "no disagreement on 1000 inputs: incoherence ≤ 0.0030 with 95% confidence" in calm, calm
