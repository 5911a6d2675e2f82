"""Binding a call's arguments to the parameters they fill.

A leaf beside the value model: input generation and what the docstring states (which parameter
an example's value belongs to) both read it, and it depends on neither.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coherence.engine.inputs.values import Input
from coherence.engine.spec import Param


def bind(params: Iterable[Param], inp: Input) -> tuple[list[Param | None], list[Param | None]]:
    """The parameter each positional argument and each keyword argument of ``inp`` binds to
    (``None`` when nothing matches).  ``*args`` / ``**kwargs`` parameters absorb the rest."""
    params = list(params)
    positional = [p for p in params if p.kind in ("positional_only", "positional_or_keyword")]
    star = next((p for p in params if p.kind == "var_positional"), None)
    starstar = next((p for p in params if p.kind == "var_keyword"), None)
    by_name = {p.name: p for p in params if p.kind in ("positional_or_keyword", "keyword_only")}
    arg_params: list[Param | None] = []
    for i in range(len(inp.args)):
        arg_params.append(positional[i] if i < len(positional) else star)
    kw_params = [by_name.get(k, starstar) for k, _ in inp.kwargs]
    return arg_params, kw_params


def bound_values(params: Iterable[Param], inp: Input) -> list[tuple[Any, Param | None]]:
    """Each argument of ``inp`` (positional, then keyword) with the parameter it binds to."""
    aps, kps = bind(params, inp)
    return list(zip(inp.args, aps)) + list(zip((v for _, v in inp.kwargs), kps))
