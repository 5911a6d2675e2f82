"""The verdict's table of per-input rules (``verdict.rules``): the masks it builds, the judge that
applies it by name, and the shrinker that keeps out of the masks its start was out of."""

import numpy as np

from coherence.engine.inputs import Input
from coherence.engine.verdict import judge, rules


def matrix(mine, *alts):
    labels = np.array([mine, *alts])
    return labels, np.zeros_like(labels, dtype=bool)


def test_every_rule_names_its_effect_and_a_severity_cap():
    for rule in rules.RULES:
        assert rule.effect in ("drop", "cap", "last", "shrink")
        assert rule.cap in ("warning", "information", "hint", "none")
        assert rule.effect not in ("drop", "cap") or rule.reason  # a rule that lowers a verdict says why


def test_the_masks_are_built_from_the_inputs_as_the_table_says():
    inputs = [Input(("abc", 1)), Input(("", 2)), Input(("", 0)), Input(("x", 0))]
    masks = rules.input_masks(inputs)
    assert masks["empty_strings"].tolist() == [False, True, True, False]
    assert masks["degenerate"].tolist() == [False, False, True, False]
    assert "inside" not in masks and "typical" not in masks  # no domain: no such mask
    asked = rules.input_masks(inputs, where=[2])
    assert asked["degenerate"].tolist() == [False, False, True, False]
    assert asked["empty_strings"].tolist() == [False, False, True, False]


def test_the_judge_takes_a_rule_s_mask_by_its_name():
    labels, raised = matrix([0, 1], *([[0, 2]] * 9))
    capped = np.array([False, True])
    by_keyword = judge(labels, raised, empty_strings=capped)
    by_name = judge(labels, raised, masks={"empty_strings": capped})
    assert by_keyword == by_name
    assert by_name.severity == "information" and by_name.why == rules.rule("empty_strings").reason


def test_a_shrunk_input_stays_out_of_the_masks_its_start_was_out_of():
    keep = rules.shrink_keeper(Input(("ab", 3)), None)
    assert keep is not None
    assert keep(Input(("a", 1))) and not keep(Input(("", 1))) and not keep(Input(("", 0)))
    # a start already in a mask may shrink within it
    assert rules.shrink_keeper(Input(("", 0)), None) is None
