"""Alternatives that special-case a docstring example: ``if s == [-10, 4, 6, 10, 20, 1000]: return
15.0``.  A sample that recognises the example's input in its code and returns the stated result
there reproduces the example by fiat, and says more: its model found that the description, as it
reads it, does not give that result.  So such an example is suspect rather than evidence against
yours (``verdict.from_examples``).

Seen in the recorded HumanEval corpus: the docstring of ``median`` says ``median([-10, 4, 6,
1000, 10, 20])`` is 15.0 (it is 8.0); 5 of Gemini 2.5 Pro's 9 alternatives special-case that
call, and the correct median of its first sample got a warning for contradicting the example.
Over the 8 models' 150 tasks, no other sample matches (``special_cases``), so ordinary base cases
(``if n == 3: return 0``) are not taken for one: the argument must be more than a trivial value,
and the branch must return the stated result as a literal.  Only an example yours contradicts
is looked at: where yours gives the stated result, whoever else gives it agrees with yours.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any

from coherence.engine import syntax
from coherence.engine.inputs import Input


def special_cases(source: str, inp: Input, value: Any) -> bool:
    """Whether ``source`` has a branch that compares something with a literal equal to one of the
    example's non-trivial arguments (as written, or sorted) and returns ``value``, the example's
    stated result, as a literal."""
    wanted = [form for arg in (*inp.args, *(v for _, v in inp.kwargs)) if not _trivial(arg) for form in _forms(arg)]
    if not wanted:
        return False
    for test, returned in _literal_branches(source):
        if _same(returned, value) and any(_same(lit, w) for lit in test for w in wanted):
            return True
    return False


@lru_cache(maxsize=256)
def _literal_branches(source: str) -> tuple[tuple[tuple[Any, ...], Any], ...]:
    """Per ``if`` whose body starts with ``return <literal>``: the literals its test compares with
    ``==``, and the literal it returns."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ()
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Return)):
            continue
        ok, returned = _literal(node.body[0].value)
        if not ok:
            continue
        compared = []
        for sub in ast.walk(node.test):
            if isinstance(sub, ast.Compare) and any(isinstance(op, ast.Eq) for op in sub.ops):
                for side in (sub.left, *sub.comparators):
                    ok, v = _literal(side)
                    if ok:
                        compared.append(v)
        if compared:
            out.append((tuple(compared), returned))
    return tuple(out)


def _literal(node: ast.expr | None) -> tuple[bool, Any]:
    if node is None or not isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp)):
        return False, None
    try:
        return True, syntax.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _trivial(v: Any) -> bool:
    """A value a base case tests for: a number under 10 (``fib4``'s docstring states fib4(3) is
    0, and its samples' ``if n == 3: return 0`` is the definition, not a special case), a
    boolean, None, an empty or one-item container or string."""
    if v is None or isinstance(v, bool):
        return True
    if isinstance(v, (int, float)):
        return abs(v) < 10
    if isinstance(v, (str, bytes, list, tuple, set, frozenset, dict)):
        return len(v) <= 1
    return True


def _forms(v: Any) -> list[Any]:
    """The argument as written, and sorted (samples often compare a sorted copy)."""
    out = [v]
    if isinstance(v, (list, tuple)):
        try:
            ordered = sorted(v)
        except TypeError:
            return out
        out += [ordered, tuple(ordered)]
    return out


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001 -- a literal's __eq__ cannot be trusted to return a bool
        return False
