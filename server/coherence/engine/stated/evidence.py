"""What the examples show of each parameter: its values (with the call each came from), the
numbers and strings inside them, their alphabet, whether lists are sorted, and which int is the
length of which collection.

Input generation (``inputs.constraints``) and the domain (:mod:`.domain`) learn from the same
readings, so that every rule of the domain is one generation also learns.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from coherence.engine.inputs.binding import bound_values
from coherence.engine.inputs.values import Expr, Input
from coherence.engine.spec import Param, Spec

_NARROW_CLASSES = [
    frozenset("01"),
    frozenset("0123456789"),
    frozenset("0123456789.-+"),
    frozenset("0123456789abcdefABCDEF"),
]


def evidence_by_param(spec: Spec, seeds: list[Input]) -> dict[str, list[tuple[Input, Any]]]:
    """Each parameter's values in ``seeds``, with the seed each came from (verbatim ``Expr``
    values say nothing about the domain and are left out)."""
    evid: dict[str, list[tuple[Input, Any]]] = {}
    for inp in seeds:
        for v, p in bound_values(spec.params, inp):
            if p is not None and not isinstance(v, Expr):
                evid.setdefault(p.name, []).append((inp, v))
    return evid


def narrow_alphabet(values: list[Any]) -> frozenset[str] | None:
    """The narrow alphabet (digits, parentheses, binary, ...) the strings in ``values`` are drawn
    from, widened to its usual class, or None.  Letters from a word in an example ("hello") say
    nothing about the domain: natural text stays unconstrained, or upper case and punctuation
    would never be tried."""
    chars = "".join(x for v in values for x in strings_in(v))
    if len(chars) < 3:
        return None
    seen = frozenset(chars)
    for cls in _NARROW_CLASSES:
        if seen <= cls:
            seen = seen | cls
            break
    wordy = any(ch.isalpha() for ch in seen) and not any(seen <= cls for cls in _NARROW_CLASSES)
    return seen if len(seen) <= 16 and not wordy else None


def strings_in(v: Any) -> list[str]:
    """Every str inside a value."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple, set, frozenset)):
        return [x for item in v for x in strings_in(item)]
    if isinstance(v, dict):
        return [x for item in list(v) + list(v.values()) for x in strings_in(item)]
    return []


def numbers_in(v: Any) -> list[float]:
    """Every int/float inside a value (not bools)."""
    if isinstance(v, bool):
        return []
    if isinstance(v, (int, float)):
        return [v]
    if isinstance(v, (list, tuple, set, frozenset)):
        return [x for item in v for x in numbers_in(item)]
    if isinstance(v, dict):
        return [x for item in v.values() for x in numbers_in(item)]
    return []


def is_sorted(v: list[Any]) -> bool:
    try:
        return all(a <= b for a, b in pairwise(v))
    except TypeError:
        return False


def len_evidence(p: Param, colls: list[Param], evid: dict[str, list[tuple[Input, Any]]]) -> str | None:
    """The collection parameter among ``colls`` whose length ``p`` equals in every example that
    gives both a value, or None."""
    mine = {id(inp): v for inp, v in evid.get(p.name, [])}
    if not mine:
        return None
    for q in colls:
        theirs = {id(inp): v for inp, v in evid.get(q.name, [])}
        common = [k for k in mine if k in theirs]
        if common and all(isinstance(theirs[k], (list, tuple, str)) and mine[k] == len(theirs[k]) for k in common):
            return q.name
    return None
