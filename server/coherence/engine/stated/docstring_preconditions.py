"""Preconditions read from a docstring, in a precondition's voice only: comparison chains
("1 <= len(arr) <= 100", "lo <= hi") and the adjectives "non-empty", "sorted", "distinct", "only
letters", each as an :class:`Assumption` that ``preconditions.holds`` can test.
"""

from __future__ import annotations

import re
from functools import lru_cache

from coherence.engine.stated.preconditions import Assumption, assumption

# A precondition's voice, and a result's: "return True if a > b" states none.
_VOICE = re.compile(
    r"\b(assum\w*|constraints?|guarantee\w*|precondition\w*|will\s+(?:always\s+)?be|must\s+be|is\s+always|are\s+always|"
    r"must\s+not\s+be|should\s+not\s+be|cannot\s+be|can't\s+be|never\s+be|has\s+to\s+be|"
    r"given|where|such\s+that|you\s+may|can\s+be\s+sure|note|requires?|expects?|input)\b",
    re.I,
)
_RESULT = re.compile(r"\b(returns?|otherwise|else|whether|true\s+if|false\s+if|output)\b", re.I)
_SECTION = re.compile(
    r"^\s*(constraints?|notes?|assumptions?|preconditions?|requires|args|arguments|parameters|params)\s*:?\s*$", re.I
)
_CMP_OPS = r"(?:<=|>=|==|!=|<|>|≤|≥|≠)"
_NUMBER = r"-?\d+(?:\.\d+)?"
_DEFINITION = re.compile(r"(?<![<>=!])=(?!=)")  # a bare "=": "P(n) = …", a definition
_TERM = rf"(?:len\(\s*\w+\s*\)|{_NUMBER}(?:\s*(?:\^|\*\*)\s*\d+)?|[A-Za-z_]\w*(?:\[\s*\w+\s*\])?)"
_CHAIN = re.compile(rf"{_TERM}(?:\s*{_CMP_OPS}\s*{_TERM})+")
# a comparison said of the input: "(b != 0)", "for n >= 0"
_PAREN_CHAIN = re.compile(rf"(?<![\w.])\(\s*{_CHAIN.pattern}")
_FOR_CHAIN = re.compile(rf"\bfor\s+{_CHAIN.pattern}")
_NONEMPTY = re.compile(
    r"\b(?:non-?empty\s+(?:list|array|string|sequence|tuple|collection|input|dict(?:ionary)?|set|vector|matrix|grid)s?\b|"
    # the verbal forms ("… is not empty"), which must be said of a parameter or the input
    r"(?P<verbal>(?:is|are|will\s+be|must\s+be|to\s+be|never)\s+(?:not\s+)?(?:non-?empty|never\s+empty)|"
    r"(?:is|are|will|must|should)\s+not\s+(?:be\s+)?empty)|"
    r"at\s+least\s+one\s+(?:element|item|number|value|string|character|entry|word|integer))",
    re.I,
)
# "(of at least two elements)", "at least 3 numbers": a minimum length (one is ``_NONEMPTY``'s)
_AT_LEAST = re.compile(
    r"\bat\s+least\s+(two|three|four|five|[2-9])\s+(?:(?:distinct|unique|different)\s+)?(?:elements?|items?|numbers?|values?|strings?|characters?|entries|"
    r"words?|integers?|floats?)\b",
    re.I,
)
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5}
_SORTED = re.compile(r"\b(?:sorted|in\s+(?:ascending|non-?decreasing|increasing)\s+order)\b", re.I)
_DISTINCT = re.compile(
    r"\b(?:(?:distinct|unique)\s+(?:elements?|numbers|integers|values|items|entries|words|strings)|"
    r"(?:elements?|numbers|integers|values|items|entries|they)(?:\s+(?:of|in)\s+`?\w+`?)?\s+(?:are|will\s+be)\s+(?:all\s+)?"
    r"(?:distinct|unique)|"
    r"no\s+duplicates?|without\s+duplicates?|duplicates?\s+free)\b",
    re.I,
)
_LETTERS = re.compile(
    r"\b(?:only\s+(?:of\s+)?(?:english\s+)?(?:lower-?case\s+|upper-?case\s+)?letters?|(?:english\s+|lower-?case\s+|upper-?case\s+)?letters?\s+only|"
    r"only\s+(?:of\s+)?digits|digits\s+only|only\s+(?:lower-?case|upper-?case)\b(?:\s+(?:english\s+)?(?:letters?|characters?|alphabets?))?)",
    re.I,
)


_WORD_MAX = 64
_LINE_MAX = 4000
_LONG_WORD = re.compile(rf"[^\s()\[\],.;:]{{{_WORD_MAX + 1},}}")


def _sentences(doc: str) -> list[tuple[str, bool]]:
    """(text, in a precondition section) for each sentence or line of the docstring, examples left out."""
    out: list[tuple[str, bool]] = []
    section = False
    for raw in doc.splitlines():
        # Bounded, so that no pattern here backtracks over a whole docstring: each pattern tries
        # a name at each letter of a long word (docs/results.md#docstring-patterns).
        raw = _LONG_WORD.sub(lambda m: m.group(0)[:_WORD_MAX], raw)[:_LINE_MAX]
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
            # "Return the kth smallest, where 1 <= k <= len(arr)": the clause states the input
            for clause in re.split(r",\s+(?=where\s)", sentence):
                out.append((clause, section))
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
        quote = text  # what the user wrote, for the domain's "your docstring: …"
        refused = _raised_for(text, params, families, collections)
        if refused is not None:  # "raises ValueError if …": that sentence says no more
            for expr in refused:
                add(expr, quote)
            continue
        text = _symbolic(text, params, families)
        # "lo must be less than hi", "(b != 0)", "for n >= 0": a statement about a parameter
        worded = len(re.findall(_CMP_OPS, text)) > len(re.findall(_CMP_OPS, quote))
        # "for n >= 0" states a precondition, but not after a definition: "P(n) = P(n-2) + P(n-3)
        # for n > 2" is one case of a recurrence (MBPP 448, Llama 4 Maverick's docstring)
        voice = (
            voice
            or worded
            or _PAREN_CHAIN.search(quote) is not None
            or (_FOR_CHAIN.search(quote) is not None and _DEFINITION.search(quote) is None)
        )
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
                    add(expr, quote)
        if about_result and not _input_phrase(text):
            continue
        voice = voice or _input_phrase(text)
        target_lists = [p for p in named if p in collections] or (collections if len(collections) == 1 else [])
        nonempty = _NONEMPTY.search(text)
        if (
            nonempty
            and (voice or named)
            and target_lists
            and (not nonempty.group("verbal") or _about_input(text[: nonempty.start()], params))
        ):
            add(f"len({target_lists[0]}) > 0", quote)
        at_least = _AT_LEAST.search(text)
        if at_least and (voice or named) and target_lists:
            count = at_least.group(1).lower()
            add(f"len({target_lists[0]}) >= {_COUNTS.get(count) or int(count)}", quote)
        seq = [p for p in named if p in lists] or (lists if len(lists) == 1 else [])
        if _SORTED.search(text) and (voice or named) and seq:
            add(f"list({seq[0]}) == sorted({seq[0]})", quote)
        distinct = _DISTINCT.search(text)
        if at_least and distinct and at_least.start() <= distinct.start() < at_least.end():
            distinct = None  # "at least two distinct values" says nothing of the others
        if distinct and (voice or named) and seq:
            add(f"len(set({seq[0]})) == len({seq[0]})", quote)
        strs = [p for p in named if p in strings] or (strings if len(strings) == 1 else [])
        letters = _LETTERS.search(text)
        if letters and strs and (voice or named or re.search(r"\b(contains?|consists?|made)\b", text, re.I)):
            phrase = letters.group(0).lower()
            s = strs[0]
            if "digit" in phrase:
                add(f"all(c.isdigit() for c in {s})", quote)
            elif "lower" in phrase:
                add(f"all(c.isalpha() and c.islower() for c in {s})", quote)
            elif "upper" in phrase:
                add(f"all(c.isalpha() and c.isupper() for c in {s})", quote)
            elif re.match(r"\s+and\s+(?:white)?spaces?\b", text[letters.end() :], re.I):
                add(f"all(c.isalpha() or c == ' ' for c in {s})", quote)
            else:
                add(f"all(c.isalpha() for c in {s})", quote)
        # an Args entry's "n (int): a positive integer", "k (int): must be at most len(arr)"
        arg = re.match(r"^`?(\w+)`?\s*(?:\([^)]*\))?\s*:\s*(.*)$", quote)
        if arg and arg.group(1) in params and families.get(arg.group(1)) in ("int", "float"):
            name, desc = arg.groups()
            sign = re.search(r"\b(positive|non-?negative|natural)\b", desc, re.I)
            if sign and (in_section or not _RESULT.search(desc)):
                add(f"{name} > 0" if sign.group(1).lower() == "positive" else f"{name} >= 0", quote)
            said = _symbolic(
                re.sub(r"^.*?\b(?=(?:must|should|will)\s+(?:always\s+)?be\b)", f"{name} ", desc), params, families
            )
            bound = re.match(rf"{re.escape(name)}\s*({_CMP_OPS})\s*({_TERM})", said)
            if bound:
                add(f"{name} {_normalise(bound.group(1))} {bound.group(2)}", quote)
    return tuple(found.values())


# "lo must be less than or equal to hi", "k is at most len(arr)", "n should be positive", "b must
# not be zero", "k is between 1 and len(arr)": the words for a comparison, rewritten as one, so
# that the comparison chains above read them.  The subject must be a number parameter (or the
# length of a parameter), so that "the elements of arr are greater than x" states nothing.
_VERB = (
    r"(?:is|are|must\s+be|should\s+be|shall\s+be|has\s+to\s+be|will\s+(?:always\s+)?be|is\s+always|are\s+always|"
    r"(?:is|are)\s+(?:guaranteed|assumed|expected)\s+to\s+be|can\s+be\s+assumed\s+to\s+be)"
)
_NOT_VERB = r"(?:must\s+not\s+be|should\s+not\s+be|shall\s+not\s+be|cannot\s+be|can't\s+be|will\s+never\s+be|is\s+never|is\s+not|are\s+not)"
_WORD_OPS = [
    (
        r"less\s+than\s+or\s+equal\s+to|smaller\s+than\s+or\s+equal\s+to|at\s+most|no\s+(?:more|greater|larger|bigger)\s+than|not\s+(?:more|greater|larger)\s+than",
        "<=",
    ),
    (
        r"greater\s+than\s+or\s+equal\s+to|larger\s+than\s+or\s+equal\s+to|at\s+least|no\s+(?:less|smaller|fewer)\s+than|not\s+(?:less|smaller)\s+than",
        ">=",
    ),
    (r"less\s+than|smaller\s+than|lower\s+than|below", "<"),
    (r"greater\s+than|larger\s+than|bigger\s+than|more\s+than|above", ">"),
    (r"not\s+equal\s+to|different\s+from", "!="),
    (r"equal\s+to", "=="),
]
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_SIGN_WORDS = {"positive": "> 0", "nonnegative": ">= 0", "negative": "< 0", "nonzero": "!= 0", "zero": "== 0"}
_OPERAND = rf"(?:len\(\s*\w+\s*\)|{_NUMBER}|`?[A-Za-z_]\w*`?)"


def _symbolic(text: str, params: tuple[str, ...], families: dict[str, str]) -> str:
    """``text`` with its worded comparisons about number parameters written as comparisons."""
    if not any(p in text for p in params):
        return text

    def numeric(term: str) -> bool:
        term = term.strip("`")
        if term.startswith("len("):
            return term[4:-1].strip() in params
        if re.fullmatch(_NUMBER, term):
            return True
        return term in params and families.get(term) in ("int", "float")

    def subject_ok(term: str) -> bool:
        return numeric(term) and not re.fullmatch(_NUMBER, term)

    def conditional(m: re.Match[str]) -> bool:
        """Whether the subject follows "if" ("if n is negative, …": a case the function handles)
        or "or" ("one of a or b must be nonzero": more than the subject is meant)."""
        before = m.string[: m.start()]
        return (
            re.search(r"\b(?:if|when|whenever|unless|whether|while|or|and|nor|of|either)\s+$", before, re.I) is not None
        )

    # "the length of arr", "the size of arr", "the number of elements in arr"
    names = "|".join(re.escape(p) for p in params)
    text = re.sub(
        rf"\b(?:the\s+)?(?:length|size|number\s+of\s+(?:elements|items)\s+(?:in|of))\s+(?:of\s+)?(?:the\s+)?"
        rf"(?:list\s+|array\s+|string\s+|sequence\s+)?`?({names})`?(?!\w)",
        r"len(\1)",
        text,
        flags=re.I,
    )

    def between(m: re.Match[str]) -> str:
        x = m.group("x").strip("`")
        a, b = (g.strip("`") for g in (m.group("a") or m.group("a2"), m.group("b") or m.group("b2")))
        ok = subject_ok(x) and numeric(a) and numeric(b) and not conditional(m)
        return f"{a} <= {x} <= {b}" if ok else m.group(0)

    # "k is between 1 and len(arr) (inclusive)", "k is in the range [1, len(arr)]"
    text = re.sub(
        rf"(?P<x>{_OPERAND})\s+(?:"
        rf"(?:{_VERB}\s+|lies\s+)?(?:(?:in|within)\s+the\s+range\s+)?between\s+(?P<a>{_OPERAND})\s+and\s+"
        rf"(?P<b>{_OPERAND})(?:\s*\(?inclusive\)?)?"
        rf"|(?:{_VERB}\s+)?in\s+(?:the\s+)?(?:range|interval)\s+\[\s*(?P<a2>{_OPERAND})\s*,\s*(?P<b2>{_OPERAND})\s*\])",
        between,
        text,
        flags=re.I,
    )

    def worded(m: re.Match[str]) -> str:
        x, y = m.group("x").strip("`"), m.group("y").strip("`")
        op = m.group("sym") or next(o for words, o in _WORD_OPS if re.fullmatch(words, m.group("words") or "", re.I))
        op = _normalise(op)
        if m.group("neg"):
            op = _NEGATE[op]
        return f"{x} {op} {y}" if subject_ok(x) and numeric(y) and not conditional(m) else m.group(0)

    words = "|".join(w for w, _ in _WORD_OPS)
    text = re.sub(
        rf"(?P<x>{_OPERAND})\s+(?:(?P<neg>{_NOT_VERB})|{_VERB})\s+(?:(?P<words>{words})|(?P<sym>{_CMP_OPS}))\s*(?P<y>{_OPERAND})",
        worded,
        text,
        flags=re.I,
    )

    def signed(m: re.Match[str]) -> str:
        x = m.group("x").strip("`")
        op, value = _SIGN_WORDS[re.sub(r"[^a-z]", "", m.group("sign").lower())].split()
        if m.group("neg"):
            op = _NEGATE[op]
        return f"{x} {op} {value}" if subject_ok(x) and not conditional(m) else m.group(0)

    return re.sub(
        rf"(?P<x>{_OPERAND})\s+(?:(?P<neg>{_NOT_VERB})|{_VERB})\s+(?:an?\s+|strictly\s+)?"
        r"(?P<sign>positive|non-?negative|negative|non-?zero|zero)\b(?!\s+(?:or|and)\b)",
        signed,
        text,
        flags=re.I,
    )


# "Raises ValueError if lo > hi", "ValueError: If the list is empty.", "If n is negative, raise a
# ValueError": the inputs the function refuses by design.  Their negation is the domain it is
# meant for: an alternative that returns where yours raises as documented is no evidence.
_RAISES = re.compile(
    r"(?:\brais(?:es|e|ing)\s*:?\s+(?:an?\s+)?`?\w*(?:Error|Exception)`?|^`?\w*(?:Error|Exception)`?\s*:)"
    r"\s*(?:if|when|whenever)\s+(?P<cond>[^.;]+)",
    re.I,
)
_RAISES_AFTER = re.compile(
    r"\b(?:if|when)\s+(?P<cond>[^,.;]+),\s*(?:it\s+|the\s+function\s+|this\s+)?(?:should\s+|will\s+|must\s+)?"
    r"rais(?:es|e)\s+(?:an?\s+)?`?\w*(?:Error|Exception)",
    re.I,
)
_EMPTY = re.compile(
    r"^(?:the\s+)?(?:given\s+|input\s+)*(?:`?(?P<name>\w+)`?)(?:\s+(?:list|array|string|sequence|tuple))?\s+(?:is|are)\s+empty$",
    re.I,
)


def _raised_for(
    text: str, params: tuple[str, ...], families: dict[str, str], collections: list[str]
) -> list[str] | None:
    """The preconditions a "raises … if …" sentence implies (None: it is no such sentence)."""
    m = _RAISES.search(text) or _RAISES_AFTER.search(text)
    if m is None:
        return None
    out: list[str] = []
    for cond in re.split(r"\s+or\s+", m.group("cond").strip().rstrip(".")):
        cond = re.sub(r"^(?:the\s+)?(?:input|argument|parameter)\s+(?=`?\w+`?\s)", "", cond.strip(), flags=re.I)
        empty = _EMPTY.match(cond)
        if empty:
            name = empty.group("name")
            target = name if name in collections else (collections[0] if len(collections) == 1 else "")
            if target:
                out.append(f"len({target}) > 0")
            continue
        cmp = re.fullmatch(rf"({_OPERAND})\s*({_CMP_OPS})\s*({_OPERAND})", _symbolic(cond, params, families).strip())
        if cmp:
            x, op, y = cmp.groups()
            out.append(f"{x.strip('`')} {_NEGATE[_normalise(op)]} {y.strip('`')}")
    return out


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


# What "… is not empty" may be said of: a parameter or the input itself, not "the substring before
# the dot" (HumanEval/141 lists the rules a valid file name follows; the function checks them).
_INPUT_NOUN = r"(?:list|array|string|sequence|tuple|input|collection|dict(?:ionary)?|set|vector|matrix|grid)s?"


def _about_input(subject: str, params: tuple[str, ...]) -> bool:
    """Whether the words before a "… is not empty" (``subject``) name a parameter or the input."""
    subject = re.sub(r"\s+(?:is|are)\s+(?:guaranteed|assumed|expected)$", "", subject.strip(), flags=re.I)
    if not subject:
        return True
    last = re.sub(r"[`'\"]", "", subject.split()[-1])
    return last in params or re.fullmatch(_INPUT_NOUN, last, re.I) is not None


def _input_phrase(text: str) -> bool:
    return bool(_INPUT_PHRASE.search(text)) and not _OUTPUT_HEAD.search(text)


def _quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split()).strip("\"' ")
    return "'" + (text if len(text) <= limit else text[: limit - 1] + "…") + "'"
