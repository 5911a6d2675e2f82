"""The function every fault test samples for, and a correct reply for it."""

from __future__ import annotations

from coherence.engine.markers import find_targets
from tests.support.openai_loopback import code_reply

MODULE = '''\
# coherence
def clamp(x: int, lo: int, hi: int) -> int:
    """Return x limited to the range [lo, hi] (lo <= hi)."""
    return max(lo, min(x, hi))
'''
TARGET = find_targets(MODULE, "clampmod.py")[0]
SPEC = TARGET.spec
GOOD = code_reply("def clamp(x, lo, hi):\n    return max(lo, min(x, hi))")
