"""A parameter's name and default -> a type, for parameters without an annotation: the weakest
evidence, used when nothing better says otherwise.
"""

from __future__ import annotations

import re

from coherence.engine import syntax
from coherence.engine.inputs.types import (
    BOOL,
    CHAR,
    FLOAT,
    INT,
    MIXED,
    STR,
    TypeDesc,
    dict_of,
    list_of,
    set_of,
    tuple_of,
    union,
)
from coherence.engine.inputs.value_types import type_of_value

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
LIST_INT = list_of(INT)
LIST_STR = list_of(STR)
MATRIX = list_of(list_of(INT))
TUP_INT = tuple_of(INT, variadic=True)
DICT = dict_of(STR, INT)
NUMBER = union(INT, FLOAT, weights=(0.75, 0.25))

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
    LIST_INT,
)
_add(
    "words strings names str_list stringlist sample_names lines tokens colors patterns "
    "letters sentences strs string_list word_list texts",
    LIST_STR,
)
_add(
    "matrix grid my_matrix board lists list_of_lists nestedlist nested_list mat mtx "
    "triangle nested arrays test_list_of_lists",
    MATRIX,
)
_add("test_tup test_tuple tup tuplex tuple tpl tup_list tuples_tuple", TUP_INT)
_add("dict dic dct dict_ test_dict mapping dictionary my_dict counts counter freq frequency hashmap table", DICT)
_add(
    "test_list ranges tuple_list list_tuples tuples pairs points coords subjectmarks intervals edges",
    list_of(tuple_of(INT, INT)),
)
_add("flag verbose strict reverse reversed ignore_case case_sensitive inplace in_place enabled recursive", BOOL)
_add("set_ my_set set s_set int_set", set_of(INT))

for _n in ("cost", "price", "score", "total", "amount"):  # numbers, unless the docstring says more
    _EXACT[_n] = INT.with_weak()
_EXACT["d"] = union(DICT, INT, weights=(0.5, 0.5)).with_weak()  # a dict, or a distance / digit count
_EXACT["exp"] = union(INT, STR, weights=(0.7, 0.3)).with_weak()  # an exponent, or an expression

# Single letters and other names that say little: int first.
_AMBIGUOUS = set(
    "a b c e f g l o p q t u v x y z x1 x2 y1 y2 input item element elem obj arg val1 val2 inp sum test".split()
)

_SUFFIX_RULES: list[tuple[re.Pattern[str], TypeDesc]] = [
    (re.compile(r"(^|_)(matrix|grid|board)($|_)"), MATRIX),
    (re.compile(r"(list|lst|arr|array|nums|numbers|values|vals|items)s?$"), LIST_INT),
    (re.compile(r"^(list|lst|arr|array|nums|numbers)_"), LIST_INT),
    (re.compile(r"(^|_)(tup|tuple|tuples)($|_)"), TUP_INT),
    (re.compile(r"(^|_)(dict|dic|map|mapping)($|_)"), DICT),
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
        return LIST_INT.with_weak()
    return MIXED


def infer_from_default(default: str | None) -> TypeDesc | None:
    """The type of a default value's source text (``None`` when absent or not a literal)."""
    if default is None:
        return None
    try:
        v = syntax.literal_eval(default)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if v is None:
        return None  # says only "optional"; see param_types
    t = type_of_value(v)
    if t.kind in ("list", "dict", "set", "tuple") and not v:
        return None  # an empty container says nothing about its items
    return t
