"""Variants of a counterexample with the magnitudes the docstring's examples show.

A shrunk ``is_leap(0)`` convinces less than ``is_leap(2000)`` beside the examples' 2024: the
domain (``stated.domain.Domain``) knows each number parameter's band, and this builds the inputs
inside it that the counterexample's search tries instead (``verdict.convincing``).
"""

from __future__ import annotations

from coherence.engine.inputs.binding import bind
from coherence.engine.inputs.values import Input
from coherence.engine.stated.domain import Domain

__all__ = ["near_examples"]


def near_examples(domain: Domain, inp: Input, limit: int = 12) -> list[Input]:
    """Variants of ``inp`` whose out-of-band numbers are replaced by round numbers near the
    examples' (2024 gives 2024, 2020, 2000; -40 gives -40; 2.75 gives 2.75, 3.0): a shrunk
    ``is_leap(0)`` becomes ``is_leap(2000)``, which a reader recognises.  A float stays a float.
    Closest and roundest first; positional arguments only."""
    if not domain.bands:
        return []
    aps, _ = bind(domain.spec.params, inp)
    out: list[Input] = []
    for i, (value, p) in enumerate(zip(inp.args, aps)):
        if p is None or p.name not in domain.bands or not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        lo, hi = domain.bands[p.name]
        if lo <= value <= hi:
            continue
        seen: list[int | float] = []
        for _, e in domain.evidence_by_param.get(p.name, []):
            if not isinstance(e, (int, float)) or isinstance(e, bool):
                continue
            for r in _roundings(e, float if isinstance(value, float) else int):
                if lo <= r <= hi and r not in seen:
                    seen.append(r)
        # rounder first (more trailing zeros), then nearer the examples' middle
        mid = (lo + hi) / 2
        seen.sort(key=lambda r: (-_roundness(r), abs(r - mid)))
        for r in seen[:limit]:
            args = inp.args[:i] + (r,) + inp.args[i + 1 :]
            out.append(Input(args=args, kwargs=inp.kwargs, origin="shrink"))
    return out


def _roundings(e: int | float, kind: type) -> list[int | float]:
    """``e`` rounded to units, tens, hundreds... (2024: 2024, 2020, 2000, 2000), as ``kind``; a
    float first as it is (2.75: 2.75, 3.0)."""
    out = [kind(e)] if kind is float else []
    return out + [kind(round(e, -k)) for k in range(len(str(int(abs(e)))))]


def _roundness(r: int | float) -> int:
    """Trailing zeros of a whole number (2000: 3); -1 for a float with a fraction."""
    if not float(r).is_integer():
        return -1
    digits = str(abs(int(r)))
    return len(digits) - len(digits.rstrip("0")) if digits != "0" else 0
