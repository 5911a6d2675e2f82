"""Stated preconditions: what the docstring, a decorator or the config says the inputs satisfy.

"Assumes lo <= hi", "Constraints: 1 <= len(arr) <= 100", "given a non-empty list", "the list is
sorted", "a list of distinct integers", "the string contains only lowercase letters", and an
explicit ``@generated(assume="lo <= hi")`` or ``assume`` in ``[tool.coherence]``: each becomes one
*assumption*, a small Python expression over the parameters.  Inputs that break one still run, but a
disagreement found only there is not evidence against the user's function (see ``verdict``), and the
counterexample comes from inside whenever one exists.

An assumption is never executed as code.  ``holds`` interprets a whitelisted subset of expressions
(comparisons, arithmetic, ``len``/``min``/``max``/``sorted``/``set``/``all``/``any``/``abs``/``sum``,
``str.isalpha()`` and friends, subscripts, one-generator comprehensions) over the input's values,
with a step limit: a repository's config or docstring cannot run anything through it.

Docstring phrases count only in a precondition's voice: a line of a "Constraints:"/"Note:" section,
a sentence with "assume", "guaranteed", "will be", "must be", "given", "where", "such that", or a
comparison that stands on its own line.  A sentence about the result ("return True if a > b",
"returns a sorted list") states no precondition.  That reading is ``docstring_preconditions.py``;
this module holds the assumption and its interpreter.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from coherence.engine import syntax

__all__ = ["Assumption", "UNKNOWN", "assumption", "holds"]


@dataclass(frozen=True)
class Assumption:
    expr: str  # a Python expression over the parameters, e.g. "lo <= hi"
    source: str  # where it was stated: "your docstring: 'Assumes lo <= hi'", "@generated(assume=...)"

    @property
    def params(self) -> tuple[str, ...]:
        return _names(self.expr)


UNKNOWN = None  # holds() could not decide (a value it cannot see, e.g. an instance of the user's class)

# -- the interpreter --------------------------------------------------------------------------

_FUNCS: dict[str, Callable[..., Any]] = {
    "len": len,
    "abs": abs,
    "min": min,
    "max": max,
    "sorted": sorted,
    "set": set,
    "all": all,
    "any": any,
    "sum": sum,
    "list": list,
    "tuple": tuple,
    "int": int,
    "float": float,
    "bool": bool,
}
_STR_METHODS = frozenset(
    {
        "isalpha",
        "isdigit",
        "isalnum",
        "islower",
        "isupper",
        "isspace",
        "isascii",
        "isdecimal",
        "isnumeric",
        "strip",
        "lower",
        "upper",
    }
)
_CONSTS = {"True": True, "False": False, "None": None}
_STEPS = 20_000
_BIG = 10**100


class _Undecided(Exception):
    pass


@lru_cache(maxsize=512)
def _parse(expr: str) -> ast.Expression | None:
    try:
        tree = syntax.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            return None
        if isinstance(node, ast.Call):
            f = node.func
            if node.keywords or not (
                (isinstance(f, ast.Name) and f.id in _FUNCS)
                or (isinstance(f, ast.Attribute) and f.attr in _STR_METHODS)
            ):
                return None
        if isinstance(node, ast.Attribute) and node.attr not in _STR_METHODS:
            return None
        if isinstance(node, ast.comprehension) and (
            node.is_async or not isinstance(node.target, (ast.Name, ast.Tuple))
        ):
            return None
    return tree


_ALLOWED = (
    ast.Expression,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Constant,
    ast.Call,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.List,
    ast.Tuple,
    ast.GeneratorExp,
    ast.ListComp,
    ast.comprehension,
    ast.And,
    ast.Or,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.In,
    ast.NotIn,
    ast.Is,
    ast.IsNot,
    ast.IfExp,
)


# Cached like ``_parse``: ``holds`` asks for every input the domain judges, and walking the tree
# each time dominated the domain's cost (see docs/results.md#precondition-names).
@lru_cache(maxsize=512)
def _names(expr: str) -> tuple[str, ...]:
    tree = _parse(expr)
    if tree is None:
        return ()
    bound = {
        n.id
        for c in ast.walk(tree)
        if isinstance(c, ast.comprehension)
        for n in ast.walk(c.target)
        if isinstance(n, ast.Name)
    }
    out: list[str] = []
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and n.id not in _FUNCS
            and n.id not in _CONSTS
            and n.id not in bound
            and n.id not in out
        ):
            out.append(n.id)
    return tuple(out)


def assumption(expr: str, source: str) -> Assumption | None:
    """An ``Assumption`` when ``expr`` is one the interpreter accepts, else None."""
    return Assumption(expr.strip(), source) if _parse(expr) is not None and _names(expr) else None


def holds(
    a: Assumption | str, values: dict[str, Any], *, is_opaque: Callable[[Any], bool] | None = None
) -> bool | None:
    """Whether the assumption holds for these argument values; ``UNKNOWN`` (None) when it cannot
    tell (a value ``is_opaque`` says it cannot see, or a name without a value).  A value of the
    wrong type (``len(5)``) breaks the assumption: it is not what the function was meant for."""
    expr = a.expr if isinstance(a, Assumption) else a
    tree = _parse(expr)
    if tree is None:
        return UNKNOWN
    env = dict(values)
    names = _names(expr)
    if is_opaque is not None and any(is_opaque(env.get(n)) for n in names):
        return UNKNOWN
    if any(n not in env for n in names):
        return UNKNOWN
    steps = [_STEPS]
    try:
        return bool(_eval(tree.body, env, steps))
    except _Undecided:
        return UNKNOWN
    except (
        TypeError,
        ValueError,
        IndexError,
        KeyError,
        AttributeError,
        ZeroDivisionError,
        OverflowError,
        RecursionError,
    ):
        return False


def _tick(steps: list[int], n: int = 1) -> None:
    steps[0] -= n
    if steps[0] < 0:
        raise _Undecided


def _eval(node: ast.AST, env: dict[str, Any], steps: list[int]) -> Any:
    _tick(steps)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in _CONSTS:
            return _CONSTS[node.id]
        raise _Undecided
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_eval(v, env, steps) for v in node.values)
        return any(_eval(v, env, steps) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, steps)
        return (not v) if isinstance(node.op, ast.Not) else (-v if isinstance(node.op, ast.USub) else +v)
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env, steps), _eval(node.right, env, steps)
        op = node.op
        if isinstance(op, ast.Pow):
            if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or abs(b) > 1000 or abs(a) > _BIG:
                raise _Undecided
            return a**b
        if isinstance(op, ast.Mult) and (isinstance(a, (str, list, tuple)) or isinstance(b, (str, list, tuple))):
            raise _Undecided  # no building big sequences
        ops: dict[type[ast.operator], Callable[[], Any]] = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.Div: lambda: a / b,
            ast.FloorDiv: lambda: a // b,
            ast.Mod: lambda: a % b,
        }
        return ops[type(op)]()
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, steps)
        for cmp, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env, steps)
            if not _compare(cmp, left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env, steps) if _eval(node.test, env, steps) else _eval(node.orelse, env, steps)
    if isinstance(node, ast.Call):
        args = [_eval(a, env, steps) for a in node.args]
        for a in args:
            if hasattr(a, "__len__"):
                _tick(steps, len(a))
        if isinstance(node.func, ast.Name):
            return _FUNCS[node.func.id](*args)
        if not isinstance(node.func, ast.Attribute):  # the validator admits names and str methods only
            raise _Undecided
        target = _eval(node.func.value, env, steps)
        if not isinstance(target, str):
            raise TypeError("string method on a non-string")
        _tick(steps, len(target))
        return getattr(target, node.func.attr)(*args)
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, env, steps)
        if isinstance(node.slice, ast.Slice):
            s = node.slice
            return base[slice(*(None if p is None else _eval(p, env, steps) for p in (s.lower, s.upper, s.step)))]
        return base[_eval(node.slice, env, steps)]
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_eval(e, env, steps) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
        return list(_comprehension(node, env, steps))
    raise _Undecided


def _compare(op: ast.cmpop, a: Any, b: Any) -> Any:  # user values: == may give an array
    if isinstance(op, ast.Eq):
        return a == b
    if isinstance(op, ast.NotEq):
        return a != b
    if isinstance(op, ast.Lt):
        return a < b
    if isinstance(op, ast.LtE):
        return a <= b
    if isinstance(op, ast.Gt):
        return a > b
    if isinstance(op, ast.GtE):
        return a >= b
    if isinstance(op, ast.In):
        return a in b
    if isinstance(op, ast.NotIn):
        return a not in b
    if isinstance(op, ast.Is):
        return a is b
    return a is not b


def _comprehension(node: ast.GeneratorExp | ast.ListComp, env: dict[str, Any], steps: list[int]) -> Iterator[Any]:
    def go(k: int, scope: dict[str, Any]) -> Iterator[Any]:
        if k == len(node.generators):
            yield _eval(node.elt, scope, steps)
            return
        gen = node.generators[k]
        for item in _eval(gen.iter, scope, steps):
            _tick(steps)
            inner = dict(scope)
            _bind(gen.target, item, inner)
            if all(_eval(c, inner, steps) for c in gen.ifs):
                yield from go(k + 1, inner)

    return go(0, env)


def _bind(target: ast.AST, item: Any, scope: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        scope[target.id] = item
        return
    items = list(item)
    if len(items) != len(target.elts):  # type: ignore[attr-defined]
        raise ValueError("cannot unpack")
    for t, v in zip(target.elts, items):  # type: ignore[attr-defined]
        _bind(t, v, scope)
