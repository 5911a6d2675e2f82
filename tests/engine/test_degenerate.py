"""Degenerate inputs (every argument empty, blank or zero), where the verdict gives at most an
information, and the counterexample that does not shrink into one."""

import pytest

from coherence.engine.inputs.values import Construct, Expr, Input
from coherence.engine.stated.degenerate import degenerate, empty_string_argument, empty_value


@pytest.mark.parametrize(
    "value", [None, False, 0, 0.0, -0.0, "", " \t\n", b"", [], (), {}, set(), [0, 0.0], [()], {"": 0}, [[""], []]]
)
def test_empty_values(value):
    assert empty_value(value)


@pytest.mark.parametrize(
    "value",
    [
        True,
        1,
        -2,
        0.5,
        "a",
        " x ",
        b"a",
        [1],
        [0, 1],
        ("", "b"),
        {"a": 0},
        {"": 1},
        Expr("object()"),
        Construct("Point", (0, 0)),
    ],
)
def test_values_with_something_in_them(value):
    assert not empty_value(value)


def test_a_call_is_degenerate_when_every_argument_is_empty():
    assert degenerate(Input(("", "")))
    assert degenerate(Input(([],), (("k", 0),)))
    assert not degenerate(Input(("ab", "")))  # text to search, nothing to find: a convention (below)
    assert not degenerate(Input(([],), (("k", 2),)))
    assert not degenerate(Input(()))  # a call without arguments has nothing to be empty


def test_an_empty_string_argument():
    assert empty_string_argument(Input(("ab", "")))
    assert empty_string_argument(Input(("",)))
    assert empty_string_argument(Input(("ab",), (("sub", ""),)))
    assert not empty_string_argument(Input(("ab", " ")))  # a space is something to look for
    assert not empty_string_argument(Input(([""],)))  # inside a container: an element, not the argument
    assert not empty_string_argument(Input(([], 0)))
