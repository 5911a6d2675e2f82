"""Test support: fakes that go through real code paths (a loopback OpenAI-compatible server).

Importing this package also makes ``coherence`` importable from a source checkout
(``server/`` on ``sys.path``) when the package is not installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_DIR = REPO_ROOT / "server"
# ../shared/corpus relative to the repository (read at run time, never copied in)
CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus"

try:  # pragma: no cover - depends on how the tests are run
    import coherence  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(SERVER_DIR))
