"""One-step shrinks of an input, for minimising counterexamples.

:func:`shrink_candidates` lists inputs one edit smaller than a given one: a container loses an item
(or half its items, or all of them), a number moves toward 0 (0 itself, half, one step), a string
loses a character (or half of itself), and the same edits apply inside containers and
``Construct`` arguments.  ``Expr`` values are never touched.  Every candidate is strictly smaller
by :func:`shrink_key` (``Input.size()`` first, then the magnitude of its numbers, then the count of
negative numbers and ``True`` values), so a greedy shrinker always terminates.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from coherence.engine.inputs.values import Construct, Expr, Input, to_source

__all__ = ["shrink_candidates", "shrink_value", "shrink_key"]

_MAX_DROPS = 12  # single-item drops tried per container / string


def _magnitude(v: Any) -> tuple[float, int]:
    """(sum of |numbers| and string/bytes code points, count of negatives and Trues)."""
    if isinstance(v, bool):
        return (0.0, int(v))
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return (1e300, 1)
        return (float(abs(v)), int(v < 0))
    if isinstance(v, complex):
        return (abs(v.real) + abs(v.imag), int(v.real < 0) + int(v.imag < 0))
    if isinstance(v, Construct):
        parts = [_magnitude(a) for a in v.args] + [_magnitude(x) for _, x in v.kwargs]
        return (sum(p[0] for p in parts), sum(p[1] for p in parts))
    if isinstance(v, dict):
        parts = [_magnitude(k) for k in v] + [_magnitude(x) for x in v.values()]
        return (sum(p[0] for p in parts), sum(p[1] for p in parts))
    if isinstance(v, (list, tuple, set, frozenset)):
        parts = [_magnitude(x) for x in v]
        return (sum(p[0] for p in parts), sum(p[1] for p in parts))
    return (0.0, 0)


def shrink_key(inp: Input) -> tuple[int, float, int]:
    """The order shrinking descends: size, then magnitude of numbers, then negatives/Trues."""
    mags = [_magnitude(v) for v in inp.values()]
    return (inp.size(), sum(m[0] for m in mags), sum(m[1] for m in mags))


def _drop_positions(n: int) -> list[int]:
    if n <= _MAX_DROPS:
        return list(range(n))
    step = n / _MAX_DROPS
    return sorted({int(i * step) for i in range(_MAX_DROPS)} | {n - 1})


def _shrink_seq(items: list[Any]) -> Iterator[list[Any]]:
    n = len(items)
    if n == 0:
        return
    yield []
    if n >= 4:
        yield items[: n // 2]
        yield items[n // 2 :]
    for i in _drop_positions(n):
        yield items[:i] + items[i + 1 :]
    for i, x in enumerate(items):
        for s in shrink_value(x):
            yield items[:i] + [s] + items[i + 1 :]


def shrink_value(v: Any) -> Iterator[Any]:
    """One-step smaller variants of a value, biggest reductions first (may contain duplicates)."""
    if isinstance(v, Expr) or v is None:
        return
    if isinstance(v, bool):
        if v:
            yield False
        return
    if isinstance(v, int):
        if v == 0:
            return
        yield 0
        half = int(v / 2)
        if half != 0:
            yield half
        step = v - 1 if v > 0 else v + 1
        if step not in (0, half):
            yield step
        if v < 0:
            yield -v
        return
    if isinstance(v, float):
        if not math.isfinite(v):
            yield 0.0
            return
        if v == 0.0:
            return
        yield 0.0
        if v != int(v) and abs(v) < 1e15:
            yield float(int(v))
        if abs(v) > 1e-6:
            yield v / 2
        if v < 0:
            yield -v
        return
    if isinstance(v, complex):
        if v != 0:
            yield complex(0, 0)
        if v.imag != 0 and v.real != 0:
            yield complex(v.real, 0)
        return
    if isinstance(v, (str, bytes)):
        s: Any = v  # str or bytes (mypy cannot see that a slice and a sum stay the same type)
        n = len(s)
        if n == 0:
            return
        yield s[:0]
        if n >= 4:
            yield s[: n // 2]
            yield s[n // 2 :]
        for i in _drop_positions(n):
            yield s[:i] + s[i + 1 :]
        return
    if isinstance(v, list):
        yield from _shrink_seq(v)
        return
    if isinstance(v, tuple):
        for s in _shrink_seq(list(v)):
            yield tuple(s)
        return
    if isinstance(v, (set, frozenset)):
        kind = type(v)
        for s in _shrink_seq(sorted(v, key=to_source)):
            try:
                yield kind(s)
            except TypeError:
                continue
        return
    if isinstance(v, dict):
        pairs = list(v.items())
        if not pairs:
            return
        yield {}
        if len(pairs) >= 4:
            yield dict(pairs[: len(pairs) // 2])
            yield dict(pairs[len(pairs) // 2 :])
        for i in _drop_positions(len(pairs)):
            yield dict(pairs[:i] + pairs[i + 1 :])
        for i, (k, x) in enumerate(pairs):
            for s in shrink_value(x):
                yield dict(pairs[:i] + [(k, s)] + pairs[i + 1 :])
        for i, (k, x) in enumerate(pairs):
            for s in shrink_value(k):
                try:
                    hash(s)
                except TypeError:
                    continue
                if s not in v:
                    yield dict(pairs[:i] + [(s, x)] + pairs[i + 1 :])
        return
    if isinstance(v, Construct):
        if v.attr:
            return
        for i, a in enumerate(v.args):
            for s in shrink_value(a):
                yield Construct(v.callee, v.args[:i] + (s,) + v.args[i + 1 :], v.kwargs, v.attr)
        for i, (name, a) in enumerate(v.kwargs):
            for s in shrink_value(a):
                yield Construct(v.callee, v.args, v.kwargs[:i] + ((name, s),) + v.kwargs[i + 1 :], v.attr)
        return


def _arg_variants(inp: Input, i: int) -> Iterator[Input]:
    for s in shrink_value(inp.args[i]):
        yield Input(inp.args[:i] + (s,) + inp.args[i + 1 :], inp.kwargs, origin="shrink")


def _kwarg_variants(inp: Input, i: int) -> Iterator[Input]:
    name, a = inp.kwargs[i]
    for s in shrink_value(a):
        yield Input(inp.args, inp.kwargs[:i] + ((name, s),) + inp.kwargs[i + 1 :], origin="shrink")


def shrink_candidates(inp: Input, limit: int = 64) -> list[Input]:
    """Up to ``limit`` distinct inputs one edit smaller than ``inp`` (by :func:`shrink_key`).

    Candidates are interleaved across arguments, so every argument gets its big reductions
    (empty / 0 / half) tried before any argument's small ones.
    """
    base = shrink_key(inp)
    gens: list[Iterator[Input]] = [_arg_variants(inp, i) for i in range(len(inp.args))]
    gens += [_kwarg_variants(inp, i) for i in range(len(inp.kwargs))]
    out: list[Input] = []
    seen = {inp.key()}
    budget = limit * 20  # candidates examined, so huge inputs stay cheap
    while gens and len(out) < limit and budget > 0:
        alive = []
        for g in gens:
            cand = next(g, None)
            if cand is None:
                continue
            alive.append(g)
            budget -= 1
            try:
                key = cand.key()
            except TypeError:
                continue
            if key in seen or shrink_key(cand) >= base:
                continue
            seen.add(key)
            out.append(cand)
            if len(out) >= limit:
                break
        gens = alive
    return out
