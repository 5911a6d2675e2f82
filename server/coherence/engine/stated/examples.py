"""The docstring's worked examples: calls with the result the docstring says they give.

``>>> is_leap(1900)`` followed by ``False``, and the prose forms LLM-era docstrings use:
``is_leap(1900) == False``, ``is_leap(1900) ➞ False``, ``=>``, ``==>``, ``->``, ``= False``,
``returns False``, ``# => False``.  An example is only taken when both sides are plain literals:
the arguments (so the call can be rebuilt exactly) and the whole right-hand side (so
``double_the_difference([1, 3, 2, 0]) == 1 + 9 + 0 + 0 = 10`` is not read as ``== 1``).

An example is part of the spec the user wrote, not an oracle from elsewhere: a function that
contradicts its own docstring is either wrong or documented wrongly, and the user wants to know
which (``engine.verdict.from_examples``).  An example that an alternative reproduces and yours
contradicts is strong evidence against yours, while one that every program contradicts is often a
sloppy example, which is why that case is only worth a look (see docs/results.md#docstring-examples).
"""

from __future__ import annotations

import ast
import doctest
import re
from dataclasses import dataclass
from typing import Any

from coherence.engine import syntax

__all__ = ["StatedExample", "balanced_call", "stated_examples"]

# what separates a call from its stated result in prose, longest first
_ARROW = re.compile(r"\s*(?:#\s*)?(?:==>|=>|➞|->|→|==|=|should\s+return|returns|gives)\s*")
_TRACEBACK_NAME = re.compile(r"^(?:[\w.]+\.)?(\w+)(?::|$)")
MAX_EXAMPLES = 32  # a docstring with more is a table, not a few worked examples


@dataclass(frozen=True)
class StatedExample:
    """One worked example: ``call`` (as written) gives ``expected`` (as written)."""

    call: str
    expected: str
    value: Any = None  # the stated return value (a literal)
    raises: str | None = None  # the stated exception type name, when the example raises


def balanced_call(text: str, start: int) -> str | None:
    """The ``name(...)`` text starting at ``start`` (parentheses balanced, strings respected)."""
    i = text.find("(", start)
    if i < 0:
        return None
    depth = 0
    quote: str | None = None
    j = i
    while j < len(text) and j - i < 2000:
        ch = text[j]
        if quote:
            if ch == "\\":
                j += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : j + 1]
        j += 1
    return None


def _literal_args(call: str, name: str) -> bool:
    """Whether ``call`` is ``name(...)`` with literal arguments only."""
    try:
        node = syntax.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return False
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
        return False
    try:
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Starred):
                return False
            syntax.literal_eval(arg)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return all(k.arg is not None for k in node.keywords)


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, syntax.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _doctest_examples(doc: str, name: str) -> list[StatedExample]:
    try:
        found = doctest.DocTestParser().get_examples(doc)
    except ValueError:  # malformed doctest: the prose reading below still applies
        return []
    out = []
    for ex in found:
        call, want = ex.source.strip(), ex.want.strip()
        if not want or not _literal_args(call, name):
            continue
        if ex.exc_msg is not None:
            last = want.splitlines()[-1].strip()
            m = _TRACEBACK_NAME.match(last)
            if m:
                out.append(StatedExample(call, last, raises=m.group(1)))
            continue
        ok, value = _literal(want)
        if ok:
            out.append(StatedExample(call, want, value=value))
    return out


def _prose_examples(doc: str, name: str) -> list[StatedExample]:
    out = []
    call_start = re.compile(r"(?<![\w.])" + re.escape(name) + r"\s*\(")
    for line in doc.splitlines():
        if line.lstrip().startswith((">>>", "...")):
            continue
        for m in call_start.finditer(line):
            call = balanced_call(line, m.start())
            if call is None:
                continue
            end = m.start() + len(call)
            arrow = _ARROW.match(line, end)
            if not arrow or arrow.end() == end:
                continue
            # the whole rest of the line (a trailing comment or full stop aside) is the result
            rest = re.split(r"\s#|\s+\((?=[A-Za-z])|;", line[arrow.end() :], maxsplit=1)[0].strip().rstrip(".,")
            ok, value = _literal(rest)
            if ok and rest and _literal_args(call, name):
                out.append(StatedExample(call, rest, value=value))
    return out


def stated_examples(doc: str | None, name: str) -> list[StatedExample]:
    """The worked examples of function ``name`` in docstring ``doc``: ``>>>`` examples when the
    docstring has any, else the prose forms.  Duplicates are dropped."""
    if not doc or name not in doc:
        return []
    found = _doctest_examples(doc, name) or _prose_examples(doc, name)
    seen: set[str] = set()
    out = []
    for ex in found:
        if ex.call not in seen:
            seen.add(ex.call)
            out.append(ex)
    return out[:MAX_EXAMPLES]
