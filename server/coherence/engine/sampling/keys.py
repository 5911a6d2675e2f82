"""Which API key a model needs, known without importing litellm (a slow import:
docs/results.md#import-costs): a run whose key is missing says so once, before any work, instead
of once per function after the import.

Only providers whose variable is certain are listed; any other model (or one with an explicit key,
or an ``api_base`` other than an OpenAI-compatible one) is left to litellm, which says it later.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

# litellm's provider prefix -> the variables litellm reads its key from (any one will do)
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "xai": ("XAI_API_KEY",),
}

# bare model names litellm sends to a provider without a prefix
_BARE = (
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude-", "anthropic"),
)


def provider_of(model: str) -> str | None:
    """The provider litellm sends ``model`` to, when it is one of ``PROVIDER_KEYS``."""
    model = model.strip()
    if "/" in model:
        prefix = model.split("/", 1)[0]
        return prefix if prefix in PROVIDER_KEYS else None
    return next((provider for start, provider in _BARE if model.startswith(start)), None)


def key_variables(model: str) -> tuple[str, ...]:
    """The variables ``model``'s key is read from (empty when the provider is not listed)."""
    provider = provider_of(model)
    return PROVIDER_KEYS[provider] if provider else ()


def missing_key(
    model: str, *, api_base: str | None = None, api_key: str | None = None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The sentence to say when ``model`` needs a key that is not set, else None.  With an
    ``api_base`` only ``openai/`` is judged: its client wants a key even for a local server."""
    provider = provider_of(model)
    if api_key or provider is None or (api_base and provider != "openai"):
        return None
    names = PROVIDER_KEYS[provider]
    env = os.environ if environ is None else environ
    if any(env.get(name, "").strip() for name in names):
        return None
    message = f"No API key for {model}: set {' or '.join(names)} in the environment."
    if api_base:
        message += f" A local OpenAI-compatible server that needs no key accepts any value (e.g. {names[0]}=none)."
    return message


def missing_keys(members: Iterable[tuple[str, str | None, str | None]]) -> list[str]:
    """The sentences for every (model, api_base, api_key) whose key is missing, each once."""
    out: list[str] = []
    for model, base, key in members:
        problem = missing_key(model, api_base=base, api_key=key)
        if problem and problem not in out:
            out.append(problem)
    return out
