"""Starts the bundled coherence language server: ``<python> serve.py``.

The pure-Python distributions in ``bundled/libs`` go first on ``sys.path`` (as ruff-vscode's
bundled server does), so the server is the one shipped with the extension; the compiled ones
(numpy, ...) come from the platform-specific .vsix's wheels for this interpreter when it ships
them (``_native``), else from this interpreter's environment, which ``probe.py`` has checked.
"""

import sys

from _native import site
from _paths import LIBS

sys.path.insert(0, LIBS)
native = site()
if native:
    sys.path.insert(1, native)

from coherence.cli import main  # noqa: E402  (after the path is set)

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
