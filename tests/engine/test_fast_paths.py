"""The worker's fast paths for flat values must agree exactly with its general canonicalizer:
one program's result may take the fast path and another's the general one, and equal values
must still get byte-identical outcome keys."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coherence.engine.execution.coherence_worker import flat as paths
from coherence.engine.execution.coherence_worker.canon import make_canonicalizer

CANON, DUMP = make_canonicalizer()

LIM = 1 << 62
ints = st.one_of(st.integers(-5, 5), st.integers(), st.sampled_from([LIM - 1, LIM, -LIM, -LIM + 1, 10**30]))
texts = st.text(alphabet=st.characters(codec=None), max_size=6) | st.sampled_from(
    ["", '"', "\\", "\x00", "\ud800", "é", "😀"]
)
floats = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(ints, texts, st.booleans(), floats, st.none())
flat = st.one_of(st.lists(ints, max_size=8), st.lists(texts, max_size=8), st.lists(scalars, max_size=8))
nested = st.lists(st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=5)


@settings(max_examples=400, deadline=None)
@given(flat, st.booleans())
def test_flat_sequences_get_the_canonical_key(values, as_tuple):
    r = tuple(values) if as_tuple else values
    fast = paths.flat_seq(r, type(r))
    if fast is not None:
        assert fast == DUMP(CANON(r), r).encode("ascii")


def test_the_fast_path_is_taken_for_plain_lists():
    assert paths.flat_seq([1, 2, 3], list) == b'["L",[["I","1"],["I","2"],["I","3"]]]'
    assert paths.flat_seq(("a", "\u00e9"), tuple) == b'["T",[["S","a"],["S","\\u00e9"]]]'
    assert paths.flat_seq([1, "a", None, True, 1.5], list) == b'["L",[["I","1"],["S","a"],["N"],["B",true],["F",1.5]]]'
    assert paths.flat_seq((), tuple) == b'["T",[]]' and paths.flat_seq([], list) == b'["L",[]]'
    assert paths.flat_seq([float("nan"), -float("inf")], list) == b'["L",[["F","nan"],["F","-inf"]]]'
    assert paths.flat_seq([LIM], list) is None  # big ints: the general path
    assert paths.flat_seq(["a", LIM], list) is None
    assert paths.flat_seq([1, [2]], list) == paths.tree_json([1, [2]])  # nested: the tree path


hashable = st.one_of(ints, texts, st.booleans(), floats, st.none())
maps = st.one_of(
    st.dictionaries(texts, ints, max_size=8),
    st.dictionaries(ints, st.lists(ints, max_size=2) | ints, max_size=6),  # a nested value: the general path
    st.dictionaries(hashable, scalars, max_size=8),
    st.lists(st.tuples(st.sampled_from([float("nan"), 1.0, True, "a"]), scalars), max_size=6).map(
        dict
    ),  # distinct NaN keys
)


@settings(max_examples=500, deadline=None)
@given(maps)
def test_flat_dicts_get_the_canonical_key(r):
    fast = paths.flat_map(r)
    if fast is not None:
        assert fast == DUMP(CANON(r), r).encode("ascii")


@settings(max_examples=400, deadline=None)
@given(st.sets(hashable, max_size=10), st.booleans())
def test_flat_sets_get_the_canonical_key(values, frozen):
    r = frozenset(values) if frozen else values
    fast = paths.flat_set(r)
    if fast is not None:
        assert fast == DUMP(CANON(r), r).encode("ascii")


def test_the_fast_path_is_taken_for_plain_dicts_and_sets():
    assert paths.flat_map({"b": 2, "a": 1}) == b'["D",[[["S","a"],["I","1"]],[["S","b"],["I","2"]]]]'
    assert paths.flat_map({}) == b'["D",[]]'
    assert paths.flat_map({10: "x", 9: None}) == b'["D",[[["I","10"],["S","x"]],[["I","9"],["N"]]]]'  # by key JSON
    assert paths.flat_map({"a": [1]}) == paths.tree_json({"a": [1]})  # nested: the tree path
    assert paths.flat_map({"a": {1, 2}}) is None  # a set inside: the general path
    assert paths.flat_map({"a": LIM}) is None  # big ints: the general path
    assert paths.flat_set({3, 1, 2}) == b'["E",[["I","1"],["I","2"],["I","3"]]]'
    assert paths.flat_set(frozenset({"b", "a"})) == b'["E",[["S","a"],["S","b"]]]'
    assert paths.flat_set({(1, 2)}) is None
    # two NaN keys both come out, in the order they were put in, as the general path keeps them
    nan1, nan2 = float("nan"), float("nan")
    r = {nan1: 2, nan2: 1}
    assert (
        paths.flat_map(r)
        == DUMP(CANON(r), r).encode("ascii")
        == b'["D",[[["F","nan"],["I","2"]],[["F","nan"],["I","1"]]]]'
    )


def _containers(inner):
    """Lists, tuples and dicts of ``inner``: the shapes the tree paths copy and write."""
    return (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(hashable, inner, max_size=3)
    )


nested_values = st.recursive(
    scalars,
    lambda inner: _containers(inner) | st.sets(hashable, max_size=3),  # a set inside: the general path
    max_leaves=16,
)


@settings(max_examples=800, deadline=None)
@given(nested_values)
def test_nested_values_get_the_canonical_key(r):
    fast = paths.tree_json(r)
    if fast is not None:
        assert fast == DUMP(CANON(r), r).encode("ascii")


def test_the_tree_path_is_taken_for_nested_values():
    grid = [[1, 2], [3, 4]]
    assert paths.tree_json(grid) == b'["L",[["L",[["I","1"],["I","2"]]],["L",[["I","3"],["I","4"]]]]]'
    pairs = [(0, "a"), (2, None)]
    assert paths.tree_json(pairs) == DUMP(CANON(pairs), pairs).encode("ascii")
    groups = {"b": [2], "a": [1, 1.5], 3: {"x": ()}}
    assert paths.tree_json(groups) == DUMP(CANON(groups), groups).encode("ascii")
    assert paths.tree_json([[LIM]]) is None  # big ints: the general path
    assert paths.tree_json([{1, 2}]) is None and paths.tree_json({(1, 2): 3}) is None
    deep: list = []
    for _ in range(40):
        deep = [deep]
    assert paths.tree_json(deep) is None  # past the depth: the general path and its caps
    loop: list = []
    loop.append(loop)
    assert paths.tree_json(loop) is None
    wide = [["x" * 100] for _ in range(200)]  # past the size cap: the general path's digest
    assert paths.tree_json(wide) is None and DUMP(CANON(wide), wide).startswith('["Z"')


TAKE, CHANGED = paths.snapshotter(CANON, DUMP)


def key(argv) -> bytes:
    """What the general path records for changed arguments: the JSON of their canonical structure."""
    return DUMP(CANON(argv, False), argv).encode("ascii")


def _edit(value, how: int):
    """An in-place change of ``value`` (or none), some of which leave its canonical form as it was."""
    if not isinstance(value, list) or not value:
        return
    if how == 1:
        value.append(value[0])
    elif how == 2:
        value.reverse()
    elif how == 3:
        value[0] = value[0]  # the same object back: no change
    elif how == 4:
        x = value[0]  # an equal value, often a new object (big ints, floats, strings)
        value[0] = (
            int(str(x))
            if type(x) is int
            else float(repr(x))
            if type(x) is float
            else x[:] + ""
            if type(x) is str
            else x
        )
    elif how == 5:
        del value[-1]
    elif how == 6 and isinstance(value[0], list):
        value[0].append(1)  # nested: the general path
    elif how == 7:
        value[0] = -0.0 if value[0] == 0 else 0


@settings(max_examples=600, deadline=None)
@given(st.one_of(flat, nested), scalars, st.integers(0, 7))
def test_a_call_changed_its_arguments_exactly_when_their_canonical_form_changed(a, b, how):
    assert_change_seen((a, b), lambda: _edit(a, how))


def assert_change_seen(argv: tuple, edit) -> None:
    """Snapshot ``argv``, make ``edit`` in place, and hold the snapshot's verdict to the general
    path's: None when the canonical form is unchanged, else the changed arguments' key."""
    expected_before = CANON(argv, False)
    before = TAKE(argv)
    edit()
    after = CHANGED(before, argv)
    if CANON(argv, False) == expected_before:
        assert after is None
    else:
        assert after == key(argv)


def test_flat_arguments_are_compared_by_identity_not_canonicalized():
    xs = [3, 1, 2]
    before = TAKE((xs, 5, (1, 2)))
    assert type(before) is tuple and before[0] == [3, 1, 2] and before[0] is not xs
    assert CHANGED(before, (xs, 5, (1, 2))) is None
    xs.sort()
    assert (
        CHANGED(before, (xs, 5, (1, 2)))
        == key(([1, 2, 3], 5, (1, 2)))
        == b'["T",[["L",[["I","1"],["I","2"],["I","3"]]],["I","5"],["T",[["I","1"],["I","2"]]]]]'
    )
    big = [10**30]
    before = TAKE((big,))
    big[0] = int(str(10**30))  # a new object of the same value: no change
    assert big[0] is not before[0][0] and CHANGED(before, (big,)) is None
    ys = [[1], [2]]  # nested: copied as a tree, not canonicalized
    before = TAKE((ys,))
    assert type(before) is not list and before[0] == ys and before[0][0] is not ys[0]
    assert CHANGED(before, (ys,)) is None
    ys[0].append(0)
    assert CHANGED(before, (ys,)) == key(([[1, 0], [2]],))


trees = st.recursive(scalars, _containers, max_leaves=12)


def _edit_tree(value, how: int, rng) -> None:
    """An in-place change somewhere in ``value`` (or none), some of which leave its canonical
    form as it was: the containers a tree snapshot copies, at any depth."""
    mutable = []

    def walk(v):
        if type(v) in (list, dict):
            mutable.append(v)
        if type(v) in (list, tuple):
            for x in v:
                walk(x)
        elif type(v) is dict:
            for x in v.values():
                walk(x)

    walk(value)
    if not mutable:
        return
    v = mutable[rng.randrange(len(mutable))]
    if type(v) is dict:
        if not v:
            v[0] = 0
        elif how == 0:
            k = next(iter(v))
            v[k] = v.pop(k)  # the same items in another order: no change
        elif how == 1:
            k = next(iter(v))
            v[k] = [v[k]]
        elif how == 2:
            del v[next(iter(v))]
        elif how == 3 and 1 in v:
            x = v.pop(1)
            v[True] = x  # an equal key of another type: a change
    elif v:
        if how == 0:
            v[0] = v[0]  # the same object back: no change
        elif how == 1:
            v.append(v[0])
        elif how == 2:
            v.reverse()
        elif how == 3:
            x = v[0]
            v[0] = int(str(x)) if type(x) is int else x  # an equal value, often a new object


@settings(max_examples=800, deadline=None)
@given(trees, st.dictionaries(texts, trees, max_size=2), st.integers(0, 3), st.randoms(use_true_random=False))
def test_nested_arguments_changed_exactly_when_their_canonical_form_changed(a, kwargs, how, rng):
    target = a if rng.random() < 0.7 or not kwargs else kwargs
    assert_change_seen((a, kwargs) if kwargs else (a,), lambda: _edit_tree(target, how, rng))


def test_shared_and_cyclic_arguments_keep_their_meaning():
    x = [1]
    shared = [x, x]  # one list twice: a change through one place shows in both
    before = TAKE((shared,))
    assert CHANGED(before, (shared,)) is None
    x.append(2)
    assert CHANGED(before, (shared,)) == key(([[1, 2], [1, 2]],))
    loop: list = [1]
    loop.append(loop)  # no tree: the general path and its cycle marker
    before = TAKE((loop,))
    assert type(before) is list
    assert CHANGED(before, (loop,)) is None
    loop[0] = 2
    assert CHANGED(before, (loop,)) == key((loop,))
    grid = [[0] * 4 for _ in range(3)]
    record = {"name": "a", "tags": ["x", "y"], "size": (1, 2)}
    before = TAKE((grid, record))
    assert CHANGED(before, (grid, record)) is None
    record["tags"].sort(reverse=True)
    assert CHANGED(before, (grid, record)) == key((grid, record))
    flags = {1: "a"}
    before = TAKE((flags,))
    flags[True] = flags.pop(1)  # an equal key of another type, the value the same object
    assert CHANGED(before, (flags,)) == key(({True: "a"},)) != key(({1: "a"},))


def test_a_changed_flat_argument_is_recorded_without_the_general_path():
    xs = ["b", 1.5, None, "a"]
    before = TAKE((xs, "k"))
    xs.reverse()
    assert paths.flat_args((xs, "k")) == key((xs, "k"))
    assert CHANGED(before, (xs, "k")) == key((["a", None, 1.5, "b"], "k"))
    big = [1 << 70]  # beyond the fast path: the general one
    before = TAKE((big,))
    big.append(1)
    assert paths.flat_args((big,)) is None and CHANGED(before, (big,)) == key(([1 << 70, 1],))
