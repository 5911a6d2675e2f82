"""Sampling: m−1 independent alternative implementations of a function, from its Spec only.

    provider = make_provider(model="openai/gpt-4o-mini")          # or replay="samples.jsonl.gz"
    samples = await sample_alternatives(spec, count=9, provider=provider, cache=SampleCache())
    samples.valid      # the Samples whose .code defines the function
    samples.summary()  # "9 of 9 alternatives"

``count`` is the number of alternatives (m − 1; the user's function is the m-th program).  The
cache is read first and only the shortfall is asked for; new usable replies are stored, while
replies without usable code and transport failures never are (so a bad reply cannot take a good
sample's place on later checks; the next check asks again).  ``SamplingError`` is raised only
when nothing at all could be obtained; partial results list their failures
(``samples.programs_summary()`` -> ``"7 of 10 samples; 3 failed: rate limited (429)"``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from coherence.engine.errors import ConfigurationError, SamplingError
from coherence.engine.sampling.cache import CacheKey, SampleCache, default_cache_path
from coherence.engine.sampling.failures import NO_RETRY, RetryPolicy
from coherence.engine.sampling.panel import MemberReport, PanelProvider, make_panel, sample_panel
from coherence.engine.sampling.prompt import (
    PROMPT_VERSION,
    SAMPLE_STATUSES,
    Sample,
    build_messages,
    defines_function,
    extract_program,
)
from coherence.engine.sampling.provider import LiteLLMProvider, Provider, ProviderReply
from coherence.engine.sampling.replay import ReplayProvider
from coherence.engine.spec import Spec

if TYPE_CHECKING:
    from coherence.engine.config import PanelMember

__all__ = [
    "NO_RETRY",
    "PROMPT_VERSION",
    "SAMPLE_STATUSES",
    "CacheKey",
    "LiteLLMProvider",
    "MemberReport",
    "PanelProvider",
    "Provider",
    "ProviderReply",
    "ReplayProvider",
    "RetryPolicy",
    "Sample",
    "SampleCache",
    "SampleSet",
    "build_messages",
    "cache_key",
    "default_cache_path",
    "extract_program",
    "make_provider",
    "sample_alternatives",
]

log = logging.getLogger(__name__)

_INVALID_WORDS = {
    "no_code": "without code",
    "syntax_error": "with a syntax error",
    "missing_function": "without the function",
    "other_language": "in another language",
}


@dataclass
class SampleSet:
    samples: list[Sample]  # every reply received, valid or not, in order (cached ones first)
    requested: int
    failures: list[str]  # transport failures not turned into samples, one per missing sample
    model: str
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    from_cache: int = 0
    notices: list[str] = field(default_factory=list)  # user-facing: what happened to the cache
    # a panel (``sampling.panel``): what each member gave and cost, in the panel's order
    by_model: dict[str, MemberReport] = field(default_factory=dict)

    @property
    def cost_by_model(self) -> dict[str, float]:
        """USD per model (one entry for a single model); their sum is ``cost_usd``."""
        if self.by_model:
            return {m: r.cost_usd for m, r in self.by_model.items()}
        return {self.model: self.cost_usd}

    @property
    def complete(self) -> bool:
        return len(self.valid) >= self.requested and not self.failures

    def _problems(self) -> list[str]:
        extra: list[str] = []
        bad = Counter(s.status for s in self.invalid)
        for status in ("missing_function", "other_language", "syntax_error", "no_code"):
            if bad.get(status):
                extra.append(f"{bad[status]} {_INVALID_WORDS[status]}")
        for status, k in bad.items():
            if status not in _INVALID_WORDS:
                extra.append(f"{k} {status}")
        if self.failures:
            reasons = Counter(self.failures)
            if len(reasons) == 1:
                extra.append(f"{len(self.failures)} failed: {self.failures[0]}")
            else:
                listed = ", ".join(f"{k} {r}" for r, k in reasons.most_common())
                extra.append(f"{len(self.failures)} failed: {listed}")
        return extra

    @property
    def valid(self) -> list[Sample]:
        return [s for s in self.samples if s.status == "ok" and s.code is not None]

    @property
    def invalid(self) -> list[Sample]:
        return [s for s in self.samples if not (s.status == "ok" and s.code is not None)]

    def summary(self) -> str:
        """``"9 of 9 alternatives"`` or
        ``"7 of 9 alternatives; 1 without the function, 1 failed: rate limited (429)"``."""
        extra = self._problems()
        head = f"{len(self.valid)} of {self.requested} alternatives"
        return head + ("; " + ", ".join(extra) if extra else "")

    def programs_summary(self) -> str:
        """Counted as programs, the user's function included (m, as ``--samples`` counts):
        ``"7 of 10 samples; 3 failed: rate limited (429)"``."""
        extra = self._problems()
        head = f"{min(len(self.valid), self.requested) + 1} of {self.requested + 1} samples"
        return head + ("; " + ", ".join(extra) if extra else "")

    def report(self) -> str:
        """What a result shows: ``"9 of 9 alternatives"`` when nothing is missing, else
        ``programs_summary()``."""
        return self.summary() if self.complete and not self.invalid else self.programs_summary()

    @property
    def failure_kind(self) -> str | None:
        """auth | rate_limit | timeout | connection | invalid | provider, or None."""
        return _kind_of(self.failures) if self.failures else None

    def problem(self, name: str) -> str | None:
        """One user-facing sentence when LLM requests failed (partial samples), else None."""
        if not self.failures:
            return None
        kind = _kind_of(self.failures)
        failing = {m: r for m, r in self.by_model.items() if r.failures}
        if failing:  # a panel: name the members that fell short, each with its own reason
            who = "; ".join(
                f"{m}: {len(r.failures)} of {r.requested} failed ({Counter(r.failures).most_common(1)[0][0]})"
                for m, r in failing.items()
            )
            kind = _kind_of([f for r in failing.values() for f in r.failures])
            return f"coherence: {name}: {self.programs_summary()} from the panel; {who}. {_KIND_ADVICE[kind]}"
        return f"coherence: {name}: {self.programs_summary()} from {self.model}. {_KIND_ADVICE[kind]}"


def cache_key(spec: Spec, provider: Provider) -> CacheKey:
    return CacheKey(spec.spec_hash, provider.model, float(provider.temperature), PROMPT_VERSION)


UNUSABLE_BEFORE = "no usable code in earlier replies (not asked again)"


def _kind_of(failures: list[str]) -> str:
    top = Counter(failures).most_common(1)[0][0] if failures else ""
    if top == UNUSABLE_BEFORE:
        return "unusable"
    if top.startswith("rate limited"):
        return "rate_limit"
    if top.startswith("timeout"):
        return "timeout"
    if top.startswith("connection"):
        return "connection"
    if top.startswith("authentication"):
        return "auth"
    if top.startswith("invalid response"):
        return "invalid"
    return "provider"


_KIND_ADVICE = {
    "rate_limit": "The provider is rate-limiting this key; wait, lower the concurrency or the number of samples.",
    "timeout": "The provider did not answer in time; check the server, or give it longer with --llm-timeout "
    "SECONDS (llm_timeout).",
    "connection": "Could not connect; check the api_base and that the server is running.",
    "auth": "Check the API key.",
    "unusable": "The model's earlier replies for this function had no usable code; clear the "
    "sample cache to ask again.",
    "invalid": "The provider sent replies that could not be read (cut short or not JSON); "
    "check the api_base and the server.",
    "provider": "The provider reported errors; check that it is up and the model name is right.",
}


async def sample_alternatives(
    spec: Spec, count: int, provider: Provider, cache: SampleCache | None = None
) -> SampleSet:
    """``count`` alternatives for ``spec`` (cache first, then the provider for the shortfall); a
    panel's are spread over its members (``sampling.panel``)."""
    if isinstance(provider, PanelProvider):
        return await sample_panel(spec, count, provider, cache)
    result = SampleSet(samples=[], requested=max(0, count), failures=[], model=provider.model)
    if count <= 0:
        return result
    use_cache = cache is not None and bool(getattr(provider, "cacheable", False))
    key = cache_key(spec, provider) if use_cache else None
    if use_cache:
        assert cache is not None and key is not None
        cached = await asyncio.to_thread(cache.get, key, count)
        usable = [s for s in cached if defines_function(s.code, spec.name, spec.owner)]
        if len(usable) < len(cached):
            # Never serve another function's code: the key is the spec's hash, so this means a
            # damaged or foreign row.  Drop it and ask again.
            log.warning(
                "ignored %d cached sample(s) for %s that do not define it",
                len(cached) - len(usable),
                spec.name,
            )
        result.samples.extend(usable)
        result.from_cache = len(usable)
    need = count - len(result.samples)
    if need > 0 and use_cache:
        assert cache is not None and key is not None
        if await asyncio.to_thread(cache.misses, key) >= count:
            # This model already gave a whole batch of replies without usable code for this
            # spec: do not pay for the same again on every check (nothing is asked forever).
            result.failures.extend([UNUSABLE_BEFORE] * need)
            need = 0
    try:
        if need > 0:
            try:
                reply = await provider.generate(spec, need)
            except SamplingError as err:
                if not result.samples:
                    raise
                log.info("sampling %s: %s (using %d cached)", spec.name, err, len(result.samples))
                result.failures.extend([_failure_label(err)] * need)
                return result
            result.samples.extend(reply.samples)
            result.failures.extend(reply.failures)
            result.cost_usd += reply.cost_usd
            result.prompt_tokens += reply.prompt_tokens
            result.completion_tokens += reply.completion_tokens
            good = [s for s in reply.samples if s.ok]  # bad replies are reported, never cached
            if use_cache and good:
                assert cache is not None and key is not None
                await asyncio.to_thread(cache.put, key, good)
            if use_cache and len(good) < len(reply.samples):
                assert cache is not None and key is not None
                await asyncio.to_thread(cache.add_misses, key, len(reply.samples) - len(good))
    finally:
        take = getattr(cache, "take_notices", None) if use_cache else None
        if take is not None:
            result.notices.extend(take())
    if not result.samples and result.failures and set(result.failures) != {UNUSABLE_BEFORE}:
        kind = _kind_of(result.failures)
        reasons = ", ".join(f"{k}× {r}" for r, k in Counter(result.failures).most_common())
        raise SamplingError(
            f"Could not get any alternative implementation of {spec.name} from "
            f"{provider.model}: {reasons}. {_KIND_ADVICE[kind]}",
            kind=kind,
        )
    return result


def _failure_label(err: SamplingError) -> str:
    return {
        "auth": "authentication failed",
        "rate_limit": "rate limited",
        "timeout": "timeout",
        "deadline": "timeout",
        "connection": "connection error",
        "config": "configuration error",
        "missing": "no recorded samples",
    }.get(err.kind, "provider error")


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
) -> Provider:
    """A provider from settings: ``replay`` wins when given, then a panel (``models``, a sequence
    of ``config.PanelMember``), then ``model``; none -> ConfigurationError."""
    if replay is not None and str(replay).strip():
        return ReplayProvider(replay, skip=skip)
    if not models and (model is None or not str(model).strip()):
        raise ConfigurationError(CONFIGURE_HELP)
    if temperature < 0:
        raise ConfigurationError(f"temperature must be >= 0 (got {temperature}).")
    if timeout <= 0:
        raise ConfigurationError(f"timeout must be > 0 seconds (got {timeout}).")
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
