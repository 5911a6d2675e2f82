"""Records from a worker: what is accepted on the text alone, and the lazy outcomes it makes."""

from __future__ import annotations

import gc
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coherence.engine.execution.records import FORGED, _text_ok, outcome_from_record, valid_canonical
from coherence.engine.outcomes import Outcome, canonical, group_outcomes, outcomes_equal


def _key(value, mutated=None) -> str:
    return json.dumps(["ok", value, mutated, None], separators=(",", ":"))


def _decoding_accepts(text: str) -> bool:
    """The reference: decode the record and walk it."""
    try:
        rec = json.loads(text)
        o = Outcome.from_record(rec)
    except Exception:
        return False
    if o.kind == "raise":
        return isinstance(o.error, str) and 0 < len(o.error) <= 300
    return valid_canonical(o.value) and (o.mutated is None or valid_canonical(o.mutated))


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.binary(max_size=6)
    | st.complex_numbers(max_magnitude=1e6)
)
_hashable = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6), lambda c: st.tuples(c, c), max_leaves=4
)
_values = st.recursive(
    _scalars,
    lambda c: (
        st.lists(c, max_size=5)
        | st.tuples(c, c)
        | st.frozensets(_hashable, max_size=4)
        | st.dictionaries(_hashable, c, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values, st.none() | _values)
def test_records_of_real_values_are_accepted_on_their_text_and_decode_to_the_same_outcome(value, changed):
    key = _key(canonical(value), None if changed is None else canonical(changed))
    assert _text_ok(key)
    lazy = outcome_from_record(key.encode("ascii"))
    eager = Outcome.from_key(key)
    assert lazy.key == key
    assert lazy.value == eager.value and lazy.mutated == eager.mutated
    assert outcomes_equal(lazy, eager)


def _edits(text: str):
    """Small corruptions of a record's text, as a program forging its own records might make."""
    return st.one_of(
        st.tuples(st.just("delete"), st.integers(0, len(text) - 1), st.just("")),
        st.tuples(
            st.just("insert"),
            st.integers(0, len(text)),
            st.sampled_from(list('[]",@0-1eE.\\ntfuN:{}') + ['"F"', '["I",', ",@", "@,"]),
        ),
        st.tuples(
            st.just("replace"),
            st.integers(0, len(text) - 1),
            st.sampled_from(list('[]",@0-9aZ\\ ') + ['"nan"', "null"]),
        ),
    )


@st.composite
def _corrupted(draw):
    value = draw(_values)
    text = _key(canonical(value))
    for _ in range(draw(st.integers(1, 3))):
        if not text:
            break
        op, at, piece = draw(_edits(text))
        if op == "delete":
            text = text[:at] + text[at + 1 :]
        elif op == "insert":
            text = text[:at] + piece + text[at:]
        else:
            text = text[:at] + piece + text[at + 1 :]
    return text


_TAGS = ["N", "B", "I", "F", "C", "S", "Y", "L", "T", "E", "D", "O", "R", "X", "Z", "CYCLE", "Q", "ok"]
_json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.floats(allow_nan=False)
    | st.sampled_from(["nan", "inf", "-5", "0a", "ab", ""])
    | st.sampled_from(_TAGS)
    | st.text(max_size=3)
)


@st.composite
def _shaped(draw):
    """Lists that look like canonical forms (a tag, then items) with the wrong shapes mixed in."""
    tree = draw(
        st.recursive(
            _json_leaf,
            lambda c: (
                st.builds(lambda tag, items: [tag, *items], st.sampled_from(_TAGS), st.lists(c, max_size=3))
                | st.builds(
                    lambda tag, items: [tag, items], st.sampled_from(["L", "T", "E", "D"]), st.lists(c, max_size=3)
                )
                | st.lists(c, min_size=2, max_size=2)
            ),
            max_leaves=12,
        )
    )
    mutated = draw(st.none() | st.just(tree) | st.sampled_from([["N"], 5, "x"]))
    error = draw(st.none() | st.just("E"))
    kind = draw(st.sampled_from(["ok", "ok", "raise"]))
    return json.dumps([kind, tree, mutated, error], separators=(",", ":"))


@pytest.mark.slow  # a large generated sweep
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_corrupted() | _shaped())
def test_the_text_check_never_accepts_what_decoding_would_reject(text):
    if _text_ok(text):
        assert _decoding_accepts(text), text
    o = outcome_from_record(text.encode("ascii", "replace"))
    if o is not FORGED:
        # whatever is let through renders and compares without raising
        o.render(200)
        outcomes_equal(o, o)


def test_forged_and_malformed_records_become_a_crash():
    for raw in (
        b'["ok",{"weird":[1,2]},[5],null]',
        b'["ok",["I","zz"],null,null]',
        b'["ok",["Q",1,2],["L",7],null]',
        b'["ok",["F","nan?"],null,null]',
        b'["ok",["D",[[1]]],null,null]',
        b'["ok",[["N"],null],null,null]',
        b'["ok",["L",[["F",1.0],@]],null,null]',
        '["ok",["L",[["F",1.0],\u00b7]],null,null]'.encode(),
        b'["ok",["L",[1,2]],null,null]',
        b'["ok",["S","caf\xc3\xa9"],null,null]',
        b"[" * 100000,
        b'["ok",' + b'["L",[' * 500 + b'["N"]' + b"]]" * 500 + b",null,null]",
    ):
        assert outcome_from_record(raw) is FORGED, raw[:60]


def test_records_the_text_check_does_not_cover_still_decode():
    deep = ["N"]
    for _ in range(30):  # deeper than the text check's passes, shallower than the walk's limit
        deep = ["L", [deep]]
    for key, value in (
        ('["raise",null,null,"ValueError"]', None),
        ('["ok", ["I", "1"], null, null]', ["I", "1"]),  # spaces: not how the worker writes it
        (_key(deep), deep),
    ):
        assert not _text_ok(key)
        o = outcome_from_record(key.encode())
        assert o is not FORGED and o.value == value


def test_checked_records_hold_no_decoded_lists_until_read():
    values = [[float(i + j) / 3 for j in range(300)] for i in range(200)]
    records = [_key(canonical(v)).encode() for v in values]
    gc.collect()
    before = len(gc.get_objects())
    outcomes = [outcome_from_record(r) for r in records]
    grouped = group_outcomes(outcomes)  # decodes each once to compare within tolerance
    gc.collect()
    # one tracked object per outcome, not one per list inside it (300 floats' lists each)
    assert len(gc.get_objects()) - before < 3 * len(outcomes)
    assert grouped == list(range(len(values)))
    assert outcomes[5].value == canonical(values[5])
    assert math.isclose(outcomes[5].value[1][7][1], values[5][7])


def test_an_outcome_cannot_be_changed():
    o = outcome_from_record(b'["ok",["I","3"],null,null]')
    try:
        o.kind = "raise"
    except AttributeError:
        pass
    else:
        raise AssertionError("an outcome was changed")
    assert o.kind == "ok" and o.value == ["I", "3"]
