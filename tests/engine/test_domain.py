"""The domain the docstring's examples show (``coherence.engine.stated.domain``)."""

from __future__ import annotations

import textwrap

import pytest

from coherence.engine.inputs import Expr, Input
from coherence.engine.inputs.constraints import Constraints
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.near_examples import near_examples
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.markers import target_for
from coherence.engine.stated.domain import Domain


def domain(source: str, name: str = "f") -> Domain:
    t = target_for(textwrap.dedent(source), name)
    return Domain(t.spec, doctest_seeds(t.spec, t.module_source), infer_types)


def rules(d: Domain) -> set[tuple[str, str]]:
    return {(r.param, r.kind) for r in d.rules}


SUM_FIRST = '''
def f(arr, n):
    """Sum of the first n items.
    >>> f([1, 2, 3], 3)
    6
    >>> f([5, 6], 2)
    11
    """
'''


def test_counts_lengths_and_sorted_lists_from_examples():
    d = domain(SUM_FIRST)
    assert not d.empty
    assert len(d.evidence) == 2
    assert rules(d) == {("arr", "nonneg"), ("arr", "sorted"), ("n", "nonneg"), ("n", "len")}
    assert d.violations(Input(([1, 4, 9], 3))) == []
    assert d.contains(Input(([], 0)))

    assert d.violations(Input(([1, 2], -2))) == [
        "n is negative; every example's n is ≥ 0",
        "n is -2, not len(arr) = 2; in every example n == len(arr)",
    ]
    assert d.violations(Input(([2, 1], 2))) == ["arr is not sorted; every example's arr is"]
    assert d.violations(Input(([-3, 1], 2))) == ["arr holds a negative number; no example's arr does"]
    # keyword arguments bind to their parameters
    assert d.violations(Input(([1, 2, 3],), (("n", 1),))) == [
        "n is 1, not len(arr) = 3; in every example n == len(arr)"
    ]


def test_narrow_alphabets():
    d = domain(
        '''
    def separate_paren_groups(paren_string: str) -> list:
        """
        >>> separate_paren_groups('( ) (( )) (( )( ))')
        ['()', '(())', '(()())']
        """
    ''',
        "separate_paren_groups",
    )
    assert rules(d) == {("paren_string", "alphabet")}
    assert d.violations(Input(("(())()",))) == []
    assert d.violations(Input(("(a)",))) == ["paren_string has 'a'; the examples' paren_string use only ' ()'"]

    d = domain(
        '''
    def string_xor(a: str, b: str) -> str:
        """
        >>> string_xor('010', '110')
        '100'
        """
    ''',
        "string_xor",
    )
    assert rules(d) == {("a", "alphabet"), ("b", "alphabet")}
    assert d.contains(Input(("1111", "")))
    assert d.violations(Input(("012", "1"))) == ["a has '2'; the examples' a use only '01'"]


def test_matrices_rectangular_and_square():
    d = domain(
        '''
    def trace(m):
        """
        >>> trace([[1, 2], [3, 4]])
        5
        >>> trace([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        3
        """
    ''',
        "trace",
    )
    assert ("m", "rect") in rules(d)
    assert next(r for r in d.rules if r.kind == "rect").square
    assert d.contains(Input(([[7]],)))
    assert d.violations(Input(([[1, 2], [3]],))) == ["m is ragged (rows of 1..2); every example's m is rectangular"]
    assert d.violations(Input(([[1, 2, 3], [4, 5, 6]],))) == ["m is 2×3, not square; every example's m is square"]

    d = domain(
        '''
    def col_sums(grid):
        """
        >>> col_sums([[1, 2, 3], [4, 5, 6]])
        [5, 7, 9]
        """
    ''',
        "col_sums",
    )
    rect = next(r for r in d.rules if r.kind == "rect")
    assert not rect.square
    assert d.violations(Input(([[1, 2, 3], [4, 5, 6], [7, 8, 9]],))) == []
    assert d.violations(Input(([[1, 2], [3, 4], [5, 6]],))) == []  # not square, and need not be
    assert d.violations(Input(([[1], [4, 5]],))) == [
        "grid is ragged (rows of 1..2); every example's grid is rectangular"
    ]


def test_no_examples_no_domain_even_where_generation_guesses_from_names():
    src = '''
    def f(arr, n):
        """Sum of the first n items of arr."""
    '''
    t = target_for(textwrap.dedent(src), "f")
    d = Domain(t.spec, doctest_seeds(t.spec, t.module_source), infer_types)
    assert d.empty and d.evidence == ()
    assert d.violations(Input(([3, 1], -5))) == []
    # generation does constrain these from the names alone; the domain does not
    c = Constraints(t.spec, infer_types(t.spec, []), [])
    assert "n" in c.nonneg and "n" in c.len_of


def test_examples_that_do_not_constrain():
    # a negative number in an example; words (not a narrow alphabet); one sorted list only, though
    # the docstring says "sorted"
    d = domain('''
    def f(xs, word):
        """Given a sorted list.
        >>> f([-1, 2, 3], 'hello')
        1
        >>> f([4, 2], 'abc')
        0
        """
    ''')
    assert not any(r.param == "xs" for r in d.rules)
    assert not any(r.kind == "alphabet" for r in d.rules)
    assert d.contains(Input(([-9, 5, 1], "Zebra!")))

    d = domain('''
    def f(xs):
        """The docstring says sorted, one example cannot.
        >>> f([1, 2, 3])
        6
        """
    ''')
    assert not any(r.kind == "sorted" for r in d.rules)

    # one number is not enough to call a parameter non-negative (generation's rule too)
    d = domain(
        '''
    def make_a_pile(n):
        """
        >>> make_a_pile(3)
        [3, 5, 7]
        """
    ''',
        "make_a_pile",
    )
    assert d.evidence and d.empty
    assert d.contains(Input((-4,)))


def test_a_repeated_example_counts_once():
    # generation de-duplicates seeds, so one distinct list is not "sorted in every example"
    d = domain('''
    def f(xs):
        """
        >>> f([1, 2])
        3
        >>> f([1, 2])
        3
        """
    ''')
    assert len(d.evidence) == 1
    assert rules(d) == {("xs", "nonneg")}


def test_only_examples_are_evidence_and_expr_values_are_not_judged():
    t = target_for(textwrap.dedent(SUM_FIRST), "f")
    generated = generate_inputs(t.spec, 200, module_source=t.module_source)
    assert any(i.origin == "mutation" and any(x < 0 for x in i.args[0]) for i in generated)
    assert rules(Domain(t.spec, generated, infer_types)) == rules(
        Domain(t.spec, doctest_seeds(t.spec, t.module_source), infer_types)
    )
    # the mutants did not count as evidence: with them only, there is no domain
    assert Domain(t.spec, [i for i in generated if i.origin == "mutation"], infer_types).empty
    d = Domain(t.spec, generated, infer_types)
    assert d.violations(Input((Expr("list(range(-3, 0))"), 3))) == []


SPECS = [
    SUM_FIRST,
    '''
    def f(s: str, k: int):
        """
        >>> f('0110', 2)
        1
        >>> f('1', 0)
        0
        """
    ''',
    '''
    def f(grid, rows, cols):
        """
        >>> f([[1, 2], [3, 4]], 2, 2)
        10
        >>> f([[0, 5, 1]], 1, 3)
        6
        """
    ''',
    '''
    def f(a, b):
        """
        >>> f([3, 1, 2], 'xyz')
        0
        >>> f([], '')
        0
        """
    ''',
]


@pytest.mark.parametrize("src", SPECS)
def test_every_rule_is_one_generation_learns_too(src):
    t = target_for(textwrap.dedent(src), "f")
    d = Domain(t.spec, doctest_seeds(t.spec, t.module_source), infer_types)
    c = Constraints(t.spec, infer_types(t.spec, list(d.evidence)), list(d.evidence))
    assert d.rules
    for r in d.rules:
        learned = {"nonneg": c.nonneg, "alphabet": c.alphabet, "sorted": c.sorted, "rect": c.rect, "len": c.len_of}[
            r.kind
        ]
        assert r.param in learned, r
        if r.kind == "len":
            assert c.len_of[r.param][0] == r.other
        if r.kind == "alphabet":
            assert c.alphabet[r.param][1] == r.chars
        if r.kind == "rect":
            assert c.rect[r.param][1] == r.square


LEAP = '''
def f(year):
    """Whether year is a leap year.
    >>> f(2024)
    True
    >>> f(1900)
    False
    """
'''


def test_toward_examples_gives_round_numbers_near_the_examples():
    d = domain(LEAP)
    assert [inp.args for inp in near_examples(d, Input((0,)))][:3] == [(2000,), (1900,), (2020,)]
    assert near_examples(d, Input((1999,))) == []  # already like the examples'


def test_toward_examples_on_negative_numbers_and_floats():
    below = domain('''
def f(t):
    """Freezing below zero.
    >>> f(-40)
    True
    >>> f(-12)
    True
    """
''')
    assert below.bands == {"t": (-80, -6.0)}
    got = [inp.args[0] for inp in near_examples(below, Input((0,)))]
    assert got and all(isinstance(v, int) and -80 <= v <= -6 for v in got) and got[0] == -40 and -12 in got
    floats = domain('''
def f(x):
    """Scale.
    >>> f(2.75)
    5.5
    >>> f(10.5)
    21.0
    """
''')
    got = [inp.args[0] for inp in near_examples(floats, Input((0.0,)))]
    assert got and all(isinstance(v, float) for v in got)
    assert {10.0, 2.75, 3.0, 10.5} <= set(got) and got[0] == 10.0  # the roundest first
    assert [inp.args[0] for inp in near_examples(floats, Input((0,)))][:1] == [10]  # an int stays an int
    mixed = domain('''
def f(x):
    """
    >>> f(-3)
    3
    >>> f(4)
    4
    """
''')
    assert mixed.bands == {} and near_examples(mixed, Input((0,))) == []


INTERVALS = '''
def f(intervals):
    """Merge overlapping intervals.
    >>> f([(1, 3), (2, 6), (8, 10)])
    [(1, 6), (8, 10)]
    """
'''


def test_pairs_out_of_order_cross_what_the_examples_show():
    d = domain(INTERVALS)
    assert d.ordered_pairs == {"intervals"}
    assert d.crossed(Input(([(7, 7), (0, 0), (1, 3)],))) == []
    [why] = d.crossed(Input(([(1, 0), (0, 0)],)))
    assert "(1, 0)" in why and "out of order" in why
    assert d.contains(Input(([(1, 0), (0, 0)],)))  # not a rule: the verdict's domain is unchanged
    assert domain(SUM_FIRST).crossed(Input(([2, 1], 2))) == []
