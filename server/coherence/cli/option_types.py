"""Numeric options, refused before any work is done when out of the bounds of their setting
(``engine.config.BOUNDS``)."""

from __future__ import annotations

import argparse

from coherence.engine.bounds import BOUNDS


def number(setting: str):
    """An argparse type: a number of the kind of ``setting``, within its bounds."""
    bounds = BOUNDS[setting]
    kind, low, high, above = bounds.kind, bounds.minimum, bounds.maximum, bounds.above

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
