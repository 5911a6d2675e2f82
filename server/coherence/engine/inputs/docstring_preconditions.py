"""Preconditions read from a docstring, in a precondition's voice only: comparison chains
("1 <= len(arr) <= 100", "lo <= hi") and the adjectives "non-empty", "sorted", "distinct", "only
letters", each as an :class:`Assumption` that ``preconditions.holds`` can test.
"""

from __future__ import annotations

import re
from functools import lru_cache

from coherence.engine.inputs.preconditions import Assumption, assumption

# A precondition's voice, and a result's: "return True if a > b" states none.
_VOICE = re.compile(
    r"\b(assum\w*|constraints?|guarantee\w*|precondition\w*|will\s+(?:always\s+)?be|must\s+be|is\s+always|are\s+always|"
    r"given|where|such\s+that|you\s+may|can\s+be\s+sure|note|requires?|expects?|input)\b",
    re.I,
)
_RESULT = re.compile(r"\b(returns?|otherwise|else|whether|true\s+if|false\s+if|output)\b", re.I)
_SECTION = re.compile(
    r"^\s*(constraints?|notes?|assumptions?|preconditions?|requires|args|arguments|parameters|params)\s*:?\s*$", re.I
)
_CMP_OPS = r"(?:<=|>=|==|!=|<|>|≤|≥|≠)"
_TERM = r"(?:len\(\s*\w+\s*\)|-?\d+(?:\.\d+)?(?:\s*(?:\^|\*\*)\s*\d+)?|[A-Za-z_]\w*(?:\[\s*\w+\s*\])?)"
_CHAIN = re.compile(rf"{_TERM}(?:\s*{_CMP_OPS}\s*{_TERM})+")
_NONEMPTY = re.compile(
    r"\b(?:non-?empty\s+(?:list|array|string|sequence|tuple|collection|input|dict(?:ionary)?|set|vector|matrix|grid)s?\b|"
    r"(?:is|are|will\s+be|must\s+be|never)\s+(?:not\s+)?(?:non-?empty|never\s+empty)|(?:is|are|will|must|should)\s+not\s+(?:be\s+)?empty|"
    r"at\s+least\s+one\s+(?:element|item|number|value|string|character|entry|word|integer))",
    re.I,
)
# "(of at least two elements)", "at least 3 numbers": a minimum length (one is ``_NONEMPTY``'s)
_AT_LEAST = re.compile(
    r"\bat\s+least\s+(two|three|four|five|[2-9])\s+(?:elements?|items?|numbers?|values?|strings?|characters?|entries|"
    r"words?|integers?|floats?)\b",
    re.I,
)
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5}
_SORTED = re.compile(r"\b(?:sorted|in\s+(?:ascending|non-?decreasing|increasing)\s+order)\b", re.I)
_DISTINCT = re.compile(
    r"\b(?:(?:distinct|unique)\s+(?:elements?|numbers|integers|values|items|entries|words|strings)|"
    r"(?:elements?|numbers|integers|values|items|entries|they)\s+(?:are|will\s+be)\s+(?:all\s+)?(?:distinct|unique)|"
    r"no\s+duplicates?|without\s+duplicates?|duplicates?\s+free)\b",
    re.I,
)
_LETTERS = re.compile(
    r"\b(?:only\s+(?:of\s+)?(?:english\s+)?(?:lower-?case\s+|upper-?case\s+)?letters?|(?:english\s+|lower-?case\s+|upper-?case\s+)?letters?\s+only|"
    r"only\s+(?:of\s+)?digits|digits\s+only|only\s+(?:lower-?case|upper-?case)\b(?:\s+(?:english\s+)?(?:letters?|characters?|alphabets?))?)",
    re.I,
)


def _sentences(doc: str) -> list[tuple[str, bool]]:
    """(text, in a precondition section) for each sentence or line of the docstring, examples left out."""
    out: list[tuple[str, bool]] = []
    section = False
    for raw in doc.splitlines():
        line = re.sub(r"^[*\-•]\s+", "", raw.strip())  # a bullet
        if not line:
            section = False if not raw.startswith((" ", "\t")) else section
            continue
        if line.startswith(">>>") or line.startswith("..."):
            continue
        m = _SECTION.match(line)
        if m:
            section = True
            continue
        if re.match(r"^(examples?|returns?|raises?|yields?|for example)\s*:?", line, re.I):
            section = False
        head = re.match(r"^(constraints?|notes?|assumptions?)\s*:\s*(.+)$", line, re.I)
        if head:
            out.append((head.group(2), True))
            continue
        for sentence in re.split(r"(?<=[.;!?])\s+", line):
            out.append((sentence, section))
    return out


def _params_in(text: str, params: list[str]) -> list[str]:
    return [p for p in params if re.search(rf"(?<![\w.]){re.escape(p)}(?!\w)", text)]


def _lengths(text: str) -> str:
    """``arr.length`` and ``len of arr`` as ``len(arr)``, so that a comparison reads whole."""
    return re.sub(r"\b([A-Za-z_]\w*)\.length\b", r"len(\1)", text)


def _normalise(chain: str) -> str:
    s = chain.replace("≤", "<=").replace("≥", ">=").replace("≠", "!=")
    return re.sub(r"(\d)\s*\^\s*(\d)", r"\1**\2", s)


def stated_assumptions(doc: str | None, params: list[str], families: dict[str, str]) -> list[Assumption]:
    """The preconditions a docstring states about ``params`` (``families``: each parameter's type
    family: "int", "list", "str", ...)."""
    if not doc:
        return []
    return list(_stated(doc, tuple(params), tuple(sorted(families.items()))))


@lru_cache(maxsize=256)
def _stated(doc: str, params: tuple[str, ...], families_items: tuple[tuple[str, str], ...]) -> tuple[Assumption, ...]:
    families = dict(families_items)
    collections = [p for p in params if families.get(p) in ("list", "tuple", "str", "dict", "set")]
    lists = [p for p in params if families.get(p) in ("list", "tuple")]
    strings = [p for p in params if families.get(p) == "str"]
    found: dict[str, Assumption] = {}

    def add(expr: str, text: str) -> None:
        a = assumption(expr, f"your docstring: {_quote(text)}")
        if a is not None and set(a.params) <= set(params) and a.expr not in found:
            found[a.expr] = a

    for text, in_section in _sentences(doc):
        text = _lengths(text)
        voice = in_section or bool(_VOICE.search(text))
        about_result = bool(_RESULT.search(text)) and not re.search(
            r"\b(assum\w*|guarantee\w*|constraints?|you\s+may)\b", text, re.I
        )
        named = _params_in(text, list(params))
        # comparisons: "lo <= hi", "1 <= len(arr) <= 100", "0 <= k <= len(arr)"
        standalone = _CHAIN.fullmatch(text.strip().rstrip(".,;")) is not None
        if (voice or standalone) and not about_result:
            for m in _CHAIN.finditer(text):
                if re.match(r"[.\[(\w]", text[m.end() : m.end() + 1]) and not re.match(
                    r"\.(\s|$)", text[m.end() : m.end() + 2]
                ):
                    continue  # cut off: "grid[0].size", "x.y"
                expr = _normalise(m.group(0))
                a = assumption(expr, "")
                if a is not None and a.params and set(a.params) <= set(params) and re.search(_CMP_OPS, expr):
                    add(expr, text)
        if about_result and not _input_phrase(text):
            continue
        voice = voice or _input_phrase(text)
        target_lists = [p for p in named if p in collections] or (collections if len(collections) == 1 else [])
        if _NONEMPTY.search(text) and (voice or named) and target_lists:
            add(f"len({target_lists[0]}) > 0", text)
        at_least = _AT_LEAST.search(text)
        if at_least and (voice or named) and target_lists:
            count = at_least.group(1).lower()
            add(f"len({target_lists[0]}) >= {_COUNTS.get(count) or int(count)}", text)
        seq = [p for p in named if p in lists] or (lists if len(lists) == 1 else [])
        if _SORTED.search(text) and (voice or named) and seq:
            add(f"list({seq[0]}) == sorted({seq[0]})", text)
        if _DISTINCT.search(text) and (voice or named) and seq:
            add(f"len(set({seq[0]})) == len({seq[0]})", text)
        strs = [p for p in named if p in strings] or (strings if len(strings) == 1 else [])
        letters = _LETTERS.search(text)
        if letters and strs and (voice or named or re.search(r"\b(contains?|consists?|made)\b", text, re.I)):
            phrase = letters.group(0).lower()
            s = strs[0]
            if "digit" in phrase:
                add(f"all(c.isdigit() for c in {s})", text)
            elif "lower" in phrase:
                add(f"all(c.isalpha() and c.islower() for c in {s})", text)
            elif "upper" in phrase:
                add(f"all(c.isalpha() and c.isupper() for c in {s})", text)
            elif re.match(r"\s+and\s+(?:white)?spaces?\b", text[letters.end() :], re.I):
                add(f"all(c.isalpha() or c == ' ' for c in {s})", text)
            else:
                add(f"all(c.isalpha() for c in {s})", text)
        # an Args section's "n (int): a positive integer"
        arg = re.match(r"^`?(\w+)`?\s*(?:\([^)]*\))?\s*:\s*(.*)$", text) if in_section else None
        if arg and arg.group(1) in params and families.get(arg.group(1)) in ("int", "float"):
            sign = re.search(r"\b(positive|non-?negative|natural)\b", arg.group(2), re.I)
            if sign:
                add(f"{arg.group(1)} > 0" if sign.group(1).lower() == "positive" else f"{arg.group(1)} >= 0", text)
    return tuple(found.values())


# "the median of a non-empty list", "given a sorted list": the adjective qualifies an input even in a
# sentence about the result; "returns a sorted list" qualifies the result.
_INPUT_PHRASE = re.compile(
    r"\b(?:of|given|takes?|takes\s+in|receives?|accepts?|for|from)\s+(?:an?|the|two|each)?\s*"
    r"(?:non-?empty|sorted|distinct|unique)\b",
    re.I,
)


_OUTPUT_HEAD = re.compile(
    r"^\s*(?:it\s+|this\s+function\s+)?returns?\s+(?:a|an|the)?\s*(?:new\s+)?(?:non-?empty|sorted|distinct|unique)\b",
    re.I,
)


def _input_phrase(text: str) -> bool:
    return bool(_INPUT_PHRASE.search(text)) and not _OUTPUT_HEAD.search(text)


def _quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split()).strip("\"' ")
    return "'" + (text if len(text) <= limit else text[: limit - 1] + "…") + "'"
