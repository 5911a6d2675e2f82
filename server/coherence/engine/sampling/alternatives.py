"""Sampling the alternatives of one function: the cache first, then the provider for the
shortfall (a panel's members each through this same path, ``sampling.panel``)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from coherence.engine.errors import SamplingError
from coherence.engine.sampling.cache import CacheKey, SampleCache
from coherence.engine.sampling.panel import PanelProvider, sample_panel
from coherence.engine.sampling.prompt import PROMPT_VERSION, defines_function
from coherence.engine.sampling.provider import Provider
from coherence.engine.sampling.sample_set import KIND_ADVICE, UNUSABLE_BEFORE, SampleSet, failure_label, kind_of
from coherence.engine.spec import Spec

# the package's logger, as before these functions had a module of their own: users filter by it
log = logging.getLogger("coherence.engine.sampling")


def cache_key(spec: Spec, provider: Provider) -> CacheKey:
    return CacheKey(spec.spec_hash, provider.model, float(provider.temperature), PROMPT_VERSION)


async def sample_alternatives(
    spec: Spec, count: int, provider: Provider, cache: SampleCache | None = None
) -> SampleSet:
    """``count`` alternatives for ``spec`` (cache first, then the provider for the shortfall); a
    panel's are spread over its members (``sampling.panel``)."""
    if isinstance(provider, PanelProvider):
        return await sample_panel(spec, count, provider, cache, sample=sample_alternatives)
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
                result.failures.extend([failure_label(err)] * need)
                return result
            result.samples.extend(reply.samples)
            result.failures.extend(reply.failures)
            if reply.model:  # "editor" asked, and the result names the model that answered
                result.model = reply.model
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
        kind = kind_of(result.failures)
        reasons = ", ".join(f"{k}× {r}" for r, k in Counter(result.failures).most_common())
        raise SamplingError(
            f"Could not get any alternative implementation of {spec.name} from "
            f"{provider.model}: {reasons}. {KIND_ADVICE[kind]}",
            kind=kind,
        )
    return result
