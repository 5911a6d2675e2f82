"""Small, dependency-free statistics for the eval: ranks, Spearman, AUROC, ROC, detection rate.

All functions take plain sequences and return ``None`` when the statistic is undefined (too few
points, a constant variable, a class with no members) rather than NaN, so JSON stays valid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def rankdata(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank: ``[10, 20, 20, 30] -> [1, 2.5, 2.5, 4]``."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        i = j + 1
    return ranks


def _pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def spearman(x: Sequence[float | None], y: Sequence[float | None]) -> float | None:
    """Spearman's ρ: Pearson's r of the average ranks (ties handled), over the pairs where both
    are known (eval's records hold None for a figure a task lacks).  None if undefined."""
    if len(x) != len(y):
        raise ValueError("spearman: x and y differ in length")
    pairs = [(a, b) for a, b in zip(x, y) if a is not None and b is not None]
    if len(pairs) < 2:
        return None
    xs, ys = zip(*pairs)
    return _pearson(rankdata(xs), rankdata(ys))


def auroc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """Area under the ROC curve of ``scores`` predicting ``positive``.

    The Mann-Whitney statistic: the probability that a random positive scores higher than a random
    negative, ties counting one half.  None when either class is empty.
    """
    if len(scores) != len(positive):
        raise ValueError("auroc: scores and labels differ in length")
    n_pos = sum(1 for p in positive if p)
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = rankdata(scores)
    rank_sum = sum(r for r, p in zip(ranks, positive) if p)
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


def roc_curve(scores: Sequence[float], positive: Sequence[bool]) -> tuple[list[float], list[float], list[float]]:
    """(false positive rates, true positive rates, thresholds), from (0, 0) to (1, 1).

    One point per distinct score (tied scores move together, so the trapezoid area under these
    points equals ``auroc``).  A task is flagged when its score is >= the threshold.
    """
    n_pos = sum(1 for p in positive if p)
    n_neg = len(positive) - n_pos
    pairs = sorted(zip(scores, positive), key=lambda t: -t[0])
    fpr, tpr, thr = [0.0], [0.0], [math.inf]
    tp = fp = 0
    i = 0
    while i < len(pairs):
        s = pairs[i][0]
        while i < len(pairs) and pairs[i][0] == s:
            if pairs[i][1]:
                tp += 1
            else:
                fp += 1
            i += 1
        fpr.append(fp / n_neg if n_neg else 0.0)
        tpr.append(tp / n_pos if n_pos else 0.0)
        thr.append(s)
    return fpr, tpr, thr


def trapezoid_area(xs: Sequence[float], ys: Sequence[float]) -> float:
    return sum((xs[i] - xs[i - 1]) * (ys[i] + ys[i - 1]) / 2 for i in range(1, len(xs)))


def detection_rate(errors: Sequence[float | None], incoherences: Sequence[float | None]) -> float | None:
    """The paper's detection rate: among tasks with error > 0, the share with incoherence > 0."""
    wrong = [i for e, i in zip(errors, incoherences) if e is not None and i is not None and e > 0]
    if not wrong:
        return None
    return sum(1 for i in wrong if i > 0) / len(wrong)


def mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def median(values: Sequence[float | None]) -> float | None:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    k = len(vals) // 2
    return vals[k] if len(vals) % 2 else (vals[k - 1] + vals[k]) / 2


def share(flags: Sequence[bool]) -> float | None:
    return sum(1 for f in flags if f) / len(flags) if flags else None
