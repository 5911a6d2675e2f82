"""The domain the examples show: which inputs look like the ones the docstring's examples (and the
workspace's tests) call the function with.

Input generation (``inputs.generate``) learns soft constraints from those examples and from
parameter names, and applies them to mutants only with some probability, so that the boundary is
still explored.  A :class:`Domain` keeps only the constraints that the examples themselves back,
with the same evidence rules as generation's ``Constraints``:

- ``nonneg``: every number in the examples' values of a parameter is ≥ 0 (at least two numbers);
- ``alphabet``: the examples' strings of a parameter use a narrow alphabet (digits, parentheses,
  binary, hex...; at least three characters; letters from words do not count);
- ``sorted``: a list parameter is sorted in every example (at least two lists of two or more);
- ``rect``: a matrix parameter is rectangular in every example, and ``square`` when every example
  is square (and one has two rows or more);
- ``len``: an int parameter equals ``len()`` of a collection parameter before it in every example.

The docstring's own statement of a sign ("given a positive integer n", "a list of non-negative
integers": :mod:`coherence.engine.stated.signs`) is a rule too, ``positive`` or ``nonneg``, unless an example breaks it:
it says what the function is meant for as plainly as an example.  Name heuristics with no example
behind them (``n`` is a count, so non-negative; ``n`` follows ``arr``) and a docstring that merely
says "sorted" are left out: they guide generation, they do not say what the function is meant for.
With neither examples nor statements there are no rules, and every input is in the domain.

``Domain.violations(inp)`` says, in a few words each, why an input lies outside the domain.
The parameters' types come from the type inference the caller hands in
(``inputs.param_types.infer_types``), so that the facts depend on nothing of input generation.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from coherence.engine.inputs.binding import bind
from coherence.engine.inputs.types import TypeDesc, type_family
from coherence.engine.inputs.values import Expr, Input
from coherence.engine.spec import Spec
from coherence.engine.stated.docstring_preconditions import stated_assumptions
from coherence.engine.stated.evidence import (
    evidence_by_param,
    is_sorted,
    len_evidence,
    narrow_alphabet,
    numbers_in,
    strings_in,
)
from coherence.engine.stated.preconditions import Assumption, holds
from coherence.engine.stated.signs import backed_signs, stated_signs

__all__ = ["EVIDENCE_ORIGINS", "Domain", "Rule", "TypeInference"]

# One type per parameter from the spec and the examples' values (``inputs.param_types.infer_types``).
TypeInference = Callable[[Spec, list[Input]], dict[str, TypeDesc]]

# Inputs written by people: the docstring's examples and the workspace's tests.
EVIDENCE_ORIGINS = ("doctest", "test")


@dataclass(frozen=True)
class Rule:
    """One constraint on one parameter, backed by every example that gives it a value."""

    param: str
    kind: str  # nonneg | positive | alphabet | sorted | rect | len | assume
    chars: frozenset[str] = frozenset()  # alphabet
    square: bool = False  # rect
    other: str = ""  # len: the collection parameter this one is the length of
    stated: bool = False  # nonneg, positive: the docstring says so (else: every example shows it)
    assumption: Assumption | None = None  # assume: a stated precondition over the parameters

    def describe(self) -> str:
        p = self.param
        if self.kind == "assume" and self.assumption is not None:
            return f"{self.assumption.expr} ({self.assumption.source})"
        if self.kind == "positive":
            return f"{p} is positive (your docstring says so)"
        if self.kind == "nonneg":
            return f"{p} is never negative" + (" (your docstring says so)" if self.stated else "")
        if self.kind == "alphabet":
            return f"{p} uses only the characters {_show_chars(self.chars)}"
        if self.kind == "sorted":
            return f"{p} is sorted"
        if self.kind == "rect":
            return f"{p} is {'square' if self.square else 'rectangular'}"
        return f"{p} == len({self.other})"

    def violation(self, value: Any, values: dict[str, Any]) -> str | None:
        """Why ``value`` (this parameter's argument; ``values`` holds all arguments by parameter
        name) breaks the rule, or None."""
        p = self.param
        if self.kind == "assume" and self.assumption is not None:
            ok = holds(self.assumption, values, is_opaque=_opaque)
            return None if ok is not False else f"{self.assumption.expr} does not hold ({self.assumption.source})"
        if isinstance(value, Expr):
            return None
        if self.kind in ("nonneg", "positive"):
            strict = self.kind == "positive"
            bad = next((x for x in numbers_in(value) if x < 0 or (strict and x == 0)), None)
            if bad is None:
                return None
            scalar = isinstance(value, (int, float))
            if self.stated:
                sign = "positive" if strict else "non-negative"
                return (
                    f"{p} is {bad!r}; your docstring says {p} is {sign}"
                    if scalar
                    else f"{p} holds {bad!r}; your docstring says its numbers are {sign}"
                )
            return (
                f"{p} is negative; every example's {p} is ≥ 0"
                if scalar
                else f"{p} holds a negative number; no example's {p} does"
            )
        if self.kind == "alphabet":
            foreign = sorted({c for s in strings_in(value) for c in s if c not in self.chars})
            if foreign:
                shown = "".join(foreign[:5]) + ("…" if len(foreign) > 5 else "")
                return f"{p} has {shown!r}; the examples' {p} use only {_show_chars(self.chars)}"
            return None
        if self.kind == "sorted":
            if isinstance(value, list) and len(value) >= 2 and not is_sorted(value):
                return f"{p} is not sorted; every example's {p} is"
            return None
        if self.kind == "rect":
            if not (isinstance(value, list) and value and all(isinstance(r, list) for r in value)):
                return None
            widths = {len(r) for r in value}
            if len(widths) > 1:
                return f"{p} is ragged (rows of {min(widths)}..{max(widths)}); every example's {p} is rectangular"
            if self.square and len(value) != len(value[0]):
                return f"{p} is {len(value)}×{len(value[0])}, not square; every example's {p} is square"
            return None
        # len
        other = values.get(self.other)
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and isinstance(other, (list, tuple, str))
            and value != len(other)
        ):
            return f"{p} is {value}, not len({self.other}) = {len(other)}; in every example {p} == len({self.other})"
        return None


def _show_chars(chars: frozenset[str]) -> str:
    return repr("".join(sorted(chars)))


class Domain:
    """The evidence-backed part of generation's soft constraints for ``spec``.

    ``evidence``: the inputs people wrote (origin ``doctest`` or ``test``); others are ignored, so
    the whole generated list may be passed.  ``infer_types`` gives the parameters' types from
    the examples' values."""

    def __init__(
        self,
        spec: Spec,
        evidence: Iterable[Input],
        infer_types: TypeInference,
        assume: Iterable[Assumption] = (),
    ):
        self.spec = spec
        seen: set[str] = set()
        ev_inputs: list[Input] = []
        for inp in evidence:
            if inp.origin not in EVIDENCE_ORIGINS:
                continue
            try:
                key = inp.key()
            except (TypeError, ValueError, RecursionError):
                continue
            if key not in seen:  # generation counts each distinct example once
                seen.add(key)
                ev_inputs.append(inp)
        self._slots: dict[
            tuple[Any, ...], tuple[list[tuple[str, bool, int]], tuple[str, int] | None]
        ] = {}  # see _values
        self.evidence: tuple[Input, ...] = tuple(ev_inputs)
        # what the rules were learned from, kept for inputs.likely's guesses
        self.types = infer_types(spec, ev_inputs)
        self.evidence_by_param = evidence_by_param(spec, ev_inputs)
        # The magnitudes the examples show, per scalar number parameter: a counterexample near them
        # (is_leap(1900) beside the examples' 2024) convinces where is_leap(0) does not.
        # Negative examples get the mirror band (-2024 gives -4048..-1012); mixed signs give none.
        self.bands: dict[str, tuple[float, float]] = {}
        # Parameters whose examples hold ordered pairs only (every interval (a, b) has a <= b):
        # shrinking (1, 3) to (1, 0) crosses what the examples show (``crossed``).
        self.ordered_pairs: set[str] = set()
        for name, ev in self.evidence_by_param.items():
            nums = [v for _, v in ev if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if nums and len(nums) == len(ev) and min(nums) > 0:
                self.bands[name] = (min(nums) / 2, max(nums) * 2)
            elif nums and len(nums) == len(ev) and max(nums) < 0:
                self.bands[name] = (min(nums) * 2, max(nums) / 2)
            pairs = [pair for _, v in ev for pair in _pairs(v)]
            if len(pairs) >= 2 and all(a <= b for a, b in pairs) and any(a < b for a, b in pairs):
                self.ordered_pairs.add(name)
        rules = _learn(spec, self.types, self.evidence_by_param)
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.rules += tuple(self._assumed(rules, assume))

    @property
    def empty(self) -> bool:
        """No rule: every input is in the domain (no examples, or none that constrain)."""
        return not self.rules

    def describe(self) -> list[str]:
        return [r.describe() for r in self.rules]

    def violations(self, inp: Input) -> list[str]:
        """Short reasons why ``inp`` lies outside the domain; empty when it lies inside."""
        if not self.rules:
            return []
        values = self._values(inp)
        out = []
        for r in self.rules:
            if r.param in values:
                why = r.violation(values[r.param], values)
                if why:
                    out.append(why)
        return out

    def contains(self, inp: Input) -> bool:
        return not self.violations(inp)

    def crossed(self, inp: Input) -> list[str]:
        """What ``inp`` breaks of the shapes the examples show beyond the rules (a pair out of
        order where every example's pairs are ordered); empty when nothing."""
        if not self.ordered_pairs:
            return []
        values = self._values(inp)
        out = []
        for name in sorted(self.ordered_pairs):
            bad = next(((a, b) for a, b in _pairs(values.get(name)) if a > b), None)
            if bad is not None:
                out.append(f"{name} holds {bad!r}, out of order; every pair in the examples' {name} is ordered")
        return out

    def typical(self, inp: Input) -> bool:
        """Whether every scalar number of ``inp`` lies within the band of magnitudes its
        parameter's examples show (half the smallest to twice the largest; only parameters whose
        examples are all positive scalars have a band)."""
        if not self.bands:
            return True
        values = self._values(inp)
        for name, (lo, hi) in self.bands.items():
            v = values.get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not lo <= v <= hi:
                return False
        return True

    def _values(self, inp: Input) -> dict[str, Any]:
        """Each parameter's argument in ``inp``; a ``*args`` parameter's is the tuple of the
        arguments it takes (only sign and alphabet rules, which judge each number or string in
        it, apply to it).  The binding is looked up once per shape of call: run_last and the
        scoring ask for every input."""
        kw = inp.kwargs
        shape = (len(inp.args), tuple(k for k, _ in kw) if kw else ())
        binding = self._slots.get(shape)
        if binding is None:
            aps, kps = bind(self.spec.params, inp)
            stars = [(p.name, i) for i, p in enumerate(aps) if p is not None and p.kind == "var_positional"]
            named = [
                (p.name, True, i)
                for i, p in enumerate(aps)
                if p is not None and p.kind not in ("var_positional", "var_keyword")
            ]
            named += [
                (p.name, False, i)
                for i, p in enumerate(kps)
                if p is not None and p.kind not in ("var_positional", "var_keyword")
            ]
            binding = self._slots[shape] = named, stars[0] if stars else None
        slots, star = binding
        args = inp.args
        values = {name: args[i] if positional else kw[i][1] for name, positional, i in slots}
        if star is not None:
            values[star[0]] = _star_values(args[star[1] :])
        return values

    def _assumed(self, learned: list[Rule], given: Iterable[Assumption]) -> list[Rule]:
        """Rules for the preconditions the docstring states and those the user gave (decorator,
        config), minus any that an example breaks: the examples show what the function is
        called with, so an assumption they contradict was misread."""
        params = [p for p in self.spec.params if p.kind != "var_keyword"]
        kinds = {p.name: type_family(self.types.get(p.name)) for p in params}
        stated = stated_assumptions(self.spec.docstring, [p.name for p in params], kinds)
        out: list[Rule] = []
        seen = {r.describe() for r in learned}
        for a in [*given, *stated]:
            rule = Rule(a.params[0], "assume", assumption=a)  # assumption() gives every one a parameter
            if rule.describe() in seen:
                continue
            if a in stated and any(holds(a, self._values(e), is_opaque=_opaque) is False for e in self.evidence):
                continue
            seen.add(rule.describe())
            out.append(rule)
        return out

    def with_rules(self, rules: Iterable[Rule]) -> Domain:
        """The same examples, judged by ``rules`` instead of the rules they back
        (``inputs.likely`` adds guesses to those)."""
        other = copy.copy(self)
        other.rules = tuple(rules)
        return other

    def __repr__(self) -> str:
        return f"Domain({self.spec.name}: {'; '.join(self.describe()) or 'no rules'})"


def _pairs(value: Any, depth: int = 0) -> list[tuple[float, float]]:
    """The pairs of numbers in ``value`` (itself, or inside its lists and tuples)."""
    if isinstance(value, (list, tuple)) and depth < 4:
        if len(value) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            return [(value[0], value[1])]
        return [pair for item in value for pair in _pairs(item, depth + 1)]
    return []


def _opaque(value: Any) -> bool:
    """A value an assumption cannot judge: an expression built from the user's classes."""
    return isinstance(value, Expr)


def _star_values(args: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(v for v in args if not isinstance(v, Expr))


def _learn(spec: Spec, types: dict[Any, Any], evid: dict[str, list[tuple[Input, Any]]]) -> list[Rule]:
    """The rules of generation's ``Constraints`` that the examples (``evid``, by parameter) or
    the docstring's statements back (see the module doc).  Kept in step with it: every rule here
    is one ``Constraints`` also learns."""
    params = [p for p in spec.params if p.kind != "var_keyword"]
    kinds = {p.name: type_family(types.get(p.name)) for p in params}
    numbers = {p.name: [x for _, v in evid.get(p.name, []) for x in numbers_in(v)] for p in params}
    signs = backed_signs(stated_signs(spec.docstring, params, kinds), numbers)
    rules: list[Rule] = []
    for idx, p in enumerate(params):
        if p.name in signs:
            rules.append(Rule(p.name, signs[p.name], stated=True))
        ev = [v for _, v in evid.get(p.name, [])]
        if not ev:
            continue  # what is left without examples are name and docstring heuristics
        fam = kinds[p.name]
        alphabet = narrow_alphabet(ev)
        if alphabet is not None:
            rules.append(Rule(p.name, "alphabet", chars=alphabet))
        nums = numbers[p.name]
        if len(nums) >= 2 and all(x >= 0 for x in nums) and p.name not in signs:
            rules.append(Rule(p.name, "nonneg"))
        if p.kind == "var_positional":
            continue  # its value is a tuple of arguments: only rules on each number or string
        if fam == "int":
            colls = [q for q in params[:idx] if kinds[q.name] in ("list", "tuple", "str")]
            if colls:
                link = len_evidence(p, colls, evid)
                if link is not None:
                    rules.append(Rule(p.name, "len", other=link))
        t = types.get(p.name)
        if t is not None and t.kind == "list" and t.args and t.args[0].kind == "list":
            mats = [v for v in ev if isinstance(v, list) and v and all(isinstance(r, list) for r in v)]
            if mats and all(len({len(r) for r in m}) == 1 for m in mats):
                square = all(len(m) == len(m[0]) for m in mats) and any(len(m) >= 2 for m in mats)
                rules.append(Rule(p.name, "rect", square=square))
        if fam == "list":
            lists = [v for v in ev if isinstance(v, list) and len(v) >= 2]
            if len(lists) >= 2 and all(is_sorted(v) for v in lists):
                rules.append(Rule(p.name, "sorted"))
    return rules
