"""Preconditions: phrases LLM docstrings use become assumptions, and the interpreter that judges
them runs nothing but a small whitelisted subset of expressions."""

import pytest

from coherence.engine.stated.docstring_preconditions import stated_assumptions
from coherence.engine.stated.preconditions import assumption, holds

CASES = [
    ("Clamp x into [lo, hi]. Assumes lo <= hi.", {"x": "int", "lo": "int", "hi": "int"}, ["lo <= hi"]),
    ("Return the median of a non-empty list.", {"xs": "list"}, ["len(xs) > 0"]),
    (
        "Given an array arr of integers.\n\nConstraints:\n    1 <= len(arr) <= 100\n    0 <= k <= len(arr)",
        {"arr": "list", "k": "int"},
        ["1 <= len(arr) <= 100", "0 <= k <= len(arr)"],
    ),
    (
        "You may assume that the given string contains English letter only.",
        {"word": "str"},
        ["all(c.isalpha() for c in word)"],
    ),
    (
        "you may assume the input string contains only letters and spaces.",
        {"s": "str"},
        ["all(c.isalpha() or c == ' ' for c in s)"],
    ),
    (
        "Given a sorted list of distinct integers nums, find target.",
        {"nums": "list", "target": "int"},
        ["list(nums) == sorted(nums)", "len(set(nums)) == len(nums)"],
    ),
    (
        "Args:\n    n (int): a positive integer\n    s: the string, only lowercase letters",
        {"n": "int", "s": "str"},
        ["n > 0", "all(c.isalpha() and c.islower() for c in s)"],
    ),
    ("Note: 1 <= n <= 10^4", {"n": "int"}, ["1 <= n <= 10**4"]),
    ("* 1 <= grid.length <= 10^2", {"grid": "list"}, ["1 <= len(grid) <= 10**2"]),
    ("The date string is not empty.", {"date": "str"}, ["len(date) > 0"]),
    # HumanEval/21: rescale_to_unit([0.0]) is no counterexample
    (
        "Given list of numbers (of at least two elements), apply a linear transform to that list",
        {"numbers": "list"},
        ["len(numbers) >= 2"],
    ),
    ("xs: a list, guaranteed to hold at least 3 integers.", {"xs": "list"}, ["len(xs) >= 3"]),
    ("Assume n > 1 and is not a prime.", {"n": "int"}, ["n > 1"]),
    ("0 ≤ N ≤ 10000.", {"N": "int"}, ["0 <= N <= 10000"]),
    # the same preconditions in words, as LLM docstrings also write them
    ("Return the median. The list must not be empty.", {"xs": "list"}, ["len(xs) > 0"]),
    ("The input list is guaranteed to be non-empty.", {"nums": "list"}, ["len(nums) > 0"]),
    (
        "Clamp x to the range. lo must be less than or equal to hi.",
        {"x": "int", "lo": "int", "hi": "int"},
        ["lo <= hi"],
    ),
    ("Return n!. n must be non-negative.", {"n": "int"}, ["n >= 0"]),
    ("Compute fib(n) for n >= 0.", {"n": "int"}, ["n >= 0"]),
    ("Divide a by b. b should not be zero.", {"a": "float", "b": "float"}, ["b != 0"]),
    ("Divide a by b (b != 0).", {"a": "int", "b": "int"}, ["b != 0"]),
    (
        "Return the kth smallest, where k is between 1 and len(arr).",
        {"arr": "list", "k": "int"},
        ["1 <= k <= len(arr)"],
    ),
    ("k must be at most the length of arr.", {"arr": "list", "k": "int"}, ["k <= len(arr)"]),
    ("You may assume all elements of nums are unique.", {"nums": "list"}, ["len(set(nums)) == len(nums)"]),
    ("numbers holds at least two distinct values.", {"numbers": "list"}, ["len(numbers) >= 2"]),
    ("n: int, must be > 0", {"n": "int"}, ["n > 0"]),
    ("Args:\n    k (int): how many, must be at least 1\n", {"k": "int"}, ["k >= 1"]),
    # a Raises section or clause: the inputs refused by design lie outside the domain
    ("Return the largest.\n\nRaises:\n    ValueError: If the list is empty.\n", {"xs": "list"}, ["len(xs) > 0"]),
    ("Raises ValueError if lo > hi or n is negative.", {"n": "int", "lo": "int", "hi": "int"}, ["lo <= hi", "n >= 0"]),
    ("If b is zero, raise a ZeroDivisionError.", {"a": "int", "b": "int"}, ["b != 0"]),
]


@pytest.mark.parametrize(("doc", "params", "expected"), CASES)
def test_stated_preconditions_are_read(doc, params, expected):
    got = [a.expr for a in stated_assumptions(doc, list(params), params)]
    assert got == expected


NOT_PRECONDITIONS = [
    ("Return True if a > b.", {"a": "int", "b": "int"}),
    ("Returns a sorted list of the unique elements.", {"l": "list"}),
    ("The function should return a list of strings in sorted order.", {"lst": "list"}),
    ("Find the minimum sum of any non-empty sub-array of nums.", {"nums": "list"}),
    ("If multiple strings have maximum number of unique characters, return the first.", {"words": "list"}),
    ("Return x if x > 0 else 0.", {"x": "int"}),
    # HumanEval/141: a rule the function checks, said of part of the input
    ("- The substring before the dot should not be empty.", {"file_name": "str"}),
    ("Count the elements of arr that are greater than x.", {"arr": "list", "x": "int"}),
    ("Return True if n is positive.", {"n": "int"}),
    ("Return -1 when k is greater than len(arr).", {"arr": "list", "k": "int"}),
    ("Raises OSError if the file cannot be read.", {"path": "str"}),
    ("The result must be positive.", {"n": "int"}),
    ("The result should be sorted in ascending order.", {"arr": "list"}),
    ("If n is negative, the answer is 0.", {"n": "int"}),
    ("When k is greater than len(arr), every element is kept.", {"arr": "list", "k": "int"}),
    ("At least one of a or b must be nonzero.", {"a": "int", "b": "int"}),
    ("Just like self.assertTrue(a < b), but with a nicer message.", {"a": "int", "b": "int"}),
    # one case of a definition, not a precondition (MBPP 448, Llama 4 Maverick's docstring)
    ("P(0) = 3, P(1) = 0, P(2) = 2, and P(n) = P(n-2) + P(n-3) for n > 2.", {"n": "int"}),
    ("fib(n) = fib(n - 1) + fib(n - 2) for n >= 2", {"n": "int"}),
]


@pytest.mark.parametrize(("doc", "params"), NOT_PRECONDITIONS)
def test_what_a_sentence_says_of_the_result_is_no_precondition(doc, params):
    assert stated_assumptions(doc, list(params), params) == []


def test_holds_judges_values():
    a = assumption("lo <= hi", "test")
    assert holds(a, {"lo": 0, "hi": 1}) is True
    assert holds(a, {"lo": 2, "hi": 1}) is False
    assert holds("len(xs) > 0", {"xs": []}) is False
    assert holds("len(xs) > 0", {"xs": 5}) is False  # the wrong type: not what it was meant for
    assert holds("all(c.isalpha() for c in s)", {"s": "ab"}) is True
    assert holds("lo <= hi", {"lo": 1}) is None  # a name without a value: unknown
    assert holds("list(xs) == sorted(xs)", {"xs": [1, 3, 2]}) is False


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os').system('touch /tmp/pwned')",
        "x.__class__.__bases__",
        "open(x)",
        "(lambda: 1)()",
        "getattr(x, 'y')",
        "[c for c in x].__len__()",
        "x.format(1)",
    ],
)
def test_nothing_but_the_whitelist_is_accepted(expr):
    assert assumption(expr, "test") is None
    assert holds(expr, {"x": "abc"}) is None


def test_the_interpreter_is_bounded():
    # an exponent or a sequence that would take the process down is undecided, not computed
    assert holds("10 ** 10 ** 10 > x", {"x": 1}) is None
    assert holds("len(x * 10**9) > 0", {"x": "ab"}) is None
    assert holds("all(c.isalpha() for c in x)", {"x": "a" * 10**6}) is None


def test_a_docstring_with_a_huge_word_is_read_without_hanging():
    # a 20,000-letter word made every pattern try a name at each of its letters: 23 s for one
    # docstring (so for one check, in the server) before words were bounded
    import threading

    docs = [("x" * 20_000) + " must be at least 3. n must be at least 3.", "k is between 1 and " * 5_000]
    got: list = []
    worker = threading.Thread(
        target=lambda: got.extend(stated_assumptions(d, ["n", "k"], {"n": "int", "k": "int"}) for d in docs),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "reading the docstrings hung"
    assert [a.expr for a in got[0]] == ["n >= 3"]
