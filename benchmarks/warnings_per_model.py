"""Warning recall (failing functions that get a warning) and verified precision of the shipped
severity rule, per model and pooled, from ``coherence eval`` runs; then the bloc-share
alternative: diagnostics whose bloc holds at least a share s of the alternatives and outvotes
yours, with s chosen on the other models for the best recall at a precision target and applied to
the held-out one (leave-one-model-out), and the in-sample frontier over s.  Prints text; no
sandbox runs.

    python benchmarks/warnings_per_model.py RUN_ROOT TARGET [RUN_ROOT TARGET ...]
    # e.g. coherence-eval/he 0.9 coherence-eval/mb 0.85

Definitions (``verified``, ``fails``): ``coherence.eval.verdicts``.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from coherence.eval.verdicts import DIAGNOSTIC, _bloc_share, _checked, fails, verified

Counts = tuple[int, int, int, int]  # flagged, flagged and verified, flagged and failing, failing
SHARES = [k / 20 for k in range(2, 21)]


def load(root: Path) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = defaultdict(list)
    for f in sorted(root.rglob("tasks.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                by[r["model"]].append(r)
    return {m: _checked(rs) for m, rs in by.items()}


def counts(records: list[dict], flag: Callable[[dict], bool]) -> Counts:
    flagged = [r for r in records if flag(r)]
    return (
        len(flagged),
        sum(verified(r) for r in flagged),
        sum(fails(r) for r in flagged),
        sum(fails(r) for r in records),
    )


def shown(c: Counts) -> str:
    n, v, tp, failing = c
    recall = f"{tp / failing:.3f}" if failing else "–"
    precision = f"{v / n:.3f}" if n else "–"
    return f"{recall} / {precision} ({n} warnings, {failing} failing)"


def shipped(r: dict) -> bool:
    return r.get("severity") == "warning"


def bloc_at_least(s: float) -> Callable[[dict], bool]:
    def flag(r: dict) -> bool:
        ev = r.get("evidence") or {}
        return r.get("severity") in DIAGNOSTIC and _bloc_share(r) >= s - 1e-9 and ev.get("bloc", 0) > ev.get("agree", 0)

    return flag


def add(a: Counts, b: Counts) -> Counts:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


def report(root: Path, target: float) -> None:
    data = load(root)
    print(f"## {root} (precision target {target})")
    total: Counts = (0, 0, 0, 0)
    for model in sorted(data):
        c = counts(data[model], shipped)
        total = add(total, c)
        print(f"  {model:24s} shipped rule: {shown(c)}")
    print(f"  {'pooled':24s} shipped rule: {shown(total)}")
    held: Counts = (0, 0, 0, 0)
    chosen = set()
    for model in sorted(data):
        rest = [r for other, rs in data.items() if other != model for r in rs]
        best: tuple[float, int] | None = None
        for s in SHARES:
            n, v, tp, _ = counts(rest, bloc_at_least(s))
            if n and v / n >= target and (best is None or tp > best[1]):
                best = (s, tp)
        s = best[0] if best else 1.0
        chosen.add(s)
        held = add(held, counts(data[model], bloc_at_least(s)))
    print(f"  bloc share chosen leave-one-model-out ({sorted(chosen)}): {shown(held)}")
    every = [r for rs in data.values() for r in rs]
    front = "; ".join(f"s={s:.2f}: {shown(counts(every, bloc_at_least(s))).split(' (')[0]}" for s in SHARES[::2])
    print(f"  frontier (in sample): {front}")


def main(argv: list[str]) -> int:
    if len(argv) < 2 or len(argv) % 2:
        print(__doc__)
        return 2
    for root, target in zip(argv[::2], argv[1::2]):
        report(Path(root), float(target))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
