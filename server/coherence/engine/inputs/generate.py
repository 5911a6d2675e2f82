"""Input generation from the signature alone: seeds first, then type-aware mutation.

Order of the output (deduplicated by ``Input.key()``):

1. ``doctest``: calls of the function in the docstring (``>>>`` examples and inline ``f(3) == 5``);
2. ``test``: calls of the function in the workspace's test files;
3. ``default``: one call leaving every defaulted parameter at its default;
4. ``annotation``: calls combining boundary values of each parameter's type (from its annotation,
   or, when there is none, from seed values, its default, its name and the docstring);
5. ``mutation``: EvalPlus-style mutants (see :mod:`.mutate`) of a pool of seeds and accepted
   mutants, until ``n`` inputs, the time budget, or ``max(500, 2n)`` attempts in a row that
   yield nothing new (small domains: a lone ``bool`` has two inputs).

Mutants then pass through soft constraints learned from the seeds and names (each applied with
some probability, so the boundary is still explored): ``n`` follows ``len(arr)``; counts and
numbers never negative in the examples stay non-negative, and numbers the docstring calls positive
or non-negative ("given a positive integer n") stay so; lists sorted in every example stay
sorted; matrices stay rectangular; strings keep the narrow alphabet of their examples (digits,
parentheses...).  A union member (``a``: int 85% | float 10% | str 5%) is kept near its weight in
the output.

The output is a pure function of ``(spec, module_source, workspace contents, n, seed)`` unless the
time budget cuts it short.
"""

from __future__ import annotations

import bisect
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coherence.engine.inputs.binding import bind, bound_values
from coherence.engine.inputs.constraints import Constraints
from coherence.engine.inputs.kinds import boundary_values, kind_of
from coherence.engine.inputs.mutate import mutate_input, resolve_type
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.inputs.seeds import (
    default_seed,
    doctest_seeds,
    type_seeds,
    workspace_seeds,
)
from coherence.engine.inputs.shrink import shrink_candidates, shrink_key
from coherence.engine.inputs.types import MIXED, TypeDesc
from coherence.engine.inputs.values import Construct, Expr, Input
from coherence.engine.spec import Param, Spec

__all__ = ["generate_inputs", "shrink_candidates", "shrink_key"]


_LINEAGE_WEIGHT = {"doctest": 4.0, "test": 4.0, "default": 1.0, "annotation": 1.0}


def _slot_types(
    params: tuple[Param, ...], types: dict[str, TypeDesc], inp: Input
) -> tuple[list[TypeDesc | None], list[TypeDesc | None], list[tuple[tuple[str, int], str]]]:
    """Declared types of ``inp``'s positional and keyword arguments, and the (slot, parameter
    name) pairs whose type is a weighted union."""
    aps, kps = bind(params, inp)
    at = [types.get(p.name) if p else None for p in aps]
    kt = [types.get(p.name) if p else None for p in kps]
    unions = [(("a", i), p.name) for i, p in enumerate(aps) if p and _is_wunion(at[i])]
    unions += [(("k", i), p.name) for i, p in enumerate(kps) if p and _is_wunion(kt[i])]
    return at, kt, unions


def _is_wunion(t: TypeDesc | None) -> bool:
    return t is not None and kind_of(t).weighted(t)


def _child_members(child: Input, st: tuple[Any, ...]) -> list[tuple[str, int]]:
    """(parameter, union member) of each union-typed argument of ``child`` (same shape as the
    parent whose slot types ``st`` are)."""
    out = []
    for (where, i), name in st[2]:
        v = child.args[i] if where == "a" else child.kwargs[i][1]
        if isinstance(v, Expr):
            continue
        t = st[0][i] if where == "a" else st[1][i]
        m = resolve_type(v, t)
        if m in t.args:
            out.append((name, t.args.index(m)))
    return out


_INT_OR_STR = frozenset((int, str))


def _large(v: Any) -> bool:
    t = type(v)
    if t is int or t is float:
        return abs(v) >= 10_000
    if t is str:
        return False
    if t is list or t is tuple:
        if not v:
            return False
        ts = set(map(type, v))
        if ts <= _INT_OR_STR:
            if str in ts:
                return any(map(_large, v)) if int in ts else False
            return max(v) >= 10_000 or min(v) <= -10_000
        return any(map(_large, v))
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return abs(v) >= 10_000
    if isinstance(v, (list, tuple, set, frozenset)):
        return any(_large(x) for x in v)
    if isinstance(v, dict):
        return any(_large(x) for x in v.values())
    if isinstance(v, Construct):
        return any(_large(a) for a in v.args)
    return False


def generate_inputs(
    spec: Spec,
    n: int = 1000,
    *,
    module_source: str | None = None,
    workspace: str | Path | None = None,
    seed: int = 0,
    time_budget: float = 2.0,
    on_prefix: tuple[int, Callable[[list[Input]], None]] | None = None,
) -> list[Input]:
    """``n`` distinct inputs for ``spec``'s function: seeds first, then mutants (see module doc).
    ``on_prefix`` ``(k, fn)``: ``fn`` gets the first ``k`` inputs as soon as they exist (they
    are final then: the output only grows), if it ever has ``k``."""
    start = time.monotonic()
    deadline = start + max(0.05, time_budget)
    if n <= 0:
        return []
    rng = random.Random(seed)
    params = tuple(spec.params)

    out: list[Input] = []
    seen: set[str] = set()
    prefix_at, prefix_fn = on_prefix if on_prefix is not None and 0 < on_prefix[0] <= n else (-1, None)

    def add(inp: Input) -> bool:
        try:
            key = inp.source()  # Input.key, without a call
        except (TypeError, ValueError, RecursionError):
            return False
        if key in seen:
            return False
        seen.add(key)
        out.append(inp)
        if len(out) == prefix_at and prefix_fn is not None:
            prefix_fn(out[:prefix_at])
        return True

    evidence: list[Input] = []
    for inp in doctest_seeds(spec, module_source):
        if add(inp):
            evidence.append(inp)
    scan_deadline = min(deadline, start + max(0.05, 0.4 * time_budget))
    for inp in workspace_seeds(spec, workspace, module_source, deadline=scan_deadline):
        if add(inp):
            evidence.append(inp)

    types = infer_types(spec, evidence)
    typical = _typical(params, types, evidence)
    for inp in default_seed(list(params), types, typical):
        add(inp)
    for inp in type_seeds(list(params), types):
        add(inp)
    if not params:
        return out[:1] or [Input(origin="default")]
    if len(out) >= n:
        return out[:n]

    constraints = Constraints(spec, types, evidence)
    members, msizes, cum = _lineages(params, types, out)
    total = cum[-1] if cum else 0.0
    # Within a lineage the parent is drawn uniformly, or the smaller of two draws (a tournament
    # that keeps values small without losing diversity).
    accepted = [0] * len(members)
    n_accepted = 0
    targets = _member_targets(params, types)
    member_count: dict[tuple[str, int], int] = {}
    rejected = 0
    slot_cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    stall = 0
    stall_limit = max(500, 2 * n)
    large_cap, large_accepted = max(3, n // 200), 0
    constrained = constraints.active()
    # randrange(k) is _randbelow(k) for k > 0 (the same draw), without two layers of arguments
    randbelow = getattr(rng, "_randbelow", rng.randrange)
    while len(out) < n and stall < stall_limit:
        if time.monotonic() > deadline:
            break
        for _ in range(8):
            lid = min(bisect.bisect_left(cum, rng.random() * total), len(members) - 1)
            # A lineage whose mutants are accepted more easily (a sparse domain: floats, strings)
            # must not crowd out the others: cap its share of the output near its weight.
            share = (cum[lid] - (cum[lid - 1] if lid else 0.0)) / total
            if stall >= 50 or accepted[lid] <= 1.5 * share * n_accepted + 2:
                break
        family, fsizes = members[lid], msizes[lid]
        idx = randbelow(len(family))
        if len(family) > 1 and rng.random() < 0.5:
            other = randbelow(len(family))
            if fsizes[other] < fsizes[idx]:
                idx = other
        parent = family[idx]
        shape = (len(parent.args), tuple(k for k, _ in parent.kwargs) if parent.kwargs else ())
        st = slot_cache.get(shape)
        if st is None:
            st = _slot_types(params, types, parent)
            slot_cache[shape] = st
        res = mutate_input(parent, st[0], st[1], rng)
        if res is None:
            stall += 1
            continue
        child, _changed = res
        if constrained:
            child = constraints.apply(child, rng)
        if targets and stall < 50 and rejected < 5 * n:
            # Keep union members near their weights in the output (a sparse member such as float,
            # whose mutants are always new, would otherwise crowd out int).
            mem = _child_members(child, st)
            if any(member_count.get(nm, 0) > 1.5 * targets.get(nm, 0.0) * n_accepted + 3 for nm in mem):
                rejected += 1
                continue
        else:
            mem = _child_members(child, st) if targets else []
        # Huge numbers mostly measure speed (a loop to 2**31 times out in every program), so a
        # few of them are enough: more would turn slowness into "disagreement" and cost minutes.
        big = _large(child.args) or (bool(child.kwargs) and any(_large(v) for _, v in child.kwargs))
        if big and large_accepted >= large_cap:
            stall += 1
            continue
        if add(child):
            large_accepted += big
            for nm in mem:
                member_count[nm] = member_count.get(nm, 0) + 1
            family.append(child)
            fsizes.append(child.size())
            accepted[lid] += 1
            n_accepted += 1
            stall = 0
        else:
            stall += 1
    return out[:n]


def _lineages(
    params: tuple[Param, ...], types: dict[str, TypeDesc], seeds: list[Input]
) -> tuple[list[list[Input]], list[list[int]], list[float]]:
    """The mutation's lineages: each lineage's inputs, their sizes, and the lineages' cumulative
    weights (for drawing one by bisection).

    Parents: every seed except boundary seeds with huge numbers (their mutants would mostly time
    out).  Each seed starts a lineage; its mutants join it.  A lineage's share of the draws is
    fixed by its seed's weight (it does not grow with the lineage's success):
    - real examples (doctests, tests) get at least half of the draws;
    - for a parameter whose type is a weighted union (``a``: int 85% | float | str), lineages
      share the draws in proportion to the member weights, not to how many seeds each member
      has."""
    members: list[list[Input]] = []
    msizes: list[list[int]] = []
    cum: list[float] = []
    total = 0.0
    n_real = sum(1 for i in seeds if i.origin in ("doctest", "test"))
    origin_w = dict(_LINEAGE_WEIGHT)
    if n_real:
        real_w = max(_LINEAGE_WEIGHT["doctest"], (len(seeds) - n_real) / n_real)
        origin_w.update(doctest=real_w, test=real_w)
    parents = [i for i in seeds if not (i.origin == "annotation" and any(_large(a) for a in i.args))] or seeds
    member_share = _member_shares(params, types, parents)
    for inp in parents:
        w = origin_w.get(inp.origin, 1.0)
        for name, m in _members_of(params, types, inp):
            w *= member_share.get((name, m), 1.0)
        total += w
        cum.append(total)
        members.append([inp])
        msizes.append([inp.size()])
    return members, msizes, cum


def _members_of(params: tuple[Param, ...], types: dict[str, TypeDesc], inp: Input) -> list[tuple[str, int]]:
    """For each argument whose parameter has a weighted union type: (parameter, member index)."""
    out: list[tuple[str, int]] = []
    for v, p in bound_values(params, inp):
        t = types.get(p.name) if p is not None else None
        if p is None or t is None or not kind_of(t).weighted(t) or isinstance(v, Expr):
            continue
        m = resolve_type(v, t)
        if m in t.args:
            out.append((p.name, t.args.index(m)))
    return out


def _member_targets(params: tuple[Param, ...], types: dict[str, TypeDesc]) -> dict[tuple[str, int], float]:
    """Output share wanted per (parameter, union member), among the members with many values
    (``None``, ``bool``, literals and enums cannot fill a share, so they get none)."""
    out: dict[tuple[str, int], float] = {}
    for p in params:
        t = types.get(p.name)
        if t is None or not kind_of(t).weighted(t):
            continue
        open_ = [m for m, a in enumerate(t.args) if not kind_of(a).singleton]
        if len(open_) < 2:
            continue
        tot = sum(t.weights[m] for m in open_)
        for m in open_:
            out[(p.name, m)] = t.weights[m] / tot
    return out


def _member_shares(
    params: tuple[Param, ...], types: dict[str, TypeDesc], seeds: list[Input]
) -> dict[tuple[str, int], float]:
    """Weight factor per (parameter, union member): wanted share / share among the seeds."""
    counts: dict[tuple[str, int], int] = {}
    per_param: dict[str, int] = {}
    for inp in seeds:
        for name, m in _members_of(params, types, inp):
            counts[(name, m)] = counts.get((name, m), 0) + 1
            per_param[name] = per_param.get(name, 0) + 1
    shares: dict[tuple[str, int], float] = {}
    for (name, m), c in counts.items():
        t = types[name]
        wanted = t.weights[m] / sum(t.weights)
        shares[(name, m)] = wanted / (c / per_param[name])
    return shares


def _typical(params: tuple[Param, ...], types: dict[str, TypeDesc], evidence: list[Input]) -> dict[str, Any]:
    """A typical value per parameter: its value in the first real example, else its type's first
    boundary value."""
    typ: dict[str, Any] = {}
    for inp in evidence:
        for v, p in bound_values(params, inp):
            if p is not None and p.name not in typ:
                typ[p.name] = v
    for p in params:
        if p.name not in typ:
            vals = boundary_values(types.get(p.name, MIXED))
            typ[p.name] = vals[0] if vals else None
    return typ
