"""Lists, tuples, sets, frozensets and dicts: their boundary values, random draws, mutations and
shrinks.

Mutation inserts an item (made by mutating an existing one, or fresh of the item type), deletes,
swaps, duplicates, reverses or sorts, or mutates one item (recursively); a fixed-arity tuple only
mutates one item.  Shrinking empties, halves or drops an item, then shrinks one item.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random
from typing import Any, ClassVar

from coherence.engine.inputs.kinds import registry
from coherence.engine.inputs.kinds.registry import MAX_DEPTH, MAX_ITEMS, Kind
from coherence.engine.inputs.kinds.text import drop_positions
from coherence.engine.inputs.types import ANY, INT, MIXED, STR, TypeDesc
from coherence.engine.inputs.value_types import type_of_value
from coherence.engine.inputs.values import Expr, to_source


def hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(hashable(x) for x in v)
    if isinstance(v, set):
        return frozenset(hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple((hashable(k), hashable(x)) for k, x in v.items())
    if isinstance(v, tuple):
        return tuple(hashable(x) for x in v)
    return v


def is_hashable(v: Any) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def set_from(items: list[Any], frozen: bool) -> set[Any] | frozenset[Any]:
    out = []
    for x in items:
        x = hashable(x)
        if is_hashable(x):
            out.append(x)
    return frozenset(out) if frozen else set(out)


def dict_from(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    d: dict[Any, Any] = {}
    for k, v in pairs:
        k = hashable(k)
        if is_hashable(k) and k not in d:
            d[k] = v
    return d


def rot(xs: list[Any], j: int) -> Any:
    return xs[j % len(xs)]


# -- generation ---------------------------------------------------------------------------------


def _seq_boundary(t: TypeDesc, depth: int) -> list[list[Any]]:
    """Boundary item lists of a homogeneous container (list, set, variadic tuple)."""
    elem = t.args[0] if t.args else ANY
    mixed = elem.kind == "any"
    ev = registry.boundary_values(INT if mixed else elem, depth + 1)  # homogeneous, mostly
    typical = [rot(ev, j) for j in range(min(5, max(3, len(ev))))]
    seqs: list[list[Any]] = [
        typical,
        [],
        [ev[0]],
        [ev[0], ev[0]],
        ev[: min(len(ev), 8)],
        list(reversed(ev[: min(len(ev), 6)])),
        [rot(ev, j * 3 + 1) for j in range(min(MAX_ITEMS, 12))],
    ]
    try:
        seqs.insert(5, sorted(ev[: min(len(ev), 8)]))
    except TypeError:
        pass
    if mixed:
        seqs.append(registry.boundary_values(ANY, depth + 1)[:5])
        seqs.append(["a", "b", "a"])
    return seqs


def _matrix_boundary(row: TypeDesc, depth: int) -> list[Any]:
    """Lists of lists: rectangular and square ones first (what matrix code expects), then
    the empty cases and one ragged list."""
    cell = row.args[0] if row.args else INT
    ev = registry.boundary_values(INT if cell.kind == "any" else cell, depth + 2)
    flat = [rot(ev, j) for j in range(64)]
    if cell.kind in ("int", "any"):
        flat = list(range(1, 65))  # distinct cells: 1..rows*cols
        flat[4], flat[7] = -3, 0

    def grid(r: int, c: int, shift: int = 0) -> list[list[Any]]:
        return [[flat[(i * c + j + shift) % len(flat)] for j in range(c)] for i in range(r)]

    return [
        grid(3, 3),
        [],
        [[]],
        grid(1, 1),
        grid(2, 3),
        grid(4, 4, 5),
        grid(3, 2),
        grid(1, 5),
        [[ev[0], ev[0]], [ev[0], ev[0]]],
        grid(5, 5, 11),
        [flat[:3], flat[3:4], flat[4:6]],
    ]


def _random_len(rng: Random) -> int:
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.8:
        return rng.randint(1, 6)
    if r < 0.95:
        return rng.randint(7, 12)
    return rng.randint(13, MAX_ITEMS)


def _random_items(t: TypeDesc, rng: Random, depth: int) -> tuple[list[Any], bool]:
    """Random items of a homogeneous container (one concrete item type per container, mostly),
    and whether they are the rows of a matrix."""
    elem = t.args[0] if t.args else ANY
    if elem.kind == "any":
        elem = rng.choices([INT, STR, MIXED], weights=[0.6, 0.25, 0.15])[0]
    n = _random_len(rng)
    if depth >= 1:
        n = min(n, 6)
    if t.kind == "list" and elem.kind == "list" and elem.args and rng.random() < 0.7:
        # a rectangular matrix
        cols = rng.randint(1, 6)
        cell = elem.args[0] if elem.args[0].kind != "any" else INT
        return [[registry.random_value(cell, rng, depth + 2) for _ in range(cols)] for _ in range(min(n, 6))], True
    return [registry.random_value(elem, rng, depth + 1) for _ in range(n)], False


# -- mutation -----------------------------------------------------------------------------------


def _new_item(items: list[Any], elem: TypeDesc, rng: Random, depth: int) -> Any:
    """An item to insert: a mutation of an existing one (keeps the domain) or a fresh one."""
    donors = [x for x in items if not isinstance(x, Expr)]
    if donors and rng.random() < 0.7:
        d = donors[rng._randbelow(len(donors))]  # type: ignore[attr-defined]  # see scalars.py
        return registry.mutate_value(d, elem if elem.kind != "any" else None, rng, depth + 1)
    if elem.kind == "any" and donors:
        return registry.random_value(type_of_value(donors[rng._randbelow(len(donors))]), rng, depth + 1)  # type: ignore[attr-defined]  # see scalars.py
    return registry.random_value(elem, rng, depth + 1)


def mutate_seq(items: list[Any], elem: TypeDesc, rng: Random, depth: int, hashable_: bool = False) -> list[Any]:
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
    below = rng._randbelow  # type: ignore[attr-defined]  # see scalars.py
    op = ops[below(len(ops))]
    if op == "insert":
        new = _new_item(items, elem, rng, depth)
        if hashable_:
            new = hashable(new)
            if not is_hashable(new):
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
        new = registry.mutate_value(items[i], elem if elem.kind != "any" else None, rng, depth + 1)
        if hashable_:
            new = hashable(new)
            if not is_hashable(new):
                return items
        items[i] = new
    return items


def _mutate_dict(d: dict[Any, Any], kt: TypeDesc, vt: TypeDesc, rng: Random, depth: int) -> dict[Any, Any]:
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
        pairs[i] = (k, registry.mutate_value(v, vt_, rng, depth + 1))
    else:
        i = rng.randrange(n)
        k, v = pairs[i]
        pairs[i] = (registry.mutate_value(k, kt_, rng, depth + 1), v)
    return dict_from(pairs)


# -- shrinking ----------------------------------------------------------------------------------


def shrink_seq(items: list[Any]) -> Iterator[list[Any]]:
    n = len(items)
    if n == 0:
        return
    yield []
    if n >= 4:
        yield items[: n // 2]
        yield items[n // 2 :]
    for i in drop_positions(n):
        yield items[:i] + items[i + 1 :]
    for i, x in enumerate(items):
        for s in registry.shrink_value(x):
            yield items[:i] + [s] + items[i + 1 :]


def _items_magnitude(items: Any) -> tuple[float, int]:
    parts = [registry.magnitude(x) for x in items]
    return (sum(p[0] for p in parts), sum(p[1] for p in parts))


# -- the kinds ----------------------------------------------------------------------------------


class List(Kind):
    name = "list"
    value_types = (list,)
    exact = (list,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            return [registry.empty(t)]
        if t.args and t.args[0].kind == "list":
            return _matrix_boundary(t.args[0], depth)
        return _seq_boundary(t, depth)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return registry.empty(t)
        items, matrix = _random_items(t, rng, depth)
        if not matrix and rng.random() < 0.1:
            try:
                items.sort()
            except TypeError:
                pass
        return items

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, list)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        elem = rt.args[0] if rt.kind == "list" and rt.args else ANY
        return mutate_seq(v, elem, rng, depth)

    def shrink(self, v: Any) -> Iterator[Any]:
        yield from shrink_seq(v)

    def magnitude(self, v: Any) -> tuple[float, int]:
        return _items_magnitude(v)

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        return []


class Tuple(Kind):
    name = "tuple"
    value_types = (tuple,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            return [registry.empty(t)]
        if t.variadic:
            return [tuple(s) for s in _seq_boundary(t, depth)]
        if not t.args:
            return [()]
        lists = [registry.boundary_values(a, depth + 1) for a in t.args]
        n = max(len(x) for x in lists)
        return [tuple(rot(xs, j) for xs in lists) for j in range(min(n, 12))]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return registry.empty(t)
        if t.variadic:
            return tuple(_random_items(t, rng, depth)[0])
        return tuple(registry.random_value(a, rng, depth + 1) for a in t.args)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, tuple) and (t.variadic or len(v) == len(t.args))

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        if rt.kind == "tuple" and not rt.variadic and len(rt.args) == len(v):
            if not v:
                return v  # ``Tuple[()]``
            i = rng.randrange(len(v))
            items = list(v)
            items[i] = registry.mutate_value(items[i], rt.args[i], rng, depth + 1)
            return tuple(items)
        elem = rt.args[0] if rt.kind == "tuple" and rt.args else ANY
        return tuple(mutate_seq(list(v), elem, rng, depth))

    def shrink(self, v: Any) -> Iterator[Any]:
        for s in shrink_seq(list(v)):
            yield tuple(s)

    def magnitude(self, v: Any) -> tuple[float, int]:
        return _items_magnitude(v)

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        return () if t.variadic or not t.args else tuple(registry.empty(a, leaf=True) for a in t.args)


class Set(Kind):
    name = "set"
    value_types: ClassVar[tuple[type, ...]] = (set,)
    exact: ClassVar[tuple[type, ...]] = (set,)
    frozen = False

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            return [registry.empty(t)]
        return [set_from(s, self.frozen) for s in _seq_boundary(t, depth)]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return registry.empty(t)
        return set_from(_random_items(t, rng, depth)[0], self.frozen)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, set)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        elem = rt.args[0] if rt.kind in ("set", "frozenset") and rt.args else ANY
        items = sorted(v, key=to_source)  # deterministic order, whatever the hash seed
        return set_from(mutate_seq(items, elem, rng, depth, hashable_=True), isinstance(v, frozenset))

    def shrink(self, v: Any) -> Iterator[Any]:
        kind = type(v)
        for s in shrink_seq(sorted(v, key=to_source)):
            try:
                yield kind(s)
            except TypeError:
                continue

    def magnitude(self, v: Any) -> tuple[float, int]:
        return _items_magnitude(v)

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        return frozenset() if self.frozen else set()


class FrozenSet(Set):
    name = "frozenset"
    value_types = (frozenset,)
    exact = (frozenset,)
    frozen = True

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, frozenset)


class Dict(Kind):
    name = "dict"
    value_types = (dict,)
    exact = (dict,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            return [registry.empty(t)]
        kt, vt = (t.args + (ANY, ANY))[:2]
        kv = registry.boundary_values(kt, depth + 1)
        vv = registry.boundary_values(vt, depth + 1)
        return [
            dict_from([(rot(kv, j), rot(vv, j)) for j in range(3)]),
            {},
            dict_from([(kv[0], vv[0])]),
            dict_from([(rot(kv, j), rot(vv, j + 1)) for j in range(min(8, len(kv)))]),
            dict_from([(rot(kv, j), vv[0]) for j in range(4)]),
        ]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return registry.empty(t)
        kt, vt = (t.args + (ANY, ANY))[:2]
        if kt.kind == "any":
            kt = rng.choice([STR, INT])
        n = _random_len(rng)
        if depth >= 1:
            n = min(n, 6)
        return dict_from(
            [(registry.random_value(kt, rng, depth + 1), registry.random_value(vt, rng, depth + 1)) for _ in range(n)]
        )

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, dict)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        kt, vt = (rt.args + (ANY, ANY))[:2] if rt.kind == "dict" else (ANY, ANY)
        return _mutate_dict(v, kt, vt, rng, depth)

    def shrink(self, v: Any) -> Iterator[Any]:
        pairs = list(v.items())
        if not pairs:
            return
        yield {}
        if len(pairs) >= 4:
            yield dict(pairs[: len(pairs) // 2])
            yield dict(pairs[len(pairs) // 2 :])
        for i in drop_positions(len(pairs)):
            yield dict(pairs[:i] + pairs[i + 1 :])
        for i, (k, x) in enumerate(pairs):
            for s in registry.shrink_value(x):
                yield dict(pairs[:i] + [(k, s)] + pairs[i + 1 :])
        for i, (k, x) in enumerate(pairs):
            for s in registry.shrink_value(k):
                try:
                    hash(s)
                except TypeError:
                    continue
                if s not in v:
                    yield dict(pairs[:i] + [(s, x)] + pairs[i + 1 :])

    def magnitude(self, v: Any) -> tuple[float, int]:
        parts = [registry.magnitude(k) for k in v] + [registry.magnitude(x) for x in v.values()]
        return (sum(p[0] for p in parts), sum(p[1] for p in parts))

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        return {}


KINDS = (List(), Tuple(), Set(), FrozenSet(), Dict())
