"""The worker process: ``python -S -B worker.py`` runs the one job it reads from stdin,
``python -S -B worker.py --serve`` one job after another (see serve.py).  The launcher
``worker.py`` imports this package from its own directory and calls ``main``.
"""

from __future__ import annotations

import json
import os
import sys
import types

from .job import run_job
from .serve import serve

# the directory that holds this package, and the launcher, and the rest of coherence's
# execution code (program.py, sandbox.py, ...), which must never shadow user modules
_OUTSIDE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NICE = 10


_OWN = __name__.partition(".")[0]  # "coherence_worker" (the worker's own top-level name)


def disappear() -> None:
    """What the checked code could test to tell a check from a real run (and pass only under
    the check), taken out of its sight before any of it runs: the worker's modules in
    ``sys.modules`` (this process holds them all already, and imports none of them later), its
    launcher as ``__main__`` and in ``sys.argv``.  Done here once, so that every job's leader
    (where the checked module is imported) and every child start without them; each child doing
    it for itself wrote to some 250 pages it shares with its leader, about 1 ms of CPU a program
    (docs/results.md#worker-start).  What stays visible is listed in docs/sandbox.md."""
    own = _OWN + "."
    for name in [k for k in sys.modules if k == _OWN or k.startswith(own)]:
        del sys.modules[name]
    sys.modules["__main__"] = types.ModuleType("__main__")
    sys.argv[:] = [""]


def main() -> None:
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != _OUTSIDE]
    # Checks are background work: on a 2-core laptop the children running m programs must not
    # take the CPU from the editor and the language server, whose hovers slow down many-fold in
    # an edit storm otherwise (docs/results.md#worker-priority).  Inherited by every
    # child; a raise of priority back needs privileges the children drop.
    try:
        os.nice(_NICE)
    except OSError:
        pass
    serving = "--serve" in sys.argv[1:]
    disappear()
    if serving:
        serve()
        return
    raw = sys.stdin.buffer.read()
    job = json.loads(raw.decode("utf-8"))
    del raw  # every program's source: not for the children forked below this frame
    # user code must never reach our stdin/stdout/stderr
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    if not job.get("keep_stderr"):
        os.dup2(devnull, 2)
    if devnull > 2:
        os.close(devnull)
    run_job(job)


if __name__ == "__main__":
    main()
