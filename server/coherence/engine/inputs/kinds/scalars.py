"""Numbers, booleans and ``None``: their boundary values, random draws, mutations and shrinks.

Mutation: ±1, ±10, negation, 0, doubling/halving, a fresh draw for numbers (rounding and small
nudges for floats); a flip for booleans.  Shrinking moves a number toward 0 (0 itself, half, one
step, its absolute value).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from random import Random
from typing import Any

from coherence.engine.inputs.kinds import registry
from coherence.engine.inputs.kinds.registry import MAX_DEPTH, Kind
from coherence.engine.inputs.types import TypeDesc

FLOAT_LIMIT = 1e12
INT_LIMIT = 10**12

_INT_BOUNDARY = [3, 0, 1, -1, 2, 5, 10, -7, 42, 100, 7, -100, 1000, 10**6]
_FLOAT_BOUNDARY = [1.5, 0.0, 1.0, -1.0, 0.5, -2.75, 3.14159, 100.0, 1e-09, 0.1, -0.5, 12345.678, 1e6]
_COMPLEX_BOUNDARY = [complex(1, 2), complex(0, 0), complex(0, -1), complex(3, 0), complex(-1.5, 2.5)]


def random_int(rng: Random) -> int:
    r = rng.random()
    if r < 0.55:
        return rng.randint(0, 20)
    if r < 0.85:
        return rng.randint(-20, 100)
    if r < 0.97:
        return rng.randint(-1000, 1000)
    return rng.choice([10**6, -(10**6), 2**31 - 1, 10**4])


def random_float(rng: Random) -> float:
    r = rng.random()
    if r < 0.5:
        return round(rng.uniform(-10, 10), rng.choice([1, 2]))
    if r < 0.8:
        return round(rng.uniform(-100, 100), 2)
    if r < 0.9:
        return float(rng.randint(-20, 20))
    if r < 0.97:
        return rng.uniform(-1, 1)
    return rng.choice([1e-9, -1e-9, 1e6, 0.1 + 0.2])


# The draws below are ``rng.choice``'s, ``randrange``'s and ``randint``'s own, made directly with
# ``rng._randbelow`` (``choice(s)`` is ``s[_randbelow(len(s))]``, ``randrange(n)`` is
# ``_randbelow(n)``, ``randint(a, b)`` is ``a + _randbelow(b - a + 1)``): the same values, without a
# Python frame each (generation makes about a hundred thousand of them per function).  typeshed
# does not declare the private method, hence the ``type: ignore`` where it is bound.
_INT_OPS_LARGE = ("half", "half", "fresh", "inc", "dec", "neg", "zero")
_INT_OPS = ("inc", "dec", "inc10", "dec10", "neg", "zero", "fresh", "fresh", "double", "half", "inc", "dec")
_FLOAT_OPS = ("inc", "dec", "inc10", "dec10", "half", "double", "neg", "zero", "fresh", "fresh", "round", "nudge")
_NUDGES = (-0.1, 0.1, -0.01, 0.01)


def mutate_int(v: int, rng: Random) -> int:
    below = rng._randbelow  # type: ignore[attr-defined]  # see above
    if abs(v) > 1000:
        op = _INT_OPS_LARGE[below(7)]
    else:
        op = _INT_OPS[below(12)]
    if op == "inc":
        r = v + 1
    elif op == "dec":
        r = v - 1
    elif op == "inc10":
        r = v + 10
    elif op == "dec10":
        r = v - 10
    elif op == "neg":
        r = -v if v != 0 else (1, -1)[below(2)]
    elif op == "zero":
        r = 0 if v != 0 else 1
    elif op == "double":
        r = v * 2 if v != 0 else 2
    elif op == "half":
        r = int(v / 2)
    else:
        r = random_int(rng)
    return r if abs(r) <= INT_LIMIT else random_int(rng)


def mutate_float(v: float, rng: Random) -> float:
    if not math.isfinite(v):
        return random_float(rng)
    below = rng._randbelow  # type: ignore[attr-defined]  # see above
    op = _FLOAT_OPS[below(12)]
    if op == "inc":
        r = v + 1.0
    elif op == "dec":
        r = v - 1.0
    elif op == "inc10":
        r = v + 10.0
    elif op == "dec10":
        r = v - 10.0
    elif op == "half":
        r = v * 0.5
    elif op == "double":
        r = v * 2.0
    elif op == "neg":
        r = -v if v != 0 else (0.5, -0.5)[below(2)]
    elif op == "zero":
        r = 0.0 if v != 0 else 1.0
    elif op == "round":
        r = float(round(v)) if v != round(v) else v + 0.5
    elif op == "nudge":
        r = round(v + _NUDGES[below(4)], 10)
    else:
        r = random_float(rng)
    return r if math.isfinite(r) and abs(r) <= FLOAT_LIMIT else random_float(rng)


class Int(Kind):
    name = "int"
    value_types = (int,)
    exact = (int,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(_INT_BOUNDARY)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return random_int(rng)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        return mutate_int(v, rng)

    def shrink(self, v: Any) -> Iterator[Any]:
        if v == 0:
            return
        yield 0
        half = int(v / 2)
        if half != 0:
            yield half
        step = v - 1 if v > 0 else v + 1
        if step not in (0, half):
            yield step
        if v < 0:
            yield -v

    def magnitude(self, v: Any) -> tuple[float, int]:
        return (float(abs(v)), int(v < 0))


class Float(Kind):
    name = "float"
    value_types = (float,)
    exact = (float,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(_FLOAT_BOUNDARY)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return random_float(rng)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):  # an int where a float is declared
            if rt.kind == self.name and rng.random() < 0.3:
                return mutate_float(float(v), rng)
            return mutate_int(v, rng)
        return mutate_float(v, rng)

    def shrink(self, v: Any) -> Iterator[Any]:
        if not math.isfinite(v):
            yield 0.0
            return
        if v == 0.0:
            return
        yield 0.0
        if v != int(v) and abs(v) < 1e15:
            yield float(int(v))
        if abs(v) > 1e-6:
            yield v / 2
        if v < 0:
            yield -v

    def magnitude(self, v: Any) -> tuple[float, int]:
        if not math.isfinite(v):
            return (1e300, 1)
        return (float(abs(v)), int(v < 0))


class Bool(Kind):
    name = "bool"
    value_types = (bool,)
    exact = (bool,)
    singleton = True

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return [True, False]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.random() < 0.5

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, bool)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        return not v

    def shrink(self, v: Any) -> Iterator[Any]:
        if v:
            yield False

    def magnitude(self, v: Any) -> tuple[float, int]:
        return (0.0, int(v))


class Complex(Kind):
    name = "complex"
    value_types = (complex,)
    exact = (complex,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(_COMPLEX_BOUNDARY)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return complex(rng.randint(-5, 5), rng.randint(-5, 5))

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, complex)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        if rng.random() < 0.5:
            return complex(mutate_float(v.real, rng), v.imag)
        return complex(v.real, mutate_float(v.imag, rng))

    def shrink(self, v: Any) -> Iterator[Any]:
        if v != 0:
            yield complex(0, 0)
        if v.imag != 0 and v.real != 0:
            yield complex(v.real, 0)

    def magnitude(self, v: Any) -> tuple[float, int]:
        return (abs(v.real) + abs(v.imag), int(v.real < 0) + int(v.imag < 0))


class NoneKind(Kind):
    name = "none"
    value_types = (type(None),)
    singleton = True

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return [None]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return None

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return v is None

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        # ``None`` has no edit of its own: an ``Optional`` parameter takes one of its other members.
        if t is not None and t.kind == "union" and depth < MAX_DEPTH:
            others = [m for m in t.args if m.kind != self.name]
            if others:
                return registry.random_value(rng.choice(others), rng, depth)
        return v

    def shrink(self, v: Any) -> Iterator[Any]:
        return iter(())

    def magnitude(self, v: Any) -> tuple[float, int]:
        return (0.0, 0)


KINDS = (Int(), Float(), Bool(), Complex(), NoneKind())
