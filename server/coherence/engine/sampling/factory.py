"""A provider from the settings: a replay file, a panel of models, or one model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from coherence.engine.errors import ConfigurationError
from coherence.engine.sampling.editor import NOT_IN_AN_EDITOR, EditorProvider, Transport, is_editor_model
from coherence.engine.sampling.failures import RetryPolicy
from coherence.engine.sampling.panel import make_panel
from coherence.engine.sampling.provider import LiteLLMProvider, Provider
from coherence.engine.sampling.replay import ReplayProvider

if TYPE_CHECKING:
    from coherence.engine.config import PanelMember


CONFIGURE_HELP = """\
No model configured: coherence needs an LLM to write alternative implementations (or a replay file).
Configure one of:
  --model openai/gpt-4o-mini                  with OPENAI_API_KEY set
  --model anthropic/claude-3-5-sonnet-latest  with ANTHROPIC_API_KEY set
  --model gemini/gemini-2.0-flash             with GEMINI_API_KEY set
  --model ollama/qwen2.5-coder                with --api-base http://localhost:11434 (local, no key)
  --model openai/<name> --api-base URL        any OpenAI-compatible server (vLLM, llama.cpp, LM Studio)
  --replay FILE                               recorded samples (.jsonl or .jsonl.gz), no LLM at all
In the editor, set coherence.model / coherence.apiBase / coherence.replay instead."""


def make_provider(
    *,
    model: str | None,
    models: Sequence[PanelMember] = (),
    api_base: str | None = None,
    replay: str | Path | None = None,
    temperature: float = 0.6,
    timeout: float = 60.0,
    max_concurrency: int = 4,
    api_key: str | None = None,
    skip: int = 0,
    retry: RetryPolicy | None = None,
    editor: Transport | None = None,
) -> Provider:
    """A provider from settings: ``replay`` wins when given, then a panel (``models``, a sequence
    of ``config.PanelMember``), then ``model``; none -> ConfigurationError.  ``model = "editor"``
    (or ``editor/<family>``) asks the editor's chat models through ``editor``, the language
    server's request to its client; without one it is a ConfigurationError."""
    if replay is not None and str(replay).strip():
        return ReplayProvider(replay, skip=skip)
    if not models and (model is None or not str(model).strip()):
        raise ConfigurationError(CONFIGURE_HELP)
    if temperature < 0:
        raise ConfigurationError(f"temperature must be >= 0 (got {temperature}).")
    if timeout <= 0:
        raise ConfigurationError(f"timeout must be > 0 seconds (got {timeout}).")
    for member in models:
        if is_editor_model(member.model):
            raise ConfigurationError(
                f"{member.model!r} cannot be a member of a panel (models): the editor's models are one "
                "provider; set it as the model alone."
            )
    if not models and is_editor_model(model):
        if editor is None:
            raise ConfigurationError(NOT_IN_AN_EDITOR.format(model=str(model).strip()))
        return EditorProvider(str(model), editor, temperature=temperature, deadline=timeout)
    if models:
        return make_panel(
            models, temperature=temperature, timeout=timeout, max_concurrency=max_concurrency, api_base=api_base
        )
    return LiteLLMProvider(
        str(model).strip(),
        api_base=(api_base or None),
        api_key=(api_key or None),
        temperature=temperature,
        timeout=timeout,
        deadline=timeout,  # llm_timeout bounds the retries too
        max_concurrency=max_concurrency,
        retry=retry,
    )
