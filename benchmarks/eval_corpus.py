"""Run ``coherence eval`` on every model of ../shared/corpus, both benchmarks, both seed modes, then
``--compare``; prints the wall time of each step and of the whole.  Resumable (re-run to continue).

    python benchmarks/eval_corpus.py --out /tmp/coherence-eval [--models gpt_4o ministral_8b]
           [--seeds signature tests] [--benchmarks humaneval mbpp] [--samples 10] [--inputs 1000] [--jobs 2]

Output: OUT/<seeds>/<Benchmark>-<model>-<seeds>/ per run, OUT/<seeds>/table.md, OUT/compare.*.
Keep OUT outside the repository: nothing from the corpus is committed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.cli import main as coherence_main

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MODELS = [
    "gpt_4o",
    "claude_sonnet_4",
    "ministral_8b",
    "llama_3_1_8b_instruct",
    "gemini_2_5_pro",
    "deepseek_v3_0324",
    "gpt_3_5",
    "llama_4_maverick_17b",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--seeds", nargs="+", default=["signature", "tests"], choices=["signature", "tests"])
    ap.add_argument("--samples", default="10")
    ap.add_argument("--inputs", default="1000")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--program-budget", default="20")
    ap.add_argument("--keep-matrices", action="store_true")
    ap.add_argument("--benchmarks", nargs="+", default=["humaneval", "mbpp"], choices=["humaneval", "mbpp"])
    ap.add_argument("--corpus", default=str(CORPUS))
    args = ap.parse_args()
    corpus = Path(args.corpus)
    out = Path(args.out)
    t_all = time.monotonic()
    for seeds in args.seeds:
        for model in args.models:
            files = [corpus / f"{bench}-{model}.jsonl.gz" for bench in args.benchmarks]
            files = [str(f) for f in files if f.is_file()]
            if not files:
                print(f"no corpus files for {model}", file=sys.stderr)
                continue
            t0 = time.monotonic()
            rc = coherence_main(
                [
                    "eval",
                    "--corpus",
                    *files,
                    "--tasks",
                    str(corpus / "humaneval-tasks.jsonl.gz"),
                    str(corpus / "mbpp-sanitized-tasks.jsonl.gz"),
                    "--samples",
                    args.samples,
                    "--inputs",
                    args.inputs,
                    "--seeds",
                    seeds,
                    "--jobs",
                    args.jobs,
                    "--program-budget",
                    args.program_budget,
                    # one directory per run, whatever the number of files (resume matches on it)
                    "--out",
                    str(out / seeds / f"{'-'.join(args.benchmarks)}-{model}"),
                    *(["--keep-matrices"] if args.keep_matrices else []),
                ]
            )
            print(f"WALL {model} {seeds}: {time.monotonic() - t0:.0f} s (exit {rc})", flush=True)
            if rc == 130:
                return rc
    coherence_main(["eval", "--compare", *[str(out / s) for s in args.seeds], "--out", str(out)])
    print(f"WALL total: {time.monotonic() - t_all:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
