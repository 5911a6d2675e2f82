"""``coherence check`` (and ``serve``, ``eval``): the command line front end."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from coherence import __version__

EXIT_OK, EXIT_INCOHERENT, EXIT_USAGE = 0, 1, 2
_SKIP_DIRS = {".git", ".hg", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist", ".tox", ".nox", "site-packages", ".mypy_cache", ".pytest_cache"}


def _check_parser(sub) -> None:
    p = sub.add_parser("check", help="check marked functions in files or folders", description="Sample alternative implementations of each marked function, run them all on the same generated inputs in a sandbox, and report how far to trust yours.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders")
    p.add_argument("--model", help="litellm model, e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-20250514, ollama/qwen2.5-coder")
    p.add_argument("--api-base", help="base URL of the model's API (Ollama, vLLM, llama.cpp server, any OpenAI-compatible server)")
    p.add_argument("--replay", metavar="FILE", help="recorded samples (JSONL or JSONL.gz in the corpus schema) instead of an LLM")
    p.add_argument("--samples", "-m", type=int, help="programs to compare, yours included (default 10)")
    p.add_argument("--inputs", "-n", type=int, help="inputs to run every program on (default 1000)")
    p.add_argument("--temperature", type=float, help="sampling temperature (default 0.6)")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--python", metavar="INTERPRETER", help="interpreter that runs the code (default: this one)")
    p.add_argument("--mode", choices=("marked", "docstring"), help="marked: '# coherence' or @...generated; docstring: every function with a docstring")
    p.add_argument("--timeout", type=float, dest="call_timeout", help="seconds per call (default 0.5)")
    p.add_argument("--seed", type=int, help="seed for input generation (default 0)")
    p.add_argument("--sandbox", choices=("auto", "bwrap", "guard"), help="auto uses bubblewrap when it works")
    p.add_argument("--cache-dir", help="where the sample cache lives (default ~/.cache/coherence)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--verbose", "-v", action="store_true")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coherence", description="How far to trust a function an LLM wrote, without an oracle.")
    parser.add_argument("--version", action="version", version=f"coherence {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _check_parser(sub)
    prompt = sub.add_parser("prompt", help="print the prompt a check sends for one function, without sending it",
                            description="Print exactly the messages coherence sends to the LLM for one function (secret-looking values redacted, as sent). Nothing is sent.")
    prompt.add_argument("target", metavar="FILE::NAME", help="a Python file and a function in it (NAME or Class.method)")
    prompt.add_argument("--json", action="store_true", help="the messages as JSON, as the API receives them")
    serve = sub.add_parser("serve", help="run the language server over stdio")
    serve.add_argument("--verbose", "-v", action="store_true")
    try:
        from coherence.eval.cli import add_eval_parser
    except ImportError:
        pass
    else:
        add_eval_parser(sub)
    return parser


def python_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                files.extend(Path(root) / n for n in sorted(names) if n.endswith(".py"))
        else:
            raise FileNotFoundError(raw)
    return files


async def run_check(args) -> int:
    from coherence.engine.check import Checker
    from coherence.engine.config import CheckConfig, load_project_config
    from coherence.engine.errors import CoherenceError, ConfigurationError
    from coherence.engine.markers import find_targets
    from coherence.engine.redact import display
    from coherence.engine.result import CheckResult
    from coherence import formats

    try:
        files = python_files(args.paths)
    except FileNotFoundError as exc:
        print(f"coherence: no such file or folder: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        config = load_project_config(args.paths[0], CheckConfig())
        config = config.merged(
            model=args.model,
            api_base=args.api_base,
            replay=str(Path(args.replay).resolve()) if args.replay else None,
            samples=args.samples,
            inputs=args.inputs,
            temperature=args.temperature,
            python=args.python,
            mode=args.mode,
            call_timeout=args.call_timeout,
            seed=args.seed,
            sandbox=args.sandbox,
            cache_dir=args.cache_dir,
        )
        if config.workspace is None:
            first = Path(args.paths[0]).resolve()
            config = config.merged(workspace=str(first if first.is_dir() else first.parent))
        checker = Checker(config)
    except ConfigurationError as exc:
        print(f"coherence: {exc}", file=sys.stderr)
        return EXIT_USAGE

    results: list[CheckResult] = []
    tty = sys.stderr.isatty() and args.format == "text"
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            results.append(CheckResult(name="<module>", path=str(path), line=1, status="error", reason=f"cannot read file: {exc}"))
            continue
        try:
            targets = find_targets(source, str(path), mode=config.mode)
        except SyntaxError as exc:
            results.append(CheckResult(name="<module>", path=str(path), line=exc.lineno or 1, status="error", reason=f"syntax error: {exc.msg} (line {exc.lineno})"))
            continue
        for target in targets:
            if tty:
                print(display(f"checking {path}:{target.name_line} {target.qualname}…"), file=sys.stderr)  # a cloned repo names its files
            try:
                results.append(await checker.check(target))
            except CoherenceError as exc:
                print(f"coherence: {exc}", file=sys.stderr)
                return EXIT_USAGE

    if args.format == "json":
        text = formats.to_json(results)
    elif args.format == "sarif":
        text = formats.to_sarif(results, root=config.workspace)
    else:
        text = formats.to_text(results)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return EXIT_INCOHERENT if any(r.status == "incoherent" for r in results) else EXIT_OK


def show_prompt(args) -> int:
    """``coherence prompt FILE::NAME``: the messages a check of NAME sends, printed, not sent."""
    import json

    from coherence.engine.markers import find_targets
    from coherence.engine.redact import escape
    from coherence.engine.sampling.prompt import build_messages

    file, sep, name = args.target.rpartition("::")
    if not sep or not file or not name:
        print("coherence: expected FILE::NAME, e.g. src/util.py::parse_header or src/cart.py::Cart.add", file=sys.stderr)
        return EXIT_USAGE
    try:
        source = Path(file).read_text(encoding="utf-8")
        found = [t for mode in ("marked", "docstring") for t in find_targets(source, file, mode=mode) if name in (t.qualname, t.name)]
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        print(f"coherence: cannot read {file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not found:
        print(f"coherence: no function {name} in {file} that coherence would check (marked, or with a docstring)", file=sys.stderr)
        return EXIT_USAGE
    if found[0].skip_reason:
        print(f"coherence: {name} is skipped, so nothing is sent for it: {found[0].skip_reason}", file=sys.stderr)
        return EXIT_USAGE
    messages = build_messages(found[0].spec)
    if args.json:
        print(json.dumps(messages, indent=2))
    else:  # (escaped: a cloned file's bytes must not drive the terminal)
        print("\n\n".join(f"--- {m['role']} ---\n{escape(m['content'], keep=chr(10) + chr(9))}" for m in messages))
    print("coherence: printed only, nothing was sent", file=sys.stderr)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "check":
        try:
            return asyncio.run(run_check(args))
        except KeyboardInterrupt:
            print("coherence: interrupted", file=sys.stderr)
            return 130
    if args.command == "prompt":
        return show_prompt(args)
    if args.command == "serve":
        from coherence.lsp.server import serve

        return serve()
    if args.command == "eval":
        from coherence.eval.cli import run_eval

        return run_eval(args)
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
