"""Diagnostics appear for incoherent functions (with the counterexample) and clear when fixed."""

from __future__ import annotations

import asyncio
import json
import re

from lsprotocol import types

from .conftest import line_of

FIXED = '''"""Small text helpers, as an assistant might have written them."""


# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case.

    >>> count_vowels("hello")
    2
    """
    return sum(1 for ch in s.lower() if ch in "aeiou")


# coherence
def is_palindrome(s: str) -> bool:
    """Return True if s reads the same forwards and backwards (characters compared exactly).

    >>> is_palindrome("level")
    True
    >>> is_palindrome("ab")
    False
    """
    return s == s[::-1]
'''


async def test_incoherent_function_gets_a_diagnostic_with_the_counterexample(lsp):
    uri = lsp.open("textutils.py")
    diags = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    diags = lsp.coherence_diagnostics(uri)
    assert len(diags) == 1, [d.message for d in diags]  # is_palindrome is coherent: no diagnostic
    d = diags[0]
    text = lsp.texts[uri]
    line = line_of(text, "def count_vowels")
    assert d.range.start == types.Position(line=line, character=4)
    assert d.range.end == types.Position(line=line, character=4 + len("count_vowels"))
    assert d.source == "coherence" and d.code == "incoherent"
    # e.g. "9 of 9 alternatives disagree with yours on count_vowels('E'): yours 0, theirs 1 (trust 0.47)"
    assert re.match(r"\d of 9 alternatives disagree with yours on count_vowels\(", d.message), d.message
    assert ": yours 0, theirs 1" in d.message
    assert re.search(r"\(trust \d\.\d\d\)$", d.message)
    # The verdict's severity: a bloc of alternatives outvotes yours, a warning.
    assert d.severity == types.DiagnosticSeverity.Warning and d.data["severity"] == "warning"
    assert d.data["status"] == "incoherent" and d.data["name"] == "count_vowels"
    assert d.data["counterexample"]["yours"] == "0"
    assert d.data["samples"] == 10 and d.data["inputs"] == 200


async def test_both_example_modules(lsp):
    uri = lsp.open("intervals.py")
    diags = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "merge_intervals diagnostic")
    await lsp.wait_idle()
    diags = lsp.coherence_diagnostics(uri)
    assert [d.data["name"] for d in diags] == ["merge_intervals"]  # dedupe is coherent
    assert "merge_intervals([" in diags[0].message


async def test_breaking_then_fixing_a_body_shows_then_clears_the_diagnostic(lsp):
    uri = lsp.open("textutils.py")
    original = lsp.texts[uri]
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the count_vowels diagnostic")
    await lsp.wait_idle()
    assert [d.data["name"] for d in lsp.coherence_diagnostics(uri)] == ["count_vowels"]

    # Break is_palindrome (short strings are not palindromes): every alternative disagrees.
    broken = original.replace("return s == s[::-1]", "return len(s) > 1 and s == s[::-1]")
    lsp.change(uri, broken)
    lsp.save(uri)
    await lsp.wait_for(
        lambda: any(d.data["name"] == "is_palindrome" for d in lsp.coherence_diagnostics(uri)),
        "the is_palindrome diagnostic",
    )
    d = next(d for d in lsp.coherence_diagnostics(uri) if d.data["name"] == "is_palindrome")
    assert d.code == "incoherent" and "is_palindrome(" in d.message and ": yours False, theirs True" in d.message
    assert d.range.start.line == broken.splitlines().index("def is_palindrome(s: str) -> bool:")

    # Fix it again (body-only edits: the cached result comes back at once) -> the diagnostic clears.
    lsp.change(uri, original)
    lsp.save(uri)
    await lsp.wait_for(
        lambda: not any(d.data["name"] == "is_palindrome" for d in lsp.coherence_diagnostics(uri)),
        "the is_palindrome diagnostic to clear",
    )
    status = await lsp.wait_idle()
    assert status["incoherent"] == 1 and status["coherent"] == 1


async def test_fixing_count_vowels_raises_trust_and_leaves_a_hint(lsp):
    uri = lsp.open("textutils.py")
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic"))[0]
    before = d.data["trust"]
    lsp.change(uri, FIXED)
    lsp.save(uri)
    # Yours now agrees with 8 of the 9 alternatives; the "y is a vowel" one still disagrees, alone:
    # still (slightly) incoherent, but no evidence against yours: a hint, so the diagnostic goes.
    await lsp.wait_for(lambda: not lsp.coherence_diagnostics(uri), "the diagnostic to go")
    line = line_of(FIXED, "def count_vowels")
    lens = next(lens.command.title for lens in await lsp.code_lens(uri) if lens.range.start.line == line)
    assert lens.startswith("coherence: hint · 1 of 9 alternatives disagree with yours on count_vowels("), lens
    trust = float(re.search(r"trust (\d\.\d\d)", lens).group(1))
    assert trust > before


async def test_status_notifications_count_results(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    status = await lsp.wait_idle()
    assert status == {**status, "checking": 0, "incoherent": 1, "coherent": 1, "skipped": 0}
    assert any(s["checking"] > 0 for s in lsp.client.statuses), lsp.client.statuses


async def test_a_path_with_spaces_and_unicode(lsp):
    folder = lsp.workspace / "my dir é"
    folder.mkdir()
    (folder / "textutils.py").write_text((lsp.workspace / "textutils.py").read_text())
    uri = lsp.open("my dir é/textutils.py")
    assert "%20" in uri
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    # The editor's text (not the file on disk) is what gets checked.
    lsp.change(uri, lsp.texts[uri].replace("return s == s[::-1]", "return len(s) > 1 and s == s[::-1]"))
    lsp.save(uri, write=False)
    await lsp.wait_for(
        lambda: any(d.data["name"] == "is_palindrome" for d in lsp.coherence_diagnostics(uri)),
        "the is_palindrome diagnostic",
    )


async def test_an_untitled_document(lsp):
    uri = "untitled:Untitled-1"
    text = (lsp.workspace / "textutils.py").read_text()
    lsp.versions[uri] = 1
    lsp.texts[uri] = text
    lsp.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    # Not on disk: the workspace's pyproject.toml (replay) applies.
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic"))[0]
    assert d.data["name"] == "count_vowels"
    actions = await lsp.code_actions(uri, d.range.start.line, [d])
    titles = {a.title for a in actions}
    # No file to put a test next to; the body replacement is still offered.
    assert not any(t.startswith("Add counterexample as a regression test") for t in titles)
    assert "Replace body with the majority alternative" in titles


ROUNDING = '''
# coherence
def round_down(n: int) -> int:
    """The largest multiple of 10 that is not above n.

    >>> round_down(25)
    20
    >>> round_down(130)
    130
    """
    return n - n % 10
'''


async def test_disagreement_only_outside_the_examples_domain_is_a_hint(start, workspace):
    # The alternatives round negatives toward zero; every example's n is >= 0: no evidence against
    # yours, so no Problems entry, and the code lens and hover say why.
    toward_zero = "def round_down(n):\n    return n // 10 * 10 if n >= 0 else -((-n) // 10) * 10\n"
    with open(workspace / "recorded_samples.jsonl", "a") as fh:
        fh.write(json.dumps({"entry_point": "round_down", "candidates": [toward_zero] * 9}) + "\n")
    lsp = await start()
    uri = lsp.open("rounding.py", ROUNDING)
    line = line_of(ROUNDING, "def round_down")

    async def lens_title():
        return next((lens.command.title for lens in await lsp.code_lens(uri) if lens.range.start.line == line), "")

    title = ""
    for _ in range(600):
        title = await lens_title()
        if "hint" in title:
            break
        await asyncio.sleep(0.1)
    assert title.startswith("coherence: hint · ") and "round_down(-" in title, title
    assert lsp.coherence_diagnostics(uri) == []
    hover = await lsp.hover(uri, line, 5)
    assert "**hint**" in hover.contents.value
    assert "outside the stated domain" in hover.contents.value and "n is negative" in hover.contents.value
