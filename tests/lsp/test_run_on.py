"""What runs when (issue 30): ``runOn`` means what it says, cached results show on open at no
cost, an editor value the user set wins over pyproject even when it equals the default, and
``exclude`` leaves functions out.  Through the real server, with both recorded clients."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from .conftest import line_of

# Long enough for a check that open had started to be queued (it is queued within milliseconds).
QUIET_SECONDS = 1.0


async def checks_queued(lsp) -> int:
    return (await lsp.command("coherence.serverStats"))["checksQueued"]


async def reopened_without_a_check(lsp, uri: str) -> list:
    """Close textutils.py and open it again: its incoherent diagnostics, from the results cache,
    once no check was queued for them."""
    queued = await checks_queued(lsp)
    lsp.close(uri)
    await lsp.wait_for(lambda: not lsp.coherence_diagnostics(uri), "the diagnostics to be cleared on close")
    lsp.open("textutils.py")
    shown = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the cached result on reopen")
    await asyncio.sleep(QUIET_SECONDS)
    assert await checks_queued(lsp) == queued
    return shown


async def test_run_on_save_does_not_check_on_open_and_shows_cached_results_on_reopen(start):
    lsp = await start({"runOn": "save"})
    uri = lsp.open("textutils.py")
    await asyncio.sleep(QUIET_SECONDS)
    assert await checks_queued(lsp) == 0
    assert lsp.coherence_diagnostics(uri) == []
    # The code lens says the function is not checked yet (no check is running for it).
    assert any("not checked" in (lens.command.title if lens.command else "") for lens in await lsp.code_lens(uri))

    lsp.save(uri)
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic after the save")
    await lsp.wait_idle()
    assert await checks_queued(lsp) >= 1

    # Closed and opened again, unchanged: the results come back from the results cache, and no
    # check is queued for them.
    d = await reopened_without_a_check(lsp, uri)
    assert d[0].data["name"] == "count_vowels"


async def test_run_on_open_is_an_explicit_choice(start):
    lsp = await start({"runOn": "open"})
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic on open")


async def test_a_settings_change_under_run_on_save_starts_no_check(start):
    lsp = await start({"runOn": "save"})
    uri = lsp.open("textutils.py")
    lsp.client.set_configuration({"runOn": "save", "inputs": 150}, section="coherence")
    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"coherence": {"runOn": "save", "inputs": 150}})
    )
    await asyncio.sleep(QUIET_SECONDS)
    assert await checks_queued(lsp) == 0
    lsp.save(uri)
    d = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "a diagnostic after the save")
    assert d[0].data["inputs"] == 150


async def test_an_editor_value_equal_to_the_default_beats_pyproject(start, workspace):
    # pyproject says samples = 6; the editor sets samples to 10, the default: the editor wins.
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("samples = 10", "samples = 6"))
    lsp = await start({"samples": 10})
    uri = lsp.open("textutils.py")
    d = await lsp.wait_for(
        lambda: [d for d in lsp.coherence_diagnostics(uri) if d.data["name"] == "count_vowels"], "a result"
    )
    assert d[0].data["samples"] == 10


async def test_an_unset_editor_value_leaves_pyproject_alone(start, workspace):
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("samples = 10", "samples = 6"))
    # null is how a client says "not set" (the VS Code client sends it for every key the user did not set)
    lsp = await start({"samples": None})
    uri = lsp.open("textutils.py")
    d = await lsp.wait_for(
        lambda: [d for d in lsp.coherence_diagnostics(uri) if d.data["name"] == "count_vowels"], "a result"
    )
    assert d[0].data["samples"] == 6


async def test_exclude_patterns_leave_functions_out(start, workspace):
    text = (workspace / "textutils.py").read_text()
    lsp = await start({"exclude": ["textutils.py::count_vowels"]})
    uri = lsp.open("textutils.py")
    results = await lsp.command("coherence.checkFile", uri)
    assert [r["name"] for r in results] == ["is_palindrome"]
    lenses = await lsp.code_lens(uri)
    # One lens, on is_palindrome's def line, with its result; none on count_vowels.
    assert [lens.range.start.line for lens in lenses] == [line_of(text, "def is_palindrome")]
    assert lenses[0].command.title.startswith("coherence: trust")
    assert lsp.coherence_diagnostics(uri) == []


async def test_a_result_that_outlives_a_workspace_test_file_is_shown_stale_then_replaced(start):
    """Issue 47: results are keyed by the workspace's test files too.  After a test file is
    added, reopening the file shows the earlier result at once, saying which test file it
    predates, and a check (queued by itself, runOn save) replaces it with a fresh one."""
    lsp = await start({"runOn": "save"})
    uri = lsp.open("textutils.py")
    lsp.save(uri)
    first = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the first result")
    await lsp.wait_idle()
    queued = await checks_queued(lsp)
    lsp.close(uri)
    await lsp.wait_for(lambda: not lsp.coherence_diagnostics(uri), "the diagnostics to be cleared on close")

    (lsp.workspace / "tests").mkdir(exist_ok=True)
    (lsp.workspace / "tests" / "test_vowels.py").write_text(
        "from textutils import count_vowels\n\n\ndef test_upper():\n    assert count_vowels('A') == 1\n"
    )
    await asyncio.sleep(2.1)  # past the window the test files' fingerprint is kept for
    lsp.open("textutils.py")
    stale = await lsp.wait_for(
        lambda: [d for d in lsp.coherence_diagnostics(uri, "incoherent") if "changed" in d.message], "the stale result"
    )
    assert "checked before tests/test_vowels.py changed; re-checking" in stale[0].message
    assert stale[0].data["checked_at"] == first[0].data["checked_at"]  # the earlier result, shown at once
    fresh = await lsp.wait_for(
        lambda: [
            d
            for d in lsp.coherence_diagnostics(uri, "incoherent")
            if d.data["name"] == "count_vowels" and d.data["checked_at"] > first[0].data["checked_at"]
        ],
        "the fresh result",
    )
    assert "changed" not in fresh[0].message
    await lsp.wait_idle()
    assert await checks_queued(lsp) > queued
    hover = await lsp.client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line_of(lsp.texts[uri], "def count_vowels"), character=6),
        )
    )
    assert hover is not None and "checked before" not in hover.contents.value

    # Reopened again with the test file unchanged: the fresh result, from the cache, no check.
    again = await reopened_without_a_check(lsp, uri)
    assert "changed" not in again[0].message


async def test_saving_a_test_file_rechecks_the_open_functions_so_a_reopen_checks_nothing(start):
    """The regression-test code action writes a test file and the editor saves it: the open
    files' results are keyed again and checked then, so closing and reopening textutils.py later
    (the code-server e2e's reopen step) shows a fresh result from the cache and runs no check."""
    lsp = await start({"runOn": "save"})
    uri = lsp.open("textutils.py")
    lsp.save(uri)
    first = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the first result")
    await lsp.wait_idle()

    test_uri = lsp.open(
        "test_textutils_coherence.py",
        "from textutils import count_vowels\n\n\ndef test_upper():\n    assert count_vowels('A') == 1\n",
    )
    lsp.save(test_uri)  # written to disk, then didSave
    await lsp.wait_for(
        lambda: [
            d
            for d in lsp.coherence_diagnostics(uri, "incoherent")
            if d.data["name"] == "count_vowels"
            and d.data["checked_at"] > first[0].data["checked_at"]
            and "changed" not in d.message
        ],
        "a fresh result once the test file is saved",
    )
    await lsp.wait_idle()
    again = await reopened_without_a_check(lsp, uri)
    assert "changed" not in again[0].message
