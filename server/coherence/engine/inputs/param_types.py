"""One :class:`TypeDesc` per parameter, from all the evidence: seeds' values, annotations,
the docstring's words ("a list of strings", "two strings s and c"), then names and defaults.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.binding import bound_values
from coherence.engine.inputs.name_types import (
    DICT,
    LIST_INT,
    MATRIX,
    NUMBER,
    TUP_INT,
    infer_from_default,
    infer_from_name,
)
from coherence.engine.inputs.types import FLOAT, INT, STR, TypeDesc, dict_of, list_of, optional, tuple_of, union
from coherence.engine.inputs.value_types import merge_all, type_of_value
from coherence.engine.inputs.values import Expr, Input
from coherence.engine.spec import ClassInfo, Param, Spec

# Docstring words -> what a collection parameter holds / what a vague parameter is.
_ELEM_HINTS: list[tuple[re.Pattern[str], TypeDesc]] = [
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
_KIND_WORDS: list[tuple[re.Pattern[str], TypeDesc]] = [
    (re.compile(r"\bmatri(x|ces)\b|\bgrid\b|\b(list|array)s? of lists\b|\bnested lists?\b", re.I), MATRIX),
    (re.compile(r"\b(list|array|lists|arrays|sequence|sublist|subarray)\b|\bsorted order\b", re.I), LIST_INT),
    (re.compile(r"\btuples?\b", re.I), TUP_INT),
    (re.compile(r"\bdictionar(y|ies)\b|\bdict\b", re.I), DICT),
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
        if t not in kinds and not (t == LIST_INT and MATRIX in kinds):
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
    if base in (LIST_INT, list_of(tuple_of(INT, INT))):
        out = list_of(elem)
    elif base == TUP_INT and elem.kind in ("tuple", "str", "float"):
        out = tuple_of(elem, variadic=True)
    else:
        return t
    return out.with_weak(weak)


def infer_types(spec: Spec, seeds: list[Input] | None = None) -> dict[str, TypeDesc]:
    """One type descriptor per parameter (see :func:`param_types`), using seed values."""
    seed_values: dict[str, list[Any]] = {}
    for inp in seeds or []:
        for v, p in bound_values(spec.params, inp):
            if p is not None:
                seed_values.setdefault(p.name, []).append(v)
    return param_types(spec.params, classes=spec.classes, docstring=spec.docstring, seed_values=seed_values)


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
        from_seeds = merge_all([type_of_value(v) for v in seen]) if seen else None
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
                t = NUMBER.with_weak()  # ``s`` as a side / sum: "area of a polygon given its side s"
            if t.weak:
                pending_weak.append(p.name)
            if p.default is not None and p.default.strip() == "None":
                t = optional(t)
        out[p.name] = t
    # Give the docstring's kinds to ambiguous parameters when no clearer parameter covers them.
    shared = {_SHARED_MAP[m.group(3).lower()] for m in _SHARED_KIND.finditer(docstring or "")}
    for fam in sorted(shared):
        k = {"str": STR, "list": LIST_INT, "tuple": TUP_INT, "int": INT, "dict": DICT}[fam]
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
