"""Type-aware mutation in the style of EvalPlus.

Every mutation is one small, type-preserving edit of a value, driven by a seeded
``random.Random``:

- ``int``: ±1, ±10, negation, 0, doubling/halving, a fresh random int;
- ``float``: ±1.0, ±10.0, ×0.5, ×2, negation, 0.0, rounding, a fresh random float;
- ``bool``: flip;
- ``str`` / ``bytes``: insert, delete or replace a character (drawn mostly from the string's own
  characters, so ``"(()())"`` stays a string of parentheses), truncate, duplicate, change case,
  add or strip whitespace, drop/swap/duplicate a word;
- ``list`` / variadic ``tuple`` / ``set`` / ``dict``: insert an item (made by mutating an existing
  one, or fresh of the item type), delete, swap, duplicate, or mutate one item (recursively);
- fixed-arity ``tuple``: mutate one item (arity kept);
- ``Construct``: mutate one argument; enum members switch to another member;
- ``Expr``: never mutated (it is source text), but the rest of an input still is.

The declared type (a :class:`TypeDesc`) guides the edit where it matters: ``Literal`` and enum values
stay in their set, ``Optional`` sometimes flips to ``None`` and back, inserted items are of the
declared item type.  Values that do not match their declared type are mutated by their runtime type.
Each edit belongs to its kind's module (:mod:`coherence.engine.inputs.kinds`); this module picks
the arguments to edit.
"""

from __future__ import annotations

import functools
import random

from coherence.engine.inputs.kinds import mutate_value, resolve_type
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.values import Expr, Input

__all__ = ["mutate_value", "mutate_input", "resolve_type"]


@functools.lru_cache(maxsize=64)
def _arg_slots(n: int) -> list[tuple[str, int]]:
    return [("a", i) for i in range(n)]  # read only: mutate_input draws from it


def mutate_input(
    inp: Input,
    arg_types: list[TypeDesc | None],
    kw_types: list[TypeDesc | None],
    rng: random.Random,
    *,
    max_slots: int = 2,
) -> tuple[Input, set[tuple[str, int]]] | None:
    """Mutate one argument of ``inp`` (sometimes two).  Returns the new input and the slots changed
    (``("a", i)`` / ``("k", i)``), or ``None`` when nothing in ``inp`` can change (all ``Expr``)."""
    if Expr not in set(map(type, inp.args)) and not inp.kwargs:
        slots = _arg_slots(len(inp.args))  # the usual case: every argument can change
    else:
        slots = [("a", i) for i, a in enumerate(inp.args) if not isinstance(a, Expr)]
        slots += [("k", i) for i, (_, a) in enumerate(inp.kwargs) if not isinstance(a, Expr)]
    if not slots:
        return None
    count = 2 if (max_slots >= 2 and len(slots) >= 2 and rng.random() < 0.2) else 1
    # one slot: the draw rng.sample(slots, 1) makes (one _randbelow(len(slots))), for a fifth of its cost
    chosen = [slots[rng._randbelow(len(slots))]] if count == 1 else rng.sample(slots, count)  # type: ignore[attr-defined]  # see kinds/scalars.py
    args = list(inp.args)
    kwargs = list(inp.kwargs)
    for where, i in chosen:
        if where == "a":
            args[i] = mutate_value(args[i], arg_types[i] if i < len(arg_types) else None, rng)
        else:
            name, v = kwargs[i]
            kwargs[i] = (name, mutate_value(v, kw_types[i] if i < len(kw_types) else None, rng))
    return Input.made(tuple(args), tuple(kwargs), "mutation"), set(chosen)
