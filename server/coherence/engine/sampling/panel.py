"""A panel of models: the m-1 alternatives spread over several LLMs.

One model's blind spot (a bug every one of its samples shares) hides the user's bug from a
same-model check; alternatives from other models do not share it (docs/configuration.md#a-panel-of-models).

- ``split_counts``: each member's number of alternatives, by share (largest remainder);
- ``PanelProvider``: the members, built from ``CheckConfig.models``; members of one provider (the
  same litellm prefix and api_base: one API key, one rate limit) share one concurrency limit;
- ``sample_panel``: every member sampled at once through ``sample_alternatives`` (so each keeps its
  own SQLite cache rows, keyed by its model, and a panel reuses what each member already has).
  A member that fails lowers the count and is named in the report; it never sinks the check.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from coherence.engine.errors import ConfigurationError, SamplingError
from coherence.engine.sampling.provider import Provider, ProviderReply
from coherence.engine.sampling.sample_set import MemberReport, SampleSet, failure_label
from coherence.engine.spec import Spec

if TYPE_CHECKING:
    from coherence.engine.config import PanelMember
    from coherence.engine.sampling.cache import SampleCache

log = logging.getLogger(__name__)


def split_counts(count: int, shares: list[float]) -> list[int]:
    """``count`` alternatives over members by share, largest remainder first (ties: the earlier
    member), so the counts add up to ``count`` exactly: 9 over (1, 1, 1) is 3, 3, 3; over (2, 1)
    it is 6, 3; 10 over (1, 1, 1) is 4, 3, 3."""
    total = sum(shares)
    if count <= 0 or total <= 0:
        return [0] * len(shares)
    exact = [count * s / total for s in shares]
    counts = [math.floor(x) for x in exact]
    order = sorted(range(len(shares)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: count - sum(counts)]:
        counts[i] += 1
    return counts


def provider_key(model: str, api_base: str | None) -> tuple[str, str]:
    """Which members share a rate limit: litellm's provider prefix (``anthropic``, ``openai``) and
    the server they go to."""
    return (model.split("/", 1)[0] if "/" in model else model, (api_base or "").rstrip("/"))


class PanelProvider:
    """The members of a panel with their shares.  It samples through ``sample_panel`` (called by
    ``sample_alternatives``), never through ``generate``."""

    cacheable = True  # each member's own rows (the Checker then opens the cache)

    def __init__(self, members: list[tuple[Provider, float]]):
        if not members:
            raise ConfigurationError("models: a panel needs at least one model")
        self.members = members
        self.model = ", ".join(p.model for p, _ in members)
        self.temperature = float(getattr(members[0][0], "temperature", 0.0))

    def __repr__(self) -> str:
        return f"PanelProvider({', '.join(f'{p.model} x{s:g}' for p, s in self.members)})"

    def split(self, count: int) -> list[tuple[Provider, int]]:
        """Each member and its number of alternatives out of ``count`` (members given none are
        left out).  A cost estimate (``--dry-run``, ``max_cost_usd``) prices each member's share
        at its own model's price and adds them up: the limit applies to the panel's sum."""
        counts = split_counts(count, [s for _, s in self.members])
        return [(p, k) for (p, _), k in zip(self.members, counts) if k > 0]

    async def generate(self, spec: Spec, count: int) -> ProviderReply:  # pragma: no cover - defensive
        raise SamplingError("a panel samples through sample_alternatives", kind="config")


def make_panel(
    members: Sequence[PanelMember],
    *,
    temperature: float,
    timeout: float,
    max_concurrency: int,
    api_base: str | None = None,
) -> PanelProvider:
    """A ``PanelProvider`` of LiteLLM providers from ``CheckConfig.models``; ``api_base`` (the
    config's own) applies to members that name none."""
    from coherence.engine.sampling.provider import LiteLLMProvider

    shared: dict[tuple[str, str], dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]]] = {}
    built: list[tuple[Provider, float]] = []
    for m in members:
        base = m.api_base or api_base or None
        sems = shared.setdefault(provider_key(m.model, base), {})
        built.append(
            (
                LiteLLMProvider(
                    m.model,
                    api_base=base,
                    temperature=temperature,
                    timeout=timeout,
                    deadline=timeout,  # llm_timeout: each member's requests and retries
                    max_concurrency=max_concurrency,
                    semaphores=sems,
                ),
                float(m.share),
            )
        )
    return PanelProvider(built)


async def sample_panel(
    spec: Spec,
    count: int,
    panel: PanelProvider,
    cache: SampleCache | None = None,
    *,
    sample: Callable[[Spec, int, Provider, SampleCache | None], Awaitable[SampleSet]],
) -> SampleSet:
    """``count`` alternatives from the panel's members at once, each sampled by ``sample``
    (``sample_alternatives``, which calls this for a panel: passed in, not imported back); returns
    one ``SampleSet`` whose samples carry their model (``Sample.model``) and whose ``by_model``
    says what each member gave and cost.  Raises ``SamplingError`` only when no member gave a
    single alternative."""
    result = SampleSet(samples=[], requested=max(0, count), failures=[], model=panel.model)
    jobs = panel.split(count)
    outcomes = await asyncio.gather(*(sample(spec, k, p, cache) for p, k in jobs), return_exceptions=True)
    errors: list[tuple[str, BaseException]] = []
    for (provider, k), got in zip(jobs, outcomes):
        rep = result.by_model[provider.model] = MemberReport(requested=k)
        if isinstance(got, asyncio.CancelledError):
            raise got
        if isinstance(got, BaseException):
            if not isinstance(got, SamplingError):
                log.warning("sampling %s from %s failed", spec.name, provider.model, exc_info=got)
            label = _label(got)
            rep.failures, rep.error = [label] * k, str(got)
            result.failures.extend(rep.failures)
            errors.append((provider.model, got))
            continue
        result.samples.extend(replace(s, model=provider.model) for s in got.samples)
        result.failures.extend(got.failures)
        result.notices.extend(got.notices)
        rep.valid, rep.failures, rep.cost_usd, rep.from_cache = (
            len(got.valid),
            list(got.failures),
            got.cost_usd,
            got.from_cache,
        )
        result.cost_usd += got.cost_usd
        result.prompt_tokens += got.prompt_tokens
        result.completion_tokens += got.completion_tokens
        result.from_cache += got.from_cache
    if not result.valid and errors:
        why = "; ".join(f"{model}: {err}" for model, err in errors)
        raise SamplingError(
            f"Could not get any alternative implementation of {spec.name} from the panel: {why}",
            kind=getattr(errors[0][1], "kind", "provider"),
        )
    return result


def _label(err: BaseException) -> str:
    return failure_label(err) if isinstance(err, SamplingError) else "provider error"
