"""Which inputs look unlike what a function is meant for, so that every program runs them last.

Programs take the inputs cheapest first, and a program that runs out of time (its budget, or
three timeouts in a row) leaves out the rest, for every program (see ``executor.cheapest_first``).
That assumes a call is slow because its input is large.  But a call also hangs because its input
is one the function was never meant for: ``get_odd_collatz(n)``, "given a positive integer n",
loops forever on n <= 0, and with those among the small inputs every program spends its time on
hangs and reaches few of the others (see docs/results.md#unlikely-inputs-last).

So inputs that break the domain (``Domain``: what the examples show and the docstring states), or
guesses from names and the docstring (``n`` is a count, as generation also assumes; "positive"
anywhere in it), go after all the others.  This decides only which inputs are left out when time
runs out: every input that runs is compared as before, and the guesses never say an input is
outside the domain (``Domain`` stays what the examples and statements back).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from coherence.engine.inputs.constraints import named_like_count
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.inputs.types import type_family
from coherence.engine.inputs.values import Input
from coherence.engine.spec import Spec
from coherence.engine.stated.domain import Domain, Rule
from coherence.engine.stated.evidence import numbers_in

__all__ = ["run_last"]

_SAYS_NONNEG = re.compile(r"\b(?:positive|non-?negative|natural)\b", re.I)


def _guessed_rules(spec: Spec, domain: Domain) -> list[Rule]:
    """The examples' rules, plus "never negative" for int parameters named like a count (which
    generation keeps non-negative) or that the docstring calls positive, non-negative or natural,
    when no example gives them a negative value."""
    rules = list(domain.rules)
    have = {r.param for r in rules if r.kind in ("nonneg", "positive")}
    types = domain.types
    evid = domain.evidence_by_param
    says = bool(_SAYS_NONNEG.search(spec.docstring or ""))
    for p in spec.params:
        if p.kind in ("var_positional", "var_keyword") or p.name in have:
            continue
        if type_family(types.get(p.name)) != "int":
            continue
        if any(x < 0 for _, v in evid.get(p.name, []) for x in numbers_in(v)):
            continue
        if says or named_like_count(p.name):
            rules.append(Rule(p.name, "nonneg"))
    return rules


def run_last(spec: Spec, inputs: Sequence[Input]) -> list[int]:
    """Indices of the inputs to run after all others (in order)."""
    domain = Domain(spec, inputs, infer_types)
    rules = _guessed_rules(spec, domain)
    if not rules:
        return []
    guessed = domain.with_rules(rules)
    late = []
    for x, inp in enumerate(inputs):
        try:
            if not guessed.contains(inp):
                late.append(x)
        except (TypeError, ValueError):
            continue
    return late
