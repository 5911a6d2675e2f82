"""Where a check of the examples spends its time, stage by stage (a script, not a test).

For every marked function of examples/ (samples replayed from recorded_samples.jsonl: no LLM
calls), one ``Checker`` checks it, then re-checks it --rounds times: the same function with its
inputs, samples and warm workers kept (``benchmarks/check_speed.py`` calls this a re-check too),
then --rounds times with its body edited (a different comment on its last line each time: the
module's text changes, as after an edit in the editor, and what the function does does not).
Printed per function: the median milliseconds of each stage the engine times
(``CheckResult.extra["timings"]``: sampling, inputs, execution, metrics, verdict, the wait for the
shrink's inputs run ahead, counterexample or examples).

    python benchmarks/check_stages.py [--rounds 5] [--inputs 1000] [--samples 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.engine.check import Checker
from coherence.engine.config import load_project_config
from coherence.engine.markers import find_targets
from coherence.engine.spec import Target

REPO = Path(__file__).resolve().parents[1]
STAGES = ("sampling", "inputs", "execution", "metrics", "verdict", "ahead", "counterexample", "examples")


def row(label: str, runs: list[dict[str, float]]) -> str:
    cells = []
    for stage in STAGES:
        values = [r[stage] for r in runs if stage in r]
        cells.append(f"{1000 * statistics.median(values):>9.1f}" if values else f"{'-':>9}")
    return f"{label:<38}" + "".join(cells)


def edit(target: Target, i: int) -> Target:
    """``target`` with a comment added to its last line: another module text, the same function."""
    lines = target.module_source.splitlines(keepends=True)
    end = target.end_line - 1
    lines[end] = lines[end].rstrip("\n") + f"  # edit {i}\n"
    source = "".join(lines)
    return next(t for t in find_targets(source, target.path) if t.qualname == target.qualname)


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="re-checks (and as many body edits) per function")
    ap.add_argument("--inputs", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="coherence-stages-"))
    ws = tmp / "examples"
    shutil.copytree(REPO / "examples", ws, ignore=shutil.ignore_patterns("__pycache__", "test_*_coherence.py"))
    try:
        config = load_project_config(ws).merged(inputs=args.inputs, samples=args.samples, workspace=str(ws))
        checker = Checker(config)
        print(
            f"median ms per stage; samples {args.samples} × inputs {args.inputs}; {args.rounds} re-checks and body edits each"
        )
        print(f"{'function':<38}" + "".join(f"{s[:8]:>9}" for s in STAGES))
        for path in sorted(ws.glob("*.py")):
            for target in find_targets(path.read_text(), str(path)):
                first = await checker.check(target)
                again = [await checker.check(target) for _ in range(args.rounds)]
                edited = [await checker.check(edit(target, i)) for i in range(args.rounds)]
                shown = {r.counterexample.call if r.counterexample else None for r in (first, *again, *edited)}
                same = "" if len(shown) == 1 else "  (counterexamples differ!)"
                name = f"{path.stem}.{target.name}"
                print(row(f"{name} check", [first.extra.get("timings", {})]) + f"  {first.status}")
                print(row(f"{name} re-check", [r.extra.get("timings", {}) for r in again]))
                print(row(f"{name} body edited", [r.extra.get("timings", {}) for r in edited]) + same)
        print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
