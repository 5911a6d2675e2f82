"""coherence: how far to trust a function an LLM wrote, without an oracle."""

from coherence.decorator import generated

__all__ = ["generated"]
__version__ = "0.1.0"
