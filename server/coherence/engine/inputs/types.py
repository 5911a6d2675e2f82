"""Type descriptors for input generation.

Three sources of evidence, strongest first:

1. concrete values (doctest / test-file seeds): :func:`type_of_value`, merged with :func:`merge_types`;
2. annotations (``Param.annotation`` source text): :func:`parse_annotation`;
3. the parameter's name and default, and the words of the docstring: :func:`infer_from_name`,
   :func:`infer_from_default`, :func:`description_hints`.

:func:`param_types` combines them into one :class:`TypeDesc` per parameter.

Nothing here executes user code: annotations and defaults are read with ``ast`` only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from coherence.engine.inputs.values import Construct, Expr
from coherence.engine.spec import ClassInfo, Param

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
    "parse_annotation",
    "type_of_value",
    "merge_types",
    "infer_from_name",
    "infer_from_default",
    "description_hints",
    "param_types",
    "matches",
    "is_weak",
]


@dataclass(frozen=True)
class TypeDesc:
    """What values of one parameter look like.

    ``kind`` is one of: ``int float bool str char bytes none complex any list tuple set frozenset
    dict union literal class enum stdlib callable``.

    - ``list/set/frozenset``: ``args = (elem,)``; ``dict``: ``args = (key, value)``;
    - ``tuple``: ``args`` are the item types; ``variadic`` means ``tuple[args[0], ...]``;
    - ``union``: ``args`` are the members, ``weights`` their relative frequencies;
    - ``literal``: ``values`` are the allowed values;
    - ``class``/``enum``: ``name`` and ``info`` (a :class:`ClassInfo`);
    - ``stdlib``: ``name`` is the callee as written (``date``, ``datetime.date``), ``values[0]`` the
      kind (``date``, ``datetime``, ``timedelta``, ``Decimal``, ``Fraction``);
    - ``callable``: ``values[0]`` is the arity (``-1``: unknown);
    - ``any``: no evidence; values are drawn from a mix of basic types.

    ``weak`` marks a guess (from a name or as a fallback) that weaker-still evidence may not
    override but stronger evidence should.
    """

    kind: str
    args: tuple[TypeDesc, ...] = ()
    variadic: bool = False
    values: tuple = ()
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

# ---------------------------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------------------------

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
        node = ast.parse(text, mode="eval").body
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
    rec = lambda n: _from_node(n, classes, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        if node.value is None:
            return NONE
        if isinstance(node.value, str):  # forward reference / string annotation
            try:
                inner = ast.parse(node.value.strip(), mode="eval").body
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
                    vals.append(ast.literal_eval(a))
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
    if _TYPEVAR.match(last):
        return ANY
    return MIXED


# ---------------------------------------------------------------------------------------------
# Values -> types
# ---------------------------------------------------------------------------------------------


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
            return tuple_of(_merge_all(items), variadic=True)
        if not items:
            return tuple_of(ANY, variadic=True)
        return tuple_of(*items)
    if isinstance(v, dict):
        keys = [type_of_value(k, depth + 1) for k in v]
        vals = [type_of_value(x, depth + 1) for x in v.values()]
        return dict_of(_merge_all(keys) if keys else ANY, _merge_all(vals) if vals else ANY)
    return ANY


def _elements_type(items: list, depth: int) -> TypeDesc:
    if not items:
        return ANY
    return _merge_all([type_of_value(x, depth + 1) for x in items])


def _same_shape(a: TypeDesc, b: TypeDesc) -> bool:
    return a.kind == b.kind and (a.kind != "tuple" or len(a.args) == len(b.args) or a.variadic == b.variadic)


def _merge_all(ts: list[TypeDesc]) -> TypeDesc:
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
            return tuple_of(_merge_all(items) if items else ANY, variadic=True)
        if k == "union":
            return union(a, b)
        if k == "literal":
            return TypeDesc("literal", values=tuple(dict.fromkeys(a.values + b.values)))
        return a
    return union(a, b)


def matches(v: Any, t: TypeDesc) -> bool:
    """Whether value ``v`` plausibly belongs to ``t`` (shallow)."""
    k = t.kind
    if k in ("any", "expr"):
        return True
    if isinstance(v, Expr):
        return True
    if k == "union":
        return any(matches(v, m) for m in t.args)
    if k == "literal":
        return any(v == x and type(v) is type(x) for x in t.values)
    if k == "bool":
        return isinstance(v, bool)
    if k == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if k == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if k in ("str", "char"):
        return isinstance(v, str)
    if k == "bytes":
        return isinstance(v, bytes)
    if k == "none":
        return v is None
    if k == "complex":
        return isinstance(v, complex)
    if k == "list":
        return isinstance(v, list)
    if k == "tuple":
        return isinstance(v, tuple) and (t.variadic or len(v) == len(t.args))
    if k == "set":
        return isinstance(v, set)
    if k == "frozenset":
        return isinstance(v, frozenset)
    if k == "dict":
        return isinstance(v, dict)
    if k in ("class", "enum", "stdlib"):
        return isinstance(v, Construct)
    if k == "callable":
        return isinstance(v, Expr)
    return False


def is_weak(t: TypeDesc | None) -> bool:
    return t is None or t.weak or t.kind == "any"


# ---------------------------------------------------------------------------------------------
# Names, defaults and the docstring
# ---------------------------------------------------------------------------------------------

# Heuristic name table (for parameters without annotations), checked on the name as written and
# on the lower-cased name without trailing digits (``list1`` -> ``list``, ``test_tup2`` -> ``test_tup``):
#
#   n m k i j num number count idx size length width height start end step base power r h ...  int
#   threshold eps tol rate ratio prob alpha factor weight ...                                   float
#   s str string text word sentence name test_str line pattern prefix sub key ...               str
#   ch char letter sep delimiter                                                                 one-char str
#   lst list arr array nums numbers items data values xs seq input_list iterable ...            list[int]
#   words strings names lines tokens                                                             list[str]
#   matrix grid board lists nestedlist                                                           list[list[int]]
#   test_tup tup tuplex tuple                                                                    tuple[int, ...]
#   dict dic test_dict mapping counts freq                                                       dict[str, int]
#   test_list pairs points intervals edges ranges                                                list[tuple[int, int]]
#   flag verbose strict reverse is_* has_*                                                       bool
#   N K M L (upper-case count letters)          int (the only parameter: open to the docstring)
#   A B                                         list[int] 60% | int 40%, open to the docstring
#   a b c x y z l t v item element input ...    int 80% | float | str, open to the docstring
#   d                                           int unless the docstring speaks of a dictionary
#   s                                           int|float when the docstring speaks of numbers, not text
#
# then suffix/prefix rules (``*_list``, ``*_str``, ``num_*``, ``is_*``, ...), then plurals
# (``scores`` -> list of what ``score`` is), then a mix of int, str, list[int], float (int first).
# "Open to the docstring": see :func:`param_types`.
_LIST_INT = list_of(INT)
_LIST_STR = list_of(STR)
_MATRIX = list_of(list_of(INT))
_TUP_INT = tuple_of(INT, variadic=True)
_DICT = dict_of(STR, INT)
_NUMBER = union(INT, FLOAT, weights=(0.75, 0.25))

_EXACT: dict[str, TypeDesc] = {}


def _add(names: str, t: TypeDesc) -> None:
    for n in names.split():
        _EXACT[n] = t


_add(
    "n m k i j num number count cnt idx index size length len width height h w r radius "
    "start end stop step steps base power exponent degree side limit target "
    "pos position year month day hour minute second low high lo hi left right top bottom "
    "digit digits bits times rows cols columns row col column depth level max min maxval "
    "minval val value rotations monthnum monthnum2 monthnum3 startnum endnum upper lower "
    "sale_amount actual_cost salary age capacity key_num modulo mod "
    "divisor dividend multiplier offset shift seed",
    INT,
)
_add(
    "threshold eps epsilon tol tolerance rate ratio prob probability percent percentage "
    "alpha beta gamma factor scale temperature weight mean sigma std",
    FLOAT,
)
_add(
    "s str string text word sentence name test_str strr line pattern prefix suffix sub "
    "substring sub_str msg message password email url txt para paragraph phrase input_str "
    "my_str word_str str_in string_in s_in st query label title code dna expression expr "
    "paren_string brackets ip address hex binary bin time date dt sequence_str key keyword",
    STR,
)
_add("ch char newch letter character c_char sep separator delimiter delim symbol", CHAR)
_add(
    "lst list arr array nums numbers items elements data values xs ys seq sequence "
    "input_list my_list listval newlist arraynums array_nums num_list iterable li l_list "
    "list_ dlist stdata lis vals scores prices heights ages arr_list int_list number_list "
    "integers ints digits_list operand",
    _LIST_INT,
)
_add(
    "words strings names str_list stringlist sample_names lines tokens colors patterns "
    "letters sentences strs string_list word_list texts",
    _LIST_STR,
)
_add(
    "matrix grid my_matrix board lists list_of_lists nestedlist nested_list mat mtx "
    "triangle nested arrays test_list_of_lists",
    _MATRIX,
)
_add("test_tup test_tuple tup tuplex tuple tpl tup_list tuples_tuple", _TUP_INT)
_add("dict dic dct dict_ test_dict mapping dictionary my_dict counts counter freq frequency hashmap table", _DICT)
_add(
    "test_list ranges tuple_list list_tuples tuples pairs points coords subjectmarks intervals edges",
    list_of(tuple_of(INT, INT)),
)
_add("flag verbose strict reverse reversed ignore_case case_sensitive inplace in_place enabled recursive", BOOL)
_add("set_ my_set set s_set int_set", set_of(INT))

for _n in ("cost", "price", "score", "total", "amount"):  # numbers, unless the docstring says more
    _EXACT[_n] = INT.with_weak()
_EXACT["d"] = union(_DICT, INT, weights=(0.5, 0.5)).with_weak()  # a dict, or a distance / digit count
_EXACT["exp"] = union(INT, STR, weights=(0.7, 0.3)).with_weak()  # an exponent, or an expression

# Single letters and other names that say little: int first.
_AMBIGUOUS = set(
    "a b c e f g l o p q t u v x y z x1 x2 y1 y2 input item element elem obj arg val1 val2 inp sum test".split()
)

_SUFFIX_RULES: list[tuple[re.Pattern, TypeDesc]] = [
    (re.compile(r"(^|_)(matrix|grid|board)($|_)"), _MATRIX),
    (re.compile(r"(list|lst|arr|array|nums|numbers|values|vals|items)s?$"), _LIST_INT),
    (re.compile(r"^(list|lst|arr|array|nums|numbers)_"), _LIST_INT),
    (re.compile(r"(^|_)(tup|tuple|tuples)($|_)"), _TUP_INT),
    (re.compile(r"(^|_)(dict|dic|map|mapping)($|_)"), _DICT),
    (re.compile(r"(^|_)(set)$"), set_of(INT)),
    (re.compile(r"(^|_)(str|string|text|word|name|sentence|char|chars|s)$"), STR),
    (re.compile(r"^(str|string|text|word)_"), STR),
    (re.compile(r"^(is|has|should|use|allow|can|do)_"), BOOL),
    (re.compile(r"(^|_)(flag)$"), BOOL),
    (
        re.compile(
            r"(^|_)(num|number|count|cnt|size|len|length|index|idx|n|k|total|sum|"
            r"amount|limit|width|height|depth|pos|digit|digits|year|month|day|power)$"
        ),
        INT,
    ),
    (re.compile(r"^(num|n|number|count|max|min)_"), INT),
    (re.compile(r"(^|_)(threshold|rate|ratio|prob|probability|eps|tol|weight|price|factor)$"), FLOAT),
]


def _norm_name(name: str) -> str:
    n = name.lower().strip("_")
    n = re.sub(r"\d+$", "", n).rstrip("_")
    return n or name.lower()


def infer_from_name(name: str) -> TypeDesc:
    """The type a parameter name suggests; ``weak`` when the name is ambiguous (``a``, ``x``)."""
    raw = name.strip("_")
    n = _norm_name(name)
    # Upper-case single letters: N, K, M, L are counts in most code; A, B are arrays more often
    # than not; X, Y, Z are ambiguous.
    if len(raw) == 1 and raw.isupper():
        if raw in "NKMLRHWCDPQ":
            return TypeDesc("int", name="count-letter", weak=True)
        if raw in "AB":
            return union(list_of(INT), INT, weights=(0.6, 0.4)).with_weak()
        return union(INT, list_of(INT), weights=(0.7, 0.3)).with_weak()
    if raw.lower() in _EXACT:
        return _EXACT[raw.lower()]
    if n in _EXACT:
        return _EXACT[n]
    if n in _AMBIGUOUS or raw.lower() in _AMBIGUOUS:
        return union(INT, FLOAT, STR, weights=(0.85, 0.1, 0.05)).with_weak()
    for rx, t in _SUFFIX_RULES:
        if rx.search(n):
            return t
    # Plurals: a collection of what the singular would be (``scores``, ``names``).
    if len(n) > 3 and n.endswith("s") and not n.endswith("ss"):
        singular = infer_from_name(n[:-1])
        if not singular.weak and singular.kind in ("int", "float", "str", "char"):
            return list_of(STR if singular.kind == "char" else singular)
        return _LIST_INT.with_weak()
    return MIXED


def infer_from_default(default: str | None) -> TypeDesc | None:
    """The type of a default value's source text (``None`` when absent or not a literal)."""
    if default is None:
        return None
    try:
        v = ast.literal_eval(default)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if v is None:
        return None  # says only "optional"; see param_types
    t = type_of_value(v)
    if t.kind in ("list", "dict", "set", "tuple") and not v:
        return None  # an empty container says nothing about its items
    return t


# Docstring words -> what a collection parameter holds / what a vague parameter is.
_ELEM_HINTS: list[tuple[re.Pattern, TypeDesc]] = [
    (re.compile(r"\b(sub-?)?lists? of (strings|words)\b|\bsublists? of strings\b", re.I), list_of(STR)),
    (
        re.compile(
            r"\b(list|array)s? of (lists|arrays)\b|\bnested lists?\b|\beach sub-?list\b|\bmatri(x|ces)\b|"
            r"\blists? of lists?\b|\b2d\b|\bgrid\b|\blists (with)?in (a|the) (given )?list\b",
            re.I,
        ),
        list_of(INT),
    ),
    (
        re.compile(
            r"\b(list|array)s? of tuples?\b|\btuple lists?\b|\blist of pairs\b|\bnested tuples?\b|"
            r"\btuples? (with)?in (the|a) (given )?list\b|\bpairs of tuples\b|\btuple of tuples\b",
            re.I,
        ),
        tuple_of(INT, INT),
    ),
    (
        re.compile(
            r"\b(list|array|tuple)s? of (strings?|words|names|str)\b|\bstrings? (in|of) (the|a) (given )?(list|tuple)\b|"
            r"\bstring list\b|\bwords?\b",
            re.I,
        ),
        STR,
    ),
    (
        re.compile(r"\b(list|array)s? of (floats?|decimals?|real numbers)\b|\bfloat(ing[- ]point)? numbers\b", re.I),
        FLOAT,
    ),
    (re.compile(r"\b(list|array)s? of dict(ionarie)?s\b|\bdictionaries\b", re.I), dict_of(STR, INT)),
]
_KIND_WORDS: list[tuple[re.Pattern, TypeDesc]] = [
    (re.compile(r"\bmatri(x|ces)\b|\bgrid\b|\b(list|array)s? of lists\b|\bnested lists?\b", re.I), _MATRIX),
    (re.compile(r"\b(list|array|lists|arrays|sequence|sublist|subarray)\b|\bsorted order\b", re.I), _LIST_INT),
    (re.compile(r"\btuples?\b", re.I), _TUP_INT),
    (re.compile(r"\bdictionar(y|ies)\b|\bdict\b", re.I), _DICT),
    (re.compile(r"\bstrings?\b|\bsentence\b|\bword\b|\btext\b|\bexpression\b", re.I), STR),
    (re.compile(r"\bfloat(ing[- ]point)?\b|\bdecimal\b|\breal number\b", re.I), FLOAT),
    (re.compile(r"\binteger\b|\bnatural number\b|\bwhole number\b", re.I), INT),
]
# "two strings s and c": one kind for several parameters.
_SHARED_KIND = re.compile(
    r"\b(two|three|four|both|pair of|several|multiple)\s+(\w+\s+)?"
    r"(strings|lists|arrays|tuples|integers|numbers|dictionaries|words)\b",
    re.I,
)
_SHARED_MAP = {
    "strings": "str",
    "words": "str",
    "lists": "list",
    "arrays": "list",
    "tuples": "tuple",
    "integers": "int",
    "numbers": "int",
    "dictionaries": "dict",
}
_KIND_NAMES = r"(tuples?|lists?|arrays?|dictionar(?:y|ies)|strings?|sets?|integers?|numbers?|floats?|matri(?:x|ces))"
# Phrases about the result, not the arguments: "returns a tuple", "... in a list", "into a string".
_RESULT_PHRASES = re.compile(
    r"\breturn(s|ing)?\s+(a|an|the)?\s*(\w+\s+)?" + _KIND_NAMES + r"\b"
    r"|\b(as|into|to)\s+(a|an)\s+(new\s+|single\s+)?" + _KIND_NAMES + r"\b",
    re.I,
)
_STRINGY = re.compile(
    r"\bstr(ing)?s?\b|\bwords?\b|\btext\b|\bsentences?\b|\bchar(acter)?s?\b|\bletters?\b|"
    r"\bsubstrings?\b|\bvowels?\b|\bpalindrom",
    re.I,
)
_NUMERIC = re.compile(
    r"\bnumbers?\b|\bintegers?\b|\barea\b|\bvolume\b|\bperimeter\b|\bside\b|\blength\b|"
    r"\bsum\b|\bradius\b|\bheight\b|\bdigits?\b",
    re.I,
)


def description_hints(doc: str | None) -> tuple[list[TypeDesc], TypeDesc | None, bool]:
    """From the docstring: the kinds of argument it mentions (in order of first mention; phrases
    about the result such as "returns a tuple" or "in a list" are ignored), what its lists hold,
    and whether it speaks of sorted input."""
    if not doc:
        return [], None, False
    text = _RESULT_PHRASES.sub(" ", doc)
    found: list[tuple[int, int, TypeDesc]] = []
    for order, (rx, t) in enumerate(_KIND_WORDS):
        m = rx.search(text)
        if m:
            found.append((m.start(), order, t))
    found.sort(key=lambda x: (x[0], x[1]))
    kinds: list[TypeDesc] = []
    for _, _, t in found:
        if t not in kinds and not (t == _LIST_INT and _MATRIX in kinds):
            kinds.append(t)
    elem = next((t for rx, t in _ELEM_HINTS if rx.search(doc)), None)
    sorted_ = bool(re.search(r"\bsorted\b|\bascending\b|\bnon-?decreasing\b", doc, re.I))
    return kinds, elem, sorted_


def _refine_elements(t: TypeDesc, elem: TypeDesc | None) -> TypeDesc:
    """Apply a docstring's item hint ("list of tuples", "list of strings", "matrix") to a
    name-inferred collection (``list1``, ``test_list``, ``test_tup``)."""
    if elem is None:
        return t
    weak = t.weak
    base = t.with_weak(False)
    if base in (_LIST_INT, list_of(tuple_of(INT, INT))):
        out = list_of(elem)
    elif base == _TUP_INT and elem.kind in ("tuple", "str", "float"):
        out = tuple_of(elem, variadic=True)
    else:
        return t
    return out.with_weak(weak)


def param_types(
    params: Iterable[Param],
    *,
    classes: Iterable[ClassInfo] = (),
    docstring: str | None = None,
    seed_values: dict[str, list[Any]] | None = None,
) -> dict[str, TypeDesc]:
    """One descriptor per parameter, combining seeds, annotation, default, name and docstring.

    - annotated: the annotation; a bare container (``list``) or ``Any`` takes its items from the
      seeds' values when there are any;
    - unannotated with seed values: the merged type of those values (the strongest evidence);
    - otherwise the default's literal type, then the name table (:func:`infer_from_name`); a weak
      (ambiguous) name takes a kind the docstring mentions that no other parameter accounts for
      (``max_sub_array_sum(a, size)``: "... in the given list" makes ``a`` a list); list elements
      follow docstring phrases ("list of tuples", "list of strings", "matrix").
    - a ``None`` default makes the result ``Optional``.
    """
    params = list(params)
    classes = tuple(classes)
    seed_values = seed_values or {}
    kinds, elem, _ = description_hints(docstring)
    out: dict[str, TypeDesc] = {}
    pending_weak: list[str] = []
    for p in params:
        seen = [v for v in seed_values.get(p.name, []) if not isinstance(v, Expr)]
        from_seeds = _merge_all([type_of_value(v) for v in seen]) if seen else None
        ann = parse_annotation(p.annotation, classes)
        if ann is not None:
            t = ann
            if from_seeds is not None:
                t = _refine_with_seeds(t, from_seeds)
            elif t.kind == "any" or (t.kind == "list" and t.args[0].kind == "any"):
                guess = infer_from_name(p.name)
                if not guess.weak and (t.kind == "any" or guess.kind == "list"):
                    t = guess
        elif from_seeds is None and any(isinstance(v, Expr) for v in seed_values.get(p.name, [])):
            # Only non-literal examples (``date(2024, 2, 28)``): reuse them, verbatim.
            exprs = tuple(dict.fromkeys(v for v in seed_values[p.name] if isinstance(v, Expr)))
            t = TypeDesc("expr", values=exprs)
        elif from_seeds is not None:
            t = from_seeds
            if _has_any(t):
                guess = _refine_elements(infer_from_name(p.name), elem)
                t = _fill_any(t, guess)
        else:
            t = infer_from_default(p.default) or _refine_elements(infer_from_name(p.name), elem)
            if p.name == "d" and docstring and not re.search(r"\bdict(ionar(y|ies))?\b|\bmapping\b", docstring, re.I):
                t = INT.with_weak()
            if t.name == "count-letter":
                # ``N``/``K``/``M``: a count, unless it is the only parameter (``sort_matrix(M)``).
                t = INT if len(params) > 1 else INT.with_weak()
            if (
                p.name in ("s", "S")
                and docstring
                and not _STRINGY.search(docstring)
                and _NUMERIC.search(docstring)
                and infer_from_default(p.default) is None
            ):
                t = _NUMBER.with_weak()  # ``s`` as a side / sum: "area of a polygon given its side s"
            if t.weak:
                pending_weak.append(p.name)
            if p.default is not None and p.default.strip() == "None":
                t = optional(t)
        out[p.name] = t
    # Give the docstring's kinds to ambiguous parameters when no clearer parameter covers them.
    shared = {_SHARED_MAP[m.group(3).lower()] for m in _SHARED_KIND.finditer(docstring or "")}
    for fam in sorted(shared):
        k = {"str": STR, "list": _LIST_INT, "tuple": _TUP_INT, "int": INT, "dict": _DICT}[fam]
        if k not in kinds:
            kinds.append(k)
    if pending_weak and kinds:

        def covered(k: TypeDesc) -> bool:
            if _kind_family(k) in shared:
                return False
            return any(_kind_family(v) == _kind_family(k) for n, v in out.items() if n not in pending_weak)

        free = [k for k in kinds if not covered(k)]
        done: set[str] = set()
        for name in pending_weak:
            if name in done:
                continue
            if not free:
                break
            k = free.pop(0)
            if k.kind in ("list",) and elem is not None:
                k = _refine_elements(k, elem)
            if k.kind == "float":
                k = union(FLOAT, INT, weights=(0.7, 0.3))
            # Siblings (``l1, l2, l3``; ``X, Y, Z``; ``a, b``) share the kind.
            for other in pending_weak:
                if other not in done and _siblings(name, other):
                    out[other] = k.with_weak()
                    done.add(other)
    return out


def _siblings(a: str, b: str) -> bool:
    if a == b:
        return True
    if len(a) == 1 and len(b) == 1:
        return a.isupper() == b.isupper() and abs(ord(a) - ord(b)) <= 2
    na, nb = re.sub(r"\d+$", "", a), re.sub(r"\d+$", "", b)
    return bool(na) and na == nb


def _kind_family(t: TypeDesc) -> str:
    if t.kind == "union" and t.args:
        return _kind_family(t.args[0])
    if t.kind == "list" and t.args and t.args[0].kind == "list":
        return "matrix"
    if t.kind in ("char",):
        return "str"
    return t.kind


def _has_any(t: TypeDesc) -> bool:
    return t.kind == "any" or any(_has_any(a) for a in t.args)


def _fill_any(t: TypeDesc, guess: TypeDesc) -> TypeDesc:
    """Replace ``any`` items of a seed-derived type (an empty list seed) with a name guess."""
    if t.kind == "any":
        return guess
    if t.kind in ("list", "set", "frozenset", "tuple") and guess.kind == t.kind and guess.args:
        return TypeDesc(t.kind, tuple(_fill_any(a, guess.args[0]) for a in t.args), t.variadic)
    if t.kind in ("list", "set", "frozenset") and t.args[0].kind == "any":
        return TypeDesc(t.kind, (INT,))
    return t


def _refine_with_seeds(ann: TypeDesc, seen: TypeDesc) -> TypeDesc:
    """An annotation refined by the seeds' values where it is vague (``list``, ``Any``)."""
    if ann.kind == "any":
        return seen
    if ann.kind == seen.kind and ann.kind in ("list", "set", "frozenset", "dict"):
        return TypeDesc(ann.kind, tuple(_refine_with_seeds(a, s) for a, s in zip(ann.args, seen.args)))
    if ann.kind == "tuple" and seen.kind == "tuple" and ann.variadic and ann.args and ann.args[0].kind == "any":
        return seen
    return ann
