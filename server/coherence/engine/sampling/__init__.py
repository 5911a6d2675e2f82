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

from coherence.engine.sampling.alternatives import cache_key, sample_alternatives
from coherence.engine.sampling.cache import CacheKey, SampleCache, default_cache_path
from coherence.engine.sampling.factory import make_provider
from coherence.engine.sampling.failures import NO_RETRY, RetryPolicy
from coherence.engine.sampling.panel import PanelProvider
from coherence.engine.sampling.prompt import PROMPT_VERSION, SAMPLE_STATUSES, Sample, build_messages, extract_program
from coherence.engine.sampling.provider import LiteLLMProvider, Provider, ProviderReply
from coherence.engine.sampling.replay import ReplayProvider
from coherence.engine.sampling.sample_set import MemberReport, SampleSet

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
