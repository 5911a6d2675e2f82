"""The parser of ``coherence``: every subcommand's options, built without importing anything
heavy (``coherence --help`` stays fast)."""

from __future__ import annotations

import argparse

from coherence import __version__
from coherence.cli.check_options import add_check_parser
from coherence.cli.eval import add_eval_parser
from coherence.cli.exits import EXIT_STATUS_HELP, EXIT_USAGE
from coherence.cli.prompt import add_prompt_parser
from coherence.cli.serve import add_serve_parser
from coherence.cli.trust import add_trust_parser


class _Parser(argparse.ArgumentParser):
    """Says what is wrong first, in two lines, instead of the whole usage before the reason."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\nRun '{self.prog} --help' for the options.\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="coherence",
        description="How far to trust a function an LLM wrote, without an oracle.",
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"coherence {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_check_parser(sub)
    add_trust_parser(sub)
    add_prompt_parser(sub)
    add_serve_parser(sub)
    add_eval_parser(sub)
    return parser
