"""Held-out trust per benchmark, panel or not, and severity: mean trust against share right.

Not a test: it prints figures.  ``calibration.md`` pools a benchmark's same-model and panel runs;
this splits them, with the same nested leave-one-model-out fit as ``coherence eval --calibrate``.

    python benchmarks/calibration_split.py RUNS...
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.engine.verdict import SEVERITIES
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
    for bench in sorted({r.benchmark for r in rows}):
        for panel in (False, True):
            for sev in SEVERITIES:
                idx = [
                    i
                    for i, r in enumerate(rows)
                    if r.benchmark == bench and r.panel == panel and r.severity == sev and probs[i] is not None
                ]
                if not idx:
                    continue
                trust = sum(p for i in idx if (p := probs[i]) is not None) / len(idx)
                right = sum(rows[i].right for i in idx) / len(idx)
                who = "a panel" if panel else "one model"
                print(f"| {bench} | {who} | {sev} | {len(idx)} | {trust:.3f} | {right:.3f} | {trust - right:+.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
