"""How two eval runs' ``tasks.jsonl`` differ, task by task, apart from timings.

    python -m coherence.eval.same_records RUN_A/tasks.jsonl RUN_B/tasks.jsonl [--ignore KEY ...]

CI runs the same tasks on Ray and with local ``--jobs`` and expects the same records.  Everything
but the keys that time something (``seconds``, ``check_seconds``, ``label_seconds``) must be
equal, with one exception that the engine makes on purpose: a task where a program (or the
reference solution) ran out of its time budget in either run (``timeouts``,
``inputs_over_budget``, ``reference_timeouts``) left out the inputs it had no time for, and which
those are depends on the machine's load, not on where the task ran.  For such a task only its
verdict must be equal (``VERDICT``); the other differences are listed as expected.  When a
program was dropped as too slow in either run (``too_slow``), which programs ran (``used``,
``samples``) may differ too: CI's Ray stage saw HumanEval/100 drop one in one run.
Exit 0 when nothing that must be equal differs, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys

TIMINGS = frozenset({"seconds", "check_seconds", "label_seconds"})
# What a task's verdict is: what its labels say, what ran, and what the check concluded.
VERDICT = (
    "status",
    "severity",
    "passed",
    "candidate0_pass",
    "reference_passed",
    "used",
    "samples",
    "sandbox",
)


def load(path: str) -> dict[str, dict]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                out[str(rec["task_id"])] = rec
    return out


def differences(a, b, ignore: frozenset[str] | set[str], where: str = "") -> list[str]:
    """Every key path where ``a`` and ``b`` differ (``ignore``d keys left out, at any depth)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            if key in ignore:
                continue
            if key not in a or key not in b:
                out.append(f"{where}{key}: only in the {'first' if key in a else 'second'} run")
            else:
                out += differences(a[key], b[key], ignore, f"{where}{key}.")
        return out
    return [] if a == b else [f"{where.rstrip('.')}: {a!r} != {b!r}"[:300]]


_BUT_WHICH_RAN = tuple(k for k in VERDICT if k not in ("used", "samples"))


def dropped_slow(rec: dict) -> bool:
    """Whether the check dropped a program for reaching too few inputs in its time."""
    return bool(rec.get("too_slow"))


def time_bound(rec: dict) -> bool:
    return bool(rec.get("timeouts") or rec.get("inputs_over_budget") or rec.get("reference_timeouts"))


def compare(a: dict[str, dict], b: dict[str, dict], ignore: frozenset[str] | set[str] = TIMINGS):
    """(differences that must not be, differences expected of time-bound tasks), as lines."""
    bad = [f"task {t}: only in the first run" for t in sorted(set(a) - set(b))]
    bad += [f"task {t}: only in the second run" for t in sorted(set(b) - set(a))]
    expected = []
    for t in sorted(set(a) & set(b)):
        diffs = differences(a[t], b[t], ignore)
        if diffs and (time_bound(a[t]) or time_bound(b[t])):
            # a program dropped as too slow in one run (its share of the inputs, reached in
            # time, depends on the load too): which programs ran may differ as well
            must = VERDICT if not (dropped_slow(a[t]) or dropped_slow(b[t])) else _BUT_WHICH_RAN
            verdict = [d for d in diffs if d.split(":")[0].split(".")[0] in must]
            bad += [f"task {t}: {d}" for d in verdict]
            expected += [f"task {t} (ran out of time): {d}" for d in diffs if d not in verdict]
        else:
            bad += [f"task {t}: {d}" for d in diffs]
    return bad, expected


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Say how two eval runs' tasks.jsonl differ, apart from timings.")
    ap.add_argument("first")
    ap.add_argument("second")
    ap.add_argument("--ignore", nargs="*", default=[], help="more keys to leave out")
    args = ap.parse_args(argv)
    a, b = load(args.first), load(args.second)
    bad, expected = compare(a, b, TIMINGS | set(args.ignore))
    for line in bad + expected:
        print(line)
    bound = sum(1 for t in set(a) & set(b) if time_bound(a[t]) or time_bound(b[t]))
    print(
        f"{len(set(a) & set(b))} task(s) in both, {bound} of them ran out of time somewhere: "
        f"{len(bad)} difference(s), {len(expected)} expected of a time budget"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
