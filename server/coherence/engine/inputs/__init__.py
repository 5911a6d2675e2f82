"""Inputs from the signature alone: seeds, then type-aware mutation."""

from coherence.engine.inputs.values import Construct, Expr, Input, to_source

__all__ = ["Construct", "Expr", "Input", "to_source"]
