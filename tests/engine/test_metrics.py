import math

import numpy as np
import pytest

from coherence.engine.verdict.metrics import per_input_disagreement, score


def mats(labels, raised=None, errors=None):
    labels = np.array(labels)
    raised = np.zeros_like(labels, dtype=bool) if raised is None else np.array(raised, dtype=bool)
    errors = np.full(labels.shape, -1) if errors is None else np.array(errors)
    return labels, raised, errors


def test_per_input_disagreement_counts_ordered_pairs():
    labels = np.array([[0, 0, 0], [0, 1, 1], [0, 1, 2]])
    # column 0: all agree; column 1: groups {0},{1,2} -> 1 - 2/6; column 2: all differ -> 1
    assert per_input_disagreement(labels) == pytest.approx([0.0, 2 / 3, 1.0])


def test_hand_checked_three_programs():
    m = score(*mats([[0, 0], [0, 1], [0, 1]]))
    assert m.incoherence == pytest.approx(1 / 3)
    assert m.disagreement == pytest.approx(0.5)
    assert m.error_lower_bound == pytest.approx(1 / 6)
    assert m.cluster_sizes == [2, 1]
    assert m.user_cluster == 1
    # d(user, other) = mean([0, 1]) = 0.5; DSDE = 2/3 * 0.5; SDE = 2/3 * 1/3 * 0.5
    assert m.dsde == pytest.approx(1 / 3)
    assert m.trust == pytest.approx(2 / 3)
    assert m.sde == pytest.approx(1 / 9)
    assert m.pac_bound is None
    lo, hi = m.incoherence_interval
    half = math.sqrt(math.log(2 / 0.05) / (2 * 2))
    assert lo == pytest.approx(max(0, 1 / 3 - half)) and hi == pytest.approx(min(1, 1 / 3 + half))


def test_coherent_gives_pac_bound():
    m = score(*mats(np.zeros((10, 1000), dtype=int)))
    assert m.incoherence == 0 and m.dsde == 0 and m.trust == 1
    assert m.pac_bound == pytest.approx(1 - 0.05 ** (1 / 1000))
    assert round(m.pac_bound, 3) == 0.003


def test_crash_distances_a_b_c():
    # program 0 raises ValueError everywhere; 1 raises ValueError on input 0 and TypeError on 1; 2 returns.
    labels = [[0, 0, 0], [0, 1, 1], [1, 2, 2]]
    raised = [[1, 1, 1], [1, 1, 0], [0, 0, 0]]
    errors = [[7, 7, 7], [7, 8, -1], [-1, -1, -1]]
    m = score(*mats(labels, raised, errors))
    assert m.cluster_sizes == [1, 1, 1]
    # d(0,1): input0 same error -> c=0.6, input1 different errors -> b=0.8, input2 one raised -> a=1
    d01 = (0.6 + 0.8 + 1.0) / 3
    d02 = 1.0  # exactly one raised on every input
    assert m.dsde == pytest.approx(d01 / 3 + d02 / 3)


def test_user_in_majority_has_high_trust():
    labels = [[0, 0, 0, 0]] * 9 + [[0, 1, 1, 1]]
    m = score(*mats(labels))
    assert m.user_cluster == 0 and m.cluster_sizes == [9, 1]
    assert m.dsde == pytest.approx(0.1 * 0.75)
    assert m.disagreement == pytest.approx((1 / 9) * 0.75)
