"""The command line, ``coherence``: ``main`` is its entry point, ``build_parser`` its options.

Building the parser imports nothing heavy (``coherence --help`` stays fast); each subcommand's
module imports the engine when the command runs.
"""

from coherence.cli.main import main
from coherence.cli.parser import build_parser

__all__ = ["build_parser", "main"]
