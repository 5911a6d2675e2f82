"""One-step shrinks of an input, for minimising counterexamples.

:func:`shrink_candidates` lists inputs one edit smaller than a given one: a container loses an item
(or half its items, or all of them), a number moves toward 0 (0 itself, half, one step), a string
loses a character (or half of itself), and the same edits apply inside containers and
``Construct`` arguments.  ``Expr`` values are never touched.  Every candidate is strictly smaller
by :func:`shrink_key` (``Input.size()`` first, then the magnitude of its numbers, then the count of
negative numbers and ``True`` values), so a greedy shrinker always terminates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from coherence.engine.inputs.kinds import magnitude, shrink_value
from coherence.engine.inputs.values import Input

__all__ = ["shrink_candidates", "shrink_value", "shrink_key"]


def shrink_key(inp: Input) -> tuple[int, float, int]:
    """The order shrinking descends: size, then magnitude of numbers, then negatives/Trues."""
    mags = [magnitude(v) for v in inp.values()]
    return (inp.size(), sum(m[0] for m in mags), sum(m[1] for m in mags))


def _arg_variants(inp: Input, i: int) -> Iterator[Input]:
    for s in shrink_value(inp.args[i]):
        yield Input(inp.args[:i] + (s,) + inp.args[i + 1 :], inp.kwargs, origin="shrink")


def _kwarg_variants(inp: Input, i: int) -> Iterator[Input]:
    name, a = inp.kwargs[i]
    for s in shrink_value(a):
        yield Input(inp.args, inp.kwargs[:i] + ((name, s),) + inp.kwargs[i + 1 :], origin="shrink")


def shrink_candidates(
    inp: Input, limit: int = 64, rank: Callable[[Input], tuple[int, float, int]] = shrink_key
) -> list[Input]:
    """Up to ``limit`` distinct inputs one edit smaller than ``inp`` (by :func:`shrink_key`).

    Candidates are interleaved across arguments, so every argument gets its big reductions
    (empty / 0 / half) tried before any argument's small ones.
    """
    base = rank(inp)
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
            if key in seen or rank(cand) >= base:
                continue
            seen.add(key)
            out.append(cand)
            if len(out) >= limit:
                break
        gens = alive
    return out
