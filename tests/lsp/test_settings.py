"""Settings (initializationOptions, workspace/configuration, didChangeConfiguration), bad values,
configuration problems, and files the server must survive."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from .conftest import line_of


def change_configuration(lsp, settings: dict) -> None:
    """What each client does when the user changes settings: VS Code answers
    workspace/configuration (and sends a change notification); Neovim pushes the settings."""
    lsp.client.set_configuration(settings, section="coherence")
    lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"coherence": settings}))


async def test_a_settings_change_rechecks_and_the_severity_comes_from_the_verdict(start):
    lsp = await start({"inputs": 300})
    uri = lsp.open("textutils.py")
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic"))[0]
    # count_vowels: 9 of 9 alternatives agree with each other against yours: a warning
    assert d.severity == types.DiagnosticSeverity.Warning and d.data["severity"] == "warning"
    change_configuration(lsp, {"inputs": 200})
    await lsp.wait_for(
        lambda: [d for d in lsp.coherence_diagnostics(uri, "incoherent") if d.data["inputs"] == 200],
        "a check with the new settings",
    )
    assert lsp.coherence_diagnostics(uri, "incoherent")[0].severity == types.DiagnosticSeverity.Warning
    if lsp.client_name == "vscode":
        # VS Code declares dynamic registration for configuration changes: the server registered.
        assert [r.method for r in lsp.client.registrations] == ["workspace/didChangeConfiguration"]


async def test_samples_change_reruns_with_the_new_count(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    change_configuration(lsp, {"inputs": 100, "samples": 5})
    d = (
        await lsp.wait_for(
            lambda: [d for d in lsp.coherence_diagnostics(uri) if d.data["samples"] == 5], "results with 5 samples"
        )
    )[0]
    assert d.data["inputs"] == 100
    assert " of 4 alternatives disagree with yours" in d.message


async def test_flat_initialization_options_and_run_on_change(start):
    lsp = await start({"runOn": "change", "debounceMs": 50}, options_style="flat")
    uri = lsp.open("textutils.py")
    lsp.save(uri)  # "change" checks while typing and on save, not on open
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    # Typing (no save) re-checks after the debounce.
    text = lsp.texts[uri].replace("return s == s[::-1]", "return len(s) > 1 and s == s[::-1]")
    lsp.change(uri, text)
    await lsp.wait_for(
        lambda: any(d.data["name"] == "is_palindrome" for d in lsp.coherence_diagnostics(uri)), "a check while typing"
    )


async def test_bad_settings_get_friendly_messages_and_defaults(start):
    lsp = await start({"samples": "lots", "runOn": "sometimes", "temperature": 7, "callTimeout": -1})
    uri = lsp.open("textutils.py")
    lsp.save(uri)  # the bad runOn falls back to "save"
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    messages = [m.message for m in lsp.client.messages]
    assert (
        "coherence: coherence.samples should be an integer of at least 2 (your function plus one alternative), got 'lots'; using 10"
        in messages
    )
    assert any(
        m.startswith("coherence: coherence.runOn should be one of save, open, change, manual, got 'sometimes'")
        for m in messages
    )
    assert any("coherence.temperature should be a number between 0 and 2, got 7" in m for m in messages)
    assert any("coherence.callTimeout" in m for m in messages)
    assert len(messages) == len(set(messages)) == 4
    assert lsp.coherence_diagnostics(uri, "incoherent")[0].data["samples"] == 10


async def test_no_model_is_one_message_not_one_per_function(start, tmp_path):
    lsp = await start()
    bare = tmp_path / "bare"  # no pyproject.toml: no model, no replay
    bare.mkdir()
    (bare / "m.py").write_text(
        "# coherence\ndef f(x: int) -> int:\n    return x\n\n\n# coherence\ndef g(x: int) -> int:\n    return -x\n"
    )
    uri = (bare / "m.py").as_uri()
    lsp.versions[uri] = 1
    lsp.texts[uri] = (bare / "m.py").read_text()
    lsp.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=lsp.texts[uri])
        )
    )
    await lsp.wait_for(lambda: lsp.client.messages, "a message")
    lsp.save(uri, write=False)
    await asyncio.sleep(1.0)
    no_model = [m for m in lsp.client.messages if "no model configured" in m.message]
    assert len(no_model) == 1 and no_model[0].type == types.MessageType.Warning
    assert "coherence.model" in no_model[0].message
    assert not lsp.coherence_diagnostics(uri)
    lenses = await lsp.code_lens(uri)
    assert [lens.command.title.split(".")[0] for lens in lenses] == ["coherence: error — no model configured"] * 2

    # Setting a replay file (relative to the workspace root) fixes it.
    change_configuration(lsp, {"inputs": 200, "replay": "recorded_samples.jsonl"})
    await asyncio.sleep(0.2)
    # f and g have no recorded samples: one message for the replay miss, however many functions.
    await lsp.wait_for(
        lambda: [m for m in lsp.client.messages if "has no recorded samples" in m.message], "the replay message"
    )
    await asyncio.sleep(1.0)
    assert len([m for m in lsp.client.messages if "has no recorded samples" in m.message]) == 1


async def test_syntax_error_mid_edit_keeps_the_last_results(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    good = lsp.texts[uri]
    broken = good.replace("def is_palindrome(s: str) -> bool:", "def is_palindrome(s: str) -> bool")
    lsp.change(uri, broken)
    lsp.save(uri)
    note = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "syntax-error"), "the syntax-error note")
    assert note[0].severity == types.DiagnosticSeverity.Information
    assert note[0].range.start.line == line_of(broken, "def is_palindrome")
    assert "showing the results of the last version that parsed" in note[0].message
    # The last good results stay: count_vowels is still reported, and hover still works.
    assert [d.data["name"] for d in lsp.coherence_diagnostics(uri, "incoherent")] == ["count_vowels"]
    hover = await lsp.hover(uri, line_of(broken, "def count_vowels"), 6)
    assert hover is not None and "count_vowels" in hover.contents.value
    assert await lsp.code_lens(uri)
    # Fixing the syntax removes the note.
    lsp.change(uri, good)
    lsp.save(uri)
    await lsp.wait_for(lambda: not lsp.coherence_diagnostics(uri, "syntax-error"), "the note to go")
    assert [d.data["name"] for d in lsp.coherence_diagnostics(uri, "incoherent")] == ["count_vowels"]


async def test_show_last_result_and_other_commands(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    line = line_of(lsp.texts[uri], "def count_vowels")
    result = await lsp.command("coherence.showLastResult", uri, line + 3)  # any line of the function
    assert result["name"] == "count_vowels" and result["status"] == "incoherent"
    assert result["counterexample"]["call"].startswith("count_vowels(") and result["counterexample"]["yours"] == "0"
    assert result["samples"] == 10 and result["inputs"] == 200 and 0 < result["trust"] < 1
    # The VS Code palette's argument shape.
    same = await lsp.command("coherence.showLastResult", {"uri": uri, "position": {"line": line, "character": 0}})
    assert same == result
    last = await lsp.command("coherence.showLastResult")
    assert last["name"] in ("count_vowels", "is_palindrome")
    assert await lsp.command("coherence.showLastResult", uri, 0) is None

    # Check file / check function without arguments use the most recent document.
    results = await lsp.command("coherence.checkFile")
    assert [r["name"] for r in results] == ["count_vowels", "is_palindrome"]
    results = await lsp.command("coherence.checkFunction")
    assert [r["name"] for r in results] == ["count_vowels", "is_palindrome"]

    summary = await lsp.command("coherence.checkWorkspace")
    assert summary["files"] == 3 and summary["functions"] == 5
    assert summary["counts"] == {"incoherent": 3, "coherent": 2}
    # intervals.py was never opened, but its diagnostics are published.
    other = (lsp.workspace / "intervals.py").as_uri()
    assert [d.data["name"] for d in lsp.coherence_diagnostics(other)] == ["merge_intervals"]

    cleared = await lsp.command("coherence.clearCache")
    assert cleared["results"] >= 5
    assert any("cleared" in m.message for m in lsp.client.messages)


async def test_files_the_server_must_survive(lsp):
    huge = "# coherence\ndef f(x: int) -> int:\n    return x\n" + "# padding\n" * 120_000
    (lsp.workspace / "huge.py").write_text(huge)
    uri = lsp.open("huge.py")
    await lsp.wait_for(lambda: [m for m in lsp.client.messages if "too large" in m.message], "the too-large message")
    note = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "skipped"), "the skipped note")
    assert "too large" in note[0].message

    # Not UTF-8 on disk (checked through checkWorkspace), and a lone surrogate in an open document.
    (lsp.workspace / "latin1.py").write_bytes(
        "# coherence\ndef f(x: int) -> int:\n    return x  # café\n".encode("latin-1")
    )
    bad = lsp.open("surrogate.py", "# coherence\ndef f(x: str) -> str:\n    return x + '\ud800'\n")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(bad, "skipped"), "the surrogate note")
    summary = await lsp.command("coherence.checkWorkspace")
    assert summary["functions"] >= 5
    assert [m for m in lsp.client.messages if "not valid UTF-8" in m.message]

    assert (await lsp.command("coherence.serverStats"))["documents"] >= 3


HOSTILE = '''import os, sys


# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case."""
    print("noise on stdout")
    sys.stdout.flush()
    os.write(1, b"more noise on fd 1\\n")
    if len(s) > 12:
        os._exit(3)
    while s == "":
        pass
    return sum(1 for ch in s.lower() if ch in "aeiou")
'''


async def test_hostile_code_does_not_hurt_the_server(start):
    """Code that prints to stdout, kills its worker or loops forever: the server carries on.
    The counterexample is the crash: where yours only runs out of time ("" loops forever), the
    alternatives that return are at most information (``verdict.judge``'s ``yours_slow``)."""
    lsp = await start({"callTimeout": 0.2})
    (lsp.workspace / "hostile.py").write_text(HOSTILE)
    uri = lsp.open("hostile.py")
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri), "a result for the hostile module"))[0]
    assert d.data["name"] == "count_vowels" and d.code == "incoherent"
    assert d.data["counterexample"]["yours"] == "raises Crash(exit 3)"
    hover = await lsp.hover(uri, line_of(HOSTILE, "def count_vowels"), 5)
    assert "raises Crash(exit 3)" in hover.contents.value


async def test_workspace_configuration_is_pulled_at_start(start, client_name):
    # VS Code answers workspace/configuration (it declares the capability); Neovim 0.7 does not
    # declare it, so its initializationOptions stand.
    lsp = await start({"inputs": 200}, configuration={"inputs": 120, "samples": 6})
    uri = lsp.open("textutils.py")
    want = (120, 6) if client_name == "vscode" else (200, 10)
    await lsp.wait_for(
        lambda: [
            d for d in lsp.coherence_diagnostics(uri, "incoherent") if (d.data["inputs"], d.data["samples"]) == want
        ],
        f"a result with {want}",
    )
    await lsp.wait_idle()
    assert [(d.data["inputs"], d.data["samples"]) for d in lsp.coherence_diagnostics(uri)] == [want]
