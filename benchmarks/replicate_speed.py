"""Wall time of ``coherence eval --replicate`` with local ``--jobs`` and on Ray, and whether the two
give the same records.

    python benchmarks/replicate_speed.py ../shared/corpus [--limit N] [--jobs 2] [--ray local|auto|ADDRESS]

Runs the replication (every model of the folder, both benchmarks, both seed modes; ``--limit`` tasks
of each corpus file, all of them by default: hours on 2 cores) twice into a temporary folder: with
``--jobs J`` here, then with ``--ray`` (default ``local``: a private cluster of this machine, whose
start-up counts in its wall time; ``auto`` or an ADDRESS joins a running one).  Prints, per backend,
the tasks, the wall time and the seconds per task, then ``same_records``'s count of the differences
run by run.  Needs the ``cluster`` extra.  Figures only: nothing here is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coherence.eval.runner import read_records
from coherence.eval.same_records import compare, load


def replicate(corpus: str, out: Path, extra: list[str], limit: int | None) -> float:
    cmd = [sys.executable, "-m", "coherence", "eval", "--replicate", corpus, "--out", str(out), "-q", "--no-plots"]
    if limit:
        cmd += ["--limit", str(limit)]
    started = time.monotonic()
    done = subprocess.run(cmd + extra, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd + extra)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", help="a corpus folder (../shared/corpus)")
    ap.add_argument("--limit", type=int, help="tasks of each corpus file (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="--jobs of the local run (default 2)")
    ap.add_argument("--ray", default="local", help="--ray of the Ray run (default local)")
    ap.add_argument("--keep", metavar="DIR", help="write the runs here instead of a temporary folder")
    args = ap.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="replicate-speed-"))
    rows = []
    for label, extra in (
        (f"--jobs {args.jobs}", ["--jobs", str(args.jobs)]),
        (f"--ray {args.ray}", ["--ray", args.ray]),
    ):
        out = root / label.strip("-").replace(" ", "-")
        wall = replicate(args.corpus, out, extra, args.limit)
        tasks = sum(len(read_records(p)) for p in out.glob("*/tasks.jsonl"))
        rows.append((label, out, tasks, wall))
        print(f"{label:<16} {tasks:>6} tasks  wall {wall:8.1f} s  {wall / max(tasks, 1):6.3f} s/task", flush=True)
    (_, local, _, _), (_, on_ray, _, _) = rows
    bad = expected = 0
    for run in sorted(p.name for p in local.iterdir() if (p / "tasks.jsonl").is_file()):
        b, e = compare(load(str(local / run / "tasks.jsonl")), load(str(on_ray / run / "tasks.jsonl")))
        bad, expected = bad + len(b), expected + len(e)
        for line in b[:5]:
            print(f"  {run}: {line}")
    print(f"records: {bad} difference(s) between the backends, {expected} expected of a time budget; runs in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
