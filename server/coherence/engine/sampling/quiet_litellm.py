"""litellm, imported lazily (it takes seconds) and kept quiet: its loggers are turned down and
nothing reaches stdout, which the language server uses for its protocol; the environment it
needs (a local model cost map, the Hub offline) is set first.

litellm is the ``llm`` extra (``pip install 'coherence[llm]'``): replaying recorded samples needs
none of it, so a model configured without it is one ``SamplingError`` that names the fix.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import logging
import os
import sys
from typing import Any

from coherence.engine.errors import SamplingError

_LITELLM: Any = None


class LiteLLMMissing(SamplingError):
    """A model is configured and litellm (the ``llm`` extra) is not installed: the user's fix is
    an install, which an editor's client may do for its own bundled server."""

    def __init__(self, model: str | None = None):
        super().__init__(litellm_missing(model), kind="config")


_QUIET_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai")


def import_litellm(model: str | None = None) -> Any:
    """Import litellm once, offline-friendly and silent on stdout; without it (no ``llm`` extra),
    a ``SamplingError`` of kind "config" that names the fix (and ``model``, the one asking)."""
    global _LITELLM
    if _LITELLM is not None:
        return _LITELLM
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    # Not "DEV": litellm would then load a .env found from its own install folder upwards (a venv
    # inside a cloned repository finds the repository's), and an OPENAI_BASE_URL there would send
    # the user's key to the repository's server.  Keys come from the user's environment.
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    # No redirect_stdout here: swapping sys.stdout process-wide for seconds could divert the
    # language server's own protocol output.  litellm prints nothing on import (tested).
    try:
        import litellm
    except ModuleNotFoundError as exc:
        if exc.name != "litellm":  # litellm is there but broken: its own error says what is wrong
            raise
        raise LiteLLMMissing(model) from None

    litellm.suppress_debug_info = True
    for attr, value in (("set_verbose", False), ("telemetry", False), ("drop_params", True)):
        with contextlib.suppress(Exception):
            setattr(litellm, attr, value)
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    _LITELLM = litellm
    # Its import leaves some 370,000 objects that live as long as the process, and every full
    # collection would walk them with the interpreter lock held: 0.2 s in which the language
    # server answers nothing (docs/results.md#collections).  Frozen, collections leave them out.
    gc.freeze()
    return litellm


def litellm_loaded() -> bool:
    """Whether litellm is imported already (a caller on an event loop imports it in a thread)."""
    return _LITELLM is not None


def litellm_installed() -> bool:
    """Whether litellm can be imported, found without importing it (a slow import)."""
    if _LITELLM is not None or "litellm" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("litellm") is not None
    except (ImportError, ValueError):
        return False


def litellm_missing(model: str | None = None) -> str:
    """The sentence for a model configured where litellm is not installed, with the fix: the
    ``llm`` extra, or under pre-commit (which sets PRE_COMMIT) the hook's additional_dependencies."""
    who = f"The model {model} is" if model else "Models are"
    if os.environ.get("PRE_COMMIT"):
        fix = "add additional_dependencies: ['litellm>=1.50'] to the coherence hook in .pre-commit-config.yaml"
    else:
        fix = "pip install 'coherence[llm]'"
    return f"{who} reached through litellm, which is not installed here: {fix} (replaying recorded samples needs no litellm)."
