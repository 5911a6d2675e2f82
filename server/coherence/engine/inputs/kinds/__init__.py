"""Every kind of input value, registered once (see :mod:`.registry`).

A kind is one module holding its boundary values, random values, fit test, mutations and shrink
steps; generation, mutation and shrinking reach it only through the registry.  Adding a kind is
a module and its line below.
"""

from __future__ import annotations

from coherence.engine.inputs.kinds import choices, constructed, containers, mixed, paths, scalars, text
from coherence.engine.inputs.kinds.registry import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STR,
    Kind,
    boundary_values,
    empty,
    fits,
    kind_of,
    kind_of_value,
    kinds,
    magnitude,
    mutate_value,
    random_value,
    register,
    resolve_type,
    shrink_value,
)

register(*scalars.KINDS)
register(*text.KINDS)
register(*containers.KINDS)
register(*constructed.KINDS)
register(*choices.KINDS)
register(*mixed.KINDS, fallback=mixed.UNKNOWN)
register(*paths.KINDS)

__all__ = [
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
    "resolve_type",
    "shrink_value",
]
