"""The registry of input kinds, and the dispatch that generation, mutation and shrinking go through.

Like Hypothesis's one type registry (``_global_type_lookup``), each kind of value is registered
once, as a :class:`Kind` holding every step its values need, and nothing else names it.  A kind
is found two ways: from a type descriptor by its ``TypeDesc.kind`` name (:func:`kind_of`), and
from a bare value by its Python type (:func:`kind_of_value`), since shrinking sees values without
types.  The functions below are the only entry points; kinds call them back for the values they
hold (a list's items, a class's fields).
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random
from typing import Any, ClassVar

from coherence.engine.inputs.annotation_types import claim_annotations
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.value_types import type_of_value
from coherence.engine.inputs.values import Expr

__all__ = [
    "KEEP",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_STR",
    "Kind",
    "boundary_values",
    "empty",
    "fits",
    "kind_of",
    "kind_of_value",
    "kinds",
    "magnitude",
    "mutate_value",
    "random_value",
    "register",
    "resolve_type",
    "shrink_value",
]

MAX_ITEMS = 20  # items in a generated container
MAX_STR = 40  # characters in a generated string
MAX_DEPTH = 3  # nesting of generated containers / constructs

KEEP: Any = object()  # what :meth:`Kind.replace` returns when the declared kind leaves the edit to the value's


class Kind:
    """One kind of input value and every step generation, mutation and shrinking need for it.

    ``name`` is the ``TypeDesc.kind`` it serves; ``value_types`` the Python types of the values
    it owns when no type is known (shrinking); ``exact`` the Python types whose values always fit
    any descriptor of this kind (mutation's fast path).  Kinds whose values are someone else's (a
    ``Literal``'s strings, ``Any``'s anything) inherit the steps that go by the value's own kind.
    """

    name: ClassVar[str] = ""
    value_types: ClassVar[tuple[type, ...]] = ()
    exact: ClassVar[tuple[type, ...]] = ()
    singleton: ClassVar[bool] = False  # few values: cannot fill a union member's share of the output

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        """Deterministic values of ``t``: a typical one first, then edge cases."""
        raise NotImplementedError

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        """A fresh random value of ``t``."""
        raise NotImplementedError

    def fits(self, v: Any, t: TypeDesc) -> bool:
        """Whether value ``v`` plausibly belongs to ``t`` (shallow)."""
        raise NotImplementedError

    def resolve(self, v: Any, t: TypeDesc) -> TypeDesc:
        """The descriptor ``v`` is mutated as: ``t`` when it fits, else ``v``'s own type."""
        return t if fits(v, t) else type_of_value(v)

    def replace(self, v: Any, t: TypeDesc, rng: Random, depth: int) -> Any:
        """A new value chosen for the declared type ``t`` itself, before any edit of ``v``
        (a union switching member), or :data:`KEEP`."""
        return KEEP

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        """One small edit of ``v``, whose declared type is ``t`` and resolved type ``rt``."""
        vk = kind_of_value(v)
        return v if vk is None or vk is self else vk.mutate(v, t, rt, rng, depth)

    def shrink(self, v: Any) -> Iterator[Any]:
        """One-step smaller variants of ``v``, biggest reductions first."""
        vk = kind_of_value(v)
        if vk is not None and vk is not self:
            yield from vk.shrink(v)

    def magnitude(self, v: Any) -> tuple[float, int]:
        """(size of its numbers, count of negatives and Trues): shrinking's order after size."""
        vk = kind_of_value(v)
        return (0.0, 0) if vk is None or vk is self else vk.magnitude(v)

    def empty(self, t: TypeDesc, leaf: bool) -> Any:
        """The smallest value of ``t``, where nesting stops (``leaf``: inside a container,
        where a class becomes ``None``)."""
        vals = self.boundary(t, MAX_DEPTH)
        return vals[0] if vals else None

    def weighted(self, t: TypeDesc) -> bool:
        """Whether ``t`` shares its values among members by weight (a weighted union)."""
        return False

    def from_annotation(self, dotted: str) -> TypeDesc | None:
        """The descriptor of an annotation naming this kind (``pathlib.Path``), or None."""
        return None


_KINDS: dict[str, Kind] = {}
_BY_TYPE: dict[type, Kind] = {}
_fallback = Kind()


def register(*new: Kind, fallback: Kind | None = None) -> None:
    """Add kinds to the registry; ``fallback`` serves descriptor kinds no one registered."""
    global _fallback
    for k in new:
        _KINDS[k.name] = k
        for tp in k.value_types:
            _BY_TYPE[tp] = k
        if type(k).from_annotation is not Kind.from_annotation:
            claim_annotations(k.from_annotation)
    if fallback is not None:
        _fallback = fallback


def kinds() -> dict[str, Kind]:
    """Every registered kind by name (a copy)."""
    return dict(_KINDS)


def kind_of(t: TypeDesc) -> Kind:
    return _KINDS.get(t.kind, _fallback)


def kind_of_value(v: Any) -> Kind | None:
    """The kind owning values of ``v``'s Python type (or of its nearest registered base)."""
    tp = type(v)
    k = _BY_TYPE.get(tp)
    if k is None:
        for base in tp.__mro__[1:]:
            k = _BY_TYPE.get(base)
            if k is not None:
                break
    return k


def boundary_values(t: TypeDesc, depth: int = 0) -> list[Any]:
    """Deterministic values of ``t``: a typical one first, then edge cases (empty, zero, negative,
    one item, duplicates, whitespace, unicode...)."""
    return _KINDS.get(t.kind, _fallback).boundary(t, depth)


def random_value(t: TypeDesc, rng: Random, depth: int = 0) -> Any:
    """A fresh random value of ``t`` (bounded: ≤ MAX_ITEMS items, ≤ MAX_STR chars, depth ≤ MAX_DEPTH)."""
    return _KINDS.get(t.kind, _fallback).random(t, rng, depth)


def empty(t: TypeDesc, leaf: bool = False) -> Any:
    return _KINDS.get(t.kind, _fallback).empty(t, leaf)


def fits(v: Any, t: TypeDesc) -> bool:
    """Whether value ``v`` plausibly belongs to ``t`` (shallow; source text fits anything)."""
    return isinstance(v, Expr) or _KINDS.get(t.kind, _fallback).fits(v, t)


def resolve_type(v: Any, t: TypeDesc | None) -> TypeDesc:
    """The member of ``t`` that ``v`` belongs to (or ``v``'s own type when ``t`` does not fit)."""
    if t is None:
        return type_of_value(v)
    return _KINDS.get(t.kind, _fallback).resolve(v, t)


def mutate_value(v: Any, t: TypeDesc | None, rng: Random, depth: int = 0) -> Any:
    """One type-preserving edit of ``v`` (declared type ``t``; ``None``: use ``v``'s own type).

    The declared kind may first pick a new value outright (:meth:`Kind.replace`); otherwise the
    kind of the type ``v`` resolves to edits it."""
    if t is not None:
        kind = _KINDS.get(t.kind, _fallback)
        # The usual case, a value of exactly its declared type, resolves to ``t`` itself: skip
        # the resolution (generating inputs is about half of a first check's own CPU time).
        if type(v) in kind.exact:
            return kind.mutate(v, t, t, rng, depth)
        if isinstance(v, Expr):
            return v
        new = kind.replace(v, t, rng, depth)
        if new is not KEEP:
            return new
    elif isinstance(v, Expr):
        return v
    rt = resolve_type(v, t)
    return _KINDS.get(rt.kind, _fallback).mutate(v, t, rt, rng, depth)


def shrink_value(v: Any) -> Iterator[Any]:
    """One-step smaller variants of a value, biggest reductions first (may contain duplicates)."""
    k = kind_of_value(v)
    if k is not None:
        yield from k.shrink(v)


def magnitude(v: Any) -> tuple[float, int]:
    """(sum of |numbers|, count of negatives and Trues) of a value."""
    k = kind_of_value(v)
    return (0.0, 0) if k is None else k.magnitude(v)
