"""What sampling would cost before anything is bought: per function, the samples still to
request after the cache, and per model an estimate from litellm's price map.

    estimates = estimate_models(targets, ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"],
                                count=9, cache=SampleCache())
    estimates[0].usd  # None when litellm's map has no price for the model

The prompt's tokens are counted on the real prompt (``build_messages``) with the model's own
tokenizer where litellm has it.  A reply is estimated as long as the user's function plus the
code fence around it: the alternatives implement the same signature and docstring.  The CLI's
``--dry-run`` prints it; the editor and a panel of models can reuse ``estimate_models``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from coherence.engine.errors import SamplingError
from coherence.engine.sampling.cache import CacheKey, SampleCache
from coherence.engine.sampling.prompt import PROMPT_VERSION, build_messages
from coherence.engine.sampling.quiet_litellm import import_litellm
from coherence.engine.spec import Target

FENCE_TOKENS = 12  # "```python\n" ... "\n```" and a line of prose, measured on gpt-4o replies
MAX_N = 10  # completions one request asks for, as LiteLLMProvider does (max_n)


@dataclass
class FunctionCost:
    """One function's share: its samples already cached, those to request, and its tokens."""

    path: str
    line: int
    qualname: str
    cached: int
    requested: int
    requests: int  # API calls (one per sample, or one per ten when the model takes ``n``)
    prompt_tokens: int  # billed: the prompt once per request
    completion_tokens: int  # estimated: every requested sample


@dataclass
class Estimate:
    model: str
    functions: list[FunctionCost] = field(default_factory=list)
    usd: float | None = None  # None: no price for this model in litellm's map
    note: str = ""  # why there is no price

    def _total(self, attr: str) -> int:
        return sum(getattr(f, attr) for f in self.functions)

    requested = property(lambda self: self._total("requested"))
    cached = property(lambda self: self._total("cached"))
    prompt_tokens = property(lambda self: self._total("prompt_tokens"))
    completion_tokens = property(lambda self: self._total("completion_tokens"))

    def price_text(self) -> str:
        return f"about ${self.usd:.4f}" if self.usd is not None else f"price unknown: {self.note}"


def estimate(
    targets: list[Target],
    model: str,
    *,
    count: int,
    cache: SampleCache | None = None,
    temperature: float = 0.6,
    supports_n: bool | None = None,
    billed: bool = True,
) -> Estimate:
    """What sampling ``count`` alternatives of each target from ``model`` would cost now, the
    samples already in ``cache`` (same model, temperature and prompt version) deducted; a model
    that is not ``billed`` (the editor's, on its quota) costs nothing and needs no litellm."""
    litellm: Any = None
    unpriced = ""
    try:
        if billed:
            litellm = import_litellm(model)
    except SamplingError as exc:  # no litellm (the llm extra): the samples are counted, not priced
        unpriced = str(exc)
    if supports_n is None:
        try:
            supports_n = "n" in (litellm.get_supported_openai_params(model=model) or [])
        except Exception:  # noqa: BLE001 - an unknown provider (or no litellm): asked one sample at a time
            supports_n = False
    out = Estimate(model)
    for target in targets:
        if target.skip_reason:
            continue
        cached = 0
        if cache is not None:
            key = CacheKey(target.spec.spec_hash, model, float(temperature), PROMPT_VERSION)
            # a whole batch of unusable replies is not asked again (``sample_alternatives``)
            cached = count if cache.misses(key) >= count else min(count, cache.count(key))
        need = count - cached
        requests = math.ceil(need / MAX_N) if supports_n else need
        prompt = _tokens(litellm, model, messages=build_messages(target.spec))
        reply = _tokens(litellm, model, text=target.function_source) + FENCE_TOKENS
        out.functions.append(
            FunctionCost(
                target.path,
                target.name_line,
                target.qualname or target.name,
                cached,
                need,
                requests,
                prompt * requests,
                reply * need,
            )
        )
    if not billed:
        out.usd, out.note = 0.0, "the editor's model: its quota, not coherence, pays"
        return out
    if litellm is None:
        out.note = unpriced
        if not out.requested:
            out.usd = 0.0
        return out
    try:
        prompt_usd, completion_usd = litellm.cost_per_token(
            model=model, prompt_tokens=out.prompt_tokens, completion_tokens=out.completion_tokens
        )
        out.usd = float(prompt_usd) + float(completion_usd)
    except Exception:  # noqa: BLE001 - a local or unlisted model: litellm has no price
        out.note = f"litellm has no price for {model}"
        if not out.requested:
            out.usd = 0.0  # nothing to buy costs nothing, priced or not
    return out


def estimate_models(targets: list[Target], models: list[str], **kw: Any) -> list[Estimate]:
    """``estimate`` for each model of a panel (or the editor's choice of one)."""
    return [estimate(targets, model, **kw) for model in models]


def _tokens(litellm: Any, model: str, **what: Any) -> int:
    if litellm is not None:
        try:
            return int(litellm.token_counter(model=model, **what))
        except Exception:  # noqa: BLE001 - no tokenizer for it: about four characters a token
            pass
    text = what.get("text") or "".join(m["content"] for m in what.get("messages", []))
    return max(1, len(text) // 4)


def _supports_n(member: Any) -> bool | None:
    """Whether ``member`` takes ``n``; None to let ``estimate`` ask (or say litellm is missing)."""
    try:
        return bool(member.supports_n()) if hasattr(member, "supports_n") else None
    except SamplingError:
        return None


def estimate_provider(
    provider: Any, targets: list[Target], *, samples: int, temperature: float, cache: SampleCache | None
) -> Estimate:
    """What checking ``targets`` with a checker's ``provider`` would cost now (``samples``
    programs each, the user's included): a replay file buys nothing ($0); a panel prices each
    member's share at its own model's price and adds them up (unknown if any member's is)."""
    if not getattr(provider, "cacheable", False):
        return Estimate(provider.model, usd=0.0, note="recorded samples (replay): nothing is bought")
    members = provider.split(samples - 1) if hasattr(provider, "split") else [(provider, samples - 1)]
    parts = [
        estimate(
            targets,
            member.model,
            count=count,
            cache=cache,
            temperature=temperature,
            supports_n=_supports_n(member),
            billed=getattr(member, "billed", True),
        )
        for member, count in members
    ]
    if len(parts) == 1:
        return parts[0]
    out = Estimate(provider.model, functions=parts[0].functions)
    for part in parts[1:]:
        for mine, theirs in zip(out.functions, part.functions):
            for attr in ("cached", "requested", "requests", "prompt_tokens", "completion_tokens"):
                setattr(mine, attr, getattr(mine, attr) + getattr(theirs, attr))
    priced = [p.usd for p in parts]
    out.usd = None if None in priced else sum(p for p in priced if p is not None)
    out.note = "; ".join(p.note for p in parts if p.note)
    return out
