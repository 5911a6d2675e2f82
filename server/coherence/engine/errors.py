"""Errors the engine reports to its callers (CLI, language server) with a message meant for users."""

from __future__ import annotations


class CoherenceError(Exception):
    """Base class: ``str(err)`` is a complete, user-facing sentence."""


class ConfigurationError(CoherenceError):
    """No model configured, a missing replay file, a bad setting: the user must act."""


class SamplingError(CoherenceError):
    """The LLM could not be reached or refused every request (bad key, provider down)."""

    def __init__(self, message: str, kind: str = "provider"):
        super().__init__(message)
        # auth | config (the run's settings: key, model, request) | rate_limit | timeout |
        # connection | provider | missing (a replay file has no samples for this function)
        self.kind = kind


class CheckCancelled(CoherenceError):
    """A check was superseded or cancelled by the user."""
