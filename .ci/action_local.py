#!/usr/bin/env python3
"""Run the composite action (action.yml) outside GitHub, step by step, as a runner would: its
``run`` steps in bash with the same inputs, environment, step outputs and ``if:`` conditions,
and the ``uses`` steps it relies on stood in for locally:

- actions/setup-python: a fresh virtual environment first on PATH, which sees this
  interpreter's packages (a .pth file), so the action's own install step installs coherence into
  it without downloading its dependencies again;
- actions/cache: restores the exact key, else the newest entry whose key starts with one of the
  restore-keys, from ``--cache-store``; saves after the job when the key did not hit, as the
  real one's post step does;
- github/codeql-action/upload-sarif: copies the file to ``--cache-store``/uploaded.sarif.

    .ci/action_local.py --workspace REPO --cache-store DIR --input model=openai/gpt-4o-mini ...

Prints each step; ``--report FILE`` writes what happened as JSON (steps, outputs, cache hit,
saved keys).  Exits 0 when the job passes, 1 when it fails.  Only the expressions action.yml
uses are understood (inputs, steps, runner, github.action_path, always(), hashFiles, ==, !=,
&&, ||); anything else stops the runner, so action.yml cannot drift from what is exercised.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import site
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||\(|\)|,)|(?P<name>[A-Za-z_][\w.-]*(?:\(\))?))")


class Job:
    def __init__(self, action: dict, inputs: dict[str, str], workspace: Path, store: Path, temp: Path):
        self.action = action
        self.inputs = {k: str(v.get("default", "")) for k, v in action.get("inputs", {}).items()}
        unknown = set(inputs) - set(self.inputs)
        if unknown:
            raise SystemExit(f"action_local: action.yml has no input(s) {', '.join(sorted(unknown))}")
        self.inputs.update(inputs)
        self.workspace, self.store, self.temp = workspace, store, temp
        self.steps: dict[str, dict[str, str]] = {}
        self.env = dict(os.environ, RUNNER_TEMP=str(temp), GITHUB_WORKSPACE=str(workspace), GITHUB_ACTIONS="true")
        self.failed = False
        self.report: dict = {"steps": [], "cache": {}, "uploaded": None}
        self._post: list = []

    # -- expressions -------------------------------------------------------------------------
    def value(self, name: str) -> str:
        if name == "always()":
            return "true"
        if name == "success()":
            return "" if self.failed else "true"
        parts = name.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if name == "runner.temp":
            return str(self.temp)
        if name == "runner.os":
            return {"Darwin": "macOS"}.get(platform.system(), platform.system())
        if name == "github.action_path":
            return str(ROOT)
        raise SystemExit(f"action_local: unsupported expression {name!r}")

    def evaluate(self, text: str) -> str:
        tokens = list(TOKEN.finditer(text))
        if "".join(m.group(0) for m in tokens).strip() != text.strip():
            raise SystemExit(f"action_local: unsupported expression {text!r}")
        pos = 0

        def atom() -> str:
            nonlocal pos
            m = tokens[pos]
            pos += 1
            if m.group("str"):
                return m.group("str")[1:-1].replace("''", "'")
            if m.group("op") == "(":
                v = disjunction()
                pos += 1  # ")"
                return v
            name = m.group("name")
            if name == "hashFiles" and tokens[pos].group("op") == "(":
                pos += 1
                arg = disjunction()
                pos += 1
                path = self.workspace / arg
                return "sha" if arg and path.is_file() else ""
            return self.value(name)

        def comparison() -> str:
            nonlocal pos
            left = atom()
            while pos < len(tokens) and tokens[pos].group("op") in ("==", "!="):
                op = tokens[pos].group("op")
                pos += 1
                right = atom()
                left = "true" if (left.lower() == right.lower()) == (op == "==") else ""
            return left

        def chain(op: str, operand, combine):
            """``operand (op operand)*``, folded left with ``combine``."""

            def parse() -> str:
                nonlocal pos
                left = operand()
                while pos < len(tokens) and tokens[pos].group("op") == op:
                    pos += 1
                    right = operand()
                    left = combine(left, right)
                return left

            return parse

        conjunction = chain("&&", comparison, lambda a, b: b if a else a)
        disjunction = chain("||", conjunction, lambda a, b: a or b)

        return disjunction()

    def expand(self, text) -> str:
        return EXPR.sub(lambda m: self.evaluate(m.group(1)), str(text))

    def condition(self, step: dict) -> bool:
        cond = step.get("if")
        if cond is None:
            return not self.failed
        inner = EXPR.fullmatch(str(cond).strip())
        text = inner.group(1) if inner else str(cond)
        uses_status = re.search(r"\b(always|success|failure|cancelled)\(\)", text)
        return bool(self.evaluate(text)) and (bool(uses_status) or not self.failed)

    # -- steps -------------------------------------------------------------------------------
    def run(self) -> int:
        for i, step in enumerate(self.action["runs"]["steps"]):
            name = step.get("name") or step.get("uses") or f"step {i}"
            if not self.condition(step):
                print(f"== {name}: skipped")
                self.report["steps"].append({"name": name, "skipped": True})
                continue
            started = time.monotonic()
            status = self.uses(step) if "uses" in step else self.shell(step)
            self.report["steps"].append(
                {"name": name, "status": status, "seconds": round(time.monotonic() - started, 2)}
            )
            print(f"== {name}: {'ok' if status == 0 else f'failed ({status})'}", flush=True)
            if status != 0:
                self.failed = True
        for post in self._post:
            post()
        self.report["outputs"] = {k: self.expand(v.get("value", "")) for k, v in self.action.get("outputs", {}).items()}
        self.report["failed"] = self.failed
        return 1 if self.failed else 0

    def shell(self, step: dict) -> int:
        output = self.temp / f"output-{len(self.report['steps'])}"
        output.write_text("")
        env = dict(self.env, GITHUB_OUTPUT=str(output))
        env.update({k: self.expand(v) for k, v in (step.get("env") or {}).items()})
        script = self.expand(step["run"])
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=self.workspace, env=env
        )
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        if step.get("id"):
            self.steps[step["id"]] = outputs
        return proc.returncode

    def uses(self, step: dict) -> int:
        action, _, _ = step["uses"].partition("@")
        args = {k: self.expand(v) for k, v in (step.get("with") or {}).items()}
        if action == "actions/setup-python":
            return self.setup_python()
        if action == "actions/cache":
            return self.cache(args)
        if action == "github/codeql-action/upload-sarif":
            sarif = self.workspace / args["sarif_file"]
            doc = json.loads(sarif.read_text())
            if doc.get("version") != "2.1.0":
                print(f"upload-sarif: {sarif} is not SARIF 2.1.0")
                return 1
            shutil.copy(sarif, self.store / "uploaded.sarif")
            self.report["uploaded"] = str(self.store / "uploaded.sarif")
            return 0
        raise SystemExit(f"action_local: no local stand-in for {step['uses']}")

    def setup_python(self) -> int:
        env_dir = self.temp / "python"
        venv.create(env_dir, with_pip=True)
        inner = subprocess.run(
            [env_dir / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # the outer environment's packages (coherence's dependencies) are visible, not installed again
        (Path(inner) / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
        self.env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{self.env['PATH']}"
        self.env.pop("PYTHONHOME", None)
        self.env["VIRTUAL_ENV"] = str(env_dir)
        return 0

    def cache(self, args: dict) -> int:
        key, path = args["key"], Path(args["path"])
        prefixes = [p.strip() for p in args.get("restore-keys", "").splitlines() if p.strip()]
        entries = sorted(
            (p for p in self.store.glob("cache-*") if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True
        )
        keys = {p: (p / "KEY").read_text() for p in entries}
        hit = next((p for p in entries if keys[p] == key), None)
        restored = hit or next((p for pre in prefixes for p in entries if keys[p].startswith(pre)), None)
        if restored is not None:
            shutil.copytree(restored / "data", path, dirs_exist_ok=True)
        self.report["cache"] = {"key": key, "hit": hit is not None, "restored": keys.get(restored)}
        print(f"cache: key {key}: {'hit' if hit else 'restored ' + keys[restored] if restored else 'miss'}")

        def save() -> None:
            if hit is None and path.exists():
                target = self.store / f"cache-{len(entries) + 1}"
                shutil.copytree(path, target / "data")
                (target / "KEY").write_text(key)
                self.report["cache"]["saved"] = key

        self._post.append(save)
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workspace", required=True, type=Path, help="the repository the action checks (its working folder)"
    )
    parser.add_argument(
        "--cache-store",
        required=True,
        type=Path,
        help="where cache entries and the uploaded SARIF are kept between runs",
    )
    parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--report", type=Path, help="write what happened here, as JSON")
    args = parser.parse_args(argv)
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    inputs = dict(item.split("=", 1) for item in args.input)
    args.cache_store.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="action-runner-") as temp:
        job = Job(action, inputs, args.workspace.resolve(), args.cache_store.resolve(), Path(temp))
        status = job.run()
    if args.report:
        args.report.write_text(json.dumps(job.report, indent=2))
    print(f"== job {'failed' if status else 'passed'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
