"""What hiding the workspace's dotfiles costs, on a workspace like a home folder.

Makes ``--projects`` projects in one folder (each with .git, .github, .gitignore, .env,
backend/.env, frontend/.env.local, a package and a README), checks a file in one of them, and
prints, with the entries hidden one by one (no collapse) and as shipped (``HIDDEN_MAX``):
the hidden entries, the walk (first and again), the guard mode's Landlock plan (rules, folders
left out, time) and bubblewrap's arguments and start time (``bwrap ... -- /bin/true``, when
bubblewrap works here).  Also the walk of this repository, an ordinary tree.

    python benchmarks/hidden_paths.py [--projects 150] [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "server"))

from coherence.engine.execution import sandbox as sb  # noqa: E402
from coherence.engine.execution import visibility  # noqa: E402
from coherence.engine.execution.coherence_worker import landlock  # noqa: E402


def make_projects(root: Path, n: int) -> None:
    for i in range(n):
        p = root / f"p{i}"
        for sub in ("src/pkg", "tests", "docs", ".git/objects", ".github/workflows", "backend", "frontend"):
            (p / sub).mkdir(parents=True, exist_ok=True)
        for f in ("README.md", "setup.py", ".env", ".gitignore", "backend/.env", "frontend/.env.local"):
            (p / f).write_text("")
        (p / "src" / "pkg" / "__init__.py").write_text("")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def measure(interp: sb.Interpreter, extra: tuple[str, ...], rounds: int, bwrap: bool) -> None:
    visibility._listings.clear()
    t = time.perf_counter()
    hidden = visibility.hidden_paths(interp, extra)
    first = time.perf_counter() - t
    t = time.perf_counter()
    visibility.hidden_paths(interp, extra)
    again = time.perf_counter() - t
    t = time.perf_counter()
    rules = landlock.plan(list(extra), hidden)
    plan_s = time.perf_counter() - t
    print(f"  hidden entries {len(hidden)}; walk {ms(first)} first, {ms(again)} again")
    print(f"  Landlock plan (guard mode, per job): {len(rules)} rules, {len(rules.left_out)} left out, {ms(plan_s)}")
    if bwrap:
        cmd = sb.bwrap_command(interp, sb.base_env(sb.BWRAP_TMP), extra)
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            subprocess.run([*cmd, "--", "/bin/true"], check=True, capture_output=True)
            times.append(time.perf_counter() - t)
        print(f"  bubblewrap: {len(cmd)} arguments, start median {ms(statistics.median(times))} over {rounds}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--projects", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    interp = sb.probe_interpreter()
    bwrap = sb.choose_mode("auto", interp, ()) == "bwrap"
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None  # /tmp is a hidden root
    root = Path(tempfile.mkdtemp(prefix="coherence-bench-", dir=base))
    try:
        ws = root / "projects"
        make_projects(ws, args.projects)
        extra = (str(ws / "p7" / "src" / "pkg"), str(ws))
        print(f"{args.projects} projects in one workspace, checking p7/src/pkg/mod.py:")
        shipped = visibility.HIDDEN_MAX
        for label, limit in (("each entry hidden alone", 10**9), (f"as shipped (HIDDEN_MAX {shipped})", shipped)):
            print(f" {label}:")
            visibility.HIDDEN_MAX = limit
            measure(interp, extra, args.rounds, bwrap)
        visibility.HIDDEN_MAX = shipped
        print("this repository:")
        measure(interp, (str(REPO),), args.rounds, bwrap)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
