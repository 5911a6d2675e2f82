"""litellm, imported lazily (it takes seconds) and kept quiet: its loggers are turned down and
nothing reaches stdout, which the language server uses for its protocol; the environment it
needs (a local model cost map, the Hub offline) is set first.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

_LITELLM: Any = None
_QUIET_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai")


def import_litellm() -> Any:
    """Import litellm once, offline-friendly and silent on stdout."""
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
    import litellm

    litellm.suppress_debug_info = True
    for attr, value in (("set_verbose", False), ("telemetry", False), ("drop_params", True)):
        with contextlib.suppress(Exception):
            setattr(litellm, attr, value)
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    _LITELLM = litellm
    return litellm


def litellm_loaded() -> bool:
    """Whether litellm is imported already (a caller on an event loop imports it in a thread)."""
    return _LITELLM is not None
