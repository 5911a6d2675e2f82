"""Alternatives from the editor's own chat models (``model = "editor"`` or ``"editor/<family>"``).

The editor, not coherence, holds the model, the user's consent and the quota: the language
server asks its client for the samples with a request of its own (``coherence/sample``) and the
VS Code client answers through ``vscode.lm``.  This provider only knows a ``transport``, an async
callable the LSP layer supplies, so the engine never imports the LSP.  The prompt, temperature
and reading of replies are litellm's path's (``build_messages``, ``extract_program``); what the
editor says went wrong maps onto the same failure kinds and labels (``failures.Failure``).

The request is ``{"messages", "n", "temperature", "family", "function"}``; the answer is
``{"texts": [...], "model": "<vendor>/<family>", "error": {"kind", "message"}}`` where
``error`` is present when fewer than ``n`` texts came (see ``ERROR_KINDS``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from coherence.engine.errors import CheckCancelled, ConfigurationError, SamplingError
from coherence.engine.sampling.failures import RATE_LIMITED, TIMED_OUT, Failure
from coherence.engine.sampling.prompt import build_messages, extract_program
from coherence.engine.sampling.provider import ProviderReply
from coherence.engine.spec import Spec

log = logging.getLogger(__name__)

EDITOR = "editor"
SAMPLE_REQUEST = "coherence/sample"

# An answer of the client (a dict), or an exception when the request itself failed.
Transport = Callable[[dict[str, Any]], Awaitable[Any]]

# What a client may say went wrong: the editor's words, mapped below onto litellm's path.
ERROR_KINDS = ("cancelled", "rate_limit", "no_permission", "no_model", "unsupported", "timeout", "other")

UNSUPPORTED_CLIENT = (
    "coherence.model = {model!r} asks the editor's own chat models for the samples, and this editor "
    "cannot lend them (its client does not answer coherence/sample; the VS Code extension does, "
    "through VS Code's Language Model API). Set coherence.model to a litellm model name "
    "(e.g. openai/gpt-4o-mini) or coherence.replay to a recorded-samples file."
)

NOT_IN_AN_EDITOR = (
    "The model {model!r} means the editor's own chat models, which only the VS Code extension can "
    "reach. Here, name a litellm model (--model openai/gpt-4o-mini, model = ... in the config) "
    "or a replay file (--replay FILE)."
)


def is_editor_model(model: str | None) -> bool:
    """Whether ``model`` names the editor's models: ``editor`` or ``editor/<family>``."""
    m = (model or "").strip()
    return m == EDITOR or (m.startswith(EDITOR + "/") and bool(m[len(EDITOR) + 1 :].strip()))


def family_of(model: str) -> str | None:
    """The model family asked for (``editor/gpt-4o`` -> ``gpt-4o``), None for any model."""
    m = model.strip()
    return m[len(EDITOR) + 1 :].strip() or None if m.startswith(EDITOR + "/") else None


def _failure(kind: str, message: str, model: str) -> Failure:
    """The editor's error as litellm's path would have named it (label, kind, whether to stop)."""
    said = f" ({message})" if message else ""
    if kind == "rate_limit":
        return RATE_LIMITED
    if kind == "timeout":
        return TIMED_OUT
    if kind == "no_permission":
        return Failure(
            "authentication failed (no permission)",
            "auth",
            False,
            fatal=True,
            message=(
                f"The editor did not let coherence use its chat model{said}. Allow it when VS Code asks, or "
                "under Accounts > Manage Language Model Access; or set coherence.model to a litellm model."
            ),
        )
    if kind == "no_model":
        which = f"of the family {family_of(model)!r} " if family_of(model) else ""
        return Failure(
            "model not found (404)",
            "config",
            False,
            fatal=True,
            message=(
                f"The editor has no chat model {which}for coherence.model = {model!r}{said}. Sign in to a "
                "chat extension (e.g. GitHub Copilot), name a family it offers (editor/<family>), or set "
                "coherence.model to a litellm model."
            ),
        )
    if kind == "unsupported":
        return Failure(
            "not supported",
            "config",
            False,
            fatal=True,
            message=(
                f"This editor has no Language Model API for coherence.model = {model!r}{said}. Update VS Code "
                "(1.90 or later), or set coherence.model to a litellm model."
            ),
        )
    return Failure(f"provider error ({message[:120] or 'no reason given'})", "provider", False)


class EditorProvider:
    """Alternatives from the editor's chat model, asked through ``transport`` (module docstring).

    Cacheable: the samples are keyed by ``model`` (``editor`` or ``editor/<family>``) like any
    model's.  Not billed: the editor's quota pays, so the cost cap does not price them."""

    cacheable = True
    billed = False

    def __init__(
        self, model: str, transport: Transport, *, temperature: float = 0.6, deadline: float | None = None
    ) -> None:
        if not is_editor_model(model):
            raise ConfigurationError(f"{model!r} does not name the editor's models (editor or editor/<family>).")
        self.model = model.strip()
        self.family = family_of(self.model)
        self.temperature = float(temperature)
        self.deadline = deadline  # llm_timeout: the editor's consent question counts against it
        self._transport = transport

    def __repr__(self) -> str:
        return f"EditorProvider({self.model!r}, temperature={self.temperature})"

    def request(self, spec: Spec, count: int) -> dict[str, Any]:
        """What is sent to the editor: the spec's prompt (never the body), as litellm would send it."""
        return {
            "messages": build_messages(spec),
            "n": count,
            "temperature": self.temperature,
            "family": self.family,
            "function": f"{spec.owner}.{spec.name}" if spec.owner else spec.name,
        }

    async def generate(self, spec: Spec, count: int) -> ProviderReply:
        if count <= 0:
            return ProviderReply()
        try:
            answer = await asyncio.wait_for(self._transport(self.request(spec, count)), timeout=self.deadline)
        except asyncio.TimeoutError:
            raise SamplingError(
                f"The editor's model did not answer within llm_timeout = {self.deadline:g} s; it is not asked "
                "again in this run. Answer VS Code's question about language model access if it asks, or "
                "give it longer with llm_timeout.",
                kind="deadline",
            ) from None
        except (SamplingError, CheckCancelled):
            raise
        except Exception as exc:  # noqa: BLE001 - the client's reply to the request was an error
            log.debug("%s failed: %r", SAMPLE_REQUEST, exc)
            answer = {"texts": [], "error": {"kind": "other", "message": str(exc)}}
        return self._read(answer, spec, count)

    def _read(self, answer: Any, spec: Spec, count: int) -> ProviderReply:
        if not isinstance(answer, dict):  # pygls hands back an object for a dict it did not know
            answer = {k: getattr(answer, k, None) for k in ("texts", "model", "error")}
        texts = answer.get("texts")
        texts = [t for t in texts if isinstance(t, str)][:count] if isinstance(texts, list) else []
        answered = answer.get("model")
        answered = f"{EDITOR}:{answered}" if isinstance(answered, str) and answered.strip() else ""
        error = answer.get("error")
        if error is not None and not isinstance(error, dict):
            error = {k: getattr(error, k, None) for k in ("kind", "message")}
        reply = ProviderReply(
            samples=[
                dataclasses.replace(extract_program(t, spec.name, spec.owner), model=answered or self.model)
                for t in texts
            ],
            model=answered,
        )
        missing = count - len(reply.samples)
        if missing <= 0:
            return reply
        kind = str((error or {}).get("kind") or "other")
        message = str((error or {}).get("message") or "")[:300]
        if kind == "cancelled":
            if not reply.samples:  # the editor (or its user) stopped it: like a cancelled check
                raise CheckCancelled(
                    f"the editor cancelled the request for samples{f' ({message})' if message else ''}"
                )
            reply.failures.extend(["cancelled"] * missing)
            return reply
        failure = (
            _failure(kind, message, self.model) if error is not None else Failure("too few replies", "provider", False)
        )
        if failure.fatal and not reply.samples:
            raise SamplingError(failure.message or failure.label, kind=failure.kind)
        reply.failures.extend([failure.label] * missing)
        return reply
