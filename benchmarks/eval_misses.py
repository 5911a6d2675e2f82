"""Where does detection fall short?  Reads ``tasks.jsonl`` of ``coherence eval`` runs and lists the
missed tasks (pointwise error > 0 or failing tests, but Î = 0) with the input that shows the error.

    python benchmarks/eval_misses.py RUN_DIR [--against OTHER_RUN_DIR] [--limit 30]

With ``--against`` (e.g. the ``--seeds tests`` run of the same model and benchmark), it also lists
the tasks the other run detects and this one misses, and classifies every miss:

- ``shared-bug``: on the inputs where candidate 0 is wrong, every alternative agrees with it (the m
  programs share the bug: no input can reveal it by disagreement);
- ``mutation-only``: candidate 0 differs from the reference only in how it changes its arguments;
- ``test-only``: error 0 on the fuzzed inputs, yet candidate 0 fails the benchmark tests (the inputs
  never reach the failing case, or the failure is outside the comparison, e.g. a timeout);
- ``inputs``: some alternative would disagree with candidate 0 on a wrong input of the other run,
  but this run's inputs never reach such a case.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.eval.runner import read_records


def load(run_dir: str) -> dict[str, dict]:
    paths = sorted(Path(run_dir).rglob("tasks.jsonl"))
    out = {}
    for p in paths:
        for r in read_records(p):
            out[f"{r.get('benchmark')}|{r.get('model')}|{r['task_id']}"] = r
    return out


def missed(r: dict) -> bool:
    if r.get("incoherence") is None or r["incoherence"] > 0:
        return False
    return (r.get("error") or 0) > 0 or not r.get("candidate0_pass", True)


def kind(r: dict, other: dict | None) -> str:
    err = r.get("error") or 0
    if err > 0 and (r.get("error_value") or 0) == 0:
        return "mutation-only"
    if err == 0:
        return "test-only"
    if other is not None and other.get("incoherence", 0) > 0 and (other.get("wrong_flagged") or 0) > 0:
        return "inputs"
    if (r.get("wrong_flagged") or 0) == 0:
        return "shared-bug"
    return "other"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--against")
    ap.add_argument("--limit", type=int, default=30)
    args = ap.parse_args()
    here = load(args.run)
    there = load(args.against) if args.against else {}
    misses = [(k, r) for k, r in here.items() if missed(r)]
    kinds = Counter(kind(r, there.get(k)) for k, r in misses)
    print(f"{len(misses)} missed tasks of {len(here)} (error > 0 or failing tests, Î = 0): {dict(kinds)}")
    if there:
        only_there = [
            (k, r, there[k]) for k, r in here.items() if k in there and missed(r) and there[k].get("incoherence", 0) > 0
        ]
        print(f"{len(only_there)} of them are detected by {args.against}")
        for k, r, o in only_there[: args.limit]:
            ex = o.get("counterexample") or {}
            wo = o.get("wrong_origins") or {}
            print(
                f"- {k}: error {r.get('error')} here vs {o.get('error')} there; there Î={o['incoherence']:.4f}, "
                f"wrong-input origins there {wo}; counterexample there: {ex.get('summary', '')[:200]}"
            )
    print()
    for k, r in misses[: args.limit]:
        ex = r.get("error_example") or {}
        print(
            f"- {k} [{kind(r, there.get(k))}] error {r.get('error')} (value-only {r.get('error_value')}), "
            f"tests {'pass' if r.get('candidate0_pass') else 'FAIL: ' + str((r.get('label_details') or ['?'])[0])[:80]}"
        )
        if ex:
            print(
                f"    {ex.get('call', ex.get('input', ''))[:160]} [{ex.get('origin', '?')}]: candidate 0 {ex['candidate0'][:80]} · "
                f"reference {ex['reference'][:80]} · {ex['alternatives_agreeing']}/{ex['alternatives']} alternatives agree with candidate 0"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
