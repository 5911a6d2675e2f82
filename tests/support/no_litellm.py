"""Python processes that cannot import litellm, as in an install without the ``llm`` extra: a
``sitecustomize`` on PYTHONPATH puts a finder first on ``sys.meta_path`` that refuses litellm (and
its submodules) and appends each refused name to a log, so a test can tell that nothing tried."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import REPO

SITECUSTOMIZE = '''\
import os
import sys


class _NoLiteLLM:
    """Refuses litellm as a missing distribution would, and notes who asked."""

    def find_spec(self, name, path=None, target=None):
        if name != "litellm" and not name.startswith("litellm."):
            return None
        try:
            with open(os.environ["NO_LITELLM_LOG"], "a", encoding="utf-8") as log:
                log.write(name + "\\n")
        except (KeyError, OSError):
            pass
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, _NoLiteLLM())
'''


def without_litellm(folder: Path, env: dict[str, str] | None = None) -> tuple[dict[str, str], Path]:
    """``env`` (default: this process's) for a Python that cannot import litellm, and the log of
    the imports it refused."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = folder / "refused.txt"
    out = dict(os.environ if env is None else env)
    paths = [str(folder), str(REPO / "server"), out.get("PYTHONPATH", "")]
    out["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    out["NO_LITELLM_LOG"] = str(log)
    return out, log


def refused(log: Path) -> list[str]:
    """The litellm modules a process under ``without_litellm`` tried to import."""
    return log.read_text().split() if log.is_file() else []
