"""The language server without litellm (no ``llm`` extra, issue 49 item 7): the project's replay
file gives its findings as usual, and a model configured without litellm is said once, with the
fix, through ``coherence/problem`` (the VS Code client) or ``window/showMessage``.  The real
server, in a Python that cannot import litellm (``tests.support.no_litellm``)."""

from __future__ import annotations

from tests.support.no_litellm import refused, without_litellm

from .conftest import server_env
from .test_failed_checks import record_problems

FIX = "pip install 'coherence[llm]'"


async def test_replay_without_litellm_then_a_model_says_the_fix_once(start, tmp_path, client_name):
    env, log = without_litellm(tmp_path / "no-litellm", server_env(tmp_path))
    env["OPENAI_API_KEY"] = "sk-test"  # the key is there; litellm is what is missing
    lsp = await start(env=env, options={"problemActions": client_name == "vscode"})
    problems = record_problems(lsp)
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the replayed warning")
    await lsp.wait_idle()
    assert refused(log) == []  # the replay path never asked for litellm

    # a model replaces the project's replay: both functions need it, and it cannot be reached
    lsp.client.set_configuration({"model": "openai/gpt-4o-mini", "runOn": "open"}, section="coherence")
    from lsprotocol import types

    lsp.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"coherence": {"model": "openai/gpt-4o-mini", "runOn": "open"}})
    )
    await lsp.wait_for(lambda: lsp.client.statuses[-1].get("failed") == 2, "both checks to fail")
    await lsp.wait_idle()
    if lsp.client_name == "vscode":
        said = [p["message"] for p in problems]
        # what the server lacks, for a client that can provide it (the VS Code extension does)
        assert [p.get("needs") for p in problems if "litellm" in p["message"]] == ["llm"]
    else:
        said = [m.message for m in lsp.client.messages]
    missing = [m for m in said if "litellm, which is not installed" in m]
    assert missing == [
        f"The model openai/gpt-4o-mini is reached through litellm, which is not installed here: {FIX} "
        "(replaying recorded samples needs no litellm)."
    ], said
    # the warning from the last good check stands, marked with why this check failed
    [kept] = lsp.coherence_diagnostics(uri, "incoherent")
    assert "this check failed: " in kept.message and FIX in kept.message
