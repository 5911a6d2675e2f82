"""The worker's fast paths for flat values must agree exactly with its general canonicalizer:
one program's result may take the fast path and another's the general one, and equal values
must still get byte-identical outcome keys."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import coherence.engine.execution as execution

_spec = importlib.util.spec_from_file_location("coherence_worker_under_test", Path(execution.__file__).with_name("worker.py"))
worker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(worker)

CANON, DUMP = worker.make_canonicalizer()
SNAPSHOT = worker._snapshotter(CANON)

LIM = 1 << 62
ints = st.one_of(st.integers(-5, 5), st.integers(), st.sampled_from([LIM - 1, LIM, -LIM, -LIM + 1, 10**30]))
texts = st.text(alphabet=st.characters(codec=None), max_size=6) | st.sampled_from(["", '"', "\\", "\x00", "\ud800", "é", "😀"])
floats = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(ints, texts, st.booleans(), floats, st.none())
flat = st.one_of(st.lists(ints, max_size=8), st.lists(texts, max_size=8), st.lists(scalars, max_size=8))
nested = st.lists(st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=5)


@settings(max_examples=400, deadline=None)
@given(flat, st.booleans())
def test_flat_sequences_get_the_canonical_key(values, as_tuple):
    r = tuple(values) if as_tuple else values
    fast = worker._flat_seq(r, type(r))
    if fast is not None:
        assert fast == DUMP(CANON(r), r).encode("ascii")


def test_the_fast_path_is_taken_for_plain_lists():
    assert worker._flat_seq([1, 2, 3], list) == b'["L",[["I","1"],["I","2"],["I","3"]]]'
    assert worker._flat_seq(("a", "\u00e9"), tuple) == b'["T",[["S","a"],["S","\\u00e9"]]]'
    assert worker._flat_seq([1, "a"], list) is None  # mixed: the general path
    assert worker._flat_seq([LIM], list) is None  # big ints: the general path


@settings(max_examples=400, deadline=None)
@given(st.one_of(flat, nested), st.one_of(flat, nested))
def test_equal_argument_fingerprints_mean_equal_canonical_arguments(a, b):
    if SNAPSHOT((a,)) == SNAPSHOT((b,)):
        assert CANON((a,), False) == CANON((b,), False)


def test_a_change_in_place_changes_the_fingerprint():
    xs = [3, 1, 2]
    before = SNAPSHOT((xs, 5))
    xs.sort()
    assert SNAPSHOT((xs, 5)) != before
    ys = [[1], [2]]  # nested: the general canonical structure is the fingerprint
    before = SNAPSHOT((ys,))
    ys[0].append(0)
    assert SNAPSHOT((ys,)) != before
