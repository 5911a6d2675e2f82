"""Values built from type descriptors: boundary values first, then random ones."""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.name_types import infer_from_default, infer_from_name
from coherence.engine.inputs.types import ANY, INT, MIXED, STR, TypeDesc
from coherence.engine.inputs.values import Construct, Expr
from coherence.engine.spec import Param

MAX_ITEMS = 20  # items in a generated container
MAX_STR = 40  # characters in a generated string
MAX_DEPTH = 3  # nesting of generated containers / constructs

_INT_BOUNDARY = [3, 0, 1, -1, 2, 5, 10, -7, 42, 100, 7, -100, 1000, 10**6]
_FLOAT_BOUNDARY = [1.5, 0.0, 1.0, -1.0, 0.5, -2.75, 3.14159, 100.0, 1e-09, 0.1, -0.5, 12345.678, 1e6]
_STR_BOUNDARY = [
    "hello",
    "",
    "a",
    "Hello World",
    " ",
    "abc def ghi",
    "aAbB",
    "12345",
    "racecar",
    "  padded  ",
    "ünïcödé ✓ 中文",
    "a,b;c.d!",
    "\t\n",
    "AbCdEfGhIjKlMnOpQrStUvWxYz",
    "aaaa",
]
_CHAR_BOUNDARY = ["a", "z", "A", " ", "1", "é", "b"]
_BYTES_BOUNDARY = [b"hello", b"", b"\x00", b"abc", b"\xff\xfe", b"Hello World"]
_COMPLEX_BOUNDARY = [complex(1, 2), complex(0, 0), complex(0, -1), complex(3, 0), complex(-1.5, 2.5)]
_WORDS = [
    "hello",
    "world",
    "the",
    "quick",
    "brown",
    "fox",
    "a",
    "Python",
    "is",
    "fun",
    "abc",
    "racecar",
    "level",
    "apple",
    "Banana",
    "x",
    "test",
    "data",
    "one",
    "two",
    "Zebra",
]
_LAMBDAS = {
    0: ["lambda: 0", "lambda: 1", "lambda: None"],
    1: ["lambda x: x", "lambda x: x * 2", "lambda x: not x", "lambda x: 0", "lambda x: str(x)"],
    2: ["lambda a, b: a + b", "lambda a, b: a", "lambda a, b: b", "lambda a, b: a < b", "lambda a, b: (a, b)"],
    -1: ["lambda *a, **k: a[0] if a else None", "lambda *a, **k: 0", "lambda *a, **k: len(a)"],
}


@lru_cache(maxsize=1024)
def field_types(t: TypeDesc) -> tuple[list[tuple[Param, TypeDesc]], list[tuple[Param, TypeDesc]]]:
    """Positional and keyword-only fields of a class descriptor, with their types (cached; do not
    modify the lists)."""
    info = t.info
    if info is None:
        return [], []
    classes = t.values  # every class of the module, so fields can refer to them
    pos: list[tuple[Param, TypeDesc]] = []
    kw: list[tuple[Param, TypeDesc]] = []
    for f in info.fields:
        if f.kind in ("var_positional", "var_keyword"):
            continue
        ft = parse_annotation(f.annotation, classes) if f.annotation else None
        if ft is None:
            ft = infer_from_default(f.default) or infer_from_name(f.name)
        (kw if f.kind == "keyword_only" else pos).append((f, ft))
    return pos, kw


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, set):
        return frozenset(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple((_hashable(k), _hashable(x)) for k, x in v.items())
    if isinstance(v, tuple):
        return tuple(_hashable(x) for x in v)
    return v


def _is_hashable(v: Any) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _set_from(items: list[Any], frozen: bool) -> set[Any] | frozenset[Any]:
    out = []
    for x in items:
        x = _hashable(x)
        if _is_hashable(x):
            out.append(x)
    return frozenset(out) if frozen else set(out)


def _dict_from(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    d: dict[Any, Any] = {}
    for k, v in pairs:
        k = _hashable(k)
        if _is_hashable(k) and k not in d:
            d[k] = v
    return d


def _rot(xs: list[Any], j: int) -> Any:
    return xs[j % len(xs)]


def boundary_values(t: TypeDesc, depth: int = 0) -> list[Any]:
    """Deterministic values of ``t``: a typical one first, then edge cases (empty, zero, negative,
    one item, duplicates, whitespace, unicode...)."""
    k = t.kind
    if k == "int":
        return list(_INT_BOUNDARY)
    if k == "float":
        return list(_FLOAT_BOUNDARY)
    if k == "bool":
        return [True, False]
    if k == "str":
        return list(_STR_BOUNDARY)
    if k == "char":
        return list(_CHAR_BOUNDARY)
    if k == "bytes":
        return list(_BYTES_BOUNDARY)
    if k == "none":
        return [None]
    if k == "complex":
        return list(_COMPLEX_BOUNDARY)
    if k == "literal":
        return list(t.values)
    if k == "expr":
        return list(t.values) or [None]
    if k == "enum":
        info = t.info
        if info and info.members:
            return [Construct(f"{t.name}.{m}", attr=True) for m in info.members]
        return [Construct(f"next(iter({t.name}))", attr=True)]
    if k == "callable":
        arity = t.values[0] if t.values else -1
        return [Expr(s) for s in _LAMBDAS.get(arity, _LAMBDAS[-1])]
    if k == "stdlib":
        return _stdlib_boundary(t)
    if k == "any":
        return [1, "a", [1, 2, 3], 0, None, "", 2.5, [], -3, "hello world", True]
    if k == "union":
        if depth >= MAX_DEPTH and any(a.kind == "none" for a in t.args):
            return [None]  # bounded recursion: ``next: Optional[Node]``
        # The most likely member keeps all its values; the others appear in proportion to their
        # weights (each at least once), spread evenly, the most likely member first.
        ws = list(t.weights) if t.weights else [1.0] * len(t.args)
        order = sorted(range(len(t.args)), key=lambda i: -ws[i])
        lists = [boundary_values(t.args[i], depth) for i in order]
        top = ws[order[0]] or 1.0
        quota = [len(lists[0])] + [
            max(1, min(len(xs), round(len(lists[0]) * ws[i] / top))) for i, xs in zip(order[1:], lists[1:])
        ]
        placed = [((k + 0.5) / q, m, lists[m][k]) for m, q in enumerate(quota) for k in range(q)]
        placed.sort(key=lambda x: (x[0], x[1]))
        return [v for _, _, v in placed]
    if depth >= MAX_DEPTH:
        return [_empty(t)]
    if k == "list" and t.args and t.args[0].kind == "list":
        return _matrix_boundary(t.args[0], depth)
    if k in ("list", "set", "frozenset") or (k == "tuple" and t.variadic):
        elem = t.args[0] if t.args else ANY
        mixed = elem.kind == "any"
        ev = boundary_values(INT if mixed else elem, depth + 1)  # homogeneous, mostly
        typical = [_rot(ev, j) for j in range(min(5, max(3, len(ev))))]
        seqs: list[list[Any]] = [
            typical,
            [],
            [ev[0]],
            [ev[0], ev[0]],
            ev[: min(len(ev), 8)],
            list(reversed(ev[: min(len(ev), 6)])),
            [_rot(ev, j * 3 + 1) for j in range(min(MAX_ITEMS, 12))],
        ]
        try:
            seqs.insert(5, sorted(ev[: min(len(ev), 8)]))
        except TypeError:
            pass
        if mixed:
            seqs.append(boundary_values(ANY, depth + 1)[:5])
            seqs.append(["a", "b", "a"])
        if k == "list":
            return seqs
        if k == "tuple":
            return [tuple(s) for s in seqs]
        return [_set_from(s, k == "frozenset") for s in seqs]
    if k == "tuple":
        if not t.args:
            return [()]
        lists = [boundary_values(a, depth + 1) for a in t.args]
        n = max(len(x) for x in lists)
        return [tuple(_rot(xs, j) for xs in lists) for j in range(min(n, 12))]
    if k == "dict":
        kt, vt = (t.args + (ANY, ANY))[:2]
        kv = boundary_values(kt, depth + 1)
        vv = boundary_values(vt, depth + 1)
        return [
            _dict_from([(_rot(kv, j), _rot(vv, j)) for j in range(3)]),
            {},
            _dict_from([(kv[0], vv[0])]),
            _dict_from([(_rot(kv, j), _rot(vv, j + 1)) for j in range(min(8, len(kv)))]),
            _dict_from([(_rot(kv, j), vv[0]) for j in range(4)]),
        ]
    if k == "class":
        pos, kw = field_types(t)
        if not pos and not kw:
            return [Construct(t.name)]
        pl = [boundary_values(ft, depth + 1) for _, ft in pos]
        kl = [boundary_values(ft, depth + 1) for _, ft in kw]
        n = max(len(x) for x in pl + kl)
        return [
            Construct(
                t.name, tuple(_rot(xs, j) for xs in pl), tuple((f.name, _rot(xs, j)) for (f, _), xs in zip(kw, kl))
            )
            for j in range(min(n, 8))
        ]
    return [1, "a", [1, 2, 3]]


def _matrix_boundary(row: TypeDesc, depth: int) -> list[Any]:
    """Lists of lists: rectangular and square ones first (what matrix code expects), then
    the empty cases and one ragged list."""
    cell = row.args[0] if row.args else INT
    ev = boundary_values(INT if cell.kind == "any" else cell, depth + 2)
    flat = [_rot(ev, j) for j in range(64)]
    if cell.kind in ("int", "any"):
        flat = list(range(1, 65))  # distinct cells: 1..rows*cols
        flat[4], flat[7] = -3, 0

    def grid(r: int, c: int, shift: int = 0) -> list[list[Any]]:
        return [[flat[(i * c + j + shift) % len(flat)] for j in range(c)] for i in range(r)]

    out = [
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
    return out


def _empty(t: TypeDesc) -> Any:
    k = t.kind
    if k == "list":
        return []
    if k == "tuple":
        return () if t.variadic or not t.args else tuple(_empty_scalar(a) for a in t.args)
    if k == "set":
        return set()
    if k == "frozenset":
        return frozenset()
    if k == "dict":
        return {}
    if k == "class":
        pos, kw = field_types(t)
        return Construct(
            t.name, tuple(_empty_scalar(ft) for _, ft in pos), tuple((f.name, _empty_scalar(ft)) for f, ft in kw)
        )
    return _empty_scalar(t)


def _empty_scalar(t: TypeDesc) -> Any:
    k = t.kind
    if k == "union":
        if any(a.kind == "none" for a in t.args):
            return None
        return _empty_scalar(t.args[0])
    if k in ("list", "tuple", "set", "frozenset", "dict"):
        return _empty(t)
    if k == "class":
        return None
    vals = boundary_values(t, MAX_DEPTH) if k not in ("class",) else [None]
    return vals[0] if vals else None


def _stdlib_boundary(t: TypeDesc) -> list[Any]:
    kind = t.values[0]
    c = t.name
    if kind == "date":
        return [Construct(c, a) for a in [(2024, 2, 28), (2024, 2, 29), (2000, 1, 1), (1999, 12, 31), (2023, 6, 15)]]
    if kind == "datetime":
        return [Construct(c, a) for a in [(2024, 2, 28, 12, 30, 0), (2000, 1, 1, 0, 0, 0), (1999, 12, 31, 23, 59, 59)]]
    if kind == "timedelta":
        kws = [(("days", 1),), (("seconds", 0),), (("days", -1), ("seconds", 30)), (("hours", 36),)]
        return [Construct(c, kwargs=a) for a in kws]
    if kind == "Decimal":
        return [Construct(c, (s,)) for s in ["3.14", "0", "-1.5", "100", "0.1"]]
    if kind == "Fraction":
        return [Construct(c, a) for a in [(1, 3), (0, 1), (-5, 2), (7, 1)]]
    return [1]


def _stdlib_random(t: TypeDesc, rng: random.Random) -> Any:
    kind = t.values[0]
    c = t.name
    if kind == "date":
        return Construct(c, (rng.randint(1970, 2050), rng.randint(1, 12), rng.randint(1, 28)))
    if kind == "datetime":
        return Construct(
            c,
            (
                rng.randint(1970, 2050),
                rng.randint(1, 12),
                rng.randint(1, 28),
                rng.randint(0, 23),
                rng.randint(0, 59),
                rng.randint(0, 59),
            ),
        )
    if kind == "timedelta":
        return Construct(c, kwargs=(("days", rng.randint(-10, 400)), ("seconds", rng.randint(0, 86399))))
    if kind == "Decimal":
        return Construct(c, (f"{rng.uniform(-1000, 1000):.{rng.randint(0, 4)}f}",))
    if kind == "Fraction":
        return Construct(c, (rng.randint(-50, 50), rng.randint(1, 20)))
    return rng.randint(0, 10)


def random_int(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.55:
        return rng.randint(0, 20)
    if r < 0.85:
        return rng.randint(-20, 100)
    if r < 0.97:
        return rng.randint(-1000, 1000)
    return rng.choice([10**6, -(10**6), 2**31 - 1, 10**4])


def random_float(rng: random.Random) -> float:
    r = rng.random()
    if r < 0.5:
        return round(rng.uniform(-10, 10), rng.choice([1, 2]))
    if r < 0.8:
        return round(rng.uniform(-100, 100), 2)
    if r < 0.9:
        return float(rng.randint(-20, 20))
    if r < 0.97:
        return rng.uniform(-1, 1)
    return rng.choice([1e-9, -1e-9, 1e6, 0.1 + 0.2])


_ALPHABETS = [
    ("abcdefghijklmnopqrstuvwxyz", 0.5),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 0.15),
    ("abcdefghij ", 0.1),
    ("0123456789", 0.07),
    ("abcABC123 ,.!?-_()[]{}'\"", 0.1),
    ("aéüßñçø中文日本😀 ", 0.03),
    ("ab", 0.05),
]


def random_str(rng: random.Random, max_len: int = MAX_STR) -> str:
    if rng.random() < 0.2:
        n = rng.randint(1, 5)
        s = " ".join(rng.choice(_WORDS) for _ in range(n))
        return s[:max_len]
    alphabet = rng.choices([a for a, _ in _ALPHABETS], weights=[w for _, w in _ALPHABETS])[0]
    n = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, max_len])
    return "".join(rng.choice(alphabet) for _ in range(min(n, max_len)))


def _random_len(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.8:
        return rng.randint(1, 6)
    if r < 0.95:
        return rng.randint(7, 12)
    return rng.randint(13, MAX_ITEMS)


def random_value(t: TypeDesc, rng: random.Random, depth: int = 0) -> Any:
    """A fresh random value of ``t`` (bounded: ≤ MAX_ITEMS items, ≤ MAX_STR chars, depth ≤ MAX_DEPTH)."""
    k = t.kind
    if k == "int":
        return random_int(rng)
    if k == "float":
        return random_float(rng)
    if k == "bool":
        return rng.random() < 0.5
    if k == "str":
        return random_str(rng)
    if k == "char":
        return rng.choice("abcdefghijklmnopqrstuvwxyzAEZ 01!é")
    if k == "bytes":
        return random_str(rng, 20).encode("utf-8")[:MAX_STR]
    if k == "none":
        return None
    if k == "complex":
        return complex(rng.randint(-5, 5), rng.randint(-5, 5))
    if k == "literal":
        return rng.choice(t.values) if t.values else None
    if k in ("enum", "callable", "expr"):
        return rng.choice(boundary_values(t, depth))
    if k == "stdlib":
        return _stdlib_random(t, rng)
    if k == "any":
        return random_value(MIXED, rng, depth)
    if k == "union":
        ws = list(t.weights) if t.weights else [1.0] * len(t.args)
        if depth >= MAX_DEPTH and any(a.kind == "none" for a in t.args):
            return None
        m = rng.choices(t.args, weights=ws)[0]
        return random_value(m, rng, depth)
    if depth >= MAX_DEPTH:
        return _empty(t)
    if k in ("list", "set", "frozenset") or (k == "tuple" and t.variadic):
        elem = t.args[0] if t.args else ANY
        if elem.kind == "any":  # one concrete item type per container, mostly
            elem = rng.choices([INT, STR, MIXED], weights=[0.6, 0.25, 0.15])[0]
        n = _random_len(rng)
        if depth >= 1:
            n = min(n, 6)
        if k == "list" and elem.kind == "list" and elem.args and rng.random() < 0.7:
            # a rectangular matrix
            cols = rng.randint(1, 6)
            cell = elem.args[0] if elem.args[0].kind != "any" else INT
            return [[random_value(cell, rng, depth + 2) for _ in range(cols)] for _ in range(min(n, 6))]
        items = [random_value(elem, rng, depth + 1) for _ in range(n)]
        if k == "list":
            if rng.random() < 0.1:
                try:
                    items.sort()
                except TypeError:
                    pass
            return items
        if k == "tuple":
            return tuple(items)
        return _set_from(items, k == "frozenset")
    if k == "tuple":
        return tuple(random_value(a, rng, depth + 1) for a in t.args)
    if k == "dict":
        kt, vt = (t.args + (ANY, ANY))[:2]
        if kt.kind == "any":
            kt = rng.choice([STR, INT])
        n = _random_len(rng)
        if depth >= 1:
            n = min(n, 6)
        return _dict_from([(random_value(kt, rng, depth + 1), random_value(vt, rng, depth + 1)) for _ in range(n)])
    if k == "class":
        pos, kw = field_types(t)
        return Construct(
            t.name,
            tuple(random_value(ft, rng, depth + 1) for _, ft in pos),
            tuple((f.name, random_value(ft, rng, depth + 1)) for f, ft in kw),
        )
    return random_value(MIXED, rng, depth)
