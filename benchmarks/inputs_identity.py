"""Fingerprint the inputs a tree generates and shrinks for corpus tasks, to prove a refactoring
of ``engine/inputs`` changes no input.

For every HumanEval task and the first ``--mbpp`` MBPP tasks, the function's signature comes
from two programs: the benchmark's reference and a model's candidate 0 (what ``coherence eval``
checks), with the task's description as the docstring when the program has none.  Each spec gets
``generate_inputs(spec, n, module_source=..., seed=0)`` (no workspace: signature mode, a time
budget large enough never to cut it short), and a few of its inputs are shrunk greedily with a
fixed stand-in for "still disagrees".  Every input's ``repr`` is written, one line per spec::

    PYTHONPATH=/tmp/old/server python benchmarks/inputs_identity.py --out /tmp/old.jsonl
    PYTHONPATH=server python benchmarks/inputs_identity.py --out /tmp/new.jsonl
    python benchmarks/inputs_identity.py --compare /tmp/old.jsonl /tmp/new.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def _specs(corpus: Path, mbpp: int, model: str):
    from coherence.engine.markers import target_for
    from coherence.eval.corpus import load_samples, load_tasks

    for bench, tasks_file, limit in (
        ("humaneval", "humaneval-tasks.jsonl.gz", None),
        ("mbpp", "mbpp-sanitized-tasks.jsonl.gz", mbpp),
    ):
        tasks = load_tasks(corpus / tasks_file)
        samples = load_samples(corpus / f"{bench}-{model}.jsonl.gz")
        for st in samples[:limit]:
            bt = tasks.get(st.key)
            programs = [("reference", bt.reference if bt else "")]
            programs.append(("candidate0", st.candidates[0] if st.candidates else ""))
            for label, code in programs:
                try:
                    target = target_for(code, st.entry_point, "task.py", docstring=st.description or None)
                except (SyntaxError, LookupError, ValueError):
                    continue
                yield f"{bench}/{st.task_id}/{label}", target


def _still_fails(inp) -> bool:
    """A fixed, arbitrary stand-in for "the two programs still disagree"."""
    return zlib.crc32(inp.source().encode()) % 3 != 0


def _shrink(inp, shrink_candidates, rounds: int = 6) -> list[str]:
    trail = []
    for _ in range(rounds):
        cands = shrink_candidates(inp)
        trail.append(repr([c.source() for c in cands]))
        nxt = next((c for c in cands if _still_fails(c)), None)
        if nxt is None:
            break
        inp = nxt
    trail.append(repr(inp))
    return trail


def record(out: Path, n: int, mbpp: int, model: str, samples: int) -> None:
    from coherence.engine.inputs.generate import generate_inputs
    from coherence.engine.inputs.shrink import shrink_candidates, shrink_key

    t0 = time.monotonic()
    with out.open("w", encoding="utf-8") as f:
        for key, target in _specs(CORPUS, mbpp, model):
            inputs = generate_inputs(target.spec, n, module_source=target.module_source, seed=0, time_budget=600.0)
            reprs = [repr(i) for i in inputs]
            # the largest inputs (the ones a counterexample search starts from) and a spread of others
            picks = sorted(range(len(inputs)), key=lambda x: (-inputs[x].size(), x))[:samples]
            picks += list(range(0, len(inputs), max(1, len(inputs) // samples)))[:samples]
            shrinks = [_shrink(inputs[x], shrink_candidates) + [repr(shrink_key(inputs[x]))] for x in picks]
            f.write(json.dumps({"key": key, "inputs": reprs, "shrinks": shrinks}) + "\n")
    import coherence

    print(f"recorded {out} from {coherence.__file__} in {time.monotonic() - t0:.0f}s", file=sys.stderr)


def compare(a: Path, b: Path) -> int:
    def load(p: Path) -> dict[str, dict]:
        return {r["key"]: r for r in map(json.loads, p.open(encoding="utf-8"))}

    old, new = load(a), load(b)
    tasks = inputs = shrinks = 0
    bad_tasks: list[str] = []
    bad_inputs = bad_shrinks = 0
    for key in sorted(old.keys() | new.keys()):
        ro, rn = old.get(key), new.get(key)
        tasks += 1
        if ro is None or rn is None:
            bad_tasks.append(key)
            continue
        io, in_ = ro["inputs"], rn["inputs"]
        inputs += max(len(io), len(in_))
        d = sum(1 for x, y in zip(io, in_) if x != y) + abs(len(io) - len(in_))
        so, sn = ro["shrinks"], rn["shrinks"]
        shrinks += max(len(so), len(sn))
        ds = sum(1 for x, y in zip(so, sn) if x != y) + abs(len(so) - len(sn))
        bad_inputs += d
        bad_shrinks += ds
        if d or ds:
            bad_tasks.append(key)
    print(f"specs compared: {tasks}, differing: {len(bad_tasks)}")
    print(f"inputs compared: {inputs}, differing: {bad_inputs}")
    print(f"shrink trails compared: {shrinks}, differing: {bad_shrinks}")
    for key in bad_tasks[:20]:
        print("  differs:", key)
    return 1 if bad_tasks else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path)
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--mbpp", type=int, default=150, help="MBPP tasks (first N)")
    ap.add_argument("--model", default="gpt_4o", help="whose candidate 0 gives the second signature")
    ap.add_argument("--samples", type=int, default=3, help="inputs shrunk per spec (twice: largest, spread)")
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("give --out or --compare")
    record(args.out, args.n, args.mbpp, args.model, args.samples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
