"""The panel table of the README: every ``gain.json`` that ``coherence eval --panel ... --baseline
DIR`` wrote under the given folders, as one markdown row per (author, panel), same-model figures
against the panel's on the tasks both runs checked.

    python benchmarks/eval_panel_table.py /work/panel-runs
    python benchmarks/eval_panel_table.py --by-author /work/panel-runs   # a row per author, a column
                                                                         # per kind of panel, and the
                                                                         # pooled figures per kind

A panel that lists the author's own corpus among its members ("its own + 2 others") keeps the
author's model in the panel (``eval.panel.compose`` never draws candidate 0 itself).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def rows(roots: list[Path]):
    for path in sorted(p for root in roots for p in root.rglob("gain.json")):
        run = path.parent
        meta = json.loads((run / "run.json").read_text())["settings"]
        gain = json.loads(path.read_text())
        yield meta, gain, run


def composition(meta: dict) -> tuple[bool, int]:
    """What a panel's alternatives come from: whether the author's own model is a member, and how
    many other models are."""
    members = meta["panel"].split("+")
    own = meta["model"] in members
    return own, len(members) - own


def label(kind: tuple[bool, int]) -> str:
    """``"3 others"`` or ``"its own + 2 others"``."""
    own, others = kind
    return ("its own + " if own else "") + f"{others} other" + ("s" if others > 1 else "")


def fmt(x) -> str:
    return "–" if x is None else (f"{x:.2f}" if isinstance(x, float) else str(x))


def by_author(roots: list[Path]) -> None:
    """One row per (benchmark, author): the same-model figures, then each kind of panel's; then
    per kind, the figures pooled over the authors (counts added, not rates averaged)."""
    cells: dict[tuple[str, str], dict[str, dict]] = {}
    kinds_seen: set[tuple[bool, int]] = set()
    for meta, g, _run in rows(roots):
        kind = composition(meta)
        kinds_seen.add(kind)
        k = label(kind)
        row = cells.setdefault((meta["benchmark"], meta["model"]), {})
        row.setdefault("same", dict(g["same_model"], tasks=g["tasks"]))
        row[k] = dict(g["panel"], tasks=g["tasks"])
    # the author's own alternatives, then panels that keep its model, then panels of others only
    order = ["same"] + [label(k) for k in sorted(kinds_seen, key=lambda k: (not k[0], k[1]))]

    def cell(f: dict | None) -> str:
        if not f:
            return "–"
        return (
            f"{fmt(f['warning_recall_tests'])} / {fmt(f['warning_precision_verified'])} / {f['diagnostics_on_passing']}"
        )

    print("| benchmark | candidate 0 from | tasks | failing | " + " | ".join(order) + " |")
    print("|---|---|---|---|" + "---|" * len(order))
    pooled: dict[tuple[str, str], dict[str, float]] = {}
    for (bench, model), row in sorted(cells.items()):
        base = row["same"]
        print(
            f"| {bench} | {model} | {base['tasks']} | {base['failing']} | "
            + " | ".join(cell(row.get(k)) for k in order)
            + " |"
        )
        for k in order:
            f = row.get(k)
            if not f:
                continue
            a = pooled.setdefault(
                (bench, k), {"authors": 0, "failing": 0, "found": 0, "w": 0, "verified": 0, "passing": 0}
            )
            # gain.json holds rates (``verdicts._share``: 4 decimals) of counts under 10,000,
            # so rate x denominator, rounded, is the count itself
            a["authors"] += 1
            a["failing"] += f["failing"]
            a["found"] += round((f["warning_recall_tests"] or 0) * f["failing"])
            a["w"] += f["warnings"]
            a["verified"] += round((f["warning_precision_verified"] or 0) * f["warnings"])
            a["passing"] += f["diagnostics_on_passing"]
    print()
    print(
        "| benchmark | alternatives from | authors | failing | W recall | W precision (verified) | diagnostics on passing |"
    )
    print("|---|---|---|---|---|---|---|")
    for (bench, k), a in sorted(pooled.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1]))):
        print(
            f"| {bench} | {k} | {a['authors']} | {a['failing']} | {a['found'] / max(1, a['failing']):.3f} | "
            f"{a['verified'] / max(1, a['w']):.3f} | {a['passing']} |"
        )


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--by-author":
        by_author([Path(a) for a in argv[1:] or ["."]])
        return 0
    print(
        "| benchmark | candidate 0 from | alternatives from | tasks | failing | W recall: same → panel | "
        "W prec. (verified): same → panel | diagnostics on passing: same → panel | on clean: same → panel |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for meta, g, _run in rows([Path(a) for a in argv or ["."]]):
        s, p = g["same_model"], g["panel"]
        members = meta["panel"].split("+")
        names = [("its own" if m == meta["model"] else m) for m in members]
        who = label(composition(meta)) if len(members) > 3 else ", ".join(names)
        print(
            f"| {meta['benchmark']} | {meta['model']} | {who} | {g['tasks']} | {s['failing']} | "
            f"{fmt(s['warning_recall_tests'])} → **{fmt(p['warning_recall_tests'])}** | "
            f"{fmt(s['warning_precision_verified'])} → **{fmt(p['warning_precision_verified'])}** | "
            f"{s['diagnostics_on_passing']} → {p['diagnostics_on_passing']} | {s['diagnostics_on_clean']} → {p['diagnostics_on_clean']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
