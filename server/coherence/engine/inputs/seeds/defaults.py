"""Seed calls from the parameters' defaults and from their types' boundary values."""

from __future__ import annotations

from typing import Any

from coherence.engine.inputs.kinds import boundary_values
from coherence.engine.inputs.types import (
    INT,
    MIXED,
    TypeDesc,
)
from coherence.engine.inputs.values import Input
from coherence.engine.spec import Param


def default_seed(params: list[Param], types: dict[str, TypeDesc], typical: dict[str, Any]) -> list[Input]:
    """One call that leaves every parameter with a default at its default (required parameters
    take their typical value)."""
    if not any(p.default is not None for p in params):
        return []
    args: list[Any] = []
    kwargs: list[tuple[str, Any]] = []
    for p in params:
        if p.default is not None or p.kind in ("var_positional", "var_keyword"):
            continue
        v = typical.get(p.name)
        if p.kind == "keyword_only":
            kwargs.append((p.name, v))
        else:
            args.append(v)
    return [Input(tuple(args), tuple(kwargs), origin="default")]


def type_seeds(params: list[Param], types: dict[str, TypeDesc], limit: int = 24) -> list[Input]:
    """Calls combining each parameter's boundary values: call j takes value j (mod its count) of
    every parameter, so the first call is all-typical and every edge case appears at least once.
    A ``*args`` parameter adds one call with two extra positional arguments of its item type."""
    if not params:
        return []
    lists: list[list[Any]] = []
    slots: list[Param] = []
    for p in params:
        if p.kind in ("var_positional", "var_keyword"):
            continue
        lists.append(boundary_values(types.get(p.name, MIXED)) or [None])
        slots.append(p)
    out: list[Input] = []
    n = min(limit, max(len(x) for x in lists)) if lists else 1
    for j in range(n):
        args: list[Any] = []
        kwargs: list[tuple[str, Any]] = []
        for p, vals in zip(slots, lists):
            v = vals[j % len(vals)]
            if p.kind == "keyword_only":
                kwargs.append((p.name, v))
            else:
                args.append(v)
        out.append(Input(tuple(args), tuple(kwargs), origin="annotation"))
    star = next((p for p in params if p.kind == "var_positional"), None)
    if star is not None:
        extra = boundary_values(types.get(star.name, INT))[:2]
        out.insert(1, Input(out[0].args + tuple(extra), out[0].kwargs, origin="annotation"))
    return out
