"""Incoherence, disagreement with the user, clusters, SDE and DSDE, from an outcome matrix.

Definitions follow DESIGN.md exactly.  Î is the U-statistic (exact over all ordered pairs of
distinct programs), not the paper's Monte Carlo estimate over pairs drawn with replacement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Per-input distances between outcomes of different clusters (DSDE paper, (a, b, c)).
DIST_ONE_RAISED = 1.0  # a
DIST_RAISED_DIFFERENT = 0.8  # b
DIST_RAISED_SAME = 0.6  # c


@dataclass
class Metrics:
    programs: int  # m, the user's function included
    inputs: int  # n
    incoherence: float  # Î, U-statistic
    incoherence_interval: tuple[float, float]  # Hoeffding, at confidence 1 - delta
    disagreement: float  # D: mean over inputs and alternatives of 1[o_0 != o_j]
    error_lower_bound: float  # Î / 2 (Theorem 4.1)
    pac_bound: float | None  # I <= 1 - delta^(1/n) when no input disagrees (Theorem 4.3)
    delta: float
    sde: float
    dsde: float
    trust: float
    cluster_sizes: list[int]  # largest first
    cluster_members: list[list[int]]  # program indices per cluster, same order
    user_cluster: int  # index into cluster_sizes of the cluster holding program 0
    per_input: np.ndarray = field(repr=False)  # per-input disagreement share, length n

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": self.programs,
            "inputs": self.inputs,
            "incoherence": self.incoherence,
            "incoherence_interval": list(self.incoherence_interval),
            "disagreement": self.disagreement,
            "error_lower_bound": self.error_lower_bound,
            "pac_bound": self.pac_bound,
            "delta": self.delta,
            "sde": self.sde,
            "dsde": self.dsde,
            "trust": self.trust,
            "clusters": self.cluster_sizes,
            "user_cluster": self.user_cluster,
        }


def per_input_disagreement(labels: np.ndarray) -> np.ndarray:
    """``1 - Σ_j k_j(k_j - 1) / (m(m - 1))`` for each column of the m x n label matrix."""
    m, n = labels.shape
    if m < 2 or n == 0:
        return np.zeros(n)
    # Labels are small non-negative ints per column; count group sizes with one bincount per
    # column offset into a shared range so the whole matrix is one call.
    width = int(labels.max()) + 1
    offsets = (np.arange(n) * width)[None, :]
    counts = np.bincount((labels + offsets).ravel(), minlength=n * width).reshape(n, width)
    agree_pairs = (counts * (counts - 1)).sum(axis=1)
    disagreement: np.ndarray = 1.0 - agree_pairs / (m * (m - 1))
    return disagreement


def clusters(labels: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
    """Groups of programs with identical outcome vectors, largest first (ties: lowest index)."""
    # Rows as bytes: np.unique(axis=0) builds a structured dtype with one field per input.
    rows = np.ascontiguousarray(labels, dtype=np.int32)
    keys = sorted({r.tobytes() for r in rows})
    index = {k: i for i, k in enumerate(keys)}
    inverse = np.array([index[r.tobytes()] for r in rows], dtype=np.intp)
    groups: dict[int, list[int]] = {}
    for prog, key in enumerate(inverse.tolist()):
        groups.setdefault(key, []).append(prog)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    return ordered, inverse


def cluster_distance(a: int, b: int, labels: np.ndarray, raised: np.ndarray, errors: np.ndarray) -> float:
    """d(a, b): mean per-input distance between programs ``a`` and ``b`` of different clusters."""
    la, lb = labels[a], labels[b]
    ra, rb = raised[a], raised[b]
    both = ra & rb
    one = ra ^ rb
    same_error = both & (errors[a] == errors[b])
    delta = np.where(
        one,
        DIST_ONE_RAISED,
        np.where(both, np.where(same_error, DIST_RAISED_SAME, DIST_RAISED_DIFFERENT), np.where(la == lb, 0.0, 1.0)),
    )
    return float(delta.mean()) if delta.size else 0.0


def score(labels: np.ndarray, raised: np.ndarray, errors: np.ndarray, *, delta: float = 0.05) -> Metrics:
    """Metrics for an m x n label matrix; program 0 is the user's function.

    ``raised[i, x]`` is true when program i raised on input x; ``errors[i, x]`` is an integer code
    of the exception type (any value where nothing was raised).
    """
    labels = np.asarray(labels)
    m, n = labels.shape
    per_input = per_input_disagreement(labels)
    inc = float(per_input.mean()) if n else 0.0
    half_width = math.sqrt(math.log(2 / delta) / (2 * n)) if n else 1.0
    interval = (max(0.0, inc - half_width), min(1.0, inc + half_width))
    disagreement = float((labels[1:] != labels[0]).mean()) if m > 1 and n else 0.0
    pac = 1 - delta ** (1 / n) if (n and not per_input.any()) else None

    members, _ = clusters(labels)
    sizes = [len(g) for g in members]
    user_cluster = next(i for i, g in enumerate(members) if 0 in g)
    p = np.array(sizes, dtype=float) / m
    reps = [g[0] for g in members]
    k = len(members)
    d = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            d[i, j] = d[j, i] = cluster_distance(reps[i], reps[j], labels, raised, errors)
    sde = float(sum(p[i] * p[j] * d[i, j] for i in range(k) for j in range(i + 1, k)))
    dsde = float(sum(p[i] * d[user_cluster, i] for i in range(k) if i != user_cluster))
    return Metrics(
        programs=m,
        inputs=n,
        incoherence=inc,
        incoherence_interval=interval,
        disagreement=disagreement,
        error_lower_bound=inc / 2,
        pac_bound=pac,
        delta=delta,
        sde=sde,
        dsde=dsde,
        trust=1.0 - dsde,
        cluster_sizes=sizes,
        cluster_members=members,
        user_cluster=user_cluster,
        per_input=per_input,
    )
