"""A finding stays until a check replaces it with a finding (issue 48): a check that fails (the
provider rejects the key, no model) leaves the last good diagnostic, lens and hover standing,
marked "last checked HH:MM; this check failed: …", says so once (with Open Settings and Show
Output in the VS Code client), and the status counts the failure.  A user setting that replaces
the project's replay file by a model is said once.  The real server and engine; the LLM is the
replay file, then the loopback server answering 401."""

from __future__ import annotations

from typing import Any

import pytest

from coherence.engine.redact import MARK, redact
from tests.support.openai_loopback import Fault, LoopbackServer

from .conftest import line_of

KEY_ENV = {"OPENAI_API_KEY": "sk-loopback", "LITELLM_LOG": "ERROR"}


@pytest.fixture
def rejecting():
    server = LoopbackServer(then=Fault(status=401, message="Incorrect API key provided")).start()
    yield server
    server.stop()


def record_problems(lsp) -> list[dict]:
    """The ``coherence/problem`` notifications (the toasts with buttons) the client gets."""
    problems: list[dict] = []

    @lsp.client.feature("coherence/problem")
    def problem(ls, params: Any) -> None:
        problems.append(params._asdict() if hasattr(params, "_asdict") else dict(params))

    return problems


def change_settings(lsp, settings: dict) -> None:
    from lsprotocol import types

    lsp.client.set_configuration(settings, section="coherence")
    lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"coherence": settings}))


async def test_a_failed_check_keeps_the_finding_and_says_why_once(start, rejecting, client_name):
    # the VS Code client shows coherence/problem (with buttons); the other gets window/showMessage
    lsp = await start(env=KEY_ENV, options={"problemActions": client_name == "vscode"})
    problems = record_problems(lsp)
    uri = lsp.open("textutils.py")
    [warning] = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the replayed warning")
    await lsp.wait_idle()
    assert lsp.client.statuses[-1]["warning"] == 1 and lsp.client.statuses[-1]["failed"] == 0

    # A user setting names a model: it replaces the project's replay file, and the model's
    # provider rejects the key.
    change_settings(lsp, {"model": "openai/loopback-model", "apiBase": rejecting.url, "runOn": "open"})
    line = line_of(lsp.texts[uri], "def count_vowels")
    await lsp.wait_for(lambda: lsp.client.statuses[-1].get("failed"), "the failed check to be counted")
    returned = await lsp.command("coherence.checkFunction", uri, line)
    await lsp.wait_idle()
    assert rejecting.request_count >= 1
    assert returned and returned[0]["status"] == "error"

    # The warning stands, marked as older, with why this check failed.
    [kept] = lsp.coherence_diagnostics(uri, "incoherent")
    assert kept.severity == warning.severity and kept.message.startswith(warning.message)
    assert "(last checked " in kept.message and "; this check failed: " in kept.message
    assert "rejected the credentials" in kept.message
    status = lsp.client.statuses[-1]
    assert status["warning"] == 1 and status["failed"] == 2  # both functions' checks failed
    lens = next(le for le in await lsp.code_lens(uri) if le.range.start.line == line)
    assert lens.command.title.startswith("coherence: warning · ") and "this check failed" in lens.command.title
    hover = (await lsp.hover(uri, line, 6)).contents.value
    assert hover.startswith("**Last checked ") and "counterexample: `count_vowels(" in hover

    # Said once: the provider's refusal (with buttons where the client shows them), and once that
    # the setting replaced the project's replay.
    if lsp.client_name == "vscode":
        said = [p["message"] for p in problems]
        assert not [m for m in lsp.client.messages if "rejected the credentials" in m.message]
    else:
        said = [m.message for m in lsp.client.messages]
    refusals = [m for m in said if "rejected the credentials" in m]
    assert len(refusals) == 1, said
    switches = [m.message for m in lsp.client.messages if "replaces the project's recorded samples" in m.message]
    assert len(switches) == 1 and "openai/loopback-model" in switches[0], said

    # Back to the project's replay: a finding replaces the failure.
    change_settings(lsp, {"runOn": "open"})
    await lsp.wait_for(lambda: lsp.client.statuses[-1].get("failed") == 0, "the failure to clear")
    await lsp.command("coherence.checkFunction", uri, line)
    await lsp.wait_idle()
    [again] = lsp.coherence_diagnostics(uri, "incoherent")
    assert "this check failed" not in again.message


@pytest.mark.slow  # test_llm_loopback.py's bad key (an error lens per function, nothing kept) runs by default
async def test_a_check_that_fails_with_nothing_shown_before_is_the_error(start, rejecting):
    lsp = await start({"model": "openai/loopback-model", "apiBase": rejecting.url}, env=KEY_ENV)
    uri = lsp.open("textutils.py")
    # the first message is the notice that the user's model replaces the project's replay: wait
    # for both functions to end in error instead
    await lsp.wait_for(lambda: lsp.client.statuses and lsp.client.statuses[-1].get("errors") == 2, "two errors")
    await lsp.wait_idle()
    lenses = await lsp.code_lens(uri)
    assert lenses and all(le.command.title.startswith("coherence: error — ") for le in lenses)
    status = lsp.client.statuses[-1]
    assert status["errors"] == 2 and status["failed"] == 0 and status["warning"] == 0  # nothing older kept


async def test_show_last_result_carries_a_readable_text(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the warning")
    await lsp.wait_idle()
    line = line_of(lsp.texts[uri], "def count_vowels")
    shown = await lsp.command("coherence.showLastResult", uri, line)
    assert shown["status"] == "incoherent" and shown["name"] == "count_vowels"
    assert "counterexample: `count_vowels(" in shown["markdown"] and "- yours: `0`" in shown["markdown"]
    whole = await lsp.command("coherence.showLastResult", uri)
    assert sorted(f["name"] for f in whole["functions"]) == ["count_vowels", "is_palindrome"]
    assert all(f["markdown"].startswith("**coherence** · ") for f in whole["functions"])


def test_the_redactor_keeps_our_own_examples_whole():
    ours = (
        "No API key for openai/gpt-4o-mini: set OPENAI_API_KEY in the environment. A local "
        "OpenAI-compatible server that needs no key accepts any value (e.g. OPENAI_API_KEY=none)."
    )
    assert redact(ours) == ours
    # values are still redacted, up to a closing bracket
    assert redact("(OPENAI_API_KEY=hunter2hunter2)") == f"(OPENAI_API_KEY={MARK})"
    assert redact("api_key: 'abcdef123456'") == f"api_key: '{MARK}'"
