"""coherence: how far to trust a function an LLM wrote, without an oracle."""

__version__ = "0.1.0"
