"""Type descriptors for input generation: :class:`TypeDesc` and its constructors.

The evidence for a parameter's type comes from three places, strongest first, each in its own module:

1. concrete values (doctest / test-file seeds): :mod:`.value_types` (``type_of_value``, ``merge_types``);
2. annotations (``Param.annotation`` source text): :mod:`.annotation_types` (``parse_annotation``);
3. the parameter's name and default (:mod:`.name_types`) and the words of the docstring.

:func:`.param_types.param_types` combines them into one :class:`TypeDesc` per parameter.

Nothing here executes user code: annotations and defaults are read with ``ast`` only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from coherence.engine.spec import ClassInfo

__all__ = [
    "TypeDesc",
    "ANY",
    "BOOL",
    "BYTES",
    "CHAR",
    "COMPLEX",
    "FLOAT",
    "INT",
    "NONE",
    "STR",
    "MIXED",
    "list_of",
    "tuple_of",
    "dict_of",
    "set_of",
    "union",
    "optional",
]


@dataclass(frozen=True)
class TypeDesc:
    """What values of one parameter look like.

    ``kind`` names a registered kind (:mod:`coherence.engine.inputs.kinds`): ``int float bool str
    char bytes none complex any list tuple set frozenset dict union literal class enum stdlib
    callable path``, and ``expr``/``construct`` for what examples hold.

    - ``list/set/frozenset``: ``args = (elem,)``; ``dict``: ``args = (key, value)``;
    - ``tuple``: ``args`` are the item types; ``variadic`` means ``tuple[args[0], ...]``;
    - ``union``: ``args`` are the members, ``weights`` their relative frequencies;
    - ``literal``: ``values`` are the allowed values;
    - ``class``/``enum``: ``name`` and ``info`` (a :class:`ClassInfo`);
    - ``stdlib``: ``name`` is the callee as written (``date``, ``datetime.date``), ``values[0]`` the
      kind (``date``, ``datetime``, ``timedelta``, ``Decimal``, ``Fraction``);
    - ``callable``: ``values[0]`` is the arity (``-1``: unknown);
    - ``path``: ``name`` is the class as written (``Path``, ``pathlib.PurePath``);
    - ``any``: no evidence; values are drawn from a mix of basic types.

    ``weak`` marks a guess (from a name or as a fallback) that weaker-still evidence may not
    override but stronger evidence should.
    """

    kind: str
    args: tuple[TypeDesc, ...] = ()
    variadic: bool = False
    values: tuple[Any, ...] = ()
    name: str = ""
    weights: tuple[float, ...] = ()
    info: ClassInfo | None = None
    weak: bool = False

    def __str__(self) -> str:  # for messages and tests
        k = self.kind
        if k in ("list", "set", "frozenset"):
            return f"{k}[{self.args[0]}]"
        if k == "dict":
            return f"dict[{self.args[0]}, {self.args[1]}]"
        if k == "tuple":
            if self.variadic:
                return f"tuple[{self.args[0]}, ...]"
            return "tuple[" + ", ".join(str(a) for a in self.args) + "]"
        if k == "union":
            return " | ".join(str(a) for a in self.args)
        if k == "literal":
            return "Literal[" + ", ".join(repr(v) for v in self.values) + "]"
        if k in ("class", "enum", "stdlib"):
            return self.name
        return k

    def with_weak(self, weak: bool = True) -> TypeDesc:
        return TypeDesc(self.kind, self.args, self.variadic, self.values, self.name, self.weights, self.info, weak)


INT = TypeDesc("int")
FLOAT = TypeDesc("float")
BOOL = TypeDesc("bool")
STR = TypeDesc("str")
CHAR = TypeDesc("char")
BYTES = TypeDesc("bytes")
NONE = TypeDesc("none")
COMPLEX = TypeDesc("complex")
ANY = TypeDesc("any")


def list_of(t: TypeDesc) -> TypeDesc:
    return TypeDesc("list", (t,))


def set_of(t: TypeDesc, frozen: bool = False) -> TypeDesc:
    return TypeDesc("frozenset" if frozen else "set", (t,))


def dict_of(k: TypeDesc, v: TypeDesc) -> TypeDesc:
    return TypeDesc("dict", (k, v))


def tuple_of(*items: TypeDesc, variadic: bool = False) -> TypeDesc:
    return TypeDesc("tuple", tuple(items), variadic=variadic)


def union(*members: TypeDesc, weights: Iterable[float] | None = None) -> TypeDesc:
    flat: list[TypeDesc] = []
    ws: list[float] = []
    given = list(weights) if weights is not None else None
    for i, m in enumerate(members):
        w = given[i] if given else 1.0
        if m.kind == "union":
            inner = m.weights or (1.0,) * len(m.args)
            tot = sum(inner)
            for a, iw in zip(m.args, inner):
                flat.append(a)
                ws.append(w * iw / tot)
        else:
            flat.append(m)
            ws.append(w)
    out: list[TypeDesc] = []
    out_w: list[float] = []
    for m, w in zip(flat, ws):
        if m in out:
            out_w[out.index(m)] += w
        else:
            out.append(m)
            out_w.append(w)
    if len(out) == 1:
        return out[0]
    return TypeDesc("union", tuple(out), weights=tuple(out_w))


def optional(t: TypeDesc) -> TypeDesc:
    return union(t, NONE, weights=(0.85, 0.15))


# A mix of basic values, for names and annotations that say nothing (int first).
MIXED = union(INT, STR, list_of(INT), FLOAT, weights=(0.45, 0.25, 0.2, 0.1)).with_weak()


def type_family(t: TypeDesc | None) -> str:
    """The kind a value of ``t`` is judged as: a union's first member's, a char's ``str``."""
    if t is None:
        return "?"
    if t.kind == "union":
        return type_family(t.args[0]) if t.args else "?"
    if t.kind == "char":
        return "str"
    return t.kind
