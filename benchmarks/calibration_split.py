"""Held-out trust per benchmark, panel or not, and severity: mean trust against share right.

Not a test: it prints figures.  ``calibration.md`` pools a benchmark's same-model and panel runs;
this splits them, with the same nested leave-one-model-out fit as ``coherence eval --calibrate``.

    python benchmarks/calibration_split.py RUNS...
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.eval import calibration


def main(dirs: list[str]) -> int:
    if not dirs:
        print(__doc__, file=sys.stderr)
        return 2
    records, _, _ = calibration.read_dirs(dirs)
    rows = calibration.rows_of(records)
    probs, _ = calibration.held_out(rows)
    print("| benchmark | checked by | severity | n | trust (held out) | share right | gap |")
    print("|---|---|---|---|---|---|---|")
    for panel in (False, True):
        kept = [(r, p) for r, p in zip(rows, probs) if r.panel == panel]
        table = calibration.by_severity([r for r, _ in kept], [p for _, p in kept])
        for bench, cells in table.items():
            for sev, c in cells.items():
                who = "a panel" if panel else "one model"
                print(
                    f"| {bench} | {who} | {sev} | {c['n']} | {c['trust']:.3f} | {c['right']:.3f} | "
                    f"{c['trust'] - c['right']:+.3f} |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
