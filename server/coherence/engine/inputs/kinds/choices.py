"""Kinds whose values come from a short list: a ``Literal``'s values, verbatim source (``expr``:
a doctest's expression), and callables (a few lambdas of the right arity).

Mutation picks another value of the list; a literal's values are plain ones, so they shrink as
their own kind does.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random
from typing import Any

from coherence.engine.inputs.kinds import registry
from coherence.engine.inputs.kinds.registry import Kind
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.value_types import type_of_value
from coherence.engine.inputs.values import Expr

_LAMBDAS = {
    0: ["lambda: 0", "lambda: 1", "lambda: None"],
    1: ["lambda x: x", "lambda x: x * 2", "lambda x: not x", "lambda x: 0", "lambda x: str(x)"],
    2: ["lambda a, b: a + b", "lambda a, b: a", "lambda a, b: b", "lambda a, b: a < b", "lambda a, b: (a, b)"],
    -1: ["lambda *a, **k: a[0] if a else None", "lambda *a, **k: 0", "lambda *a, **k: len(a)"],
}


class Literal(Kind):
    """``Literal["r", "w"]``: exactly these values."""

    name = "literal"
    singleton = True

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(t.values)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.choice(t.values) if t.values else None

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return any(v == x and type(v) is type(x) for x in t.values)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        others = [x for x in rt.values if not (x == v and type(x) is type(v))]
        return rng.choice(others) if others else v


class Source(Kind):
    """Source text kept verbatim (``Expr``): a parameter whose examples are expressions takes
    one of them; the text itself is never edited or shrunk."""

    name = "expr"
    value_types = (Expr,)
    singleton = True

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(t.values) or [None]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.choice(registry.boundary_values(t, depth))

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return True

    def resolve(self, v: Any, t: TypeDesc) -> TypeDesc:
        return type_of_value(v)

    def replace(self, v: Any, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.choice(t.values) if t.values else v

    def shrink(self, v: Any) -> Iterator[Any]:
        return iter(())

    def magnitude(self, v: Any) -> tuple[float, int]:
        return (0.0, 0)


class Callable(Kind):
    """A callable argument: lambdas of its arity (``-1``: unknown)."""

    name = "callable"
    singleton = True

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        arity = t.values[0] if t.values else -1
        return [Expr(s) for s in _LAMBDAS.get(arity, _LAMBDAS[-1])]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.choice(registry.boundary_values(t, depth))

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, Expr)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        choices = [x for x in registry.boundary_values(rt) if x != v]
        return rng.choice(choices) if choices else v


KINDS = (Literal(), Source(), Callable())
