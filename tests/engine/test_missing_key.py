"""A provider key that is not set is said at once, naming the environment variable, with no
retries: through litellm's real path, against a loopback server that must see no request."""

from __future__ import annotations

import pytest

from coherence.engine.errors import SamplingError
from coherence.engine.markers import find_targets
from coherence.engine.sampling import sample_alternatives
from coherence.engine.sampling.provider import LiteLLMProvider
from tests.support.openai_loopback import LoopbackServer, code_reply

SOURCE = '''\
# coherence
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''
SPEC = find_targets(SOURCE, "m.py")[0].spec
KEY_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


@pytest.fixture
def no_keys(monkeypatch):
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "model, variable",
    [
        ("openai/local", "OPENAI_API_KEY"),
        ("anthropic/claude-3-5-sonnet-latest", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.0-flash", "GEMINI_API_KEY"),
    ],
)
async def test_a_missing_key_names_its_variable_without_retrying(no_keys, model, variable):
    with LoopbackServer([code_reply("def add(a, b):\n    return a + b")]) as server:
        provider = LiteLLMProvider(model, api_base=server.url)
        with pytest.raises(SamplingError) as info:
            await sample_alternatives(SPEC, 9, provider)
        assert server.request_count == 0
    assert info.value.kind == "auth"
    assert variable in str(info.value) and "No API key" in str(info.value)
    assert "server error" not in str(info.value)
    assert provider.waits == []  # not one backoff: a key does not appear by waiting


async def test_the_same_model_with_its_key_set_is_served(no_keys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "none")  # what the message suggests for a local server
    with LoopbackServer([code_reply("def add(a, b):\n    return a + b")], cycle=True) as server:
        samples = await sample_alternatives(SPEC, 3, LiteLLMProvider("openai/local", api_base=server.url))
        assert server.request_count >= 1
    assert len(samples.valid) == 3
