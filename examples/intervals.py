"""Interval arithmetic for a booking calendar."""

from typing import List, Tuple


def generated(fn):
    """Marks code written by an assistant (coherence matches the decorator by name)."""
    return fn


@generated
def merge_intervals(intervals: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """Merge overlapping closed intervals and return them sorted by start.

    >>> merge_intervals([(1, 3), (2, 6), (8, 10)])
    [(1, 6), (8, 10)]
    """
    merged: List[Tuple[int, int]] = []
    for start, end in intervals:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@generated
def dedupe(items: List[int]) -> List[int]:
    """Remove duplicates from items, keeping the first occurrence of each, in order.

    >>> dedupe([3, 1, 3, 2, 1])
    [3, 1, 2]
    """
    seen = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
