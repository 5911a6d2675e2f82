"""Alternatives that special-case a docstring example: ``if s == [-10, 4, 6, 10, 20, 1000]: return
15.0``.  A sample that recognises the example's input in its code and returns the stated result
there reproduces the example by fiat, and says more: its model found that the description, as it
reads it, does not give that result.  So such an example is suspect rather than evidence against
yours (``verdict.from_examples``).

Seen in the recorded HumanEval corpus, where samples special-case the wrong example of
``median``'s docstring and a correct ``median`` got a warning for contradicting it; no other
sample matches (``special_cases``; docs/results.md#special-cased-examples), so ordinary base cases
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
    wanted = [form for arg in inp.values() if not _trivial(arg) for form in _forms(arg)]
    if not wanted:
        return False
    for test, returned in _literal_branches(source):
        if _same(returned, value) and any(_same(lit, w) for lit in test for w in wanted):
            return True
    return False


@lru_cache(maxsize=256)
def _literal_branches(source: str) -> tuple[tuple[tuple[Any, ...], Any], ...]:
    """The branches that answer one input with a literal, each as (the literals its test compares
    with, the literal it answers).  The shapes models write it in:

    - ``if s == [...]: return 15.0`` (or ``result = 15.0``, returned later); ``==`` on either
      side, or ``in`` a literal tuple or list of inputs;
    - ``return 15.0 if s == [...] else ...``;
    - a table keyed by whole inputs: ``{(-10, 4, 6, 1000, 10, 20): 15.0}`` (a lookup compares the
      key).  Only a key that is a collection: a table of scalars (``{1000: 'm', 900: 'cm'}``) is
      how such functions are written, not a special case."""
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.body:
            ok, answered = _answer(node.body[0])
        elif isinstance(node, ast.IfExp):
            ok, answered = _literal(node.body)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                ok_key, k = _literal(key)
                ok_value, v = _literal(value)
                if ok_key and ok_value and isinstance(k, (tuple, frozenset)):
                    out.append(((k,), v))
            continue
        else:
            continue
        if not ok:
            continue
        compared = _compared(node.test)
        if compared:
            out.append((tuple(compared), answered))
    return tuple(out)


def _answer(stmt: ast.stmt) -> tuple[bool, Any]:
    """The literal a branch's first statement answers with: ``return <literal>`` or
    ``<name> = <literal>``."""
    if isinstance(stmt, ast.Return):
        return _literal(stmt.value)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return _literal(stmt.value)
    return False, None


def _compared(test: ast.expr) -> list[Any]:
    """The literals a test compares something with, by ``==`` or by ``in`` a literal collection."""
    compared: list[Any] = []
    for sub in ast.walk(test):
        if not isinstance(sub, ast.Compare):
            continue
        sides = (sub.left, *sub.comparators)
        for i, op in enumerate(sub.ops):
            if isinstance(op, ast.Eq):
                for side in sides[i : i + 2]:
                    ok, v = _literal(side)
                    if ok:
                        compared.append(v)
            elif isinstance(op, ast.In) and isinstance(known := sides[i + 1], (ast.Tuple, ast.List, ast.Set)):
                for element in known.elts:
                    ok, v = _literal(element)
                    if ok:
                        compared.append(v)
    return compared


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
    """The argument as written, and sorted (samples often compare a sorted copy); a list also as
    a tuple, the form a table's key takes."""
    out = [v]
    if isinstance(v, (list, tuple)):
        out.append(tuple(v))
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
