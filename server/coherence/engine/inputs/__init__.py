"""Inputs from the signature alone: seeds, then type-aware mutation."""

from __future__ import annotations

from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.generate import generate_inputs, infer_types
from coherence.engine.inputs.shrink import shrink_candidates, shrink_key
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.values import Construct, Expr, Input, to_source, value_size

__all__ = [
    "Construct",
    "Expr",
    "Input",
    "TypeDesc",
    "generate_inputs",
    "infer_types",
    "parse_annotation",
    "shrink_candidates",
    "shrink_key",
    "to_source",
    "value_size",
]
