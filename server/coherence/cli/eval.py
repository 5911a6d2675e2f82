"""``coherence eval``'s front: the command exists when the eval package is installed with
coherence (a source checkout); the command itself is ``coherence.eval.cli``."""

from __future__ import annotations


def add_eval_parser(sub) -> None:
    try:
        from coherence.eval.cli import add_eval_parser as add
    except ImportError:
        return
    add(sub)


def run_eval(args) -> int:
    from coherence.eval.cli import run_eval as run

    return run(args)
