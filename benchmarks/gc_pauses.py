"""The garbage collector's pauses in a process that imported litellm, as the language server and
the CLI do with a model configured (a script, not a test: it prints figures).

Each mode runs in a fresh process: litellm is imported through ``import_litellm`` (as shipped,
which freezes what the import left: ``gc.freeze``), or the same then unfrozen (as before); then
the first --tasks HumanEval tasks of one model's recorded samples are checked --rounds times,
each by a fresh checker (samples replayed, inputs generated anew).  Every collection is timed
(``gc.callbacks``); a full collection holds the interpreter lock throughout, so the editor's
server answers nothing meanwhile.

    python benchmarks/gc_pauses.py [--tasks 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MODES = ("shipped", "unfrozen")


async def _checks(tasks: int, rounds: int) -> int:
    from coherence.engine.check import Checker
    from coherence.engine.config import CheckConfig
    from coherence.engine.markers import target_for
    from coherence.engine.sampling.replay import ReplayProvider

    corpus = CORPUS / "humaneval-gpt_4o.jsonl.gz"
    with gzip.open(corpus, "rt") as fh:
        rows = [json.loads(line) for line in fh][:tasks]
    config = CheckConfig()
    provider = ReplayProvider(corpus, skip=1)
    first = Checker(config, provider=provider)
    done = 0
    for _ in range(rounds):
        for row in rows:
            target = target_for(row["candidates"][0], row["entry_point"], "x.py", docstring=row.get("description"))
            await Checker(config, provider=provider, executor=first.executor).check(target)
            done += 1
    return done


def run_mode(mode: str, tasks: int, rounds: int) -> dict[str, object]:
    """In this process: import litellm as ``mode`` says, check, and time every collection."""
    from coherence.engine.sampling.quiet_litellm import import_litellm

    import_litellm()
    if mode == "unfrozen":
        gc.unfreeze()
    pauses: list[tuple[int, float]] = []
    started: list[float] = []

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            pauses.append((info["generation"], time.perf_counter() - started.pop()))

    gc.callbacks.append(timed)
    checks = asyncio.run(_checks(tasks, rounds))
    gc.callbacks.remove(timed)
    full = [s for g, s in pauses if g == 2]
    return {
        "mode": mode,
        "checks": checks,
        "tracked": len(gc.get_objects()),
        "frozen": gc.get_freeze_count(),
        "collections": len(pauses),
        "all_ms": 1000 * sum(s for _, s in pauses),
        "full": len(full),
        "full_max_ms": 1000 * max(full, default=0.0),
        "full_ms": 1000 * sum(full),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)  # one mode, in a child process
    args = ap.parse_args()
    if not (CORPUS / "humaneval-gpt_4o.jsonl.gz").is_file():
        print(f"corpus not found under {CORPUS}", file=sys.stderr)
        return 2
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.tasks, args.rounds)))
        return 0
    for mode in MODES:
        out = subprocess.run(
            [sys.executable, __file__, "--mode", mode, "--tasks", str(args.tasks), "--rounds", str(args.rounds)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{r['mode']:<9} {r['checks']} checks · objects tracked {r['tracked']:,} (frozen {r['frozen']:,}) · "
            f"{r['collections']} collections, {r['all_ms'] / r['checks']:.1f} ms a check · "
            f"full collections {r['full']}, longest {r['full_max_ms']:.0f} ms, {r['full_ms']:.0f} ms in all"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
