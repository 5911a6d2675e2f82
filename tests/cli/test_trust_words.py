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
