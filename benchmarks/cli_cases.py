#!/usr/bin/env python3
"""Every case of issue 29 ("from a fresh clone to a green CI"), run as a newcomer would: the real
command line in a subprocess, recorded samples only (no network, no API key), one row per case
with the command, its exit status, its time and what it said.

    python benchmarks/cli_cases.py                        # this checkout ("after")
    python benchmarks/cli_cases.py --before /tmp/venv-base/bin/python \\
        --before310 /tmp/venv-base-3.10/bin/python        # adds a "before" column
    python benchmarks/cli_cases.py --slow                 # also pre-commit try-repo and the action

Each ``--python``/``--before`` is an interpreter that has coherence installed (``PY -m coherence``);
``--python310``/``--before310`` a Python 3.10 one (default: .venv-3.10, which .ci/run makes).
The recorded samples and the source files come from this checkout in every column, so a column
differs only by the coherence that runs them.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
REPLAY = str(EXAMPLES / "recorded_samples.jsonl")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cli_startup import measure  # noqa: E402
from tests.cli.test_cli_evidence import BROKEN, GOOD  # noqa: E402  (the same files the tests check)
from tests.cli.test_cli_newcomer import COUNT_VOWELS  # noqa: E402
from tests.cli.test_cli_newcomer import UNRECORDED as TRIPLE  # noqa: E402

PALINDROME = '''

# coherence: off
def is_palindrome(s: str) -> bool:
    """True when s reads the same both ways."""
    return s == s[::-1]
'''


@dataclass
class Case:
    name: str
    args: list[str]
    files: dict[str, str | bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    py310: bool = False  # run under the Python 3.10 interpreter
    examples: bool = False  # copy examples/ into the case's folder
    report: object = None  # (proc, folder) -> str: what the cell says besides the exit status
    timeout: float = 90


def messages(proc) -> list[str]:
    """stderr without the progress lines; argparse's usage left out, its message kept."""
    err = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("[")]
    return err[-1:] if err and err[0].startswith("usage:") else err


def first_lines(proc, folder: Path, keep: int = 2) -> str:
    """The lines a reader looks at: stderr's messages, else the report's first lines."""
    err = messages(proc)
    out = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    lines = (err or out)[:keep]
    if err and out:
        lines.append(out[-1])  # the summary line
    return " / ".join(ln.strip()[:160] for ln in lines)


def summary(proc, folder: Path) -> str:
    out = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    err = messages(proc)
    return " / ".join([*(ln[:160] for ln in err[:1]), *(ln[:160] for ln in out[-1:])])


def json_statuses(proc, folder: Path) -> str:
    try:
        funcs = json.loads(proc.stdout)["functions"]
    except (ValueError, KeyError):
        return first_lines(proc, folder)
    return "; ".join(
        f"{f['path']}::{f.get('qualname') or f['name']} {f['status']}"
        + (f" ({f['reason'][:90]})" if f.get("reason") else "")
        for f in funcs
    )


def sarif_facts(path: str):
    def report(proc, folder: Path) -> str:
        file = folder / path
        if not file.is_file():
            return "no SARIF written: " + first_lines(proc, folder)
        from tests.support.sarif import sarif_errors

        doc = json.loads(file.read_text())
        errors = sarif_errors(doc)
        run = doc["runs"][0]
        rule = (run["tool"]["driver"].get("rules") or [{}])[0]
        uris = sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]})
        levels = sorted({r.get("level", "warning") for r in run["results"]})
        method = [r["message"]["text"][:60] for r in run["results"] if "Cart." in r["message"]["text"]]
        return (
            f"schema: {'valid' if not errors else f'{len(errors)} errors'}; uris {uris}; levels {levels}; "
            f"rule fields {sorted(k for k in ('fullDescription', 'help', 'helpUri') if k in rule)}; "
            f"driver informationUri {'informationUri' in run['tool']['driver']}; "
            f"method message {method[:1] or 'none with Cart.'}"
        )

    return report


def progress(proc, folder: Path) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("[")]
    return f"{len(lines)} progress line(s) on stderr: " + " / ".join(lines)[:300]


def written(path: str):
    def report(proc, folder: Path) -> str:
        return f"{path} {'written' if (folder / path).is_file() else 'missing'}; " + first_lines(proc, folder, 1)

    return report


def thin_replay() -> str:
    return json.dumps({"entry_point": "triple", "task_id": "t/triple", "candidates": [GOOD] + [BROKEN] * 8}) + "\n"


def agreeing_replay() -> str:
    return json.dumps({"entry_point": "triple", "task_id": "t/triple", "candidates": [GOOD] * 9}) + "\n"


def cases() -> list[Case]:
    replay = ["--replay", REPLAY, "--inputs", "50"]
    m = {"m.py": COUNT_VOWELS}
    deep = "-" * 600 + "1"
    return [
        Case(
            "Python 3.10 reads pyproject.toml",
            ["check", "examples/textutils.py", "--inputs", "100"],
            examples=True,
            py310=True,
            report=summary,
        ),
        Case(
            "missing API key (every *_API_KEY unset)",
            ["check", "m.py", "--model", "openai/gpt-4o-mini", "--inputs", "50"],
            m,
            report=first_lines,
            timeout=300,
        ),
        Case(
            "one function the replay lacks",
            ["check", "m.py", *replay, "--format", "json"],
            {"m.py": COUNT_VOWELS + TRIPLE},
            report=json_statuses,
        ),
        Case("syntax error", ["check", "bad.py", *replay], {"bad.py": "def broken(:\n"}, report=first_lines),
        Case(
            "unreadable file (not UTF-8, no coding line)",
            ["check", "bad.py", *replay],
            {"bad.py": b"# caf\xe9\ndef f(x):\n    return x\n"},
            report=first_lines,
        ),
        Case("a path that does not exist", ["check", "nowhere.py", *replay], report=first_lines),
        Case(
            "internal failure (a signature coherence cannot walk)",
            ["check", "deep.py", "m.py", *replay, "--format", "json"],
            {"deep.py": f"# coherence\ndef f(x: int = {deep}) -> int:\n    return x\n", **m},
            report=json_statuses,
        ),
        Case("--timeout -1", ["check", "m.py", *replay, "--timeout", "-1"], m, report=first_lines),
        Case("--timeout 0", ["check", "m.py", *replay, "--timeout", "0"], m, report=first_lines),
        Case("--temperature 5", ["check", "m.py", *replay, "--temperature", "5"], m, report=first_lines),
        Case(
            "-o into a missing folder",
            ["check", "m.py", *replay, "--format", "sarif", "-o", "out/ci/report.sarif"],
            m,
            report=written("out/ci/report.sarif"),
        ),
        Case(
            "PYTHONIOENCODING=cp1252",
            ["check", "m.py", *replay],
            m,
            env={"PYTHONIOENCODING": "cp1252"},
            report=lambda p, f: (
                ("Traceback: " + p.stderr.strip().splitlines()[-1][:120])
                if "Traceback" in p.stderr
                else "no traceback; " + " / ".join(ln for ln in p.stdout.splitlines() if "\\u" in ln)[:120]
            ),
        ),
        Case(
            "PEP 263 latin-1 source",
            ["check", "m.py", *replay, "--format", "json"],
            {
                "m.py": ("# -*- coding: latin-1 -*-\n" + COUNT_VOWELS.replace("case.", "case (caf\xe9).")).encode(
                    "latin-1"
                )
            },
            report=json_statuses,
        ),
        Case(
            "nested configs: `check .` at a root with examples/",
            ["check", ".", "--format", "json"],
            {"pyproject.toml": "[project]\nname = 'root'\n"},
            examples=True,
            report=json_statuses,
        ),
        Case(
            "replay line without candidates",
            ["check", "m.py", "--replay", "r.jsonl"],
            {**m, "r.jsonl": json.dumps({"entry_point": "count_vowels"}) + "\n"},
            report=first_lines,
        ),
        Case(
            "replay line with a string for candidates",
            ["check", "m.py", "--replay", "r.jsonl"],
            {
                **m,
                "r.jsonl": json.dumps({"entry_point": "count_vowels", "candidates": "def count_vowels(s): 0"}) + "\n",
            },
            report=first_lines,
        ),
        Case(
            "thin evidence: 1 alternative, 8 do not parse",
            ["check", "t.py", "--replay", "thin.jsonl", "--inputs", "50"],
            {"t.py": TRIPLE.lstrip(), "thin.jsonl": thin_replay()},
            report=first_lines,
        ),
        *(
            Case(
                f"--fail-on {level} (3 warnings)",
                ["check", "examples/", "--inputs", "100", "--fail-on", level],
                examples=True,
                report=summary,
            )
            for level in ("warning", "never")
        ),
        *(
            Case(
                f"--fail-on {level} (an information: every program contradicts the docstring's example)",
                ["check", "t.py", "--replay", "r.jsonl", "--inputs", "50", "--fail-on", level],
                {"t.py": TRIPLE.lstrip().replace("    6\n", "    7\n"), "r.jsonl": agreeing_replay()},
                report=summary,
            )
            for level in ("warning", "information")
        ),
        Case(
            "SARIF from a subfolder of a git repository",
            ["check", "examples/", "--inputs", "100", "--format", "sarif", "-o", "r.sarif"],
            {".git-init": ""},
            examples=True,
            report=sarif_facts("r.sarif"),
        ),
        Case(
            "--dry-run",
            ["check", "examples/textutils.py", "--dry-run", "--model", "openai/gpt-4o-mini"],
            examples=True,
            report=lambda p, f: " / ".join(ln.strip()[:110] for ln in (p.stdout + p.stderr).splitlines() if ln.strip())[
                :400
            ],
            timeout=300,
        ),
        Case(
            "--max-cost-usd -1 (a bad budget)",
            ["check", "m.py", *replay, "--max-cost-usd", "-1"],
            m,
            report=first_lines,
        ),
        Case(
            "--show-alternatives",
            ["check", "m.py", *replay, "--show-alternatives"],
            m,
            report=lambda p, f: (
                f"{p.stdout.count('@@')} diff hunk(s), "
                f"{p.stdout.count('def count_vowels')} program(s) shown; " + first_lines(p, f, 1)
            ),
        ),
        Case(
            "include/exclude `path::name` globs",
            ["check", "lib", "--format", "json", "--trust-workspace"],
            {
                "pyproject.toml": '[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 50\n'
                'include = ["lib/*.py::count_*"]\nexclude = ["lib/generated_*.py", "::is_*"]\n',
                "samples.jsonl": Path(REPLAY).read_text(),
                "lib/text.py": COUNT_VOWELS.replace("# coherence\n", "") + PALINDROME.replace(": off", ""),
                "lib/generated_parser.py": "def broken(:\n",
            },
            report=json_statuses,
        ),
        Case(
            "`# coherence: off` in --mode docstring",
            ["check", "m.py", *replay, "--mode", "docstring", "--format", "json"],
            {"m.py": COUNT_VOWELS + PALINDROME},
            report=json_statuses,
        ),
        Case(
            "progress on stderr when it is not a TTY",
            ["check", "m.py", "bad.py", *replay],
            {"m.py": COUNT_VOWELS + TRIPLE, "bad.py": "def broken(:\n"},
            report=progress,
        ),
    ]


# Runs the command and writes the CPU time it and its children took: on a loaded machine the wall
# time mostly waits for a core (the sandbox's processes are counted when they are reaped).
CPU_WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(str(used.ru_utime + used.ru_stime))
sys.exit(code)
"""


def run_case(case: Case, python: str | None) -> str:
    if python is None:
        return "n/a (no such interpreter here)"
    with tempfile.TemporaryDirectory(prefix="cli-case-") as tmp:
        folder = Path(tmp)
        if case.examples:
            shutil.copytree(EXAMPLES, folder / "examples", ignore=shutil.ignore_patterns("__pycache__"))
        for name, content in case.files.items():
            if name == ".git-init":
                subprocess.run(["git", "init", "-q", str(folder)], check=True)
                continue
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
        env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_") and not k.endswith("_API_KEY")}
        env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1", **case.env)
        env["COHERENCE_CACHE_DIR"] = str(folder / ".cache")  # no run buys from another's cache
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                [sys.executable, "-c", CPU_WRAPPER, str(folder / ".cpu"), python, "-m", "coherence", *case.args],
                cwd=folder,
                env=env,
                capture_output=True,
                encoding=case.env.get("PYTHONIOENCODING", "utf-8"),
                errors="replace",
                timeout=case.timeout,
            )
        except subprocess.TimeoutExpired:
            return f"no answer within {case.timeout:.0f} s"
        took = time.perf_counter() - start
        cpu = float((folder / ".cpu").read_text())
        said = case.report(proc, folder) if case.report else first_lines(proc, folder)
        return f"exit {proc.returncode}, {took:.1f} s ({cpu:.1f} s cpu): {said}".replace("|", "\\|").replace("\n", " ")


def help_median(python: str, runs: int = 10) -> str:
    """`coherence --help` beside a bare interpreter's start, wall and CPU time (on a loaded machine
    the wall time mostly waits for a core)."""
    wall, cpu = measure([python, "-m", "coherence", "--help"], runs)
    bare, _ = measure([python, "-c", "pass"], runs)
    return f"median of {runs}: wall {wall:.3f} s, cpu {cpu:.3f} s (`python -c pass` wall {bare:.3f} s; load {os.getloadavg()[0]:.1f})"


def slow_cases(python: str) -> list[tuple[str, str, str]]:
    """pre-commit try-repo and the action's local runner: minutes each, as their tests are."""
    rows = []
    for name, test in (
        ("pre-commit try-repo (hook `coherence`)", "tests/cli/test_precommit.py"),
        ("the action via .ci/action_local.py", "tests/cli/test_action.py"),
    ):
        start = time.perf_counter()
        proc = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "slow", test],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        tail = (proc.stdout.strip().splitlines() or ["no output"])[-1]
        rows.append((name, f"pytest {test}", f"{tail} ({time.perf_counter() - start:.0f} s)"))
    return rows


def default310() -> str | None:
    cand = ROOT / ".venv-3.10" / "bin" / "python"
    return str(cand) if cand.is_file() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="an interpreter with coherence (after)")
    parser.add_argument("--python310", default=default310(), help="a Python 3.10 one with coherence (after)")
    parser.add_argument("--before", help="an interpreter with the old coherence (before)")
    parser.add_argument("--before310", help="a Python 3.10 one with the old coherence (before)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", metavar="TEXT", help="only the cases whose name contains TEXT")
    parser.add_argument("--slow", action="store_true", help="also pre-commit try-repo and the action (minutes)")
    opts = parser.parse_args()

    columns = [("after", opts.python, opts.python310)]
    if opts.before:
        columns.insert(0, ("before", opts.before, opts.before310))
    all_cases = [case for case in cases() if opts.only is None or opts.only in case.name]
    jobs = [(case, col) for case in all_cases for col in columns]
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        cells = list(pool.map(lambda job: run_case(job[0], job[1][2] if job[0].py310 else job[1][1]), jobs))
    print("| case | command | " + " | ".join(name for name, _, _ in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for i, case in enumerate(all_cases):
        command = "coherence " + " ".join(a if a != REPLAY else "REPLAY" for a in case.args)
        row = cells[i * len(columns) : (i + 1) * len(columns)]
        print(f"| {case.name} | `{command}` | " + " | ".join(row) + " |")
    print(
        "| `coherence --help` time | `coherence --help` ×10 | "
        + " | ".join(help_median(py) for _, py, _ in columns)
        + " |"
    )
    if opts.slow:
        for name, command, result in slow_cases(opts.python):
            print(f"| {name} | `{command}` | " + " | ".join(["–"] * (len(columns) - 1) + [result]) + " |")
    print(f"\nREPLAY = {os.path.relpath(REPLAY, ROOT)}; every check runs in a fresh temporary folder.")


if __name__ == "__main__":
    main()
