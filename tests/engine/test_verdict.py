"""The verdict's rule on outcome matrices built by hand: who outvotes yours, where, and how."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coherence.engine.verdict import at_least, judge
from coherence.engine.verdict import severity as severity_module
from coherence.engine.verdict.severity import _largest_blocs


def matrix(*rows):
    """Rows of labels (program 0 is yours); a negative label means the call raised (type -label)."""
    labels = np.array(rows)
    return labels, labels < 0


def test_a_bloc_that_outvotes_yours_is_a_warning():
    # 8 of 9 alternatives agree with each other against yours on input 2
    labels, raised = matrix([0, 0, 1], *([[0, 0, 2]] * 8), [0, 0, 1])
    ev = judge(labels, raised)
    assert ev.severity == "warning"
    assert (ev.input, ev.bloc, ev.against, ev.agree, ev.alternatives, ev.kind) == (2, 8, 8, 1, 9, "value")
    assert labels[ev.rival, 2] == 2


def test_a_split_spec_with_yours_in_the_majority_is_information():
    # 3 alternatives read the spec another way; 6 agree with yours
    labels, raised = matrix([0, 1], *([[0, 1]] * 6), *([[0, 5]] * 3))
    ev = judge(labels, raised)
    assert ev.severity == "information" and ev.bloc == 3 and ev.agree == 6


def test_alternatives_that_differ_among_themselves_but_agree_with_yours_give_a_hint():
    # every disagreement is one alternative alone
    labels, raised = matrix([0, 1, 2], [0, 1, 2], [0, 1, 3], [0, 4, 2], [0, 1, 2], [5, 1, 2])
    ev = judge(labels, raised)
    assert ev.severity == "hint" and ev.input is None


def test_exception_type_only_differences_give_a_hint():
    # on the empty input every program raises, only the types differ
    labels, raised = matrix([0, -1], [0, -2], [0, -2], [0, -3], [0, -2])
    ev = judge(labels, raised)
    assert ev.severity == "hint"
    assert "which exception" in ev.why


def test_disagreement_only_outside_the_stated_domain_gives_a_hint():
    labels, raised = matrix([0, 1], *([[0, 2]] * 9))
    inside = np.array([True, False])
    ev = judge(labels, raised, inside=inside)
    assert ev.severity == "hint" and "outside the stated domain" in ev.why
    # the same bloc inside the domain is a warning
    assert judge(labels, raised, inside=np.array([True, True])).severity == "warning"


def test_yours_raising_where_the_bloc_returns_is_evidence():
    labels, raised = matrix([0, -1], *([[0, 3]] * 7), [0, -1], [0, -1])
    ev = judge(labels, raised)
    assert ev.severity == "warning" and ev.kind == "yours-raises"


def test_yours_running_out_of_time_is_at_most_information():
    # 9 of 9 alternatives return where yours timed out (label -4): slow, or a busy machine, is
    # worth a look but no evidence of a wrong result; a value disagreement elsewhere still is
    labels, raised = matrix([0, -4], *([[0, 7]] * 9))
    slow = np.array([False, True])
    assert judge(labels, raised).severity == "warning"
    ev = judge(labels, raised, yours_slow=slow)
    assert ev.severity == "information" and ev.input == 1 and ev.kind == "yours-raises"
    assert "ran out of time" in ev.why
    labels, raised = matrix([0, -4, 1], *([[0, 7, 2]] * 9))
    ev = judge(labels, raised, yours_slow=np.array([False, True, False]))
    assert ev.severity == "warning" and ev.input == 2 and ev.why == ""
    # both caps at once: the first that applies is the reason given
    ev = judge(labels[:, :2], raised[:, :2], yours_slow=slow, empty_strings=np.array([False, True]))
    assert ev.severity == "information" and "ran out of time" in ev.why


def test_the_evidence_comes_from_a_call_with_something_in_it_when_one_qualifies():
    # input 1 is degenerate (every argument empty): the same bloc on input 2 is the evidence
    labels, raised = matrix([0, 1, 5], *([[0, 2, 6]] * 8), [0, 1, 5])
    assert judge(labels, raised).input == 1
    ev = judge(labels, raised, degenerate=np.array([False, True, False]))
    assert ev.severity == "warning" and ev.input == 2
    # a degenerate input keeps its vote: alone, it is still a warning
    labels, raised = matrix([0, 1], *([[0, 2]] * 8), [0, 1])
    ev = judge(labels, raised, degenerate=np.array([False, True]))
    assert ev.severity == "warning" and ev.input == 1


def test_a_bloc_only_on_an_empty_string_argument_is_at_most_information():
    # input 1 is how_many_times('a', ''): 6 alternatives count the empty substring once per
    # position, 3 agree with yours; which is right is a convention the spec rarely states
    labels, raised = matrix([0, 1], *([[0, 2]] * 6), *([[0, 1]] * 3))
    assert judge(labels, raised).severity == "warning"
    ev = judge(labels, raised, empty_strings=np.array([False, True]))
    assert ev.severity == "information" and ev.input == 1
    assert "empty string argument" in ev.why
    # the same bloc on a call with text in it is evidence again
    labels, raised = matrix([0, 1, 5], *([[0, 2, 6]] * 6), *([[0, 1, 5]] * 3))
    ev = judge(labels, raised, empty_strings=np.array([False, True, False]))
    assert ev.severity == "warning" and ev.input == 2 and ev.why == ""
    # where another input gives a plain information (3 against 6), the kept-back bloc is the evidence
    labels, raised = matrix([0, 5, 1], *([[0, 6, 2]] * 3), *([[0, 5, 2]] * 3), *([[0, 5, 1]] * 3))
    ev = judge(labels, raised, empty_strings=np.array([False, False, True]))
    assert ev.severity == "information" and ev.input == 2 and "empty string" in ev.why
    # an information that was one anyway does not claim the empty string as its reason
    labels, raised = matrix([0, 1], *([[0, 2]] * 3), *([[0, 1]] * 6))
    ev = judge(labels, raised, empty_strings=np.array([False, True]))
    assert ev.severity == "information" and ev.why == ""


def test_the_input_where_both_sides_return_is_preferred():
    # input 1: the bloc raises where yours returns; input 2: both return
    labels, raised = matrix([0, 1, 1], *([[0, -2, 3]] * 9))
    ev = judge(labels, raised)
    assert ev.input == 2 and ev.kind == "value"


def test_coherent_is_none():
    labels, raised = matrix([0, 1], [0, 1], [0, 1])
    assert judge(labels, raised).severity == "none"


@pytest.mark.parametrize(
    ("severity", "floor", "expected"),
    [
        ("warning", "warning", True),
        ("information", "warning", False),
        ("warning", "information", True),
        ("hint", "information", False),
        ("hint", "hint", True),
        ("none", "hint", False),
    ],
)
def test_severity_order(severity, floor, expected):
    assert at_least(severity, floor) is expected


@given(
    st.integers(1, 12).flatmap(
        lambda m: st.lists(st.lists(st.integers(-3, 4), min_size=m, max_size=m), min_size=1, max_size=8)
    ),
    st.sampled_from([np.int32, np.int64]),  # the scorer's labels are int32
)
@settings(max_examples=300, deadline=None)
def test_largest_blocs_are_each_inputs_most_common_other_outcome(columns, dtype):
    """``_largest_blocs`` (all inputs at once) against its definition, one input at a time: the
    most common outcome among the alternatives that differ from yours, the smallest label on a
    tie, and the first alternative that gives it."""
    labels = np.array(columns, dtype=dtype).T  # programs x inputs; row 0 is yours
    differs = labels[1:] != labels[0]
    blocs, rivals = _largest_blocs(labels[1:], differs)
    for x in range(labels.shape[1]):
        others = labels[1:, x][differs[:, x]]
        if not others.size:
            assert blocs[x] == 0
            continue
        counts = Counter(others.tolist())
        top = max(counts.values())
        label = min(v for v, c in counts.items() if c == top)
        assert blocs[x] == top
        assert rivals[x] == 1 + labels[1:, x].tolist().index(label)


def test_largest_blocs_in_chunks_give_what_all_at_once_gives(monkeypatch):
    """A wide panel on many inputs is judged a few columns at a time (bounded memory)."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, size=(30, 500)).astype(np.int32)
    differs = labels[1:] != labels[0]
    whole = _largest_blocs(labels[1:], differs)
    monkeypatch.setattr(severity_module, "_PAIRS_AT_ONCE", 29 * 29 * 7)  # 7 inputs per chunk
    chunked = _largest_blocs(labels[1:], differs)
    assert (whole[0] == chunked[0]).all() and (whole[1] == chunked[1]).all()
