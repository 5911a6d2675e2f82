"""``coherence check`` (and ``trust``, ``prompt``, ``serve``, ``eval``): the command line's entry
point, which parses the options and runs the subcommand they name."""

from __future__ import annotations

import logging
import sys

from coherence.cli.exits import EXIT_INTERNAL, EXIT_USAGE
from coherence.cli.parser import build_parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command == "check":
        return _check(args)
    if args.command == "trust":
        from coherence.cli.trust import run_trust

        return run_trust(args)
    if args.command == "prompt":
        from coherence.cli.prompt import show_prompt

        return show_prompt(args)
    if args.command == "serve":
        from coherence.cli.serve import run_serve

        return run_serve(args)
    if args.command == "eval":
        from coherence.cli.eval import run_eval

        return run_eval(args)
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


def _check(args) -> int:
    # here, not at the top: --help and the other commands need none of it
    # (docs/results.md#import-costs)
    import asyncio

    _escape_unencodable()
    try:
        from coherence.cli.check import run_check

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


def _escape_unencodable() -> None:
    """A console that cannot show every character (PYTHONIOENCODING=cp1252, a Windows code
    page) gets escapes such as \\u2265 instead of a traceback after the work is done."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]  # caught below
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (tests, pipes replaced)
            pass


if __name__ == "__main__":
    raise SystemExit(main())
