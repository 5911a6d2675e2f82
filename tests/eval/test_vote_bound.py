"""``benchmarks/eval_vote_bound.py``: how a function's best vote is read from its outcome matrix
(rows: yours, then the alternatives; columns: inputs; equal labels, equal outcomes)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from eval_vote_bound import best_vote


def test_no_alternative_differs_is_coherent():
    assert best_vote(np.zeros((4, 3), dtype=int)) == ("coherent", [])


def test_a_bloc_larger_than_your_side_on_one_input_outvotes_yours():
    labels = np.array([[0, 0], [0, 1], [0, 1], [0, 0]])  # input 1: two say 1, one sides with yours
    assert best_vote(labels) == ("outvoted", [(1, 1)])


def test_rivals_that_disagree_among_themselves_are_no_bloc():
    # input 0: three alternatives against yours, but each on its own value; one agrees with yours
    labels = np.array([[0], [1], [2], [3], [0]])
    assert best_vote(labels) == ("tie", [])


def test_your_side_larger_on_every_input_where_any_differs():
    labels = np.array([[0, 0, 5], [0, 0, 5], [0, 0, 5], [1, 0, 6]])
    assert best_vote(labels) == ("your side larger", [])


def test_the_best_input_decides_and_every_outvoting_bloc_is_listed():
    # input 0: 1 against 2 on yours; input 1: a bloc of 3 (label 7) against none on yours
    labels = np.array([[0, 0], [0, 7], [0, 7], [1, 7]])
    kind, outvoting = best_vote(labels)
    assert kind == "outvoted" and outvoting == [(1, 7)]
