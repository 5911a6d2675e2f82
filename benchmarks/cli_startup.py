"""How long ``coherence --help`` and ``coherence check --help`` take (the budget is 0.3 s), next to
a bare ``python -c pass``, as wall and CPU time of a fresh process; the median of N runs.  CPU
time is the figure to trust on a busy machine, where the wall time mostly waits for a core.

    python benchmarks/cli_startup.py [N]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def measure(argv: list[str], runs: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        before = os.times()
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "coherence --help": [sys.executable, "-m", "coherence", "--help"],
        "coherence check --help": [sys.executable, "-m", "coherence", "check", "--help"],
    }
    print(f"median of {runs} runs; load average {os.getloadavg()[0]:.1f}")
    for name, argv in cases.items():
        wall, cpu = measure(argv, runs)
        print(f"{name:24} wall {wall:.3f} s   cpu {cpu:.3f} s")
    probe = "import sys\nfrom coherence.cli import build_parser\nbuild_parser()\nprint(sorted(m for m in ('asyncio', 'litellm', 'numpy') if m in sys.modules))"
    print(
        "heavy modules --help imports:",
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip(),
    )


if __name__ == "__main__":
    main()
