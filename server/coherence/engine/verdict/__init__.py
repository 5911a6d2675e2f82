"""Judging: from the outcome matrix to what the user is told.

- ``metrics``: incoherence, clusters, SDE and DSDE;
- ``scored`` / ``scoring``: the run's matrix scored, and the verdict on it;
- ``rules``: the per-input rules, one table (mask, severity cap, reason);
- ``severity``: the severity rule and its evidence (``judge``, ``from_examples``);
- ``stated`` / ``special_cases``: the docstring's worked examples;
- ``acceptance``: the user's ``assume`` and ``accept`` statements;
- ``counterexample`` / ``convincing``: the input shown, and its shrinking.
"""

from coherence.engine.verdict.severity import (
    BLOC_MIN,
    INFO_SHARE,
    PANEL_HELD_SHARE,
    PANEL_MODEL_BACKS,
    PANEL_TERMS,
    PANEL_WHOLE_MIN_INPUTS,
    PANEL_WHOLE_MODELS,
    SEVERITIES,
    WARN_AGREE,
    WARN_SHARE,
    Evidence,
    at_least,
    from_examples,
    held_by,
    judge,
    panel_backs,
    stronger,
    voters,
)

__all__ = [
    "BLOC_MIN",
    "INFO_SHARE",
    "PANEL_HELD_SHARE",
    "PANEL_MODEL_BACKS",
    "PANEL_TERMS",
    "PANEL_WHOLE_MIN_INPUTS",
    "PANEL_WHOLE_MODELS",
    "SEVERITIES",
    "WARN_AGREE",
    "WARN_SHARE",
    "Evidence",
    "at_least",
    "from_examples",
    "held_by",
    "judge",
    "panel_backs",
    "stronger",
    "voters",
]
