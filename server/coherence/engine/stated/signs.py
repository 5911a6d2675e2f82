"""What a docstring states about the sign of a parameter's numbers.

"Given a positive integer n", "two positive integers n and m", "a list of positive integers x",
"an array of non-negative integers": a precondition, as plain as an example would make it.  Here it
becomes ``{"n": "positive"}`` or ``{"arr": "nonneg"}``, which generation applies to most mutants
(as it does the examples' constraints) and ``Domain`` reports, so that a counterexample at n = 0
is not shown as the function's fault when the docstring excludes it.

Only phrases that name the parameter count, or that leave one candidate: "given a positive
number" with one numeric parameter, "a list of positive integers" with one list parameter.  A
mention elsewhere ("the sum of 4 positive even numbers", "return only positive numbers") says
nothing about an argument.  "Natural" is read as non-negative: authors disagree on 0.
"""

from __future__ import annotations

import re
from functools import lru_cache

from coherence.engine.spec import Param

__all__ = ["stated_signs"]

_SIGN = r"(?P<sign>positive|non-?negative|natural)"
# "integer", "integers", "integer number", "whole numbers", "floating point number", "even numbers"
_NOUN = r"(?:(?:whole|even|odd|floating[- ]point|real|integer|int)\s+)*(?:integers?|numbers?|ints?|floats?)(?:\s+numbers?)?\b"
_NAME = r"`?[A-Za-z_]\w*`?"
_NAMES = rf"(?P<names>{_NAME}(?:\s*,\s*(?:and\s+)?{_NAME}|\s+and\s+{_NAME})*)"

# "positive integer n", "positive integers n and m", "non-negative integer number n"
_NAMED = re.compile(rf"\b{_SIGN}\s+{_NOUN}\s+{_NAMES}", re.I)
# "list of positive integers", "array arr of non-negative integers", "list of positive integers x"
_COLLECTION = re.compile(
    rf"\b(?:list|array|sequence|tuple|vector)(?:\s+(?P<before>{_NAME}))?\s+of\s+(?:non-?empty\s+)?{_SIGN}\s+{_NOUN}"
    rf"(?:\s+(?P<after>{_NAME}))?",
    re.I,
)
# "Given a positive floating point number", "takes a positive integer"
_GIVEN = re.compile(rf"\b(?:given|takes|receives?|accepts?)\s+(?:an?\s+|one\s+)?{_SIGN}\s+{_NOUN}", re.I)

_NUMERIC = {"int", "float"}
_COLLECTIONS = {"list", "tuple"}


def _sign(word: str) -> str:
    return "positive" if word.lower() == "positive" else "nonneg"


def _names(doc: str, m: re.Match[str], group: str, params: set[str]) -> list[str]:
    """The parameter names a phrase lists, up to the first word that is not one ("n and m, and
    your task" gives n, m).  A later name must end the list: in "n, and a list arr" the "a" is an
    article, not a parameter ``a``."""
    text = m.group(group)
    if not text:
        return []
    words = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", text)
    out: list[str] = []
    for k, word in enumerate(words):
        word = word.strip("`")
        if word not in params:
            break
        if (
            k
            and k == len(words) - 1
            and re.match(r"[ \t]+[A-Za-z]", doc[m.end(group) :])
            and not re.match(r"\s+and\b", doc[m.end(group) :])
        ):
            break
        out.append(word)
    return out


@lru_cache(maxsize=256)
def _stated(doc: str, params: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    names = {name for name, _ in params}
    numeric = [name for name, fam in params if fam in _NUMERIC]
    collections = [name for name, fam in params if fam in _COLLECTIONS]
    found: dict[str, str] = {}

    def state(name: str, sign: str) -> None:
        # "positive" and "non-negative" both stated: the weaker one is what every phrase allows
        if found.get(name) == "nonneg" or sign == "nonneg":
            found[name] = "nonneg"
        else:
            found[name] = "positive"

    for m in _COLLECTION.finditer(doc):
        named = _names(doc, m, "before", names) or _names(doc, m, "after", names)
        if not named and len(collections) == 1:
            named = collections
        for name in named[:1]:
            state(name, _sign(m.group("sign")))
    for m in _NAMED.finditer(doc):
        for name in _names(doc, m, "names", names):
            state(name, _sign(m.group("sign")))
    if len(numeric) == 1 and numeric[0] not in found:
        given = _GIVEN.search(doc)
        if given:
            state(numeric[0], _sign(given.group("sign")))
    return tuple(sorted(found.items()))


def stated_signs(doc: str | None, params: list[Param] | tuple[Param, ...], families: dict[str, str]) -> dict[str, str]:
    """``{parameter: "positive" | "nonneg"}`` for the parameters the docstring ``doc`` calls
    positive, non-negative or natural (``families``: each parameter's type family, "int",
    "list", ...)."""
    if not doc:
        return {}
    key = tuple((p.name, families.get(p.name, "")) for p in params if p.kind not in ("var_positional", "var_keyword"))
    return dict(_stated(doc, key))


def backed_signs(stated: dict[str, str], numbers: dict[str, list[float]]) -> dict[str, str]:
    """The stated signs that the examples (``numbers``: every number in each parameter's example
    values) do not contradict.  The examples show what the function is called with: "positive"
    with an example at 0 is non-negative, and a negative example drops the statement."""
    out: dict[str, str] = {}
    for name, sign in stated.items():
        nums = numbers.get(name, [])
        if any(x < 0 for x in nums):
            continue
        out[name] = "nonneg" if sign == "positive" and any(x == 0 for x in nums) else sign
    return out
