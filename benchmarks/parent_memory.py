"""What the coherence process holds of a run whose programs all return large distinct values.

    python benchmarks/parent_memory.py [--programs 10] [--inputs 1000] [--kb 15]

Runs ``--programs`` alternatives (written differently, so none are merged) that each return a
different ``--kb`` KB string on every input through the real executor, once with the record
budget (``records.RECORD_BYTES``) and once without, each in a fresh process, and prints the record
text held at the end of the run, the outcomes kept as digests, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))


def measure(programs: int, inputs: int, kb: int, unbounded: bool) -> dict:
    from coherence.engine.execution import ModuleContext, Program, records
    from coherence.engine.execution.executor import Executor
    from coherence.engine.inputs.values import Input

    if unbounded:
        records.RECORD_BYTES = 1 << 62
    size = kb * 1024 // 8
    progs = [Program("f", f"def f(x):\n    return (str(x).zfill(6) + '{k:02d}') * {size}\n") for k in range(programs)]
    report = Executor().run(ModuleContext(), progs, [Input((i,), ()) for i in range(inputs)])
    seen = {}
    for row in report.outcomes:
        for o in row:
            seen[id(o)] = (len(o.key), '["Z",' in o.key)
    return {
        "held_mb": sum(n for n, _ in seen.values()) / 2**20,
        "digests": sum(z for _, z in seen.values()),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "ok": sum(o.kind == "ok" for row in report.outcomes for o in row),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=10)
    ap.add_argument("--inputs", type=int, default=1000)
    ap.add_argument("--kb", type=int, default=15)
    ap.add_argument("--one", choices=("bounded", "unbounded"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.programs, args.inputs, args.kb, args.one == "unbounded")))
        return 0
    print(f"{args.programs} programs x {args.inputs} inputs, a distinct {args.kb} KB value each")
    for mode in ("unbounded", "bounded"):
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                mode,
                "--programs",
                str(args.programs),
                "--inputs",
                str(args.inputs),
                "--kb",
                str(args.kb),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"{mode:>9}: record text held {r['held_mb']:.1f} MB · {r['digests']} outcomes as digests · "
            f"{r['ok']} ok outcomes · peak RSS {r['peak_rss_mb']:.0f} MB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
