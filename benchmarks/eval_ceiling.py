"""How far can any verdict computed from the outcome matrix go?  A ceiling for the severity rule.

The engine's Warning is a function of the m x n outcome matrix (plus the docstring's examples,
which MBPP's task sentences do not have).  This script learns the best such function it can
from recorded runs, validated leave-one-model-out, and prints the precision it reaches at each
recall, so a target can be compared with what the matrix can carry at all.

    pip install scikit-learn      # not a dependency of coherence; only this script needs it
    python benchmarks/eval_ceiling.py RUN_ROOT...   # e.g. coherence eval --keep-matrices output

Label (per function): positive when candidate 0 fails the benchmark's tests, or when on some
input the reference accepts, the reference returns what a bloc of alternatives against yours
returns: the best a counterexample could do, so "precision" here is an upper bound on
``warning_precision_verified``, which asks it of the one counterexample shown.

Scores: gradient-boosted trees (scikit-learn's HistGradientBoostingClassifier) over 24
summary features of the matrix (shares of inputs with a disagreement, bloc sizes, who raises,
cluster count and the user's cluster, Î, SDE, DSDE, trust...), trained on seven models and
scored on the eighth.  Trees can only overfit in the direction of a higher ceiling, and the
held-out model keeps that honest.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_verdict_rules import tasks, unpack


def features(r: dict, labels: np.ndarray, raised: np.ndarray, inside: np.ndarray) -> dict[str, float]:
    m, n = labels.shape
    alts = m - 1
    yours = labels[0]
    differs = labels[1:] != yours
    against = differs.sum(0)
    bloc = np.array([max(Counter(labels[1:, x][differs[:, x]]).values(), default=0) for x in range(n)])
    agree = alts - against
    dis = against > 0
    pairwise = (labels[:, None, :] != labels[None, :, :]).mean(2)
    return {
        "alternatives": alts,
        "share of inputs with a disagreement": dis.mean(),
        "the same, inside the domain": (dis & inside).mean(),
        "largest bloc": bloc.max() / alts,
        "largest bloc inside": (bloc * inside).max() / alts,
        "mean against": against.mean() / alts,
        "mean against where any": against[dis].mean() / alts if dis.any() else 0.0,
        "share with a majority bloc": (bloc >= alts / 2).mean(),
        "share with a majority bloc, 1/3 on yours": ((bloc >= alts / 2) & (agree <= alts / 3)).mean(),
        "least agree where any": agree[dis].min() / alts if dis.any() else 1.0,
        "mean agree where any": agree[dis].mean() / alts if dis.any() else 1.0,
        "yours raises": raised[0].mean(),
        "alternatives raise": raised[1:].mean(),
        "yours raises where any": raised[0][dis].mean() if dis.any() else 0.0,
        "alternatives raise where any": raised[1:, dis].mean() if dis.any() else 0.0,
        "yours raises more": raised[0].mean() - raised[1:].mean(),
        "clusters": len({tuple(row) for row in labels}),
        "your cluster": sum(np.array_equal(row, yours) for row in labels[1:]) / alts,
        "alternatives that differ anywhere": differs.any(1).mean(),
        "yours off-centre": pairwise[0].sum() / alts - pairwise.sum() / (m * alts),
        "dsde": r.get("dsde") or 0.0,
        "sde": r.get("sde") or 0.0,
        "incoherence": r.get("incoherence") or 0.0,
        "trust": r.get("trust") or 0.0,
    }


def bloc_agrees_with_reference(labels, ref, ref_raised) -> bool:
    """On some input the reference accepts, it returns what an alternative against yours does."""
    differs = labels[1:] != labels[0]
    return bool(((labels[1:] == ref) & differs & ~ref_raised).any())


def collect(roots: list[Path]):
    rows = []
    for root in roots:
        for r, mtx in tasks(root):
            if r.get("candidate0_pass") is None:
                continue
            labels, raised, ref, ref_raised, inside = unpack(mtx)
            if labels.shape[1] == 0 or labels.shape[0] < 2:
                continue
            fails = not r["candidate0_pass"]
            positive = fails or bloc_agrees_with_reference(labels, ref, ref_raised)
            rows.append((r["model"], fails, positive, r.get("severity") or "none", features(r, labels, raised, inside)))
    return rows


def main(argv: list[str]) -> int:
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.metrics import roc_auc_score
    except ImportError:
        print("this script needs scikit-learn: pip install scikit-learn", file=sys.stderr)
        return 2
    rows = collect([Path(a) for a in argv])
    if not rows:
        print("no runs with matrices under", argv, file=sys.stderr)
        return 2
    names = list(rows[0][4])
    X = np.array([[row[4][k] for k in names] for row in rows])
    model = np.array([row[0] for row in rows])
    fails = np.array([row[1] for row in rows])
    positive = np.array([row[2] for row in rows])
    shipped = np.array([row[3] == "warning" for row in rows])
    score = np.zeros(len(rows))
    for held_out in np.unique(model):
        train = model != held_out
        clf = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, random_state=0)
        clf.fit(X[train], positive[train])
        score[~train] = clf.predict_proba(X[~train])[:, 1]
    order = np.argsort(-score, kind="stable")
    failing = fails.sum()
    print(
        f"{len(rows)} functions, {failing} failing, {positive.sum()} positive (failing, or a bloc the reference backs)"
    )
    print(f"AUROC of the learned score (leave-one-model-out): {roc_auc_score(positive, score):.3f}")
    print("\n| flagged | recall (tests) | precision, upper bound of verified | precision (tests) |")
    print("|---|---|---|---|")
    for target in (0.2, 0.3, 0.4, 0.5, 0.6):
        for k in range(1, len(rows) + 1):
            top = order[:k]
            if fails[top].sum() >= target * failing:
                print(
                    f"| {k} | {fails[top].sum() / failing:.3f} | {positive[top].mean():.3f} | {fails[top].mean():.3f} |"
                )
                break
    print(
        f"| shipped rule: {shipped.sum()} Warnings | {(shipped & fails).sum() / failing:.3f} | "
        f"{positive[shipped].mean():.3f} | {fails[shipped].mean():.3f} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
