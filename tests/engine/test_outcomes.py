"""Outcomes: canonical forms, the design's equality, grouping, labels, display."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import fractions
import json
import math
import sys

import numpy as np
import pytest

from coherence.engine.canonical_text import render_canonical
from coherence.engine.outcomes import (
    Outcome,
    canonical,
    group_outcomes,
    label_matrix,
    outcomes_equal,
)


def ok(value, mutated=None) -> Outcome:
    return Outcome.returned(canonical(value), None if mutated is None else canonical(mutated))


def err(name: str) -> Outcome:
    return Outcome.raised(name)


@dataclasses.dataclass
class Point:
    x: int
    y: float


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __repr__(self):  # informative repr: shown as such
        return f"Slotted({self.a}, {self.b})"


# ---------------------------------------------------------------------------------------------
# canonical forms


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, ["N"]),
        (True, ["B", True]),
        (3, ["I", "3"]),
        (10**40, ["I", str(10**40)]),
        (1.5, ["F", 1.5]),
        (float("nan"), ["F", "nan"]),
        (float("-inf"), ["F", "-inf"]),
        (complex(1, -2), ["C", 1.0, -2.0]),
        ("é", ["S", "é"]),
        (b"\x00a", ["Y", "0061"]),
        (bytearray(b"a"), ["Y", "61"]),
        ([1, "a"], ["L", [["I", "1"], ["S", "a"]]]),
        ((1,), ["T", [["I", "1"]]]),
        (fractions.Fraction(1, 4), ["F", 0.25]),
        (decimal.Decimal("2.5"), ["F", 2.5]),
    ],
)
def test_canonical_scalars_and_containers(value, expected):
    assert canonical(value) == expected


def test_canonical_sets_and_dicts_are_order_free():
    assert canonical({3, 1, 2}) == canonical({2, 3, 1})
    assert canonical({"b": 1, "a": 2}) == canonical({"a": 2, "b": 1})
    assert canonical(frozenset()) == ["E", []]
    assert canonical(collections.Counter("aab"))[0] == "D"


def test_canonical_objects():
    assert canonical(Point(1, 2.0)) == ["O", "Point", ["D", [[["S", "x"], ["I", "1"]], [["S", "y"], ["F", 2.0]]]]]
    assert canonical(Color.RED) == ["R", "Color", "<Color.RED: 1>"]
    assert canonical(datetime.date(2024, 2, 28)) == ["R", "date", "datetime.date(2024, 2, 28)"]
    assert canonical(collections.namedtuple("N", "a b")(1, 2)) == ["T", [["I", "1"], ["I", "2"]]]
    assert canonical(Slotted(1, 2)) == ["R", "Slotted", "Slotted(1, 2)"]
    assert canonical(np.array([[1, 2], [3, 4]])) == canonical([[1, 2], [3, 4]])
    assert canonical(np.float64(0.5)) == ["F", 0.5]
    assert canonical(np.int64(7)) == ["I", "7"]
    # unrepresentable: type name plus a stable digest (no memory addresses)
    a, b = canonical(object()), canonical(object())
    assert a[0] == "X" and a == b


def test_canonical_cycles_depth_and_size():
    xs: list = [1]
    xs.append(xs)
    assert canonical(xs) == ["L", [["I", "1"], ["CYCLE"]]]
    big = canonical(list(range(100_000)))
    assert big[0] == "Z" and big[1] == "list"
    assert canonical(list(range(100_000))) == big  # stable digest
    deep: list = []
    cur = deep
    for _ in range(500):
        cur.append([])
        cur = cur[0]
    assert "Z" in json.dumps(canonical(deep))
    assert len(json.dumps(canonical("x" * 100_000))) < 200


def test_values_with_more_big_int_digits_than_fit_are_digested_in_hex():
    """Such a value becomes a "Z" in any case; its digest comes from the ints in hex, so it is
    told apart from other values without writing the ints in decimal, which is quadratic and
    which Python refuses past ``sys.get_int_max_str_digits()`` (lowered here to show that)."""
    if not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("no int_max_str_digits on this interpreter")
    # ascending, as a function building them makes them: 700! has 1689 digits, but the ints
    # before it are already too long to show in all
    factorials = [math.factorial(i) for i in range(2, 700)]
    changed = factorials[:-1] + [factorials[-1] + 1]
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        value = canonical(factorials)
        assert value[:2] == ["Z", "list"]
        assert canonical(list(factorials)) == value
        assert canonical(changed)[:2] == ["Z", "list"] and canonical(changed) != value
        # a set's digest does not depend on the order it was built in (its items are visited
        # in hash order, so these stay under 640 digits each)
        small = factorials[:288]
        assert canonical(set(small)) == canonical(set(reversed(small)))  # noqa: C414 - the insertion order is what varies
        assert canonical(set(small)) != canonical(set(small[:-1] + [small[-1] + 1]))
    finally:
        sys.set_int_max_str_digits(limit)
    # a few big ints that fit are written out as before
    assert canonical([math.factorial(30)]) == ["L", [["I", str(math.factorial(30))]]]


def test_sets_and_dicts_too_big_to_canonicalize_digest_the_same_in_any_order():
    """Past MAX_NODES a value is digested, not canonicalized; equal sets and dicts built in
    different orders (whose reprs differ) still give one digest."""
    words = [f"w{i}" for i in range(250_000)]
    for build in (set, frozenset, lambda ws: {w: len(w) for w in ws}, lambda ws: collections.Counter(ws)):
        value = canonical(build(words))
        assert value[:2] == ["Z", type(build(words[:1])).__name__]
        assert canonical(build(list(reversed(words)))) == value
        assert canonical(build(words[:-1] + ["other"])) != value
    # a dict's values count, not only its keys
    assert canonical(dict.fromkeys(words, 0)) != canonical(dict.fromkeys(words, 1))


@pytest.mark.slow  # large input; the test above covers the digest smaller
def test_sets_inside_a_value_too_big_to_canonicalize_digest_the_same_in_any_order():
    """The order-free digest reaches sets and dicts at any depth: a long list of sets (or of
    tuples holding dicts) that two programs built in different orders is one value."""
    assert repr({8, 16}) != repr({16, 8})  # 8 and 16 share a slot: the first one in comes first
    forward = [{8, 16} for _ in range(120_000)]
    backward = [{16, 8} for _ in range(120_000)]
    value = canonical(forward)
    assert value[:2] == ["Z", "list"]
    assert canonical(backward) == value
    assert canonical(forward[:-1] + [{8, 17}]) != value
    pairs = [(i, {8: "a", 16: "b"}) for i in range(70_000)]
    flipped = [(i, {16: "b", 8: "a"}) for i in range(70_000)]
    assert canonical(pairs)[:2] == ["Z", "list"]
    assert canonical(flipped) == canonical(pairs)
    assert canonical(pairs[:-1] + [(69_999, {8: "a", 16: "c"})]) != canonical(pairs)
    # a list of plain values keeps its order, as lists do
    numbers = list(range(250_000))
    assert canonical(numbers) != canonical(numbers[::-1])
    # a string that holds a brace takes the walk and still digests by what it is
    braces = ["{x}"] * 250_000
    assert canonical(braces) == canonical(list(braces)) != canonical(["{y}"] * 250_000)


def test_canonical_never_raises_on_hostile_objects():
    class Evil:
        __slots__ = ()

        def __repr__(self):
            raise RuntimeError("no")

    class Weird:
        def __init__(self):
            self.f = lambda: 1

        def __eq__(self, other):
            raise TypeError

    assert canonical(Evil())[0] == "X"
    assert canonical(Weird())[0] == "O"


# ---------------------------------------------------------------------------------------------
# equality


def test_numbers_by_value_with_tolerance():
    assert outcomes_equal(ok(2), ok(2.0))
    assert outcomes_equal(ok(0.1 + 0.2), ok(0.3))
    assert outcomes_equal(ok(1e-12), ok(0.0))  # abs_tol
    assert not outcomes_equal(ok(1.0), ok(1.001))
    assert outcomes_equal(ok(float("nan")), ok(float("nan")))
    assert outcomes_equal(ok(float("inf")), ok(float("inf")))
    assert not outcomes_equal(ok(float("inf")), ok(float("-inf")))
    assert not outcomes_equal(ok(10**30), ok(10**30 + 1))  # big ints exact
    assert not outcomes_equal(ok(True), ok(1))  # bool distinct from int
    assert not outcomes_equal(ok(0), ok(False))
    assert outcomes_equal(ok(complex(1, 2)), ok(complex(1, 2 + 1e-12)))


def test_containers():
    assert outcomes_equal(ok([1, 2.0]), ok([1.0, 2]))
    assert not outcomes_equal(ok([1, 2]), ok([2, 1]))
    assert not outcomes_equal(ok([1, 2]), ok((1, 2)))
    assert outcomes_equal(ok({0.1 + 0.2, 5.0}), ok({0.3, 5.0}))
    assert outcomes_equal(ok({2, 1}), ok({1.0, 2.0}))
    assert outcomes_equal(ok({"a": 0.1 + 0.2}), ok({"a": 0.3}))
    assert not outcomes_equal(ok({"a": 1}), ok({"a": 1, "b": 2}))
    assert outcomes_equal(ok(Point(1, 0.1 + 0.2)), ok(Point(1, 0.3)))
    assert not outcomes_equal(ok("a"), ok("A"))
    assert not outcomes_equal(ok(b"a"), ok("a"))


def test_raise_and_mutation():
    assert outcomes_equal(err("ValueError"), err("ValueError"))
    assert not outcomes_equal(err("ValueError"), err("TypeError"))
    assert not outcomes_equal(err("ValueError"), ok(None))
    assert not outcomes_equal(ok(None, mutated=([1],)), ok(None))
    assert outcomes_equal(ok(None, mutated=([0.1 + 0.2],)), ok(None, mutated=([0.3],)))
    assert not outcomes_equal(ok(None, mutated=([1],)), ok(None, mutated=([2],)))


def test_key_hash_and_from_record():
    a = ok([1, 2])
    b = Outcome.from_key(a.key)
    assert a == b and hash(a) == hash(b) and a.key == b.key
    assert Outcome.from_record({"kind": "raise", "error": "Timeout"}) == err("Timeout")
    assert Outcome.from_record({"k": "ok", "v": ["I", "1"]}) == ok(1)
    assert Outcome.from_record(["ok", ["N"], None, None]) == ok(None)
    assert ok(2) != ok(2.0)  # == is exact; outcomes_equal is the tolerant one
    with pytest.raises(ValueError):
        Outcome.from_record({"kind": "maybe"})


# ---------------------------------------------------------------------------------------------
# grouping and labels


def test_group_outcomes_first_appearance_and_tolerance():
    outs = [err("ValueError"), ok(1), ok(1.0000000001), ok(2), err("ValueError"), ok(1)]
    assert group_outcomes(outs) == [0, 1, 1, 2, 0, 1]
    assert group_outcomes([ok(1)] * 4) == [0, 0, 0, 0]
    assert group_outcomes([]) == []
    # closed transitively through a chain of near-equal floats
    chain = [ok(1.0), ok(1.0 + 0.9e-6), ok(1.0 + 1.8e-6)]
    assert group_outcomes(chain) == [0, 0, 0]


def test_label_matrix():
    matrix = [
        [ok(1), ok(2), err("KeyError")],
        [ok(1.0), ok(3), err("KeyError")],
        [ok(5), ok(2), ok(None)],
    ]
    labels = label_matrix(matrix)
    assert labels.dtype == np.int32 and labels.shape == (3, 3)
    assert labels[:, 0].tolist() == [0, 0, 1]
    assert labels[:, 1].tolist() == [0, 1, 0]
    assert labels[:, 2].tolist() == [0, 0, 1]
    assert label_matrix([]).shape == (0, 0)


def test_label_matrix_is_group_outcomes_per_column_on_random_matrices():
    """label_matrix labels whole matrices in numpy; it must equal the per-column definition, with
    equal outcomes as shared or separate objects, and near-equal floats closed transitively."""
    import random

    values = [1, 2, 1.0, 1.0 + 0.9e-6, 1.0 + 1.8e-6, 1.5, "a", [1.0], [1.0 + 1e-12], None, (1, 2), {1, 2}]
    shared = [ok(v) for v in values] + [err("ValueError"), err("TypeError"), ok(None, [3])]
    rng = random.Random(7)
    for _ in range(200):
        m, n = rng.randint(1, 12), rng.randint(1, 40)
        matrix = []
        for _ in range(m):
            row = []
            for _ in range(n):
                k = rng.randrange(len(shared))
                # a fresh object with the same key, as when outcomes come from different runs
                row.append(
                    shared[k]
                    if rng.random() < 0.6
                    else Outcome.from_record([shared[k].kind, shared[k].value, shared[k].mutated, shared[k].error])
                )
            matrix.append(row)
        expected = np.array([group_outcomes(col) for col in zip(*matrix)], dtype=np.int32).T
        assert (label_matrix(matrix) == expected).all()


# ---------------------------------------------------------------------------------------------
# display


@pytest.mark.parametrize(
    "value, text",
    [
        ([1, 2], "[1, 2]"),
        ("abc", "'abc'"),
        ({2, 1}, "{1, 2}"),
        (set(), "set()"),
        ((1,), "(1,)"),
        ({"a": None}, "{'a': None}"),
        (Point(1, 2.5), "Point(x=1, y=2.5)"),
        (float("nan"), "nan"),
        (b"x", "b'x'"),
        (complex(0, 1), "1j"),
        (Color.RED, "<Color.RED: 1>"),
    ],
)
def test_render(value, text):
    assert ok(value).render() == text


def test_render_raise_mutation_and_truncation():
    assert err("ValueError").render() == "raises ValueError"
    assert ok(None, mutated=([1, 2],)).render() == "None (and changes its argument to [1, 2])"
    assert "arguments to [1], 2" in ok(None, mutated=([1], 2)).render()
    long = ok(list(range(1000))).render(40)
    assert len(long) == 40 and long.endswith("…")
    assert render_canonical(["Z", "list", "abc"]) == "<list, too large to show>"
    assert math.isnan(float(ok(float("nan")).render()))


def test_a_lazy_outcome_says_it_changed_nothing_without_decoding_its_value():
    """``mutated`` of an outcome whose key ends in two nulls is None without reading the return
    value (the verdict asks it of thousands of long lists); the value stays readable."""
    value = canonical([[i] for i in range(300)])
    big = Outcome.from_valid_key('["ok",' + json.dumps(value) + ",null,null]")
    assert big.mutated is None
    assert big.value == value
    # (not valid JSON past its head: asking ``mutated`` would fail if it decoded it)
    assert Outcome.from_valid_key('["ok",["L",[ not decoded ]],null,null]').mutated is None
    changed = Outcome.from_valid_key('["ok",["N"],' + json.dumps(canonical(([1],))) + ",null]")
    assert changed.mutated == canonical(([1],)) and changed.value == canonical(None)
