"""Hover and code lens, answered from stored results."""

from __future__ import annotations

import asyncio
import re
import time

from lsprotocol import types

from coherence.engine.calibration import calibrated_trust
from coherence.engine.frequency import in_words

from .conftest import line_of


async def test_hover_shows_the_result(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    line = line_of(lsp.texts[uri], "def count_vowels")

    hover = await lsp.hover(uri, line, 8)
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent) and hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert "`count_vowels`" in text and "**warning**" in text
    assert re.search(r"\d of 9 alternatives disagree with yours on `count_vowels\(", text), text
    # the evidence, the counterexample and what each side gives first, then trust in words, then
    # the statistics
    said = re.search(
        r"\*\*trust (\d\.\d\d)\*\*: of functions with evidence like this, about \d+ in \d+ (was|were) right\.", text
    )
    assert said, text
    assert (
        text.index("disagree with yours on") < text.index("counterexample: `count_vowels(") < text.index("- yours: `0`")
    )
    assert (
        text.index("of 9 alternatives: `1`") < said.start() < text.index("incoherence 0.") < text.index("clusters of")
    )
    assert "incoherence 0." in text and "Hoeffding 95% interval" in text
    assert "clusters of equal behaviour:" in text and "(yours)" in text
    assert "counterexample: `count_vowels(" in text
    assert "- yours: `0`" in text and "of 9 alternatives: `1`" in text
    # The values come before the figures, and the alternatives' code is left to Show alternatives:
    # VS Code's hover is 250 px high.
    assert text.index("- yours: `0`") < text.index("incoherence 0.") < text.index("clusters of equal behaviour:")
    assert "```" not in text and "Show alternatives" in text
    assert "9 of 9" not in text.split("\n")[-1]
    assert "10 samples × 200 inputs" in text and "replay:recorded_samples.jsonl" in text and "checked " in text
    assert hover.range is not None and hover.range.start.line == line

    # The coherent function: its (calibrated) trust and the PAC bound.
    pal = line_of(lsp.texts[uri], "def is_palindrome")
    text = (await lsp.hover(uri, pal, 5)).contents.value
    assert (
        "**coherent**" in text
        and f"**trust {calibrated_trust(0.0, True, 'none', False):.2f}**: {in_words(calibrated_trust(0.0, True, 'none', False))}."
        in text
    )
    assert "no disagreement on 200 inputs: incoherence ≤" in text

    # Not on a def line: nothing.
    assert await lsp.hover(uri, line + 6, 4) is None

    # Fast: answered from stored results.
    started = time.perf_counter()
    for _ in range(20):
        await lsp.hover(uri, line, 8)
    assert (time.perf_counter() - started) / 20 < 0.2


async def test_code_lens_titles_and_command(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    lenses = await lsp.code_lens(uri)
    titles = {lens.range.start.line: lens.command.title for lens in lenses}
    text = lsp.texts[uri]
    cv, pal = line_of(text, "def count_vowels"), line_of(text, "def is_palindrome")
    assert set(titles) == {cv, pal}
    assert re.match(
        r"coherence: warning · \d of 9 alternatives disagree with yours on count_vowels\(.*· trust \d\.\d\d$",
        titles[cv],
    ), titles[cv]
    assert (
        titles[pal] == f"coherence: trust {calibrated_trust(0.0, True, 'none', False):.2f} · 10 samples × 200 inputs"
    ), titles[pal]
    for lens in lenses:
        assert lens.command.command == "coherence.checkFunction"
        assert list(lens.command.arguments) == [uri, lens.range.start.line]
    if lsp.client_name == "vscode":  # VS Code supports workspace/codeLens/refresh
        assert lsp.client.lens_refreshes > 0

    # Clicking the lens re-checks that function (and returns its result).
    lens = next(lens for lens in lenses if lens.range.start.line == cv)
    results = await lsp.command(lens.command.command, *lens.command.arguments)
    assert [r["name"] for r in results] == ["count_vowels"] and results[0]["status"] == "incoherent"


async def test_the_last_code_lens_refresh_trails_the_results(lsp):
    """VS Code cancels a lens request scheduled by a refresh when its editor loses focus within
    the debounce, so the server sends one more refresh ~0.75 s after its latest one: the last
    refresh a client sees comes that long after the one before it (not from a follow-up armed by
    an earlier refresh, which can land milliseconds after the last result)."""
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    times = lsp.client.lens_refresh_times
    if lsp.client_name != "vscode":  # Neovim 0.7 does not support workspace/codeLens/refresh
        await asyncio.sleep(1.0)
        assert times == []
        return
    # quiet for 1.5 s: every refresh, follow-up included, has come
    await lsp.wait_for(lambda: times and time.monotonic() - times[-1] > 1.5, "the refreshes to settle")
    assert len(times) >= 2, times
    assert times[-1] - times[-2] >= 0.6, [round(t - times[0], 3) for t in times]


SLOW = '''import time


# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case."""
    time.sleep(0.01)
    return sum(1 for ch in s.lower() if ch in "aeiou")


# coherence
def gen(n: int):
    """Yield n."""
    yield n
'''


async def test_code_lens_not_checked_checking_and_skipped(start):
    lsp = await start({"runOn": "manual"})
    (lsp.workspace / "slowmod.py").write_text(SLOW)
    uri = lsp.open("slowmod.py")
    lenses = await lsp.code_lens(uri)
    assert [lens.command.title for lens in lenses] == ["coherence: not checked · click to check"] * 2
    assert lsp.coherence_diagnostics(uri) == []

    # The user's function sleeps 10 ms per call: the check takes a few seconds.
    task = asyncio.ensure_future(lsp.command("coherence.checkFile", uri))
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1]["checking"] > 0, "checking to start")
    lenses = await lsp.code_lens(uri)
    assert lenses[0].command.title == "coherence: checking…"
    results = await task
    assert {r["name"]: r["status"] for r in results} == {"count_vowels": "incoherent", "gen": "skipped"}

    skipped = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "skipped"), "the skipped diagnostic")
    assert "generator functions are not checked yet" in skipped[0].message
    assert skipped[0].severity == types.DiagnosticSeverity.Information
    lenses = await lsp.code_lens(uri)
    assert re.match(r"coherence: (hint · .*· )?trust \d\.\d\d", lenses[0].command.title), lenses[0].command.title
    assert lenses[1].command.title == "coherence: skipped — generator functions are not checked yet"
