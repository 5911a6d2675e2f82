"""Hand-checked statistics of the eval: ranks, Spearman, AUROC, ROC, detection rate, summary keys."""

import pytest

from coherence.eval.report import compare, summarize, table_markdown
from coherence.eval.stats import auroc, detection_rate, rankdata, roc_curve, spearman, trapezoid_area


def test_rankdata_averages_ties():
    assert rankdata([10, 20, 20, 30]) == [1, 2.5, 2.5, 4]
    assert rankdata([3, 1, 2]) == [3, 1, 2]
    assert rankdata([5, 5, 5]) == [2, 2, 2]


def test_spearman_hand_checked():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ranks x = 1..5, y = [2, 1, 4, 3, 5]: d^2 = 1+1+1+1+0 = 4 -> 1 - 6*4/(5*24) = 0.8
    assert spearman([1, 2, 3, 4, 5], [20, 10, 40, 30, 50]) == pytest.approx(0.8)
    # with ties: x ranks [1.5, 1.5, 3], y ranks [1, 2, 3]; Pearson of those = 0.8660254
    assert spearman([0, 0, 1], [1, 2, 3]) == pytest.approx(0.8660254, abs=1e-6)
    assert spearman([1, 1, 1], [1, 2, 3]) is None  # constant
    assert spearman([1], [2]) is None


def test_spearman_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    x = [0.0, 0.1, 0.1, 0.5, 0.0, 0.3, 0.9, 0.2]
    y = [0.0, 0.0, 0.2, 0.4, 0.1, 0.3, 0.7, 0.7]
    assert spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic)


def test_auroc_hand_checked():
    # positives 0.9, 0.4; negatives 0.5, 0.1: pairs (0.9>0.5, 0.9>0.1, 0.4<0.5, 0.4>0.1) -> 3/4
    assert auroc([0.9, 0.5, 0.4, 0.1], [True, False, True, False]) == pytest.approx(0.75)
    assert auroc([1, 2, 3], [False, False, True]) == 1.0
    assert auroc([3, 2, 1], [False, False, True]) == 0.0
    # ties count one half: all scores equal -> 0.5
    assert auroc([0, 0, 0, 0], [True, False, True, False]) == pytest.approx(0.5)
    # one positive tied with one of two negatives, above the other: (0.5 + 1) / 2
    assert auroc([0.3, 0.3, 0.0], [True, False, False]) == pytest.approx(0.75)
    assert auroc([1, 2], [True, True]) is None


def test_roc_curve_area_equals_auroc_with_ties():
    scores = [0.0, 0.0, 0.2, 0.2, 0.5, 0.7, 0.7, 1.0]
    labels = [False, True, False, True, False, True, True, False]
    fpr, tpr, _ = roc_curve(scores, labels)
    assert (fpr[0], tpr[0]) == (0.0, 0.0) and (fpr[-1], tpr[-1]) == (1.0, 1.0)
    assert len(fpr) == 1 + len(set(scores))
    assert trapezoid_area(fpr, tpr) == pytest.approx(auroc(scores, labels))


def test_detection_rate_hand_checked():
    errors = [0.0, 0.2, 0.5, 0.1, 0.0]
    incoh = [0.3, 0.0, 0.4, 0.1, 0.0]
    # error > 0: tasks 1, 2, 3; incoherent among them: 2, 3 -> 2/3 (task 0 is a false alarm, not counted)
    assert detection_rate(errors, incoh) == pytest.approx(2 / 3)
    assert detection_rate([0.0, 0.0], [0.1, 0.0]) is None


def _rec(tid, inc, err, passed0, all_pass=None, dsde=None, status=None):
    return {
        "task_id": tid,
        "model": "m",
        "benchmark": "MBPP",
        "seeds": "signature",
        "samples_requested": 10,
        "inputs_requested": 1000,
        "status": status or ("incoherent" if inc > 0 else "coherent"),
        "incoherence": inc,
        "error": err,
        "error_value": err,
        "error_mean_candidates": err,
        "dsde": inc if dsde is None else dsde,
        "sde": inc / 2,
        "candidate0_pass": passed0,
        "all_used_pass": passed0 if all_pass is None else all_pass,
        "seconds": 1.0,
        "samples": 10,
        "inputs": 1000,
    }


def test_summary_definitions_hand_checked():
    records = [
        _rec(1, 0.0, 0.0, True),  # coherent and right
        _rec(2, 0.0, 0.3, False),  # wrong, undetected
        _rec(3, 0.2, 0.4, False),  # wrong, detected
        _rec(4, 0.1, 0.0, True, all_pass=True),  # false alarm: every program passes the tests
        _rec(5, 0.3, 0.1, True, all_pass=False),  # incoherent, candidate 0 passes, another fails
        {"task_id": 6, "status": "error", "candidate0_pass": False, "seconds": 0.5},  # unchecked
    ]
    s = summarize(records)
    assert s["tasks"] == 6 and s["checked"] == 5
    assert s["pass_at_1"] == pytest.approx(3 / 6, abs=1e-4)
    assert s["detection_rate"] == pytest.approx(2 / 3, abs=1e-4)  # error > 0: 2, 3, 5; incoherent: 3, 5
    assert s["detection_rate_tests"] == pytest.approx(1 / 2, abs=1e-4)  # candidate 0 fails: 2, 3; incoherent: 3
    assert s["undetected_mean_error"] == pytest.approx(0.3, abs=1e-4)
    assert s["confident_mean_error"] == pytest.approx(0.15, abs=1e-4)  # I = 0: tasks 1, 2
    assert s["false_alarm_rate"] == pytest.approx(1 / 3, abs=1e-4) and s["false_alarm_denominator"] == 3
    assert s["incoherent_precision_tests"] == pytest.approx(1 / 3, abs=1e-4)  # I > 0: 3, 4, 5; failing: 3
    # failing: 2 (I=0), 3 (I=0.2); passing: 1 (0), 4 (0.1), 5 (0.3)
    # pairs: 2 vs 1 tie 0.5, 2 vs 4 lose, 2 vs 5 lose, 3 vs 1 win, 3 vs 4 win, 3 vs 5 lose -> 2.5/6
    assert s["auroc_incoherence"] == pytest.approx(2.5 / 6, abs=1e-4)
    assert s["share_zero_incoherence"] == pytest.approx(2 / 6, abs=1e-4)
    assert s["mean_error"] == pytest.approx(0.16, abs=1e-4)
    assert s["seconds_per_task_median"] == pytest.approx(1.0, abs=1e-4)
    for key in (
        "model",
        "benchmark",
        "tasks",
        "samples",
        "inputs",
        "seeds",
        "pass_at_1",
        "mean_error",
        "mean_incoherence",
        "spearman_error_incoherence",
        "detection_rate",
        "undetected_mean_error",
        "false_alarm_rate",
        "auroc_dsde",
        "auroc_sde",
        "auroc_incoherence",
        "incoherent_precision_tests",
        "seconds_per_task_median",
    ):
        assert key in s
    md = table_markdown([s])
    assert "| model |" in md and "MBPP det." in md


def test_compare_spearman_of_rankings():
    summaries = [
        {"model": "a", "benchmark": "MBPP", "seeds": "tests", "pass_at_1": 0.9, "share_zero_incoherence": 0.8},
        {"model": "b", "benchmark": "MBPP", "seeds": "tests", "pass_at_1": 0.7, "share_zero_incoherence": 0.6},
        {"model": "c", "benchmark": "MBPP", "seeds": "tests", "pass_at_1": 0.5, "share_zero_incoherence": 0.7},
    ]
    (g,) = compare(summaries)
    # ranks by pass@1: a1 b2 c3; by zero share: a1 c2 b3 -> d^2 = 0+1+1 -> 1 - 6*2/(3*8) = 0.5
    assert g["spearman"] == pytest.approx(0.5)
    assert [m["model"] for m in g["models"]] == ["a", "b", "c"]
