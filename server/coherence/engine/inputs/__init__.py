"""Inputs from the signature alone: seeds, then type-aware mutation.

The face holds the value model and annotations only; generation, mutation and shrinking are
imported from their modules (``inputs.generate``, ``inputs.shrink``).  What the docstring states
(``engine.stated``) imports the value model through this package, and generation imports
``engine.stated``: a face that loaded generation would close a circle, and one that loaded the
kinds would hand the facts the input builders.
"""

from __future__ import annotations

from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.values import Construct, Expr, Input, to_source, value_size

__all__ = [
    "Construct",
    "Expr",
    "Input",
    "TypeDesc",
    "parse_annotation",
    "to_source",
    "value_size",
]
