"""Degenerate inputs: every argument empty, blank or zero ('' and '', [], 0, [0.0, 0.0]).

A spec rarely says what such a call should give (is ``how_many_times('', '')`` 0 or 1?), and a
reader dismisses it more easily than a call with something in it.  So the verdict takes its
evidence from elsewhere when it can (``verdict.judge``), and a counterexample that starts
elsewhere does not shrink into one (``convincing.for_verdict``).  A degenerate input keeps its
vote, because warnings that rest on one alone are right about as often as the rest (see
docs/results.md#degenerate-calls).
"""

from __future__ import annotations

from typing import Any

from coherence.engine.inputs.values import Input

_CONTAINERS = (list, tuple, set, frozenset)


def empty_value(value: Any) -> bool:
    """None, False, zero, a blank string, or a container of nothing but such values."""
    if value is None or value is False:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return value == 0
    if isinstance(value, (str, bytes)):
        return not value.strip()
    if isinstance(value, _CONTAINERS):
        return all(empty_value(v) for v in value)
    if isinstance(value, dict):
        return all(empty_value(k) and empty_value(v) for k, v in value.items())
    return False  # objects, expressions, constructed values: not known to be empty


def degenerate(inp: Input) -> bool:
    """Whether every argument of the call is empty (a call without arguments is not)."""
    values = inp.values()
    return bool(values) and all(empty_value(v) for v in values)


def empty_string_argument(inp: Input) -> bool:
    """Whether some argument is the empty string: ``how_many_times('a', '')``,
    ``cycpattern_check('a', '')``.  Is an empty substring found once, everywhere, or nowhere?  A
    docstring about substrings rarely says, and samples split there by convention, not by bug."""
    return any(isinstance(v, str) and v == "" for v in inp.values())


def empty_collection_argument(inp: Input) -> bool:
    """Whether some argument is an empty list, tuple, set or dict: ``max_occurrences([])``,
    ``sum_range_list([], 0, 1)``.  A one-sentence spec rarely says what such a call should give,
    and the reference solution often rejects it: samples split there by convention, not by bug."""
    return any(isinstance(v, (*_CONTAINERS, dict)) and not v for v in inp.values())
