"""Writing a report or a baseline into a folder a repository controls.

A cloned repository can ship ``coherence.sarif`` or ``.coherence-baseline.json`` as a symbolic
link to ``~/.bashrc``; writing "to" it would write there.  ``write_text`` refuses a final name that
is a symbolic link, and writes through a temporary file in the same folder that is then renamed
over the name: a rename replaces a link planted after the check instead of following it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class UnsafeTarget(OSError):
    """The file to write is a symbolic link (or not a regular file): nothing was written."""


def refusal(path: str | Path, what: str) -> str | None:
    """Why ``path`` must not be written (a link, a device, a fifo), or None when it may."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # nothing there yet (a file in the way is said by the caller)
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            where = os.readlink(path)
        except OSError:
            where = "somewhere else"
        return (
            f"{what} {path} is a symbolic link (to {where}); coherence does not write through links a "
            "repository can plant. Remove it or choose another file"
        )
    if not stat.S_ISREG(st.st_mode):
        return f"{what} {path} is not a regular file; choose another file"
    return None


def write_text(path: str | Path, text: str, what: str = "the file") -> None:
    """Write ``text`` (UTF-8) to ``path``, never through a symbolic link; ``UnsafeTarget`` when
    ``path`` is one, ``OSError`` when the folder cannot be written."""
    path = Path(path)
    why = refusal(path, what)
    if why:
        raise UnsafeTarget(why)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # what an ordinary open() would have created
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
