"""``benchmarks/eval_function_rules.py``: a panel's whole-model features, and the leave-one-model-out
choice of an extension, which must never see the held-out author's functions."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from eval_function_rules import Table, _panel_features


def test_models_whole_against_yours_are_counted_per_input():
    # rows: yours, then two alternatives of model a and two of model b; input 0: both models
    # whole against yours, input 1: model a against, b split, input 2: everyone agrees
    labels = np.array([[0, 0, 0], [1, 1, 0], [2, 1, 0], [1, 2, 0], [1, 0, 0]])
    got = _panel_features(labels, ["yours", "a", "a", "b", "b"])
    assert got == {"models whole against, most": 2.0, "inputs with two models whole against": 1 / 3}


def test_one_model_has_no_panel_features():
    labels = np.array([[0, 0], [1, 1], [1, 1]])
    assert _panel_features(labels, ["one", "one", "one"])["models whole against, most"] == 0.0


def _row(author: str, feature: float, fails: bool, added_verified: bool) -> dict:
    return {
        "author": author,
        "fails": fails,
        "warning": False,
        "verified": fails,
        "has_evidence": True,
        "added_verified": added_verified,
        "features": {"x": feature},
    }


def test_the_extension_is_chosen_on_the_other_authors_alone():
    # On authors a and b, "x >= 1" adds verified warnings on failing functions; on c the same
    # rule warns on passing functions the reference does not back.  Held out, c gets it (chosen
    # on a and b alone), while a and b do not: with c among the others, the rule is under the floor.
    rows = [_row(a, 1.0, True, True) for a in ("a", "b") for _ in range(4)]
    rows += [_row("c", 1.0, False, False) for _ in range(2)] + [_row("c", 1.0, True, True)]
    rows += [_row(a, 0.0, True, True) for a in ("a", "b", "c")]  # failing, and below the rule
    tb = Table(rows)
    family = [("x >= 1", tb.open & (tb.X[:, 0] >= 1))]
    warn, chosen = tb.lomo(family, floor=0.9)
    # held out c: chosen on a and b (precision 1.0), so c's two passing functions are warned
    assert "c: x >= 1" in chosen
    c = tb.author == "c"
    assert warn[c & ~tb.fails].all()
    # held out a: on b and c together the rule is right on 5 of 7 (0.71 < 0.9): not chosen
    assert "a: none (shipped)" in chosen
    assert not warn[tb.author == "a"].any()
    recall, precision, n = tb.figures(warn)
    assert (recall, precision, n) == (1 / 12, 1 / 3, 3)
