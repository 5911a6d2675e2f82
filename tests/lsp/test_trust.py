"""The language server and a workspace's own [tool.coherence] (issue 28, section 1): settings that
decide where the API key goes or what runs outside the sandbox are used only when the editor says
the workspace is trusted (``initializationOptions.workspaceTrusted``) or, when it does not say,
when the user trusted the config (``coherence trust``); what was refused is logged to the
editor's output channel."""

from __future__ import annotations

import pytest

from coherence.engine.resolve import ConfigResolver
from coherence.engine.trust import TrustStore
from tests.support.openai_loopback import LoopbackServer, code_reply

SECRET = "sk-editor-user-secret"
REPLY = code_reply("def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)")


@pytest.fixture
def client_name() -> str:
    return "neovim"  # no workspace trust of its own: the store decides unless told


def point_at(workspace, url: str) -> None:
    """The workspace's config asks for its own server instead of the replay file."""
    pyproject = workspace / "pyproject.toml"
    text = pyproject.read_text().replace('replay = "recorded_samples.jsonl"\n', "")
    pyproject.write_text(text + f'model = "openai/theirs"\napi_base = "{url}"\n')


async def test_an_untrusted_workspace_cannot_send_the_key_to_its_server(start, workspace, tmp_path):
    with LoopbackServer([REPLY]) as theirs:
        point_at(workspace, theirs.url)
        lsp = await start(env={"OPENAI_API_KEY": SECRET, "XDG_CONFIG_HOME": str(tmp_path / "config")})
        lsp.open("textutils.py")
        shown = await lsp.wait_for(
            lambda: [m.message for m in lsp.client.messages if "no model configured" in m.message],
            "the configuration message",
        )
        assert "not using model, api_base from" in shown[0] and "coherence trust" in shown[0]
        assert theirs.request_count == 0


@pytest.mark.slow  # two servers through litellm; the refusal above and the client-trust test below run by default
async def test_the_editors_trust_or_the_users_store_lets_the_workspace_choose(start, workspace, tmp_path):
    with LoopbackServer([REPLY]) as theirs:
        point_at(workspace, theirs.url)
        env = {"OPENAI_API_KEY": SECRET, "XDG_CONFIG_HOME": str(tmp_path / "config")}
        # the client says the workspace is trusted (VS Code's workspace trust)
        lsp = await start({"workspaceTrusted": True, "samples": 3}, options_style="flat", env=env)
        lsp.open("textutils.py")
        await lsp.wait_for(lambda: theirs.request_count > 0, "a request to the workspace's server")
        assert theirs.requests[0].headers.get("authorization") == f"Bearer {SECRET}"
        await lsp.shutdown()

        # no word from the client: the user's trust store (as `coherence trust` writes it)
        theirs.reset_requests()
        project = ConfigResolver(user_dir=tmp_path / "config" / "coherence").locate(workspace)[0]
        TrustStore(tmp_path / "config" / "coherence" / "trusted.json").grant(project.path, project.digest)
        lsp = await start({"samples": 3, "cacheDir": str(tmp_path / "cache2")}, env=env)
        lsp.open("textutils.py")
        await lsp.wait_for(lambda: theirs.request_count > 0, "a request to the trusted workspace's server")


async def test_a_refused_setting_is_logged_and_the_rest_still_applies(start, workspace, tmp_path):
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("samples = 10", "samples = 4") + 'python = "tools/py"\n')
    lsp = await start(env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    uri = lsp.open("textutils.py")
    found = await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    assert found[0].data["samples"] == 4  # the workspace's samples still apply
    logged = [m.message for m in lsp.client.log_messages if "not using python from" in m.message]
    assert len(logged) == 1 and str(pyproject) in logged[0]


def test_only_the_client_itself_can_say_the_workspace_is_trusted():
    """The flag counts at the top of initializationOptions only: a settings section can be filled
    from the repository's own settings file."""
    from coherence.lsp.settings import client_trust

    assert client_trust({"workspaceTrusted": True, "settings": {}}) is True
    assert client_trust({"workspaceTrusted": False}) is False
    assert client_trust({"settings": {"workspaceTrusted": True}}) is None
    assert client_trust({"coherence": {"workspaceTrusted": True}}) is None
    assert client_trust({"workspaceTrusted": "yes"}) is None
    assert client_trust(None) is None
