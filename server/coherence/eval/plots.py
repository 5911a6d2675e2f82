"""PNG plots (matplotlib, Agg backend): error vs incoherence with the I = 2E line, the ROC of DSDE,
and the pass@1 vs zero-incoherence rankings of ``--compare``.  matplotlib is the ``eval`` extra."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from coherence.eval.stats import auroc, roc_curve

CHECKED = ("coherent", "incoherent", "nondeterministic")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def error_vs_incoherence(records: list[dict], path: Path, title: str = "") -> None:
    """The paper's Figure 2: per task, Î (U-statistic) on x, pointwise error on y, with the line
    I = 2E (E = I/2, Theorem 4.1's bound).  Left: candidate 0's error; right: the mean error over
    the m programs (the E the theorem bounds).  Bubble area = number of tasks at that point."""
    plt = _plt()
    rows = [
        r
        for r in records
        if r.get("status") in CHECKED and r.get("error") is not None and r.get("incoherence") is not None
    ]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharey=True)
    for ax, key, label in (
        (axes[0], "error", "pointwise error of candidate 0"),
        (axes[1], "error_mean_candidates", "mean pointwise error of the m programs"),
    ):
        pts = Counter((round(r["incoherence"], 2), round(r[key], 2)) for r in rows if r.get(key) is not None)
        if pts:
            xs, ys, ss = zip(*[(x, y, c) for (x, y), c in pts.items()])
            fails = {
                (round(r["incoherence"], 2), round(r[key], 2))
                for r in rows
                if r.get(key) is not None and not r.get("candidate0_pass")
            }
            colors = ["tab:red" if (x, y) in fails else "tab:blue" for x, y in zip(xs, ys)]
            ax.scatter(xs, ys, s=[_area(c) for c in ss], c=colors, alpha=0.55, edgecolors="k", linewidths=0.4)
            for c in sorted({1, (max(ss) + 1) // 2, max(ss)}):  # what a bubble's size counts
                ax.scatter([], [], s=_area(c), c="lightgray", edgecolors="k", linewidths=0.4, label=_tasks(c))
        ax.plot([0, 1], [0, 0.5], "--", color="gray", label="I = 2E (error bound E ≥ I/2)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("incoherence Î (U-statistic)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_title("red: candidate 0 fails the tests", fontsize=9)
    fig.suptitle(f"Error vs incoherence per task ({len(rows)} tasks)" + (f"\n{title}" if title else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _area(count: int) -> float:
    return 20 + 12 * count


def _tasks(count: int) -> str:
    return f"{count} task{'' if count == 1 else 's'} at a point"


# Below these counts an ROC curve is a handful of steps: curves coincide and AUROCs swing by
# tenths from one task to the next, which the plot says in words.
SMALL_ROC_TASKS = 30
SMALL_ROC_CLASS = 10


def small_sample_note(tasks: int, failing: int) -> str | None:
    """The warning an ROC plot carries when its tasks are too few to read it, else None."""
    if tasks >= SMALL_ROC_TASKS and min(failing, tasks - failing) >= SMALL_ROC_CLASS:
        return None
    return (
        f"small sample: {tasks} tasks, {failing} failing, {tasks - failing} passing; "
        "the curves are coarse steps and may coincide, the AUROCs are not reliable"
    )


def roc(records: list[dict], path: Path, title: str = "") -> None:
    """ROC curves of DSDE (and SDE, Î) predicting that candidate 0 fails the benchmark tests."""
    plt = _plt()
    rows = [r for r in records if r.get("status") in CHECKED and r.get("dsde") is not None]
    fails = [not r.get("candidate0_pass") for r in rows]
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    for key, style in (("dsde", "-"), ("sde", "--"), ("incoherence", ":")):
        scores = [r[key] for r in rows]
        auc = auroc(scores, fails)
        if auc is None:
            continue
        fpr, tpr, _ = roc_curve(scores, fails)
        ax.plot(
            fpr,
            tpr,
            style,
            lw=2 if key == "dsde" else 1.3,
            label=f"{key.upper() if key != 'incoherence' else 'Î'} (AUROC {auc:.3f})",
        )
    ax.plot([0, 1], [0, 1], color="lightgray", lw=1)
    ax.set_xlabel("false positive rate (candidate 0 passes, flagged)")
    ax.set_ylabel("true positive rate (candidate 0 fails, flagged)")
    ax.set_title(
        f"ROC: predicting failure of candidate 0 ({sum(fails)} of {len(rows)} fail)" + (f"\n{title}" if title else ""),
        fontsize=9,
    )
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=8)
    else:
        ax.text(0.5, 0.5, "undefined: every task in one class", ha="center", va="center", fontsize=9)
    note = small_sample_note(len(rows), sum(fails))
    if note:
        ax.text(0.02, 0.98, note, ha="left", va="top", fontsize=7, color="tab:red", wrap=True, transform=ax.transAxes)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def compare_rankings(groups: list[dict], path: Path) -> None:
    """The paper's Figure 1: models ranked by pass@1 against ranked by share of I = 0, per benchmark."""
    plt = _plt()
    from coherence.eval.stats import rankdata

    groups = [g for g in groups if len(g["models"]) >= 2]
    if not groups:
        return
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 5), squeeze=False)
    for ax, g in zip(axes[0], groups):
        models = g["models"]
        n = len(models)
        # rank 1 = best: highest pass@1 / highest share of tasks with zero incoherence
        r_pass = rankdata([-m["pass_at_1"] for m in models])
        r_zero = rankdata([-m["share_zero_incoherence"] for m in models])
        ax.scatter(r_pass, r_zero, s=40)
        for m, x, y in zip(models, r_pass, r_zero):
            ax.annotate(str(m["model"]), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.plot([1, n], [1, n], "--", color="gray")
        ax.set_xlabel("rank by pass@1 (1 = best)")
        ax.set_ylabel("rank by share of tasks with Î = 0")
        rho = g.get("spearman")
        ax.set_title(
            f"{g['benchmark']} · seeds {g['seeds']} · ρ = {rho:.3f}"
            if rho is not None
            else f"{g['benchmark']} · seeds {g['seeds']}",
            fontsize=9,
        )
        ax.invert_xaxis()
        ax.invert_yaxis()
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def reliability_by_severity(rows: list[dict], path: Path, bins: int = 10) -> None:
    """One reliability diagram per severity: mean trust against the share right in equal-width
    bins of trust, per benchmark; filled markers for the held-out trust, hollow for the trust
    the runs recorded; marker area grows with the functions in the bin.  ``rows``: ``calibration.reliability_rows``."""
    from coherence.engine.result import SEVERITIES

    plt = _plt()
    fig, axes = plt.subplots(1, len(SEVERITIES), figsize=(4.2 * len(SEVERITIES), 4.4), sharey=True)
    colors = {"HumanEval": "tab:blue", "MBPP": "tab:orange"}
    for ax, sev in zip(axes, SEVERITIES):
        group = [r for r in rows if r["severity"] == sev]
        for bench in sorted({r["benchmark"] for r in group}):
            color = colors.get(bench, "tab:gray")
            mine = [r for r in group if r["benchmark"] == bench]
            for key, filled in (("trust", True), ("recorded", False)):
                pts = [(float(r[key]), bool(r["right"])) for r in mine if r.get(key) is not None]
                drawn = _binned(pts, bins)
                if not drawn:
                    continue
                xs, ys, ns = zip(*drawn)
                label = f"{bench} {'held out' if filled else 'recorded'} (n={len(pts)})"
                ax.plot(xs, ys, "-" if filled else ":", color=color, alpha=0.8 if filled else 0.5)
                ax.scatter(
                    xs,
                    ys,
                    s=[10 + 8 * n**0.5 for n in ns],
                    facecolors=color if filled else "none",
                    edgecolors=color,
                    label=label,
                )
        ax.plot([0, 1], [0, 1], "--", color="gray", linewidth=0.8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"{sev} ({len(group)} functions)", fontsize=10)
        ax.set_xlabel("trust")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right", fontsize=7)
    axes[0].set_ylabel("share right")
    fig.suptitle(
        "Trust against the share of functions that were right, per severity (leave-one-model-out)", fontsize=10
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _binned(pts: list[tuple[float, bool]], bins: int) -> list[tuple[float, float, int]]:
    out = []
    for b in range(bins):
        inside = [(p, y) for p, y in pts if b / bins <= p < (b + 1) / bins or (b == bins - 1 and p == 1.0)]
        if inside:
            out.append((sum(p for p, _ in inside) / len(inside), sum(y for _, y in inside) / len(inside), len(inside)))
    return out
