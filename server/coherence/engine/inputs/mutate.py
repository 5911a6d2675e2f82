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
"""

from __future__ import annotations

import functools
import random
from typing import Any

from coherence.engine.inputs.mutate_scalars import GENERIC_CHARS, mutate_float, mutate_int, mutate_str
from coherence.engine.inputs.seeds.from_types import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STR,
    _dict_from,
    _hashable,
    _is_hashable,
    _set_from,
    boundary_values,
    field_types,
    random_value,
)
from coherence.engine.inputs.types import ANY, TypeDesc
from coherence.engine.inputs.value_types import matches, type_of_value
from coherence.engine.inputs.values import Construct, Expr, Input, to_source

__all__ = ["mutate_value", "mutate_input", "contains_expr", "resolve_type"]


def contains_expr(v: Any) -> bool:
    if isinstance(v, Expr):
        return True
    if isinstance(v, Construct):
        return any(contains_expr(a) for a in v.args) or any(contains_expr(x) for _, x in v.kwargs)
    if isinstance(v, dict):
        return any(contains_expr(k) or contains_expr(x) for k, x in v.items())
    if isinstance(v, (list, tuple, set, frozenset)):
        return any(contains_expr(x) for x in v)
    return False


def resolve_type(v: Any, t: TypeDesc | None) -> TypeDesc:
    """The member of ``t`` that ``v`` belongs to (or ``v``'s own type when ``t`` does not fit)."""
    if t is None or t.kind in ("any", "expr", "construct"):
        return type_of_value(v)
    if t.kind == "union":
        exact = [m for m in t.args if matches(v, m) and m.kind != "float"]
        if exact:
            return exact[0]
        for m in t.args:
            if matches(v, m):
                return m
        return type_of_value(v)
    if not matches(v, t):
        return type_of_value(v)
    return t


def mutate_value(v: Any, t: TypeDesc | None, rng: random.Random, depth: int = 0) -> Any:
    """One type-preserving edit of ``v`` (declared type ``t``; ``None``: use ``v``'s own type)."""
    if t is not None:
        # The usual case, a value of exactly its declared type, goes straight to the edit the
        # branches below would reach, with the same draws (generating inputs is about half of a
        # first check's own CPU time, two mutations per input kept).
        k = t.kind
        tv = type(v)
        if tv is int:
            if k == "int":
                return mutate_int(v, rng)
        elif tv is str:
            if k == "str":
                return mutate_str(v, rng)
        elif tv is list:
            if k == "list":
                return _mutate_seq(v, t.args[0] if t.args else ANY, rng, depth)
        elif tv is float and k == "float":
            return mutate_float(v, rng)
    if isinstance(v, Expr):
        return v
    if t is not None and t.kind == "expr":
        return rng.choice(t.values) if t.values else v
    # Sometimes switch to another member of a union (``Optional[int]``: to and from ``None``).
    if t is not None and t.kind == "union" and len(t.args) > 1 and depth < MAX_DEPTH and rng.random() < 0.08:
        cur = resolve_type(v, t)
        others = [m for m in t.args if m != cur]
        if others:
            ws = [t.weights[t.args.index(m)] if t.weights else 1.0 for m in others]
            return random_value(rng.choices(others, weights=ws)[0], rng, depth)
    rt = resolve_type(v, t)
    k = rt.kind
    if k == "literal":
        others = [x for x in rt.values if not (x == v and type(x) is type(v))]
        return rng.choice(others) if others else v
    if k == "enum":
        choices = [x for x in boundary_values(rt) if x != v]
        return rng.choice(choices) if choices else v
    if k == "callable":
        choices = [x for x in boundary_values(rt) if x != v]
        return rng.choice(choices) if choices else v
    if k == "stdlib":
        return random_value(rt, rng, depth)
    if v is None:
        if t is not None and t.kind == "union" and depth < MAX_DEPTH:
            others = [m for m in t.args if m.kind != "none"]
            if others:
                return random_value(rng.choice(others), rng, depth)
        return v
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        if k == "float" and rng.random() < 0.3:
            return mutate_float(float(v), rng)
        return mutate_int(v, rng)
    if isinstance(v, float):
        return mutate_float(v, rng)
    if isinstance(v, complex):
        if rng.random() < 0.5:
            return complex(mutate_float(v.real, rng), v.imag)
        return complex(v.real, mutate_float(v.imag, rng))
    if isinstance(v, str):
        if k == "char" and len(v) <= 1:
            return rng.choice([c for c in GENERIC_CHARS if c != v] + ([v.upper()] if v.upper() != v else []))
        return mutate_str(v, rng)
    if isinstance(v, bytes):
        s = mutate_str(v.decode("latin-1"), rng, byte_mode=True)
        return s.encode("latin-1", errors="replace")[: MAX_STR * 2]
    if isinstance(v, Construct):
        return _mutate_construct(v, rt, rng, depth)
    if isinstance(v, list):
        elem = rt.args[0] if rt.kind == "list" and rt.args else ANY
        return _mutate_seq(v, elem, rng, depth)
    if isinstance(v, tuple):
        if rt.kind == "tuple" and not rt.variadic and len(rt.args) == len(v):
            if not v:
                return v  # ``Tuple[()]``
            i = rng.randrange(len(v))
            items = list(v)
            items[i] = mutate_value(items[i], rt.args[i], rng, depth + 1)
            return tuple(items)
        elem = rt.args[0] if rt.kind == "tuple" and rt.args else ANY
        return tuple(_mutate_seq(list(v), elem, rng, depth))
    if isinstance(v, (set, frozenset)):
        elem = rt.args[0] if rt.kind in ("set", "frozenset") and rt.args else ANY
        items = sorted(v, key=to_source)  # deterministic order, whatever the hash seed
        return _set_from(_mutate_seq(items, elem, rng, depth, hashable=True), isinstance(v, frozenset))
    if isinstance(v, dict):
        kt, vt = (rt.args + (ANY, ANY))[:2] if rt.kind == "dict" else (ANY, ANY)
        return _mutate_dict(v, kt, vt, rng, depth)
    return v


# -- containers ---------------------------------------------------------------------------------


def _new_item(items: list[Any], elem: TypeDesc, rng: random.Random, depth: int) -> Any:
    """An item to insert: a mutation of an existing one (keeps the domain) or a fresh one."""
    donors = [x for x in items if not isinstance(x, Expr)]
    if donors and rng.random() < 0.7:
        d = donors[rng._randbelow(len(donors))]  # type: ignore[attr-defined]  # see mutate_scalars.py
        return mutate_value(d, elem if elem.kind != "any" else None, rng, depth + 1)
    if elem.kind == "any" and donors:
        return random_value(type_of_value(donors[rng._randbelow(len(donors))]), rng, depth + 1)  # type: ignore[attr-defined]  # see mutate_scalars.py
    return random_value(elem, rng, depth + 1)


def _mutate_seq(items: list[Any], elem: TypeDesc, rng: random.Random, depth: int, hashable: bool = False) -> list[Any]:
    items = list(items)
    n = len(items)
    grow = n < MAX_ITEMS and depth < MAX_DEPTH + 1
    ops: list[str] = []
    if grow:
        ops += ["insert", "insert", "duplicate"] if n else ["insert", "insert"]
    if n:
        ops += ["delete", "delete", "mutate", "mutate", "mutate"]
    if n >= 2:
        ops += ["swap"]
    if n >= 3:
        ops += ["reverse_or_sort"]
    if not ops:
        return items
    below = rng._randbelow  # type: ignore[attr-defined]  # see mutate_scalars.py
    op = ops[below(len(ops))]
    if op == "insert":
        new = _new_item(items, elem, rng, depth)
        if hashable:
            new = _hashable(new)
            if not _is_hashable(new):
                return items
        items.insert(below(n + 1), new)
    elif op == "duplicate":
        i = below(n)
        items.insert(below(n + 1), items[i])
    elif op == "delete":
        del items[below(n)]
    elif op == "swap":
        i, j = rng.sample(range(n), 2)
        items[i], items[j] = items[j], items[i]
    elif op == "reverse_or_sort":
        if rng.random() < 0.5:
            items.reverse()
        else:
            try:
                items.sort(reverse=rng.random() < 0.3)
            except TypeError:
                items.reverse()
    else:
        cand = [i for i, x in enumerate(items) if not isinstance(x, Expr)]
        if not cand:
            return items
        i = cand[below(len(cand))]
        new = mutate_value(items[i], elem if elem.kind != "any" else None, rng, depth + 1)
        if hashable:
            new = _hashable(new)
            if not _is_hashable(new):
                return items
        items[i] = new
    return items


def _mutate_dict(d: dict[Any, Any], kt: TypeDesc, vt: TypeDesc, rng: random.Random, depth: int) -> dict[Any, Any]:
    pairs = list(d.items())
    n = len(pairs)
    ops: list[str] = []
    if n < MAX_ITEMS:
        ops += ["insert", "insert"]
    if n:
        ops += ["delete", "delete", "value", "value", "value", "key"]
    if not ops:
        return d
    op = rng.choice(ops)
    kt_ = kt if kt.kind != "any" else None
    vt_ = vt if vt.kind != "any" else None
    if op == "insert":
        keys = [k for k, _ in pairs]
        vals = [v for _, v in pairs]
        nk = _new_item(keys, kt, rng, depth)
        nv = _new_item(vals, vt, rng, depth)
        pairs.insert(rng.randint(0, n), (nk, nv))
    elif op == "delete":
        del pairs[rng.randrange(n)]
    elif op == "value":
        i = rng.randrange(n)
        k, v = pairs[i]
        pairs[i] = (k, mutate_value(v, vt_, rng, depth + 1))
    else:
        i = rng.randrange(n)
        k, v = pairs[i]
        pairs[i] = (mutate_value(k, kt_, rng, depth + 1), v)
    return _dict_from(pairs)


def _mutate_construct(c: Construct, t: TypeDesc, rng: random.Random, depth: int) -> Construct:
    if c.attr:
        return c
    slots = [("a", i) for i, a in enumerate(c.args) if not isinstance(a, Expr)]
    slots += [("k", i) for i, (_, a) in enumerate(c.kwargs) if not isinstance(a, Expr)]
    if not slots:
        return c
    pos, kw = field_types(t) if t.kind == "class" else ([], [])
    kw_types = {f.name: ft for f, ft in kw}
    kw_types.update({f.name: ft for f, ft in pos})
    where, i = rng.choice(slots)
    if where == "a":
        ft = pos[i][1] if i < len(pos) else None
        args = list(c.args)
        args[i] = mutate_value(args[i], ft, rng, depth + 1)
        return Construct(c.callee, tuple(args), c.kwargs, c.attr)
    kws = list(c.kwargs)
    name, val = kws[i]
    kws[i] = (name, mutate_value(val, kw_types.get(name), rng, depth + 1))
    return Construct(c.callee, c.args, tuple(kws), c.attr)


# -- inputs -------------------------------------------------------------------------------------


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
    chosen = [slots[rng._randbelow(len(slots))]] if count == 1 else rng.sample(slots, count)  # type: ignore[attr-defined]  # see mutate_scalars.py
    args = list(inp.args)
    kwargs = list(inp.kwargs)
    for where, i in chosen:
        if where == "a":
            args[i] = mutate_value(args[i], arg_types[i] if i < len(arg_types) else None, rng)
        else:
            name, v = kwargs[i]
            kwargs[i] = (name, mutate_value(v, kw_types[i] if i < len(kw_types) else None, rng))
    return Input.made(tuple(args), tuple(kwargs), "mutation"), set(chosen)
