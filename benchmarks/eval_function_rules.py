"""Function-level extensions of the verdict: can a rule over a whole function's outcome matrix,
rather than the vote on one input, reach the MBPP targets?  From ``coherence eval
--keep-matrices`` output (panel runs or same-model runs); no sandbox runs.

    pip install scikit-learn      # only for the learned family; the others need numpy alone
    python benchmarks/eval_function_rules.py RUN_ROOT...
    python benchmarks/eval_function_rules.py --across HUMANEVAL_ROOT MBPP_ROOT   # does it transfer?

A function the shipped rule leaves below a warning gets one when its matrix's summary features
(``eval_ceiling.features``, and on a panel how many of its models stand whole against yours)
pass the extension.  Its evidence is the input with the largest bloc against yours, inside the
domain and out of every cap (``eval_panel_misses.features``), and the warning counts as verified
when the function fails its tests or the reference returns the bloc's value there.  Three
families, each chosen leave-one-model-out (for each held-out author, the member with the highest
recall at verified precision at least the floor on the other authors, else the shipped rule):
one feature against a threshold, two of them together, and gradient-boosted trees over all of
them but trust (fit on these runs), whose score threshold is chosen by a nested
leave-one-model-out.  The trees are also tried in place of the rule, deciding every warning.
Printed: each one's pooled out-of-sample recall and verified precision, beside the shipped
rule's replay (which verifies the rule's own input, not the shrunk counterexample a real run
verifies).

``--across``: the trees in place of the rule, trained on one benchmark's runs (each author held
out) and tested on the other's, then trained on both: whether what they learn is evidence or the
benchmark.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_ceiling import features as matrix_features
from eval_panel_misses import SHIPPED, backs_bloc, largest_bloc, task_view, verdict_of
from eval_panel_misses import features as input_features
from eval_panel_rules import origins_of
from eval_verdict_rules import checked

FLOORS = (0.85, 0.87, 0.9)
# Trust is left out: its maps were fit on these very runs' labels, so it would carry the
# held-out author's labels into the training (the rest is read off the matrix alone).
LEFT_OUT = ("trust",)
GRID = np.linspace(0.0, 1.0, 41)  # quantiles of each feature tried as its threshold
PAIR_GRID = np.linspace(0.1, 0.9, 9)


def functions(roots: list[Path]):
    """Per checked function: its author, whether it fails, the shipped verdict's warning and
    verification, whether an added warning would be verified, and its features."""
    for run in sorted({p.parent for root in roots for p in root.rglob("matrices.jsonl")}):
        origins = origins_of(run)
        for r, mtx in checked(run, complete=True):
            t = task_view(run.name, r, mtx, origins)
            labels = t["labels"]
            if labels.shape[1] == 0 or labels.shape[0] < 2:
                continue
            fails = t["fails"]
            ev = verdict_of(t, (SHIPPED, ()))
            per_input = input_features(t)
            evidence = largest_bloc(per_input) if len(per_input) else None
            f = matrix_features(r, labels, t["raised"], t["inside"])
            f.update(_panel_features(labels, t["models"]))
            yield {
                "author": run.name,
                "fails": fails,
                "warning": ev.severity == "warning",
                "verified": fails or (ev.severity == "warning" and backs_bloc(t, ev)),
                "has_evidence": evidence is not None,
                "added_verified": fails or (evidence is not None and bool(evidence[6])),
                "features": f,
            }


def _panel_features(labels: np.ndarray, models: list[str]) -> dict[str, float]:
    """How many of the panel's models stand whole against yours (0 on a same-model run)."""
    alts = models[1:]
    groups = [np.array([i for i, m in enumerate(alts) if m == name]) for name in sorted(set(alts))]
    groups = [g for g in groups if len(g) >= 2 and len(groups) > 1]
    if not groups:
        return {"models whole against, most": 0.0, "inputs with two models whole against": 0.0}
    differs = labels[1:] != labels[0]
    whole = np.array([differs[g].all(axis=0) for g in groups]).sum(axis=0)
    return {
        "models whole against, most": float(whole.max()),
        "inputs with two models whole against": float((whole >= 2).mean()),
    }


class Table:
    """The functions as arrays, and the pooled figures of a set of warnings."""

    def __init__(self, rows: list[dict]):
        self.names = [k for k in rows[0]["features"] if k not in LEFT_OUT]
        self.X = np.array([[r["features"][k] for k in self.names] for r in rows], dtype=float)
        self.author = np.array([r["author"] for r in rows])
        self.fails = np.array([r["fails"] for r in rows])
        self.shipped = np.array([r["warning"] for r in rows])
        # whether a warning on each function would be verified: the shipped evidence where the
        # shipped rule warns, the largest bloc's input where an extension adds one
        self.ok = np.array([bool(r["verified"] if r["warning"] else r["added_verified"]) for r in rows])
        self.open = ~self.shipped & np.array([r["has_evidence"] for r in rows])

    def figures(self, warn: np.ndarray, where: np.ndarray | None = None) -> tuple[float, float, int]:
        """Recall, verified precision and the number of warnings (``where``: of these functions)."""
        if where is not None:
            warn, fails, ok = warn[where], self.fails[where], self.ok[where]
        else:
            fails, ok = self.fails, self.ok
        return (*_figures(warn, fails, ok), int(warn.sum()))

    def thresholds(self, grid: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Single-feature extensions: ``feature >= q`` and ``feature <= q`` at the grid's quantiles
        of the open functions' values."""
        out = []
        for j, name in enumerate(self.names):
            for q in np.unique(np.quantile(self.X[self.open, j], grid)):
                out.append((f"{name} >= {q:.3g}", self.open & (self.X[:, j] >= q)))
                out.append((f"{name} <= {q:.3g}", self.open & (self.X[:, j] <= q)))
        return out

    def lomo(self, family: list[tuple[str, np.ndarray]], floor: float) -> tuple[np.ndarray, list[str]]:
        """Each held-out author warned as the extension chosen on the others would."""
        added = np.array([a for _, a in family]) if family else np.zeros((0, len(self.fails)), dtype=bool)
        warn, chosen = self.shipped.copy(), []
        for held in np.unique(self.author):
            train = self.author != held
            w = added[:, train] | self.shipped[train]
            recall = (w & self.fails[train]).sum(axis=1) / max(self.fails[train].sum(), 1)
            precision = (w & self.ok[train]).sum(axis=1) / np.maximum(w.sum(axis=1), 1)
            good = np.flatnonzero(precision >= floor)
            base = self.figures(self.shipped, train)[0]
            if good.size and recall[good].max() > base:
                best = good[np.argmax(recall[good])]
                warn[~train] |= added[best][~train]
                chosen.append(f"{held}: {family[best][0]}")
            else:
                chosen.append(f"{held}: none (shipped)")
        return warn, chosen

    def pool(self, replace: bool) -> np.ndarray:
        """The functions an extension may warn on (``replace``: the shipped warnings too)."""
        return (self.open | self.shipped) if replace else self.open


def _figures(warn: np.ndarray, fails: np.ndarray, ok: np.ndarray) -> tuple[float, float]:
    return (warn & fails).sum() / max(fails.sum(), 1), ok[warn].mean() if warn.any() else 0.0


_SCORES: dict[tuple[int, int, str], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


def _scores(train: Table, test: Table, held: str):
    """For one held-out author: the training rows, their out-of-sample scores (each of the other
    authors scored by trees fit on the rest), the held-out author's rows in ``test`` and their
    scores by trees fit on every training row.  Kept: each floor reuses them."""
    key = (id(train), id(test), held)
    if key not in _SCORES:
        from sklearn.ensemble import HistGradientBoostingClassifier

        def fit(idx: np.ndarray):
            clf = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, random_state=0)
            return clf.fit(train.X[idx], train.ok[idx])

        idx = np.flatnonzero(train.author != held)
        inner = np.zeros(len(idx))
        for other in np.unique(train.author[idx]):
            mask = train.author[idx] != other
            inner[~mask] = fit(idx[mask]).predict_proba(train.X[idx[~mask]])[:, 1]
        rows = np.flatnonzero(test.author == held)
        _SCORES[key] = (idx, inner, rows, fit(idx).predict_proba(test.X[rows])[:, 1])
    return _SCORES[key]


def trees(train: Table, test: Table, floor: float, *, replace: bool = False) -> np.ndarray | None:
    """Warnings on ``test``: the shipped rule's and those the trees add (``replace``: the trees'
    alone), for each author trained on ``train``'s other authors, the score threshold chosen on
    their out-of-sample scores (a nested leave-one-model-out) for the highest recall at verified
    precision at least ``floor``.  None without scikit-learn."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return None
    warn = np.zeros_like(test.shipped) if replace else test.shipped.copy()
    for held in np.unique(test.author):
        idx, inner, rows, score = _scores(train, test, held)
        base = np.zeros(len(idx), dtype=bool) if replace else train.shipped[idx]
        fails, ok, pool = train.fails[idx], train.ok[idx], train.pool(replace)[idx]
        best, best_recall = None, _figures(base, fails, ok)[0]
        for q in np.quantile(inner, np.linspace(0.3, 0.995, 140)):
            recall, precision = _figures(base | ((inner >= q) & pool), fails, ok)
            if precision >= floor and recall > best_recall:
                best, best_recall = q, recall
        if best is not None:
            warn[rows] |= (score >= best) & test.pool(replace)[rows]
    return warn


def pairs(singles: list[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
    out = []
    for i, (a, ma) in enumerate(singles):
        for b, mb in singles[i + 1 :]:
            both = ma & mb
            if both.any():
                out.append((f"{a} and {b}", both))
    return out


def across(a_root: Path, b_root: Path) -> int:
    """The trees in place of the rule, trained on one benchmark's runs and tested on the other's
    (then on both), each author held out of the training."""
    a, b = list(functions([a_root])), list(functions([b_root]))
    if not a or not b:
        print("no runs with matrices under", a_root, "or", b_root, file=sys.stderr)
        return 2
    ta, tb, both = Table(a), Table(b), Table(a + b)
    print("| trained on | tested on | floor | warnings | W recall | W prec. (verified) |\n|---|---|---|---|---|---|")
    for test_name, test in ((a_root.name, ta), (b_root.name, tb)):
        r, p, w = test.figures(test.shipped)
        print(f"| shipped (replayed) | {test_name} | - | {w} | {r:.3f} | {p:.3f} |")
    for floor in FLOORS:
        for train_name, train, test_name, test in (
            (a_root.name, ta, b_root.name, tb),
            (b_root.name, tb, a_root.name, ta),
            ("both", both, a_root.name, ta),
            ("both", both, b_root.name, tb),
        ):
            warn = trees(train, test, floor, replace=True)
            if warn is None:
                print("this comparison needs scikit-learn: pip install scikit-learn", file=sys.stderr)
                return 2
            r, p, w = test.figures(warn)
            print(f"| {train_name} | {test_name} | {floor} | {w} | {r:.3f} | {p:.3f} |")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--across"] and len(argv) == 3:
        return across(Path(argv[1]), Path(argv[2]))
    rows = list(functions([Path(a) for a in argv]))
    if not rows:
        print("no runs with matrices under", argv, file=sys.stderr)
        return 2
    tb = Table(rows)
    print(
        f"{len(rows)} functions, {tb.fails.sum()} failing; below a warning with a bloc to show: {tb.open.sum()} "
        f"({(tb.open & tb.fails).sum()} failing)\n"
    )
    print("| rule | floor | warnings | W recall | W prec. (verified) |\n|---|---|---|---|---|")
    r, p, w = tb.figures(tb.shipped)
    print(f"| shipped (replayed) | - | {w} | {r:.3f} | {p:.3f} |")
    singles = tb.thresholds(GRID)
    families = {
        f"one feature ({len(singles)} thresholds)": singles,
        "two features together": pairs(tb.thresholds(PAIR_GRID)),
    }
    chosen_by: dict[str, list[str]] = {}
    for floor in FLOORS:
        for name, family in families.items():
            warn, chosen = tb.lomo(family, floor)
            chosen_by[f"{name}, floor {floor}"] = chosen
            r, p, w = tb.figures(warn)
            print(f"| {name}, leave-one-model-out | {floor} | {w} | {r:.3f} | {p:.3f} |")
        for name, replace in (("gradient-boosted trees", False), ("the trees in place of the rule", True)):
            warn = trees(tb, tb, floor, replace=replace)
            if warn is not None:
                r, p, w = tb.figures(warn)
                print(f"| {name}, leave-one-model-out | {floor} | {w} | {r:.3f} | {p:.3f} |")
    for name, chosen in chosen_by.items():
        print(f"\n{name}:\n  " + "\n  ".join(chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
