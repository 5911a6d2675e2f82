"""Time what a child does per call besides the call itself: load the input, snapshot the
arguments, encode the result.

Not a test: it prints microseconds per operation (best of five timeit repeats), for the values
a typical check passes and returns.  The figures are in docs/results.md#call-costs.

    python benchmarks/call_costs.py
"""

from __future__ import annotations

import marshal
import sys
import timeit
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server" / "coherence" / "engine" / "execution"))

from coherence_worker.canon import make_canonicalizer
from coherence_worker.flat import flat_map, flat_seq, snapshotter

VALUES = {
    "10 ints": list(range(10)),
    "100 ints": list(range(100)),
    "9 strings": ["abc", "de", "f"] * 3,
    "3 floats": [0.5, 1.25, -3.0],
    "dict of 3": {"a": 1, "b": 2, "c": 3},
    "grid 3x4": [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]],
    "5 pairs": [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10)],
    "record": {"name": "a", "tags": ["x", "y"], "size": (1, 2)},
}


def micros(fn, number: int = 20_000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def row(name: str, value: object, take, changed, canon, dump) -> str:
    """One value's figures: each operation as the call loop does it."""
    packed = marshal.dumps(((value,), {}))
    argv = (value,)
    before = take(argv)

    def encode() -> bytes | None:  # as the call loop encodes a result
        return flat_map(value) if type(value) is dict else flat_seq(value, type(value))

    figures = (
        micros(partial(marshal.loads, packed)),
        micros(partial(take, argv)),
        micros(partial(changed, before, argv)),
        micros(encode),
        micros(lambda: dump(canon(value), value)),
    )
    return f"{name:<12} " + " ".join(f"{x:>{w}.2f}" for x, w in zip(figures, (10, 9, 8, 8, 8)))


def main() -> int:
    canon, dump = make_canonicalizer()
    take, changed = snapshotter(canon, dump)
    print(f"{'value':<12} {'load input':>10} {'snapshot':>9} {'compare':>8} {'encode':>8} {'general':>8}  (µs)")
    for name, value in VALUES.items():
        print(row(name, value, take, changed, canon, dump))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
