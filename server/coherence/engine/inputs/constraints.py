"""Soft constraints on mutants, learned from the seeds, the parameters' names and the docstring
(see :class:`Constraints`).  The readings of the seeds they are learned from (each parameter's
values, their alphabet, their numbers, their sortedness) are what the examples state
(:mod:`coherence.engine.stated.evidence`), which the domain reads too.
"""

from __future__ import annotations

import random
import re
from typing import Any

from coherence.engine.inputs.binding import bind
from coherence.engine.inputs.param_types import description_hints
from coherence.engine.inputs.types import TypeDesc, type_family
from coherence.engine.inputs.values import Input
from coherence.engine.spec import Spec
from coherence.engine.stated.evidence import evidence_by_param, is_sorted, len_evidence, narrow_alphabet, numbers_in
from coherence.engine.stated.signs import backed_signs, stated_signs

# Names of an int parameter that is usually the length of the collection before it
# (MBPP: ``max_sub_array_sum(a, size)``, ``find_min_diff(arr, n)``).
_LEN_NAMES = {"n", "size", "length", "len", "arr_size", "array_size", "list_size", "N"}
# Names of int parameters that are usually counts / indices (mostly non-negative).
_NONNEG_NAMES = {
    "n",
    "k",
    "m",
    "num",
    "count",
    "size",
    "length",
    "len",
    "index",
    "idx",
    "i",
    "j",
    "N",
    "K",
    "M",
    "L",
    "steps",
    "step",
    "times",
    "rows",
    "cols",
    "digits",
    "width",
    "height",
    "depth",
    "level",
    "limit",
    "r",
    "h",
    "radius",
    "side",
    "number",
    "position",
    "pos",
}


def named_like_count(name: str) -> bool:
    """Whether a parameter's name says it counts something (``n``, ``size``, ``K``), so that
    generation keeps it non-negative when no example says otherwise."""
    return name in _NONNEG_NAMES or name.lower() in _NONNEG_NAMES


class Constraints:
    """Soft constraints learned from names, seeds and the docstring, applied to mutants with some
    probability: ``n`` follows ``len(arr)``; counts, and numbers that are never negative in the
    seeds, stay non-negative; numbers the docstring calls positive or non-negative stay so (unless
    an example says otherwise: see ``stated``); lists that are sorted in every seed (or that the docstring calls sorted) stay
    sorted; matrices stay rectangular (square, when the seeds or the docstring say so)."""

    def __init__(self, spec: Spec, types: dict[str, TypeDesc], seeds: list[Input]):
        # ``*args`` takes the constraints of each of its values (``f(1, 2, 3)``: never negative)
        params = [p for p in spec.params if p.kind != "var_keyword"]
        self.params = params
        self._shapes: dict[tuple[Any, ...], dict[str, tuple[tuple[str, int], ...]]] = {}
        evid = evidence_by_param(spec, seeds)
        self.len_of: dict[str, tuple[str, float]] = {}
        self.nonneg: dict[str, float] = {}
        self.sorted: dict[str, float] = {}
        self.rect: dict[str, tuple[float, bool]] = {}
        self.alphabet: dict[str, tuple[float, frozenset[str]]] = {}
        self.positive: dict[str, float] = {}
        _, _, doc_sorted = description_hints(spec.docstring)
        doc_square = bool(re.search(r"\bsquare\b|\bN\s*[x*×]\s*N\b", spec.docstring or "", re.I))
        kinds = {p.name: type_family(types.get(p.name)) for p in params}
        numbers = {p.name: [x for _, v in evid.get(p.name, []) for x in numbers_in(v)] for p in params}
        signs = backed_signs(stated_signs(spec.docstring, params, kinds), numbers)
        for idx, p in enumerate(params):
            fam = kinds[p.name]
            ev = [v for _, v in evid.get(p.name, [])]
            alphabet = narrow_alphabet(ev)
            if alphabet is not None:
                self.alphabet[p.name] = (0.9, alphabet)
            nums = numbers[p.name]
            if signs.get(p.name) == "positive":
                self.positive[p.name] = 0.9
            elif signs.get(p.name) == "nonneg" or (nums and all(x >= 0 for x in nums) and len(nums) >= 2):
                self.nonneg[p.name] = 0.9
            if p.kind == "var_positional":
                continue  # in step with the domain (``stated.domain._learn``): sign and alphabet only
            if fam == "int":
                if not ev and named_like_count(p.name) and p.name not in signs:
                    self.nonneg[p.name] = 0.85
                colls = [q for q in params[:idx] if kinds[q.name] in ("list", "tuple", "str")]
                if colls:
                    link = len_evidence(p, colls, evid)
                    if link is not None:
                        self.len_of[p.name] = (link, 0.8)
                    elif not ev and len(colls) == 1 and p.name in _LEN_NAMES and kinds[colls[0].name] != "str":
                        self.len_of[p.name] = (colls[0].name, 0.5)
            t = types.get(p.name)
            if t is not None and t.kind == "list" and t.args and t.args[0].kind == "list":
                mats = [v for v in ev if isinstance(v, list) and v and all(isinstance(r, list) for r in v)]
                if not mats:
                    self.rect[p.name] = (0.6, doc_square)
                elif all(len({len(r) for r in m}) == 1 for m in mats):
                    square = all(len(m) == len(m[0]) for m in mats) and any(len(m) >= 2 for m in mats)
                    self.rect[p.name] = (0.9, square)
            if fam == "list":
                lists = [v for v in ev if isinstance(v, list) and len(v) >= 2]
                sortable = lists and all(is_sorted(v) for v in lists)
                if sortable and len(lists) >= 2:
                    self.sorted[p.name] = 0.8
                elif doc_sorted:
                    self.sorted[p.name] = 0.5

    def active(self) -> bool:
        return bool(self.len_of or self.nonneg or self.positive or self.sorted or self.rect or self.alphabet)

    def _where(self, inp: Input) -> dict[str, tuple[tuple[str, int], ...]]:
        """The slots each parameter's values sit in, in inputs of ``inp``'s shape, bound as the
        call binds them: a ``*args`` parameter has one slot per extra argument, and a keyword
        that ``**kwargs`` absorbs is no parameter's.  It runs for every mutant, so per shape."""
        shape = (len(inp.args), tuple(k for k, _ in inp.kwargs))
        where = self._shapes.get(shape)
        if where is None:
            slots: dict[str, list[tuple[str, int]]] = {}
            aps, kps = bind(self.params, inp)
            for w, ps in (("a", aps), ("k", kps)):
                for i, p in enumerate(ps):
                    if p is not None and p.kind != "var_keyword":
                        slots.setdefault(p.name, []).append((w, i))
            where = self._shapes[shape] = {name: tuple(v) for name, v in slots.items()}
        return where

    def apply(self, inp: Input, rng: random.Random) -> Input:
        """``inp`` with the constraints applied (each with its probability); ``inp`` itself when
        none changed anything.  It runs for every mutant: no closures, no copies until a write."""
        where = self._where(inp)
        # tuples until the first write, then lists of their own (``copied``)
        args: Any = inp.args
        kwargs: Any = inp.kwargs
        copied = False

        for name, prob in self.sorted.items():
            if name in where and rng.random() < prob:
                for w, i in where[name]:
                    v = args[i] if w == "a" else kwargs[i][1]
                    if isinstance(v, list):
                        try:
                            v = sorted(v)
                        except TypeError:
                            continue
                        if not copied:
                            args, kwargs, copied = list(args), list(kwargs), True
                        _put(args, kwargs, w, i, v)
        for name, (prob, chars) in self.alphabet.items():
            if name in where and rng.random() < prob:
                if not copied:
                    args, kwargs, copied = list(args), list(kwargs), True
                for w, i in where[name]:
                    _put(args, kwargs, w, i, _in_alphabet(args[i] if w == "a" else kwargs[i][1], chars))
        for name, (prob, square) in self.rect.items():
            if name in where and rng.random() < prob:
                if not copied:
                    args, kwargs, copied = list(args), list(kwargs), True
                for w, i in where[name]:
                    _put(args, kwargs, w, i, _rectangular(args[i] if w == "a" else kwargs[i][1], square))
        for signs, fix in ((self.nonneg, _non_negative), (self.positive, made_positive)):
            for name, prob in signs.items():
                if name in where and rng.random() < prob:
                    if not copied:
                        args, kwargs, copied = list(args), list(kwargs), True
                    for w, i in where[name]:
                        _put(args, kwargs, w, i, fix(args[i] if w == "a" else kwargs[i][1]))
        for name, (other, prob) in self.len_of.items():
            # a length is of one collection: only parameters with one slot each
            if len(where.get(name, ())) == 1 and len(where.get(other, ())) == 1 and rng.random() < prob:
                ((w, i),) = where[name]
                ((ow, oi),) = where[other]
                v = args[i] if w == "a" else kwargs[i][1]
                c = args[oi] if ow == "a" else kwargs[oi][1]
                if isinstance(v, int) and not isinstance(v, bool) and isinstance(c, (list, tuple, str)):
                    if not copied:
                        args, kwargs, copied = list(args), list(kwargs), True
                    _put(args, kwargs, w, i, len(c))
        if not copied:
            return inp
        return Input.made(tuple(args), tuple(kwargs), inp.origin)


def _put(args: list[Any], kwargs: list[Any], w: str, i: int, v: Any) -> None:
    if w == "a":
        args[i] = v
    else:
        kwargs[i] = (kwargs[i][0], v)


def _in_alphabet(v: Any, chars: frozenset[str]) -> Any:
    """``v`` with every string's characters outside ``chars`` removed."""
    if isinstance(v, str):
        return "".join(c for c in v if c in chars)
    if isinstance(v, list):
        return [_in_alphabet(x, chars) for x in v]
    if isinstance(v, tuple):
        return tuple(_in_alphabet(x, chars) for x in v)
    return v


def _non_negative(v: Any, zero: Any = None) -> Any:
    """``v`` with every number's sign dropped, and zeros made ``zero`` (1: ``positive``) when it
    is given.  Sets are left alone: negating could merge their items."""
    t = type(v)
    if t is int or t is float:
        return -v if v < 0 else (v if zero is None or v else t(zero))
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):  # a subclass of int or float
        t = type(v)
        return -v if v < 0 else (v if zero is None or v else t(zero))
    if isinstance(v, list):
        return [_non_negative(x, zero) for x in v]
    if isinstance(v, tuple):
        return tuple(_non_negative(x, zero) for x in v)
    if isinstance(v, dict):
        return {k: _non_negative(x, zero) for k, x in v.items()}
    return v


def made_positive(v: Any) -> Any:
    """``v`` with every number made positive: negatives negated, zeros made 1."""
    return _non_negative(v, 1)


def _rectangular(v: Any, square: bool) -> Any:
    if not isinstance(v, list) or not v or not all(isinstance(r, list) for r in v):
        return v
    width = min(len(r) for r in v)
    if width == 0:
        return v
    if square:
        k = min(width, len(v))
        return [r[:k] for r in v[:k]]
    return [r[:width] for r in v]
