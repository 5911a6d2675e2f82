"""Values built by a call in the user's module: instances of its classes, its enums' members, and
the standard library's dates, times, decimals and fractions (:class:`Construct` nodes).

Mutation edits one argument of the call (by the field's declared type); an enum member switches to
another member; a standard-library value is drawn afresh.  Shrinking shrinks one argument.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from random import Random
from typing import Any

from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.kinds import registry
from coherence.engine.inputs.kinds.containers import rot
from coherence.engine.inputs.kinds.registry import MAX_DEPTH, Kind
from coherence.engine.inputs.name_types import infer_from_default, infer_from_name
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.values import Construct, Expr
from coherence.engine.spec import Param


@lru_cache(maxsize=1024)
def field_types(t: TypeDesc) -> tuple[list[tuple[Param, TypeDesc]], list[tuple[Param, TypeDesc]]]:
    """Positional and keyword-only fields of a class descriptor, with their types (cached; do not
    modify the lists)."""
    info = t.info
    if info is None:
        return [], []
    classes = t.values  # every class of the module, so fields can refer to them
    pos: list[tuple[Param, TypeDesc]] = []
    kw: list[tuple[Param, TypeDesc]] = []
    for f in info.fields:
        if f.kind in ("var_positional", "var_keyword"):
            continue
        ft = parse_annotation(f.annotation, classes) if f.annotation else None
        if ft is None:
            ft = infer_from_default(f.default) or infer_from_name(f.name)
        (kw if f.kind == "keyword_only" else pos).append((f, ft))
    return pos, kw


def shrink_construct(v: Construct) -> Iterator[Construct]:
    """The call with one argument shrunk (an enum member, ``attr``, has none)."""
    if v.attr:
        return
    for i, a in enumerate(v.args):
        for s in registry.shrink_value(a):
            yield Construct(v.callee, v.args[:i] + (s,) + v.args[i + 1 :], v.kwargs, v.attr)
    for i, (name, a) in enumerate(v.kwargs):
        for s in registry.shrink_value(a):
            yield Construct(v.callee, v.args, v.kwargs[:i] + ((name, s),) + v.kwargs[i + 1 :], v.attr)


def construct_magnitude(v: Construct) -> tuple[float, int]:
    parts = [registry.magnitude(a) for a in v.args] + [registry.magnitude(x) for _, x in v.kwargs]
    return (sum(p[0] for p in parts), sum(p[1] for p in parts))


def _mutate_construct(c: Construct, t: TypeDesc, rng: Random, depth: int) -> Construct:
    if c.attr:
        return c
    slots = [("a", i) for i, a in enumerate(c.args) if not isinstance(a, Expr)]
    slots += [("k", i) for i, (_, a) in enumerate(c.kwargs) if not isinstance(a, Expr)]
    if not slots:
        return c
    pos, kw = field_types(t) if t.kind == "class" else ([], [])
    kw_types = {f.name: ft for f, ft in kw}
    kw_types.update({f.name: ft for f, ft in pos})
    where, i = rng.choice(slots)
    if where == "a":
        ft = pos[i][1] if i < len(pos) else None
        args = list(c.args)
        args[i] = registry.mutate_value(args[i], ft, rng, depth + 1)
        return Construct(c.callee, tuple(args), c.kwargs, c.attr)
    kws = list(c.kwargs)
    name, val = kws[i]
    kws[i] = (name, registry.mutate_value(val, kw_types.get(name), rng, depth + 1))
    return Construct(c.callee, c.args, tuple(kws), c.attr)


class Constructed(Kind):
    """The steps every kind of call shares: it fits a ``Construct``, shrinks its arguments."""

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, Construct)

    def shrink(self, v: Any) -> Iterator[Any]:
        yield from shrink_construct(v)

    def magnitude(self, v: Any) -> tuple[float, int]:
        return construct_magnitude(v)


class Class(Constructed):
    """An instance of a class of the user's module: ``Point(1, 2)``, built from its fields."""

    name = "class"
    value_types = (Construct,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            return [registry.empty(t)]
        pos, kw = field_types(t)
        if not pos and not kw:
            return [Construct(t.name)]
        pl = [registry.boundary_values(ft, depth + 1) for _, ft in pos]
        kl = [registry.boundary_values(ft, depth + 1) for _, ft in kw]
        n = max(len(x) for x in pl + kl)
        return [
            Construct(t.name, tuple(rot(xs, j) for xs in pl), tuple((f.name, rot(xs, j)) for (f, _), xs in zip(kw, kl)))
            for j in range(min(n, 8))
        ]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return registry.empty(t)
        pos, kw = field_types(t)
        return Construct(
            t.name,
            tuple(registry.random_value(ft, rng, depth + 1) for _, ft in pos),
            tuple((f.name, registry.random_value(ft, rng, depth + 1)) for f, ft in kw),
        )

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        return _mutate_construct(v, rt, rng, depth)

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        if leaf:
            return None  # no instance inside an instance where nesting stops
        pos, kw = field_types(t)
        return Construct(
            t.name,
            tuple(registry.empty(ft, leaf=True) for _, ft in pos),
            tuple((f.name, registry.empty(ft, leaf=True)) for f, ft in kw),
        )


class Enum(Constructed):
    """A member of an enum of the user's module: ``Color.RED``."""

    name = "enum"
    singleton = True

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        info = t.info
        if info and info.members:
            return [Construct(f"{t.name}.{m}", attr=True) for m in info.members]
        return [Construct(f"next(iter({t.name}))", attr=True)]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.choice(registry.boundary_values(t, depth))

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        choices = [x for x in registry.boundary_values(rt) if x != v]
        return rng.choice(choices) if choices else v


def _stdlib_boundary(t: TypeDesc) -> list[Any]:
    kind = t.values[0]
    c = t.name
    if kind == "date":
        return [Construct(c, a) for a in [(2024, 2, 28), (2024, 2, 29), (2000, 1, 1), (1999, 12, 31), (2023, 6, 15)]]
    if kind == "datetime":
        return [Construct(c, a) for a in [(2024, 2, 28, 12, 30, 0), (2000, 1, 1, 0, 0, 0), (1999, 12, 31, 23, 59, 59)]]
    if kind == "timedelta":
        kws = [(("days", 1),), (("seconds", 0),), (("days", -1), ("seconds", 30)), (("hours", 36),)]
        return [Construct(c, kwargs=a) for a in kws]
    if kind == "Decimal":
        return [Construct(c, (s,)) for s in ["3.14", "0", "-1.5", "100", "0.1"]]
    if kind == "Fraction":
        return [Construct(c, a) for a in [(1, 3), (0, 1), (-5, 2), (7, 1)]]
    return [1]


def _stdlib_random(t: TypeDesc, rng: Random) -> Any:
    kind = t.values[0]
    c = t.name
    if kind == "date":
        return Construct(c, (rng.randint(1970, 2050), rng.randint(1, 12), rng.randint(1, 28)))
    if kind == "datetime":
        return Construct(
            c,
            (
                rng.randint(1970, 2050),
                rng.randint(1, 12),
                rng.randint(1, 28),
                rng.randint(0, 23),
                rng.randint(0, 59),
                rng.randint(0, 59),
            ),
        )
    if kind == "timedelta":
        return Construct(c, kwargs=(("days", rng.randint(-10, 400)), ("seconds", rng.randint(0, 86399))))
    if kind == "Decimal":
        return Construct(c, (f"{rng.uniform(-1000, 1000):.{rng.randint(0, 4)}f}",))
    if kind == "Fraction":
        return Construct(c, (rng.randint(-50, 50), rng.randint(1, 20)))
    return rng.randint(0, 10)


class Stdlib(Constructed):
    """A date, datetime, timedelta, Decimal or Fraction, called as the module names it."""

    name = "stdlib"

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return _stdlib_boundary(t)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return _stdlib_random(t, rng)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        return registry.random_value(rt, rng, depth)


KINDS = (Class(), Enum(), Stdlib())
