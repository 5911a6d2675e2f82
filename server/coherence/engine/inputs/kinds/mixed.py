"""Kinds that stand for several others: ``any`` (no evidence: a mix of basic values), weighted
unions (``int | None``), and ``construct`` (a call seen in an example, of a class coherence does
not know).  Their values belong to other kinds, which edit and shrink them.
"""

from __future__ import annotations

from random import Random
from typing import Any

from coherence.engine.inputs.kinds import registry
from coherence.engine.inputs.kinds.registry import KEEP, MAX_DEPTH, Kind
from coherence.engine.inputs.types import MIXED, TypeDesc
from coherence.engine.inputs.value_types import type_of_value


class Any_(Kind):
    """No evidence at all: values of a few basic types."""

    name = "any"

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return [1, "a", [1, 2, 3], 0, None, "", 2.5, [], -3, "hello world", True]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return registry.random_value(MIXED, rng, depth)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return True

    def resolve(self, v: Any, t: TypeDesc) -> TypeDesc:
        return type_of_value(v)


class Union(Kind):
    """Members with weights (``a``: int 85% | float 10% | str 5%)."""

    name = "union"

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH and any(a.kind == "none" for a in t.args):
            return [None]  # bounded recursion: ``next: Optional[Node]``
        # The most likely member keeps all its values; the others appear in proportion to their
        # weights (each at least once), spread evenly, the most likely member first.
        ws = list(t.weights) if t.weights else [1.0] * len(t.args)
        order = sorted(range(len(t.args)), key=lambda i: -ws[i])
        lists = [registry.boundary_values(t.args[i], depth) for i in order]
        top = ws[order[0]] or 1.0
        quota = [len(lists[0])] + [
            max(1, min(len(xs), round(len(lists[0]) * ws[i] / top))) for i, xs in zip(order[1:], lists[1:])
        ]
        placed = [((k + 0.5) / q, m, lists[m][k]) for m, q in enumerate(quota) for k in range(q)]
        placed.sort(key=lambda x: (x[0], x[1]))
        return [v for _, _, v in placed]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        ws = list(t.weights) if t.weights else [1.0] * len(t.args)
        if depth >= MAX_DEPTH and any(a.kind == "none" for a in t.args):
            return None
        m = rng.choices(t.args, weights=ws)[0]
        return registry.random_value(m, rng, depth)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return any(registry.fits(v, m) for m in t.args)

    def resolve(self, v: Any, t: TypeDesc) -> TypeDesc:
        # a member it fits exactly first: an int is an int before it is a float
        exact = [m for m in t.args if registry.fits(v, m) and m.kind != "float"]
        if exact:
            return exact[0]
        for m in t.args:
            if registry.fits(v, m):
                return m
        return type_of_value(v)

    def replace(self, v: Any, t: TypeDesc, rng: Random, depth: int) -> Any:
        # Sometimes switch to another member (``Optional[int]``: to and from ``None``).
        if len(t.args) > 1 and depth < MAX_DEPTH and rng.random() < 0.08:
            cur = self.resolve(v, t)
            others = [m for m in t.args if m != cur]
            if others:
                ws = [t.weights[t.args.index(m)] if t.weights else 1.0 for m in others]
                return registry.random_value(rng.choices(others, weights=ws)[0], rng, depth)
        return KEEP

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        if any(a.kind == "none" for a in t.args):
            return None
        return registry.empty(t.args[0], leaf=True)

    def weighted(self, t: TypeDesc) -> bool:
        return bool(t.weights)


class Unknown(Kind):
    """A call of a class coherence does not know (``construct``), and any kind no one registered:
    values are drawn as for ``any``; the calls seen keep their own arguments' kinds."""

    name = "construct"

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        if depth >= MAX_DEPTH:
            return [None]
        return [1, "a", [1, 2, 3]]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        if depth >= MAX_DEPTH:
            return None
        return registry.random_value(MIXED, rng, depth)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return False

    def resolve(self, v: Any, t: TypeDesc) -> TypeDesc:
        return type_of_value(v)

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        return None


ANY = Any_()
UNION = Union()
UNKNOWN = Unknown()
KINDS = (ANY, UNION, UNKNOWN)
