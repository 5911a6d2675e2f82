"""Annotations -> types: :func:`parse_annotation` reads an annotation's source text with ``ast``
(never evaluated), knowing the module's own classes; a name it cannot place is a type variable,
a stdlib type it can build, or a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from coherence.engine import syntax
from coherence.engine.inputs.types import (
    ANY,
    BOOL,
    BYTES,
    COMPLEX,
    FLOAT,
    INT,
    MIXED,
    NONE,
    STR,
    TypeDesc,
    dict_of,
    list_of,
    optional,
    set_of,
    tuple_of,
    union,
)
from coherence.engine.inputs.values import Construct
from coherence.engine.spec import ClassInfo, Param

_SIMPLE = {
    "int": INT,
    "float": FLOAT,
    "bool": BOOL,
    "str": STR,
    "bytes": BYTES,
    "bytearray": BYTES,
    "complex": COMPLEX,
    "None": NONE,
    "NoneType": NONE,
    "Any": ANY,
    "object": ANY,
    "Hashable": union(INT, STR),
    "SupportsInt": INT,
    "SupportsFloat": FLOAT,
    "Number": union(INT, FLOAT),
    "Real": union(INT, FLOAT),
    "Integral": INT,
    "AnyStr": STR,
    "LiteralString": STR,
    "Text": STR,
}
_LISTISH = {
    "list",
    "List",
    "Sequence",
    "MutableSequence",
    "Iterable",
    "Iterator",
    "Collection",
    "Reversible",
    "Generator",
    "Container",
    "deque",
    "Deque",
    "UserList",
    "array",
    "ndarray",
    "ArrayLike",
    "Sized",
}
_DICTISH = {
    "dict",
    "Dict",
    "Mapping",
    "MutableMapping",
    "OrderedDict",
    "defaultdict",
    "DefaultDict",
    "Counter",
    "ChainMap",
    "UserDict",
}
_SETISH = {"set", "Set", "MutableSet", "AbstractSet", "KeysView"}
_FROZENSETISH = {"frozenset", "FrozenSet"}
_TUPLEISH = {"tuple", "Tuple"}
_WRAPPERS = {"Annotated", "Final", "ClassVar", "Required", "NotRequired", "ReadOnly", "InitVar"}
_STDLIB = {
    "date": "date",
    "datetime": "datetime",
    "timedelta": "timedelta",
    "Decimal": "Decimal",
    "Fraction": "Fraction",
}
# Kinds that claim annotations of their own (``pathlib.Path``): each is added by the kinds'
# registry when the kind is registered, which importing any of ``coherence.engine.inputs`` does.
_CLAIMS: list[Callable[[str], TypeDesc | None]] = []


def claim_annotations(claim: Callable[[str], TypeDesc | None]) -> None:
    """Let ``claim`` name the descriptor of a dotted annotation (None: not its own)."""
    _CLAIMS.append(claim)
    _parse_cached.cache_clear()


_TYPEVAR = re.compile(r"^(T|K|V|U|S|KT|VT|T_co|T_contra|[A-Z]\d?|_T\w*|\w+_co|\w+_contra|T[A-Z]\w*)$")


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def parse_annotation(text: str | None, classes: Iterable[ClassInfo] = ()) -> TypeDesc | None:
    """The type an annotation's source text describes, or ``None`` if there is no annotation."""
    if text is None or not text.strip():
        return None
    return _parse_cached(text.strip(), tuple(classes))


@lru_cache(maxsize=4096)
def _parse_cached(text: str, classes: tuple[ClassInfo, ...]) -> TypeDesc:
    try:
        node = syntax.parse(text, mode="eval").body
    except SyntaxError:
        return MIXED
    return _from_node(node, {c.name: c for c in classes}, 0)


def _subscript_args(node: ast.Subscript) -> list[ast.AST]:
    sl = node.slice
    if isinstance(sl, ast.Tuple):
        return list(sl.elts)
    return [sl]


def _from_node(node: ast.AST, classes: dict[str, ClassInfo], depth: int) -> TypeDesc:
    if depth > 12:
        return ANY
    rec: Callable[[ast.AST], TypeDesc] = lambda n: _from_node(n, classes, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        if node.value is None:
            return NONE
        if isinstance(node.value, str):  # forward reference / string annotation
            try:
                inner = syntax.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                return MIXED
            return rec(inner)
        if node.value is Ellipsis:
            return ANY
        return MIXED
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union(rec(node.left), rec(node.right))
    if isinstance(node, (ast.Name, ast.Attribute)):
        dotted = _dotted(node) or ""
        return _from_name(dotted, classes)
    if isinstance(node, ast.Subscript):
        base = (_dotted(node.value) or "").split(".")[-1]
        args = _subscript_args(node)
        if base == "Optional":
            return optional(rec(args[0]))
        if base == "Union":
            return union(*[rec(a) for a in args])
        if base == "Literal":
            vals: list[Any] = []
            for a in args:
                try:
                    vals.append(syntax.literal_eval(a))
                except (ValueError, SyntaxError, TypeError):
                    d = _dotted(a)
                    if d:
                        vals.append(Construct(d, attr=True))
            return TypeDesc("literal", values=tuple(vals)) if vals else MIXED
        if base in _WRAPPERS:
            return rec(args[0])
        if base in _LISTISH:
            return list_of(rec(args[0]))
        if base in _SETISH:
            return set_of(rec(args[0]))
        if base in _FROZENSETISH:
            return set_of(rec(args[0]), frozen=True)
        if base in _DICTISH:
            if base == "Counter":
                return dict_of(rec(args[0]), INT)
            if len(args) >= 2:
                return dict_of(rec(args[0]), rec(args[1]))
            return dict_of(rec(args[0]), ANY)
        if base in ("ItemsView",):
            return list_of(tuple_of(rec(args[0]), rec(args[1]) if len(args) > 1 else ANY))
        if base in _TUPLEISH:
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return tuple_of(rec(args[0]), variadic=True)
            if len(args) == 1 and isinstance(args[0], ast.Tuple) and not args[0].elts:
                return tuple_of()
            return tuple_of(*[rec(a) for a in args])
        if base in ("Callable",):
            arity = -1
            if args and isinstance(args[0], ast.List):
                arity = len(args[0].elts)
            return TypeDesc("callable", values=(arity,))
        if base in ("Type", "type"):
            return MIXED
        if base in _SIMPLE:
            return _SIMPLE[base]
        # Generic user class (``Box[int]``) or unknown generic.
        return _from_name(_dotted(node.value) or "", classes)
    if isinstance(node, ast.List):  # Callable's argument list used bare: treat as list
        return list_of(rec(node.elts[0])) if node.elts else list_of(ANY)
    return MIXED


def _from_name(dotted: str, classes: dict[str, ClassInfo]) -> TypeDesc:
    last = dotted.split(".")[-1]
    for key in (last, dotted):
        if key in classes:
            info = classes[key]
            kind = "enum" if info.is_enum else "class"
            # ``values`` carries every class of the module so that fields can refer to them.
            return TypeDesc(kind, name=key, info=info, values=tuple(classes.values()))
    if last == "ndarray" and "." in dotted:
        # ``np.ndarray`` -> ``np.array([...])`` built with the module's own alias of numpy.
        callee = dotted.rsplit(".", 1)[0] + ".array"
        info = ClassInfo(callee, fields=(Param("object", "positional_or_keyword", "List[float]"),))
        return TypeDesc("class", name=callee, info=info)
    if last in _SIMPLE:
        return _SIMPLE[last]
    if last in _LISTISH:
        return list_of(ANY)
    if last in _DICTISH:
        return dict_of(ANY, ANY) if last != "Counter" else dict_of(STR, INT)
    if last in _SETISH:
        return set_of(ANY)
    if last in _FROZENSETISH:
        return set_of(ANY, frozen=True)
    if last in _TUPLEISH:
        return tuple_of(ANY, variadic=True)
    if last == "Callable":
        return TypeDesc("callable", values=(-1,))
    if last in _STDLIB and (dotted == last or dotted.split(".")[0] in ("datetime", "decimal", "fractions")):
        return TypeDesc("stdlib", name=dotted, values=(_STDLIB[last],))
    for claim in _CLAIMS:
        claimed = claim(dotted)
        if claimed is not None:
            return claimed
    if _TYPEVAR.match(last):
        return ANY
    return MIXED
