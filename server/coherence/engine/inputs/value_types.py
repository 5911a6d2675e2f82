"""Values -> types: the type of a concrete value (a doctest's or a test file's argument), and the
merge of two such types.  Whether a value fits a type is its kind's fit test
(:func:`coherence.engine.inputs.kinds.fits`).
"""

from __future__ import annotations

from typing import Any

from coherence.engine.inputs.types import (
    ANY,
    BOOL,
    BYTES,
    COMPLEX,
    FLOAT,
    INT,
    NONE,
    STR,
    TypeDesc,
    dict_of,
    list_of,
    set_of,
    tuple_of,
    union,
)
from coherence.engine.inputs.values import Construct, Expr


def type_of_value(v: Any, depth: int = 0) -> TypeDesc:
    """The type of one concrete value (e.g. a doctest argument)."""
    if depth > 4:
        return ANY
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return FLOAT
    if isinstance(v, complex):
        return COMPLEX
    if isinstance(v, str):
        return STR
    if isinstance(v, bytes):
        return BYTES
    if v is None:
        return NONE
    if isinstance(v, Expr):
        return TypeDesc("expr", name=v.source)
    if isinstance(v, Construct):
        return TypeDesc("construct", name=v.callee)
    if isinstance(v, list):
        return list_of(_elements_type(v, depth))
    if isinstance(v, (set, frozenset)):
        return set_of(_elements_type(sorted(v, key=repr), depth), frozen=isinstance(v, frozenset))
    if isinstance(v, tuple):
        items = [type_of_value(x, depth + 1) for x in v]
        if len(items) >= 3 and all(_same_shape(items[0], t) for t in items[1:]):
            return tuple_of(merge_all(items), variadic=True)
        if not items:
            return tuple_of(ANY, variadic=True)
        return tuple_of(*items)
    if isinstance(v, dict):
        keys = [type_of_value(k, depth + 1) for k in v]
        vals = [type_of_value(x, depth + 1) for x in v.values()]
        return dict_of(merge_all(keys) if keys else ANY, merge_all(vals) if vals else ANY)
    return ANY


def _elements_type(items: list[Any], depth: int) -> TypeDesc:
    if not items:
        return ANY
    return merge_all([type_of_value(x, depth + 1) for x in items])


def _same_shape(a: TypeDesc, b: TypeDesc) -> bool:
    return a.kind == b.kind and (a.kind != "tuple" or len(a.args) == len(b.args) or a.variadic == b.variadic)


def merge_all(ts: list[TypeDesc]) -> TypeDesc:
    out = ts[0]
    for t in ts[1:]:
        out = merge_types(out, t)
    return out


def merge_types(a: TypeDesc | None, b: TypeDesc | None) -> TypeDesc:
    """The smallest descriptor covering both (used to combine the evidence of several seeds)."""
    if a is None:
        return b or ANY
    if b is None:
        return a
    if a == b:
        return a
    if a.kind == "any":
        return b
    if b.kind == "any":
        return a
    if a.kind == "expr" or b.kind == "expr":
        return b if a.kind == "expr" else a
    if {a.kind, b.kind} == {"int", "float"}:
        return FLOAT
    if a.kind == b.kind:
        k = a.kind
        if k in ("list", "set", "frozenset"):
            return TypeDesc(k, (merge_types(a.args[0], b.args[0]),))
        if k == "dict":
            return dict_of(merge_types(a.args[0], b.args[0]), merge_types(a.args[1], b.args[1]))
        if k == "tuple":
            if not a.variadic and not b.variadic and len(a.args) == len(b.args):
                return tuple_of(*[merge_types(x, y) for x, y in zip(a.args, b.args)])
            items = list(a.args) + list(b.args)
            return tuple_of(merge_all(items) if items else ANY, variadic=True)
        if k == "union":
            return union(a, b)
        if k == "literal":
            return TypeDesc("literal", values=tuple(dict.fromkeys(a.values + b.values)))
        return a
    return union(a, b)


def is_weak(t: TypeDesc | None) -> bool:
    return t is None or t.weak or t.kind == "any"
