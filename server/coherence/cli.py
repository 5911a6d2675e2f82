"""``coherence check`` (and ``serve``, ``eval``): the command line front end."""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
from pathlib import Path

from coherence import __version__
from coherence.engine.baseline import DEFAULT_NAME
from coherence.trust_cli import add_trust_parser

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INCOHERENT = EXIT_FINDINGS
EXIT_STATUS_HELP = """\
exit status (the highest that applies):
  0  no verdict as severe as --fail-on (default: warning), and every marked function was
     checked (or skipped, with the reason)
  1  findings: a function's verdict is at least as severe as --fail-on, or a file or function
     could not be checked (a syntax error, an unreadable file, an LLM or replay failure for
     it): CI must not pass code that was not checked, and the other results are still reported
  2  usage or configuration error (a bad option or setting, no model, no API key or a rejected
     one, an unknown model, a malformed replay file): fix it and run again
  3  internal error in coherence: a bug, reported with its message (-v shows the traceback)
  130, 143  interrupted by SIGINT (Ctrl-C) or SIGTERM: the report holds the functions finished
     before it, and says it was interrupted"""


class _Parser(argparse.ArgumentParser):
    """Says what is wrong first, in two lines, instead of the whole usage before the reason."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\nRun '{self.prog} --help' for the options.\n")


def _number(kind: type, *, low: float | None = None, high: float | None = None, above: float | None = None):
    """An argparse type: a number of ``kind`` within bounds, refused before any work is done."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}"
            ) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"must be more than {above:g}, got {text}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}, got {text}")
        return value

    return parse


MAX_TEMPERATURE = 2.0  # the highest any litellm provider takes (OpenAI, Gemini; Anthropic: 1)


def _check_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="check marked functions in files or folders",
        description="Sample alternative implementations of each marked function, run them all on the same generated inputs in a sandbox, and report how far to trust yours.",
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="Python files or folders")
    p.add_argument(
        "--model",
        action="append",
        help="litellm model, e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-20250514, ollama/qwen2.5-coder; repeat it for a panel of models, each optionally 'MODEL share=N api_base=URL'",
    )
    p.add_argument(
        "--api-base", help="base URL of the model's API (Ollama, vLLM, llama.cpp server, any OpenAI-compatible server)"
    )
    p.add_argument(
        "--replay", metavar="FILE", help="recorded samples (JSONL or JSONL.gz in the corpus schema) instead of an LLM"
    )
    p.add_argument("--samples", "-m", type=_number(int, low=2), help="programs to compare, yours included (default 10)")
    p.add_argument("--inputs", "-n", type=_number(int, low=1), help="inputs to run every program on (default 1000)")
    p.add_argument(
        "--temperature",
        type=_number(float, low=0, high=MAX_TEMPERATURE),
        help="sampling temperature, 0 to 2 (default 0.6)",
    )
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--python", metavar="INTERPRETER", help="interpreter that runs the code (default: this one)")
    p.add_argument(
        "--mode",
        choices=("marked", "docstring"),
        help="marked: '# coherence' or @...generated; docstring: every function with a docstring",
    )
    p.add_argument(
        "--timeout", type=_number(float, above=0), dest="call_timeout", help="seconds per call (default 0.5)"
    )
    p.add_argument("--seed", type=int, help="seed for input generation (default 0)")
    p.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "guard", "strict"),
        help="auto uses bubblewrap when it works; strict refuses to run without a kernel-enforced sandbox",
    )
    p.add_argument(
        "--llm-timeout",
        type=_number(float, above=0),
        metavar="SECONDS",
        help="seconds the LLM may take for one function's samples, retries included; one that does not answer in time is not asked again in this run (default 120)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="FOLDER",
        help="the sample cache's folder: a new or empty one, which coherence marks with a CACHEDIR.TAG (default ~/.cache/coherence)",
    )
    p.add_argument(
        "--output", "-o", metavar="FILE", help="write the report here instead of stdout (its folder is created)"
    )
    p.add_argument(
        "--fail-on",
        choices=("warning", "information", "hint", "never"),
        default="warning",
        help="exit 1 when a function's verdict is this severe or more (default warning: evidence that yours is wrong)",
    )
    base = p.add_mutually_exclusive_group()
    base.add_argument(
        "--baseline",
        metavar="FILE",
        help=f"accept the disagreements recorded in this baseline (default: {DEFAULT_NAME} in the current folder, when it exists)",
    )
    base.add_argument(
        "--no-baseline", action="store_true", help=f"report every finding, even those {DEFAULT_NAME} accepts"
    )
    p.add_argument(
        "--write-baseline",
        nargs="?",
        const=DEFAULT_NAME,
        metavar="FILE",
        help=f"record every current finding as accepted, in FILE (default {DEFAULT_NAME}), and exit 0",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list the functions, the samples each would request after the sample cache, and an estimate of their price from litellm's price map; nothing is sent, nothing runs",
    )
    p.add_argument(
        "--max-cost-usd",
        type=_number(float, above=0),
        metavar="USD",
        help="stop sampling once the run has spent this much (a function whose samples would go past it is skipped, and says so)",
    )
    p.add_argument(
        "--show-alternatives",
        action="store_true",
        help="print each cluster's representative alternative, its output on the counterexample, and a diff against yours (text report)",
    )
    p.add_argument("--verbose", "-v", action="store_true")
    p.add_argument(
        "--trust-workspace",
        action="store_true",
        help="use all of the repository's own [tool.coherence], model, api_base and python included (CI on your own repository); see 'coherence trust'",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="coherence",
        description="How far to trust a function an LLM wrote, without an oracle.",
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"coherence {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _check_parser(sub)
    add_trust_parser(sub)
    prompt = sub.add_parser(
        "prompt",
        help="print the prompt a check sends for one function, without sending it",
        description="Print exactly the messages coherence sends to the LLM for one function (secret-looking values redacted, as sent). Nothing is sent.",
    )
    prompt.add_argument(
        "target", metavar="FILE::NAME", help="a Python file and a function in it (NAME or Class.method)"
    )
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
            from coherence.engine.selection import walk_python_files

            files.extend(walk_python_files(p))
        else:
            raise FileNotFoundError(raw)
    return files


def _config_problem(config) -> str | None:
    """What the command line's types cannot catch: values from pyproject.toml."""
    if not config.call_timeout > 0:
        return f"call_timeout must be more than 0 seconds, got {config.call_timeout}"
    if not 0 <= config.temperature <= MAX_TEMPERATURE:
        return f"temperature must be between 0 and {MAX_TEMPERATURE:g}, got {config.temperature}"
    if config.python and shutil.which(config.python) is None:
        return f"python: no interpreter {config.python!r} (give a path or a name on PATH)"
    return None


def _cache_problem(config) -> str | None:
    """A cache folder that is not coherence's (a user's file or folder): refused before any work,
    and before anything is written or moved (a replay run has no cache)."""
    from coherence.engine.sampling.cache import default_cache_path, folder_problem

    if config.replay:
        return None
    problem = folder_problem(config.cache_dir or default_cache_path().parent)
    return f"cache_dir: {problem}" if problem else None


_VERSION_PROBE = "import sys; sys.stdout.write('%s %d.%d.%d' % ((getattr(getattr(sys, 'implementation', None), 'name', 'cpython'),) + tuple(sys.version_info[:3])))"


def _check_interpreter(python: str) -> None:
    """An interpreter too old for the worker (Python 2.7, 3.7) is named as such, by a probe every
    Python can run, before the full probe fails on what that Python lacks."""
    import subprocess

    from coherence.engine.errors import ConfigurationError

    exe = shutil.which(python) or python
    try:
        out = subprocess.run(
            [exe, "-c", _VERSION_PROBE], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        ).stdout.decode("ascii", "replace")
        name, version = out.split()
        numbers = tuple(int(v) for v in version.split("."))
    except (OSError, subprocess.SubprocessError, ValueError):
        return  # the full probe says what is wrong
    if name != "cpython" or numbers < (3, 8):  # (the full probe's words)
        raise ConfigurationError(
            f"The Python interpreter {python!r} is {name} {version}; coherence needs CPython 3.8 or newer to run code."
        )


def _missing_keys(configs, *, keys: bool = True) -> list[str]:
    """What the models in ``configs`` lack, found without importing litellm: litellm itself (the
    ``llm`` extra, said once for the run; a dry run prices with it), then with ``keys`` each
    missing API key of a known provider."""
    from coherence.engine.sampling.keys import missing_keys
    from coherence.engine.sampling.quiet_litellm import litellm_installed, litellm_missing

    members = []
    for config in configs:
        if config.replay:
            continue
        if config.models:
            members += [(m.model, m.api_base or config.api_base, None) for m in config.models]
        elif config.model:
            members.append((config.model, config.api_base, None))
    missing = missing_keys(members) if keys else []
    if members and not litellm_installed():
        missing.insert(0, litellm_missing(members[0][0]))
    return missing


def _drop_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush finds no closed pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _configs(resolver, paths, make):
    """Each file's ``make(config)``, from the config nearest to it (one per distinct config).
    Every config is resolved here, before any work: a broken one stops the run at once, and each
    repository setting refused for want of trust is named once on stderr."""
    checkers: dict = {}
    by_path = {}
    for path in paths:
        resolved = resolver.for_path(path)
        config = resolved.config
        if config.workspace is None:  # no pyproject.toml above it: its own folder is the project
            here = Path(path).resolve()
            config = config.merged(workspace=str(here if here.is_dir() else here.parent))
        if repr(config) not in checkers:
            checkers[repr(config)] = make(config)
            if resolved.notice:
                print(resolved.notice, file=sys.stderr)
        by_path[path] = checkers[repr(config)]
    return by_path.__getitem__


def _model_options(values: list[str] | None):
    """``--model`` given once: ``model``; given more than once, or with a share or api_base: a
    panel (``models``)."""
    from coherence.engine.config import parse_models

    if not values:
        return None, None
    if len(values) == 1 and len(values[0].split()) == 1:
        return values[0], None
    return None, parse_models(values, "--model")


async def run_check(args) -> int:
    import asyncio

    from coherence import formats
    from coherence.cli_check import (
        Budget,
        Interrupt,
        Progress,
        RunNotes,
        check_all,
        find_work,
        in_source_order,
        open_output,
        write_report,
    )
    from coherence.engine.errors import ConfigurationError
    from coherence.engine.execution import sandbox as sb
    from coherence.engine.resolve import ConfigResolver
    from coherence.engine.sampling.cache import SampleCache
    from coherence.engine.sampling.replay import ReplayProvider
    from coherence.engine.selection import check_patterns

    # Everything that can be wrong with the command is found before any work is done.
    refused = {
        (
            True,
            "json",
        ): "--show-alternatives is for the text report; JSON carries them as clusters[].representative_source",
        (
            True,
            "sarif",
        ): "--show-alternatives is for the text report; SARIF keeps the alternatives' sources out of code scanning",
    }.get((args.show_alternatives, args.format))
    if args.dry_run and args.format == "sarif":
        refused = "--dry-run reports as text or JSON (SARIF is for findings)"
    if refused:
        print(f"coherence: {refused}", file=sys.stderr)
        return EXIT_USAGE
    try:
        files = python_files(args.paths)
    except FileNotFoundError as exc:
        print(f"coherence: no such file or folder: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        model, models = _model_options(args.model)
        resolver = ConfigResolver(
            dict(
                model=model,
                models=models,
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
                llm_timeout=args.llm_timeout,
                max_cost_usd=args.max_cost_usd,
            ),
            trust=True if args.trust_workspace else None,
        )

        def make(config):
            """One config, its values checked (pyproject values no option type saw); its checker comes
            after the early key check (``checker_for``)."""
            try:
                config = config.merged(
                    include=check_patterns(config.include, "include"), exclude=check_patterns(config.exclude, "exclude")
                )
            except ValueError as exc:
                raise ConfigurationError(f"[tool.coherence] {exc}") from None
            config = config.validated()  # what Checker checks, before the key check and any work
            problem = _config_problem(config) or _cache_problem(config)
            if problem:
                raise ConfigurationError(problem)
            if config.python:  # one that starts and that the worker supports, before any work (cached)
                _check_interpreter(config.python)
                sb.probe_interpreter(config.python)
            if config.sandbox == "strict":  # refuses before any work rather than run weakly
                sb.choose_mode("strict", sb.probe_interpreter(config.python))
            return config

        config_for = _configs(resolver, [args.paths[0], *files], make)
        config = config_for(args.paths[0])
        output = open_output(args.output) if args.output and not args.dry_run else None
        if args.write_baseline:  # a link the repository planted: refused before any work
            from coherence.engine.safe_write import refusal

            why = refusal(args.write_baseline, "--write-baseline")
            if why:
                raise ConfigurationError(why)
        work = find_work(files, config_for)
        to_check = {repr(config_for(Path(t.path))): config_for(Path(t.path)) for t in work.targets if not t.skip_reason}
        missing = _missing_keys(to_check.values(), keys=not args.dry_run)
        if missing:  # before the engine's and litellm's imports (seconds), once for the run
            raise ConfigurationError(" ".join(missing))
        from coherence.engine.check import Checker

        checkers: dict[str, Checker] = {}

        def checker_for(path: Path) -> Checker:
            config = config_for(path)
            if repr(config) not in checkers:
                # a dry run counts what the cache holds, and writes nothing
                cache = SampleCache(config.cache_dir, folder=True, readonly=True) if args.dry_run else None
                checkers[repr(config)] = Checker(config, cache=cache)
            return checkers[repr(config)]

        for checker in {
            id(c): c for c in (checker_for(Path(t.path)) for t in work.targets if not t.skip_reason)
        }.values():
            provider = checker.provider  # no model configured: say so now
            if isinstance(provider, ReplayProvider):
                provider.entry_points()  # a malformed replay file: say so now
    except ConfigurationError as exc:
        print(f"coherence: {exc}", file=sys.stderr)
        return EXIT_USAGE

    if args.dry_run:
        from coherence.cli_check import dry_run

        return dry_run(work, checker_for, args.format)

    baseline = None
    baseline_path = args.baseline or (
        DEFAULT_NAME if Path(DEFAULT_NAME).is_file() and not (args.write_baseline or args.no_baseline) else None
    )
    if baseline_path:
        from coherence.engine.baseline import Baseline, BaselineError

        try:
            baseline = Baseline(baseline_path)
        except BaselineError as exc:
            print(f"coherence: {exc}", file=sys.stderr)
            return EXIT_USAGE

    tty = sys.stderr.isatty() and args.format == "text"
    notes = RunNotes()
    interrupt = Interrupt()
    task = asyncio.ensure_future(
        check_all(
            lambda target: checker_for(Path(target.path)),
            work,
            Progress(len(work.items), tty=tty),
            prepare=baseline.apply if baseline is not None else None,
            is_finding=lambda r: failed([r], args.fail_on),
            budget=Budget(),
            notes=notes,
            interrupt=interrupt,
        )
    )
    interrupt.install(task)
    try:
        results, status = await task
    finally:
        if not interrupt.signum:
            interrupt.remove()
    results = in_source_order(results)
    interrupted = []
    if interrupt.signum:
        interrupted = [interrupt.notice(len(results), len(work.items))]
        notes.say(interrupted[0])
        status = interrupt.exit_status

    weak = sorted({r.sandbox for r in results if r.sandbox and sb.is_weak(r.sandbox)})
    if weak:
        print(sb.WEAK_NOTICE.format(name=", ".join(weak)), file=sys.stderr)
    if args.format == "json":
        text = formats.to_json(results, notes.notifications)
    elif args.format == "sarif":
        text = formats.to_sarif(
            results, root=config.workspace, fail_on=args.fail_on, notifications=notes.notifications, exit_status=status
        )
    else:
        sources = {(t.path, t.qualname): t.function_source for t in work.targets} if args.show_alternatives else None
        text = formats.to_text(results, alternatives=sources, notes=[f"coherence: {n}" for n in interrupted])
    try:
        write_report(text, output)
    except BrokenPipeError:  # `| head`, `| true`: the reader has gone, the findings still decide
        _drop_stdout()
        return status
    except OSError as exc:
        print(f"coherence: cannot write the report to {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    if interrupt.signum:
        return status
    if args.write_baseline:
        from coherence.engine.baseline import write

        try:
            count = write(args.write_baseline, results)
        except OSError as exc:
            print(
                f"coherence: cannot write the baseline to {args.write_baseline}: {exc.strerror or exc}", file=sys.stderr
            )
            return EXIT_USAGE
        print(f"coherence: wrote {count} accepted disagreement(s) to {args.write_baseline}", file=sys.stderr)
        return EXIT_OK
    return status


def failed(results, fail_on: str) -> bool:
    """Whether some verdict is at least ``fail_on`` severe ("never": none is)."""
    from coherence.engine.verdict import at_least

    if fail_on == "never":
        return False
    return any(r.finding and at_least(r.finding, fail_on) for r in results)


def _escape_unencodable() -> None:
    """A console that cannot show every character (PYTHONIOENCODING=cp1252, a Windows code
    page) gets escapes such as \\u2265 instead of a traceback after the work is done."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]  # caught below
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (tests, pipes replaced)
            pass


def show_prompt(args) -> int:
    """``coherence prompt FILE::NAME``: the messages a check of NAME sends, printed, not sent."""
    import json

    from coherence.engine.markers import find_targets, read_source
    from coherence.engine.redact import escape
    from coherence.engine.sampling.prompt import build_messages

    file, sep, name = args.target.rpartition("::")
    if not sep or not file or not name:
        print(
            "coherence: expected FILE::NAME, e.g. src/util.py::parse_header or src/cart.py::Cart.add", file=sys.stderr
        )
        return EXIT_USAGE
    try:
        source = read_source(Path(file))
        found = [
            t
            for mode in ("marked", "docstring")
            for t in find_targets(source, file, mode=mode)
            if name in (t.qualname, t.name)
        ]
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        print(f"coherence: cannot read {file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not found:
        print(
            f"coherence: no function {name} in {file} that coherence would check (marked, or with a docstring)",
            file=sys.stderr,
        )
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
    logging.basicConfig(
        level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command == "check":
        # here, not at the top: --help and the other commands need none of it
        # (docs/results.md#import-costs)
        import asyncio

        _escape_unencodable()
        try:
            return asyncio.run(run_check(args))
        except KeyboardInterrupt:
            print("coherence: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:  # a bug: say so, and never as "findings" (1)
            logging.getLogger("coherence").debug("internal error", exc_info=True)
            print(
                f"coherence: internal error: {type(exc).__name__}: {exc} (please report it; -v shows the traceback)",
                file=sys.stderr,
            )
            return EXIT_INTERNAL
    if args.command == "trust":
        from coherence.trust_cli import run_trust

        return run_trust(args)
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
