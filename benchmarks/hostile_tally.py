"""Tally of the hostile-code corpus: hostile programs tried / contained / escapes, per sandbox mode.

    python benchmarks/hostile_tally.py [--mode guard|bwrap|all] [--only NAME ...] [--verbose]

Runs every entry of ``tests/hostile/corpus.py`` through the real executor and sandbox exactly as
``tests/hostile/test_hostile.py`` does (``tests/hostile/harness.py``) and prints one line per
mode.  "contained" means no violation at all: within the wall bound, the hostile program's
outcomes are raises (unless the entry returns odd values by design), the honest programs' results
equal a clean run, no process left behind, canaries (tmp dir, workspace, ~/.ssh) unchanged,
nothing new in /tmp, /var/tmp, /dev/shm, the secret in no result, the loopback listeners silent,
the stand-in server alive.  Exit status 1 when anything escaped.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "server"))

from tests.hostile.corpus import CORPUS  # noqa: E402
from tests.hostile.harness import Machine, modes, run_entry  # noqa: E402


def run_all(entries, mode: str):
    """Each entry on a fresh machine in ``mode``, with a key in our environment too: its results
    (``harness.EntryResult``), one at a time as they come."""
    for entry in entries:
        machine = Machine.create()
        old = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LC_OPENAI_API_KEY")}
        os.environ.update(dict.fromkeys(old, machine.secret))  # a key in our environment, too
        try:
            yield run_entry(entry, mode, machine)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            machine.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="all", choices=["all", "guard", "bwrap"])
    ap.add_argument("--only", nargs="*", default=None, help="entry names")
    ap.add_argument("--verbose", action="store_true", help="one line per entry")
    args = ap.parse_args()
    available = modes()
    wanted = available if args.mode == "all" else [args.mode]
    entries = [h for h in CORPUS if not args.only or h.name in args.only]
    escapes_total = 0
    print(
        f"{len(entries)} hostile programs; sandbox modes: {', '.join(wanted)}"
        + ("" if "bwrap" in available else " (bubblewrap does not work here)")
    )
    for mode in wanted:
        if mode not in available:
            print(f"{mode}: skipped (not available here)")
            continue
        started = time.monotonic()
        escaped: list[tuple[str, list[str]]] = []
        outcomes: collections.Counter = collections.Counter()
        slowest = (0.0, "")
        for r in run_all(entries, mode):
            entry = r.entry
            slowest = max(slowest, (r.seconds, entry.name))
            for o in r.hostile:
                outcomes[o.error if o.kind == "raise" else "ok"] += 1
            if r.violations:
                escaped.append((entry.name, r.violations))
            if args.verbose:
                kinds = ", ".join(o.error if o.kind == "raise" else "ok" for o in r.hostile)
                print(
                    f"  {mode:5} {entry.category:10} {entry.side:11} {entry.name:26} {r.seconds:5.1f}s  "
                    f"{'ESCAPE ' + '; '.join(r.violations) if r.violations else 'contained'}  [{kinds}]"
                )
        tried = len(entries)
        escapes_total += len(escaped)
        print(
            f"{mode}: hostile programs tried {tried} / contained {tried - len(escaped)} / escapes {len(escaped)}"
            f"  ({time.monotonic() - started:.1f}s, slowest {slowest[1]} {slowest[0]:.1f}s)"
        )
        print("  hostile outcomes: " + ", ".join(f"{k} {v}" for k, v in outcomes.most_common()))
        for name, v in escaped:
            print(f"  ESCAPE {name}: {'; '.join(v)}")
    return 1 if escapes_total else 0


if __name__ == "__main__":
    sys.exit(main())
