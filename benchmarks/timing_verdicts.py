"""Check one recorded task several times under a CPU hog and print the verdicts: a timeout must
not decide one (``engine/verdict/timeouts.py``), so every check should give the same.

Not a test: it prints figures.  Needs ../shared/corpus.

    python benchmarks/timing_verdicts.py [--task HumanEval/107] [--checks 10] [--hogs N] [--model gpt_4o]
    python benchmarks/timing_verdicts.py --task MBPP/100

The hog is N busy-looping processes (default: one per core), started before the first check and
stopped after the last.  Each check is a fresh ``Checker`` (no inputs cached between them), with
candidate 0 of the recorded samples as the user's function and the next m-1 as its alternatives.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution.executor import cpu_count
from coherence.engine.markers import target_for
from coherence.engine.sampling.replay import ReplayProvider

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _hog() -> None:
    while True:
        pass


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="HumanEval/107")
    ap.add_argument("--model", default="gpt_4o")
    ap.add_argument("--checks", type=int, default=10)
    ap.add_argument("--hogs", type=int, default=cpu_count(), help="busy-looping processes (0: none)")
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--inputs", type=int, default=1000)
    args = ap.parse_args()
    bench = "mbpp" if args.task.startswith("MBPP") or args.task.isdigit() else "humaneval"
    corpus = CORPUS / f"{bench}-{args.model}.jsonl.gz"
    if not corpus.is_file():
        print(f"corpus not found: {corpus}", file=sys.stderr)
        return 2
    with gzip.open(corpus, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    wanted = args.task.split("/")[-1] if bench == "mbpp" else args.task  # MBPP's ids are numbers
    row = next((r for r in rows if str(r["task_id"]) == wanted), None)
    if row is None:
        print(f"no task {args.task} in {corpus}", file=sys.stderr)
        return 2
    name = row["entry_point"]
    hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(args.hogs)]
    for h in hogs:
        h.start()
    verdicts: Counter[str] = Counter()
    print(
        f"{args.task} · {args.model} · m={args.samples} n={args.inputs} · {args.hogs} busy loops on {cpu_count()} cores"
    )
    print(
        f"{'check':>5} {'status':<14} {'severity':<12} {'n':>5} {'left out':>8} {'timeouts':>8} {'trust':>6} {'s':>6}"
    )
    try:
        for k in range(1, args.checks + 1):
            config = CheckConfig(samples=args.samples, inputs=args.inputs)
            checker = Checker(config, provider=ReplayProvider(corpus, skip=1))
            target = target_for(row["candidates"][0], name, f"{name}.py", docstring=row.get("description"))
            started = time.monotonic()
            result = await checker.check(target)
            seconds = time.monotonic() - started
            verdict = f"{result.status}/{result.severity}"
            verdicts[verdict] += 1
            print(
                f"{k:>5} {result.status:<14} {result.severity:<12} {result.inputs:>5} "
                f"{result.inputs_over_budget:>8} {result.timeouts:>8} {result.trust:>6.3f} {seconds:>6.2f}",
                flush=True,
            )
    finally:
        for h in hogs:
            h.kill()
            h.join()
    shown = ", ".join(f"{v} ×{c}" for v, c in verdicts.most_common())
    print(f"verdicts: {len(verdicts)} distinct ({shown})")
    return 0 if len(verdicts) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
