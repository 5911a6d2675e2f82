"""The panel table of the README: every ``gain.json`` that ``coherence eval --panel ... --baseline
DIR`` wrote under the given folders, as one markdown row per (author, panel), same-model figures
against the panel's on the tasks both runs checked.

    python benchmarks/eval_panel_table.py /work/panel-runs
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


def main(argv: list[str]) -> int:
    f = lambda x: "–" if x is None else (f"{x:.2f}" if isinstance(x, float) else str(x))  # noqa: E731
    print(
        "| benchmark | candidate 0 from | alternatives from | tasks | failing | W recall: same → panel | "
        "W prec. (verified): same → panel | diagnostics on passing: same → panel | on clean: same → panel |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for meta, g, _run in rows([Path(a) for a in argv or ["."]]):
        s, p = g["same_model"], g["panel"]
        members = meta["panel"].split("+")
        who = f"{len(members)} others" if len(members) > 3 else ", ".join(members)
        print(
            f"| {meta['benchmark']} | {meta['model']} | {who} | {g['tasks']} | {s['failing']} | "
            f"{f(s['warning_recall_tests'])} → **{f(p['warning_recall_tests'])}** | "
            f"{f(s['warning_precision_verified'])} → **{f(p['warning_precision_verified'])}** | "
            f"{s['diagnostics_on_passing']} → {p['diagnostics_on_passing']} | {s['diagnostics_on_clean']} → {p['diagnostics_on_clean']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
