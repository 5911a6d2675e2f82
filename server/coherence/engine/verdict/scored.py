"""What scoring leaves for the verdict, the accept statements and the counterexample (``Scored``):
a leaf that every judging module can import.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from coherence.engine.execution import Program
from coherence.engine.inputs import Input
from coherence.engine.outcomes import Outcome
from coherence.engine.stated.domain import Domain
from coherence.engine.verdict.metrics import Metrics
from coherence.engine.verdict.severity import is_panel, voters

if TYPE_CHECKING:
    from coherence.engine.config import CheckConfig
    from coherence.engine.execution import ModuleContext
    from coherence.engine.execution.executor import ExecutionReport, Executor
    from coherence.engine.execution.seen import SeenOutcomes
    from coherence.engine.spec import Target


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
    def panel(self) -> bool:
        """Whether the alternatives come from two models or more: the panel's terms apply."""
        return is_panel(self.models)

    @cached_property
    def voters(self) -> set[str]:
        """The models with a vote (``severity.voters``)."""
        return voters(self.models, self.raised)


@dataclass(frozen=True)
class Judging:
    """What every judging step of one check reads: where programs run again (the accepted
    calls, the docstring's examples, the shrinker's candidates), the function and its run."""

    executor: Executor
    config: CheckConfig
    target: Target
    module: ModuleContext
    scored: Scored
    report: ExecutionReport
    cancel: threading.Event | None = None
    seen: SeenOutcomes | None = None  # outcomes kept between the checks of one Checker
    ahead: asyncio.Future[None] | None = None  # yours run on the last shrink's inputs (``run_ahead``)
