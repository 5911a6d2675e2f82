"""How many failing functions can a vote of the alternatives reach at all?  An exact bound.

A Warning says "evidence that yours is wrong"; from the alternatives alone, that evidence is an
input where alternatives that agree with each other outnumber the ones that agree with yours.
This script sorts every checked function of recorded runs by the best vote it ever gets:

- **coherent**: no alternative differs from yours on any input;
- **outvoted**: on some input, a bloc of alternatives that agree with each other (on a value or
  an exception other than yours) is larger than the alternatives that agree with yours;
- **tie**: on some input such a bloc is as large as your side, and never larger;
- **your side larger**: on every input where any alternative differs, more alternatives agree
  with yours than with any rival.

A rule that warns only where the vote goes against yours (or ties) can warn on no failing
function of the last two kinds, whatever else it looks at, so ``(outvoted + tie) / failing`` is
the highest Warning recall it can reach.  Its best precision is that of warning on every
outvoted function, counting one as verified when it fails its tests or when, on some input the
reference accepts, the reference returns what an outvoting bloc returns (a better
counterexample than any the engine could pick).  The engine's own rule also reads the
docstring's worked examples, which can carry it past the bound where a spec has them
(HumanEval) and not where it has none (MBPP's one-sentence tasks).

    python benchmarks/eval_vote_bound.py RUN_ROOT...   # coherence eval --keep-matrices output

The inputs every program reached are the ones counted (``eval_verdict_rules.unpack``).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_verdict_rules import tasks, unpack

KINDS = ("coherent", "outvoted", "tie", "your side larger")


def best_vote(labels: np.ndarray) -> tuple[str, list[tuple[int, int]]]:
    """The function's kind, and the (input, outcome label) pairs where a bloc outvotes yours."""
    yours, alts = labels[0], labels[1:]
    margin: int | None = None
    outvoting: list[tuple[int, int]] = []
    for x in range(labels.shape[1]):
        column = alts[:, x]
        rivals = Counter(column[column != yours[x]].tolist())
        if not rivals:
            continue
        agree = int((column == yours[x]).sum())
        bloc = rivals.most_common(1)[0][1]
        margin = bloc - agree if margin is None else max(margin, bloc - agree)
        outvoting += [(x, v) for v, b in rivals.items() if b > agree]
    if margin is None:
        return "coherent", []
    return ("outvoted" if margin > 0 else "tie" if margin == 0 else "your side larger"), outvoting


def tally(roots: list[Path]) -> dict[str, Counter]:
    rows: dict[str, Counter] = defaultdict(Counter)
    for root in roots:
        for r, mtx in tasks(root):
            labels, _raised, ref, ref_raised, _inside = unpack(mtx)
            kind, outvoting = best_vote(labels)
            fails = not r.get("candidate0_pass")
            verifiable = fails or any(not ref_raised[x] and ref[x] == v for x, v in outvoting)
            for key in (str(r.get("benchmark", "")), f"{r.get('benchmark', '')} {r['model']}"):
                row = rows[key]
                row["functions"] += 1
                row["failing"] += fails
                row[kind, fails] += 1
                if kind == "outvoted" and verifiable:
                    row["outvoted verifiable"] += 1
    return rows


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: python benchmarks/eval_vote_bound.py RUN_ROOT...", file=sys.stderr)
        return 2
    rows = tally([Path(a) for a in argv])
    f = lambda a, b: f"{a / b:.3f}" if b else "–"  # noqa: E731
    head = " | ".join(f"{k}: failing / passing" for k in KINDS)
    print(f"| runs | functions | failing | {head} | recall bound | its best verified precision |")
    print("|---|---|---|" + "---|" * len(KINDS) + "---|---|")
    for key in sorted(rows, key=lambda k: (" " in k, k)):
        r = rows[key]
        cells = " | ".join(f"{r[k, True]} / {r[k, False]}" for k in KINDS)
        reach = r["outvoted", True] + r["tie", True]
        flagged = r["outvoted", True] + r["outvoted", False]
        print(
            f"| {key or 'all'} | {r['functions']} | {r['failing']} | {cells} | {f(reach, r['failing'])} | "
            f"{f(r['outvoted verifiable'], flagged)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
