"""What scoring leaves for the verdict, the accept statements and the counterexample (``Scored``):
a leaf that every judging module can import.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from coherence.engine.execution import Program
from coherence.engine.inputs import Input
from coherence.engine.inputs.domain import Domain
from coherence.engine.outcomes import Outcome
from coherence.engine.verdict.metrics import Metrics
from coherence.engine.verdict.severity import voters


@dataclass
class Scored:
    """What scoring leaves for the verdict and the counterexample: the programs and inputs that
    remain (too-slow alternatives and over-budget inputs left out), their outcome labels, the
    metrics, and the stated domain."""

    programs: list[Program]
    inputs: list[Input]
    labels: np.ndarray
    raised: np.ndarray
    metrics: Metrics
    domain: Domain | None
    inside: np.ndarray | None  # inputs inside the domain (asked only where programs disagree)
    disagree: np.ndarray  # inputs where some programs disagree
    yours_slow: np.ndarray | None = None  # inputs where your function ran out of time
    outcomes: list[list[Outcome]] | None = None  # [program][input], aligned with the labels

    @cached_property
    def models(self) -> list[str]:
        """The model each program comes from, yours first: a panel's terms need it."""
        return [p.origin for p in self.programs]

    @cached_property
    def voters(self) -> set[str]:
        """The models with a vote (``severity.voters``)."""
        return voters(self.models, self.raised)
