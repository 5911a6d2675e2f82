"""``coherence serve``: the language server over stdio.

This module imports only the standard library until the protocol streams are claimed: the real
stdout is taken for JSON-RPC first, then ``sys.stdout`` and fd 1 are pointed at stderr (and fd 0
at /dev/null), so a stray print anywhere (a library at import time, a thread, a child process)
cannot corrupt the stream.  The server itself lives in ``language_server``.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any


def claim_stdio() -> tuple[Any, Any]:
    """Take the real stdin/stdout for the protocol; from then on fd 0 reads /dev/null and fd 1
    (and ``sys.stdout``) write to stderr."""
    try:
        sys.stdout.flush()
    except (AttributeError, ValueError, OSError):
        pass
    out_fd = os.dup(1)
    in_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    try:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115
    except OSError:
        pass
    return os.fdopen(in_fd, "rb", buffering=0), os.fdopen(out_fd, "wb")


def serve() -> int:
    """Run the language server until the client says exit; returns the exit code (0 after a
    shutdown request, 1 otherwise, as the LSP specifies)."""
    stdin, stdout = claim_stdio()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)

    from coherence.lsp.language_server import create_server

    # Checks run Python in threads (input generation, reading the workers' results); with the
    # default 5 ms switch interval every GIL hand-back to the event loop can cost a hover 5 ms.
    sys.setswitchinterval(0.0005)
    server = create_server()
    server.start_io(stdin, stdout)
    return server.exit_code


def __getattr__(name: str) -> Any:  # the server classes, imported on first use
    if name in ("CoherenceLanguageServer", "CoherenceProtocol", "create_server"):
        from coherence.lsp import language_server

        return getattr(language_server, name)
    raise AttributeError(name)


__all__ = ["claim_stdio", "serve"]


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(serve())
