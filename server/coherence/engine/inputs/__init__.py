"""Inputs from the signature alone: seeds, then type-aware mutation.

The face holds the value model, annotations and shrinking, not generation
(``inputs.generate``): generation reads what the docstring states (``engine.stated``), which
imports the value model from here, so a face that loaded generation would close a circle.
"""

from __future__ import annotations

from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.shrink import shrink_candidates, shrink_key
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.values import Construct, Expr, Input, to_source, value_size

__all__ = [
    "Construct",
    "Expr",
    "Input",
    "TypeDesc",
    "parse_annotation",
    "shrink_candidates",
    "shrink_key",
    "to_source",
    "value_size",
]
