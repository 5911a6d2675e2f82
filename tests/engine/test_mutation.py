"""Differences in argument mutation (``verdict.mutation``): an alternative that changes an argument
yours leaves alone is no evidence against yours; where yours changes it, the counterexample says
so in words; and two equal values never read as a disagreement."""

import numpy as np

from coherence.engine.inputs import Input
from coherence.engine.outcomes import Outcome, canonical, group_outcomes
from coherence.engine.verdict import judge
from coherence.engine.verdict.counterexample import describe, render_outcomes
from coherence.engine.verdict.mutation import agreeing_labels, in_words

NUMBERS = [0.125, 0.0]
VALUE = canonical((0.0, 0.125))
LEAVES = Outcome("ok", value=VALUE)
SORTS = Outcome("ok", value=VALUE, mutated=canonical((sorted(NUMBERS),)))


def verdict_on(row):
    """The verdict on one input where the programs give ``row`` (yours first)."""
    labels = np.array(group_outcomes(row))[:, None]
    raised = np.zeros_like(labels, dtype=bool)
    return judge(agreeing_labels(labels, [[o] for o in row], [0]), raised)


def test_alternatives_that_sort_the_argument_yours_leaves_alone_are_no_evidence():
    row = [LEAVES] + [SORTS] * 8 + [LEAVES]
    labels = np.array(group_outcomes(row))[:, None]
    raised = np.zeros_like(labels, dtype=bool)
    assert judge(labels, raised).severity == "warning"  # without the rule: 8 of 9 outvote yours
    assert verdict_on(row).severity == "none"


def test_yours_sorting_its_argument_where_they_leave_it_is_said_in_words():
    row = [SORTS] + [LEAVES] * 8 + [SORTS]
    assert verdict_on(row).severity == "warning"  # a side effect the alternatives do not have
    ce = describe("top_two", Input((NUMBERS,)), row, 1, params=["numbers"])
    assert ce.mutation == "yours sorts its argument `numbers` in place; 8 of 9 alternatives leave it unchanged"
    assert ce.yours != ce.theirs
    assert in_words(Input((NUMBERS,)), [LEAVES] + [SORTS] * 9, ["numbers"]) is None


def test_equal_values_never_read_as_a_disagreement():
    shown = render_outcomes([LEAVES, SORTS])
    assert shown[0] == "(0.0, 0.125) (and leaves its arguments unchanged)"
    assert shown[1].startswith("(0.0, 0.125) (and changes its argument to [0.0, 0.125])")
    assert shown[0] != shown[1]
