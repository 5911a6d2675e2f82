"""Where the test suite's time goes (a script, not a test): reads the ``--durations=0`` table of a
pytest run and prints the time per file and the slowest tests, split by whether the default run
(``python -m pytest``, which leaves out ``-m slow``) selects them.

    python -m pytest -n 2 -q -p no:randomly --durations=0 -m "slow or not slow" > /tmp/dur.txt
    python benchmarks/suite_durations.py /tmp/dur.txt [--top 30]

A test's time is the sum of its setup, call and teardown.  Under ``-n 2`` the default run's wall
time is about the sum of its tests' times over two, plus collection in each worker.  On a shared
machine wall times mostly measure the load: the CPU seconds per test that tests/conftest.py writes
with ``COHERENCE_TEST_CPU=/tmp/cpu.tsv python -m pytest ...`` are read the same way
(``python benchmarks/suite_durations.py /tmp/cpu.tsv``).  That file also holds each test's wall
time, start and worker, so for it the script adds the tests that wait most (wall well above CPU),
and the timeline's end: when each worker finished, and which tests ran last.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(setup|call|teardown)\s+(\S.*?)\s*$")
# COHERENCE_TEST_CPU's lines: CPU seconds, node id, then (since the timeline) wall seconds, start
# (Unix time) and xdist worker.
CPU_ROW = re.compile(r"^(\d+(?:\.\d+)?)\t([^\t]*\S)(?:\t(\d+(?:\.\d+)?)\t(\d+(?:\.\d+)?)\t(\S+))?\s*$")


@dataclass(frozen=True)
class Run:
    """One test's line of a COHERENCE_TEST_CPU file that has the timeline's columns."""

    node: str
    cpu: float
    wall: float
    start: float
    worker: str

    @property
    def end(self) -> float:
        return self.start + self.wall


def read_timeline(path: Path) -> list[Run]:
    """The tests of a COHERENCE_TEST_CPU file written with the timeline's columns, in start order."""
    runs = []
    for line in path.read_text(errors="replace").splitlines():
        m = CPU_ROW.match(line)
        if m and m.group(3) is not None:
            runs.append(Run(m.group(2), float(m.group(1)), float(m.group(3)), float(m.group(4)), m.group(5)))
    return sorted(runs, key=lambda r: r.start)


def print_timeline(runs: list[Run], top: int) -> None:
    """Where a parallel run's wall time went: each worker's busy time and when it ran out of tests
    (the run ends with the last worker), the tests that run last, and those that wait most."""
    begin, finish = min(r.start for r in runs), max(r.end for r in runs)
    print(f"\ntimeline: {len(runs)} tests from first start to last end {finish - begin:.0f} s")
    print("worker  tests   busy s   CPU s  last end  idle at the end")
    for worker in sorted({r.worker for r in runs}):
        mine = [r for r in runs if r.worker == worker]
        last = max(r.end for r in mine)
        print(
            f"{worker:6}  {len(mine):5}  {sum(r.wall for r in mine):7.0f}  {sum(r.cpu for r in mine):6.0f}"
            f"  {last - begin:8.0f}  {finish - last:6.0f} s"
        )
    print(f"\nthe last {min(top, len(runs))} tests to end (seconds from the first start):")
    print("  start    end   wall    CPU  worker  test")
    for r in sorted(runs, key=lambda r: r.end)[-top:]:
        print(f"{r.start - begin:7.0f} {r.end - begin:6.0f} {r.wall:6.1f} {r.cpu:6.1f}  {r.worker:6}  {r.node}")
    print("\nwaiting most (wall minus CPU, seconds):")
    print("  wait   wall    CPU  test")
    for r in sorted(runs, key=lambda r: r.cpu - r.wall)[:top]:
        print(f"{r.wall - r.cpu:6.1f} {r.wall:6.1f} {r.cpu:6.1f}  {r.node}")


def read_durations(path: Path) -> dict[str, float]:
    """Seconds per test node id (setup + call + teardown)."""
    per_test: dict[str, float] = defaultdict(float)
    for line in path.read_text(errors="replace").splitlines():
        m = ROW.match(line)
        if m:
            per_test[m.group(3)] += float(m.group(1))
        elif m := CPU_ROW.match(line):
            per_test[m.group(2)] += float(m.group(1))
    return dict(per_test)


def default_selection() -> set[str]:
    """The node ids ``python -m pytest`` runs here (the project's addopts applied)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:randomly"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return {line.strip() for line in out.splitlines() if "::" in line}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("durations", type=Path, help="the output of a pytest run with --durations=0")
    parser.add_argument("--top", type=int, default=30, help="how many of the slowest tests to list")
    parser.add_argument(
        "--selection",
        type=Path,
        help="the output of `python -m pytest --collect-only -q` (default: collect it now)",
    )
    args = parser.parse_args()

    per_test = read_durations(args.durations)
    if not per_test:
        sys.exit(f"no --durations rows in {args.durations}")
    if args.selection:
        selected = {line.strip() for line in args.selection.read_text().splitlines() if "::" in line}
    else:
        selected = default_selection()

    def in_default(node: str) -> bool:
        return node in selected

    per_file: dict[tuple[str, bool], float] = defaultdict(float)
    for node, secs in per_test.items():
        per_file[(node.split("::")[0], in_default(node))] += secs

    total_default = sum(s for n, s in per_test.items() if in_default(n))
    total_other = sum(s for n, s in per_test.items() if not in_default(n))
    n_default = sum(1 for n in per_test if in_default(n))
    print(f"tests timed: {len(per_test)}; in the default run {n_default} ({total_default:.0f} s), ", end="")
    print(f"left out of it {len(per_test) - n_default} ({total_other:.0f} s)")
    print(f"default run, two workers: about {total_default / 2:.0f} s of test time each, plus collection\n")

    print("seconds  run      file")
    for (file, default), secs in sorted(per_file.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{secs:7.1f}  {'default' if default else 'slow   '}  {file}")
    print("\nseconds  run      test")
    for node, secs in sorted(per_test.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{secs:7.1f}  {'default' if in_default(node) else 'slow   '}  {node}")
    if runs := read_timeline(args.durations):
        print_timeline(runs, args.top)


if __name__ == "__main__":
    main()
