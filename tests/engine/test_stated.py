"""What a docstring states about the sign of a parameter's numbers (``stated.signs``), and what
generation and the domain make of it."""

from __future__ import annotations

import textwrap

import pytest

from coherence.engine.inputs import Input
from coherence.engine.inputs.constraints import made_positive
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.markers import target_for
from coherence.engine.spec import Param
from coherence.engine.stated.domain import Domain
from coherence.engine.stated.evidence import numbers_in
from coherence.engine.stated.signs import backed_signs, stated_signs


def signs(doc: str, **families: str) -> dict[str, str]:
    params = [Param(name, "positional_or_keyword") for name in families]
    return stated_signs(doc, params, families)


@pytest.mark.parametrize(
    "doc, families, expected",
    [
        ("Given a positive integer n, return the product of the odd digits.", {"n": "int"}, {"n": "positive"}),
        (
            "You are given two positive integers n and m, and your task is to compute",
            {"n": "int", "m": "int"},
            {"n": "positive", "m": "positive"},
        ),
        (
            "This function takes two positive numbers x and y and returns",
            {"x": "int", "y": "int"},
            {"x": "positive", "y": "positive"},
        ),
        ("You are given a non-negative integer number n, you have to return", {"n": "int"}, {"n": "nonneg"}),
        ("Given a string s and a natural number n, you have been tasked", {"s": "str", "n": "int"}, {"n": "nonneg"}),
        ("Given a list of positive integers x. return a sorted list", {"x": "list"}, {"x": "positive"}),
        (
            "Given an array arr of integers and a positive integer k, return",
            {"arr": "list", "k": "int"},
            {"k": "positive"},
        ),
        ("Given an array of non-negative integers, return a copy", {"array": "list"}, {"array": "nonneg"}),
        (
            "You are given a non-empty list of positive integers. Return the greatest",
            {"lst": "list"},
            {"lst": "positive"},
        ),
        ("Given a positive floating point number, it can be decomposed", {"number": "float"}, {"number": "positive"}),
        ("Given a positive integer `n`, return", {"n": "int"}, {"n": "positive"}),
        # the list phrase names no parameter and two could be meant
        ("Given a list of positive integers, merge them", {"a": "list", "b": "list"}, {}),
        # "given a positive number" with two numeric parameters: which one?
        ("Given a positive number, scale it", {"x": "float", "y": "float"}, {}),
        # mentions that say nothing about an argument
        ("Whether n can be written as the sum of exactly 4 positive even numbers", {"n": "int"}, {}),
        ("Return only positive numbers in the list.", {"l": "list"}, {}),
        ("Given an array with non-negative integer nodes", {"arr": "list"}, {}),
        ("Count the n-digit positive integers that start or end with 1", {"n": "int"}, {}),
        # the names stop at the first word that is not a parameter
        (
            "Given a positive integer n, and a list arr, return",
            {"n": "int", "arr": "list", "a": "int"},
            {"n": "positive"},
        ),
        ("", {"n": "int"}, {}),
    ],
)
def test_statements_of_sign(doc, families, expected):
    assert signs(doc, **families) == expected


def test_a_parameter_called_both_positive_and_non_negative_is_non_negative():
    doc = "Given a positive integer n. Any non-negative integer n will do."
    assert signs(doc, n="int") == {"n": "nonneg"}


def test_examples_overrule_the_statement():
    stated = {"n": "positive", "m": "positive", "k": "nonneg", "arr": "nonneg"}
    numbers = {"n": [5, 0], "m": [3], "k": [-1], "arr": [1, -2, 3]}
    # an example at 0 makes "positive" non-negative; a negative example drops the statement
    assert backed_signs(stated, numbers) == {"n": "nonneg", "m": "positive"}


def test_positive_makes_every_number_positive():
    assert made_positive(-3) == 3 and made_positive(0) == 1 and made_positive(0.0) == 1.0 and made_positive(2.5) == 2.5
    assert made_positive([0, -1, [2, -0.5]]) == [1, 1, [2, 0.5]]
    assert made_positive((0, True)) == (1, True)  # bools are not numbers here
    assert made_positive({"a": 0}) == {"a": 1}


def domain(source: str, name: str = "f") -> Domain:
    t = target_for(textwrap.dedent(source), name)
    return Domain(t.spec, doctest_seeds(t.spec, t.module_source), infer_types)


COLLATZ = '''
def f(n: int) -> list:
    """Given a positive integer n, return the odd numbers of its Collatz sequence.

    >>> f(5)
    [1, 5]
    """
'''


def test_the_domain_holds_what_the_docstring_states():
    d = domain(COLLATZ)
    assert [(r.param, r.kind, r.stated) for r in d.rules] == [("n", "positive", True)]
    assert d.describe() == ["n is positive (your docstring says so)"]
    assert d.contains(Input((1,)))
    assert d.violations(Input((0,))) == ["n is 0; your docstring says n is positive"]
    assert d.violations(Input((-7,))) == ["n is -7; your docstring says n is positive"]


def test_a_stated_domain_needs_no_example():
    d = domain('''
    def f(xs: list) -> int:
        """Given an array of non-negative integers, return the largest gap."""
    ''')
    assert d.evidence == ()
    assert d.describe() == ["xs is never negative (your docstring says so)"]
    assert d.contains(Input(([0, 3],)))
    assert d.violations(Input(([4, -1],))) == ["xs holds -1; your docstring says its numbers are non-negative"]


def test_an_example_against_the_statement_wins():
    # HumanEval/116 calls its "array of non-negative integers" with negatives in its own examples
    d = domain('''
    def f(arr: list) -> list:
        """Sort an array of non-negative integers by their number of ones.

        >>> f([1, 5, 2])
        [1, 2, 5]
        >>> f([-2, -3, -4])
        [-4, -3, -2]
        """
    ''')
    assert not any(r.kind in ("positive", "nonneg") for r in d.rules)


def _share_not_positive(source: str) -> float:
    t = target_for(textwrap.dedent(source), "f")
    inputs = generate_inputs(t.spec, 400, module_source=t.module_source)
    return sum(1 for i in inputs if any(x <= 0 for x in numbers_in(i.args[0]))) / len(inputs)


def test_generation_keeps_most_inputs_inside_a_stated_sign_and_still_tries_outside():
    stated = _share_not_positive(COLLATZ)
    unstated = _share_not_positive(COLLATZ.replace("Given a positive integer n, return", "Return"))
    assert unstated > 0.3  # n alone, one example: mutation goes below zero freely
    assert 0 < stated < 0.15  # most mutants are made positive; some boundary values stay


STAR = '''
def f(*xs: int) -> int:
    """Sum of the numbers.

    >>> f(1, 2, 3)
    6
    >>> f(4, 5)
    9
    """
'''


def test_star_args_take_the_sign_of_every_value_they_were_given():
    """``*xs`` is bound to each extra argument: the examples' signs hold for all of them, in
    generation and in the domain alike (before, ``*args`` had no rules at all)."""
    d = domain(STAR)
    assert d.describe() == ["xs is never negative"]
    assert d.contains(Input((0, 7, 2))) and d.contains(Input(()))
    assert d.violations(Input((3, -1))) == ["xs holds a negative number; no example's xs does"]
    t = target_for(textwrap.dedent(STAR), "f")
    inputs = generate_inputs(t.spec, 400, module_source=t.module_source)
    outside = sum(1 for i in inputs if not d.contains(i)) / len(inputs)
    assert 0 < outside < 0.1
    unconstrained = STAR.replace("(1, 2, 3)", "(1, -2, 3)").replace("    6\n", "    2\n")
    t = target_for(textwrap.dedent(unconstrained), "f")
    assert domain(unconstrained).describe() == []
    inputs = generate_inputs(t.spec, 400, module_source=t.module_source)
    assert sum(1 for i in inputs if not d.contains(i)) / len(inputs) > 0.3
