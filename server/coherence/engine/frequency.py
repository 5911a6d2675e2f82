"""Trust said as a frequency a person reads at a glance: "of functions with evidence like this,
about 1 in 6 was right".  Trust is a calibrated probability (``engine.calibration``), so the
frequency is what it means, not a restatement of a score."""

from __future__ import annotations

from fractions import Fraction

__all__ = ["in_words"]

# Denominators a person reads at a glance; a share is said with the first that is close enough
# (closer near 0 and 1, where 1 in 20 and 1 in 100 differ five-fold).
_DENOMINATORS = (2, 3, 4, 5, 6, 8, 10, 20, 50, 100)
_CLOSE = 0.025


def in_words(trust: float) -> str:
    """Trust as a frequency: ``of functions with evidence like this, about 1 in 5 was right``."""
    return f"of functions with evidence like this, {_frequency(trust)} right"


def _frequency(p: float) -> str:
    if p >= 0.995:
        return "more than 99 in 100 were"
    if p < 0.01:
        return "fewer than 1 in 100 was"
    for n in _DENOMINATORS:
        k = min(n - 1, max(1, round(p * n)))
        if abs(k / n - p) <= _CLOSE * (min(p, 1 - p) / 0.25 if min(p, 1 - p) < 0.25 else 1.0):
            f = Fraction(k, n)
            k, n = f.numerator, f.denominator
            return f"about {k} in {n} {'was' if k == 1 else 'were'}"
    k = round(p * 100)
    return f"about {k} in 100 {'was' if k == 1 else 'were'}"
