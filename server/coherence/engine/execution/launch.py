"""Starting a sandbox worker's process, the one place its hardening is written: its own session
(so its whole group can be killed), no stdout, and no inherited descriptor but the write end of
its result pipe.  A one-shot worker (``executor.py``) and a warm one (``pool.py``) both start here."""

from __future__ import annotations

import os
import subprocess
from typing import IO, NamedTuple


class Started(NamedTuple):
    proc: subprocess.Popen[bytes]
    fd: int  # the read end of the result pipe
    fd_number: int  # the write end's number inside the worker (a job's "fd")


def start_worker(cmd: list[str], *, env: dict[str, str], cwd: str, stderr: IO[bytes] | int) -> Started:
    """The worker ``cmd`` started with ``env`` in ``cwd``, its stdin a pipe for the job; raises
    ``OSError`` (the pipe closed) when it cannot start."""
    r, w = os.pipe()
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            pass_fds=(w,),
            start_new_session=True,
            env=env,
            cwd=cwd,
        )
    except OSError:
        os.close(r)
        os.close(w)
        raise
    os.close(w)
    return Started(proc, r, w)
