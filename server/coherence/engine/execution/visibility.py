"""What the sandboxed children see of the file system: the roots hidden from them (``/tmp``, the
home directory), the paths under those roots re-exposed read-only because the interpreter, its
packages, the worker or the workspace live there, and the workspace's dotfiles and VCS folders,
hidden in every mode."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coherence.engine.execution.sandbox import Interpreter

# The worker's launcher (worker.py) and its package sit beside this module.
_WORKER_DIR = os.path.dirname(os.path.abspath(__file__))


def hidden_roots() -> list[str]:
    roots = ["/tmp"]
    home = os.path.expanduser("~")
    if home and home != "/" and os.path.isdir(home):
        roots.append(os.path.realpath(home))
    return roots


def mtimes(paths: Iterable[str]) -> tuple[int | None, ...]:
    """The modification time of each of ``paths`` (None: gone), as a cache key: a folder's moves
    when an entry in it is added, removed or renamed (a new .pth file, a new .env)."""
    out: list[int | None] = []
    for p in paths:
        try:
            out.append(os.stat(p).st_mtime_ns)
        except OSError:
            out.append(None)
    return tuple(out)


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# Every check asks (``choose_mode``), and the answer takes about 40 system calls (realpath and
# exists on each of the interpreter's paths): 0.26 ms alone, and several times that in a check,
# where each call hands the GIL to the thread generating the inputs and waits to get it back.
# Those paths change when a package is installed (which changes ``interp.stamp``) or a workspace
# folder appears or goes, so the answer is kept a few seconds.
_EXPOSED_SECONDS = 5.0
_exposed: dict[tuple[Any, ...], tuple[float, tuple[str, ...]]] = {}


def exposed_paths(interp: Interpreter, extra: tuple[str, ...]) -> list[str]:
    """Paths that must stay visible (read-only) although they lie under a hidden root."""
    # the hidden roots are in the key: the answer is the paths under them, and one kept from under
    # an old home directory is under no root at all once HOME changes (bwrap_command's mounts
    # assume one)
    roots = hidden_roots()
    key = (interp.executable, interp.stamp, tuple(extra), tuple(roots))
    now = time.monotonic()
    known = _exposed.get(key)
    if known is not None and now - known[0] < _EXPOSED_SECONDS:
        return list(known[1])
    out = _find_exposed_paths(interp, extra, roots)
    if len(_exposed) > 64:
        _exposed.clear()
    _exposed[key] = (now, tuple(out))
    return out


def _find_exposed_paths(interp: Interpreter, extra: tuple[str, ...], roots: list[str]) -> list[str]:
    wanted: list[str] = []
    candidates = list(interp.prefixes) + list(interp.path) + list(interp.site_dirs) + list(extra)
    candidates.append(os.path.dirname(interp.executable))
    candidates.append(_WORKER_DIR)
    for p in candidates:
        if not p or not os.path.isabs(p):
            continue
        for q in {os.path.normpath(p), os.path.realpath(p)}:
            if os.path.exists(q) and q not in wanted:
                wanted.append(q)
    hidden = [p for p in wanted if any(under(p, r) and p != r for r in roots)]
    hidden.sort(key=lambda p: (p.count("/"), p))
    out: list[str] = []
    for p in hidden:
        if not any(under(p, q) for q in out):
            out.append(p)
    return out


# Entries of a workspace folder no program needs, which hold secrets (.env, .netrc, .npmrc) or
# history and remotes with credentials (.git, .hg, .svn): every dotfile, and VCS folders without
# a dot.  Hidden from the children in every mode (the audit hook; bubblewrap's mounts; Landlock).
_VCS = frozenset(("CVS", "_darcs", "_FOSSIL_", ".fslckout"))
_hidden: dict[tuple[Any, ...], tuple[float, tuple[str, ...]]] = {}


def hidden_paths(interp: Interpreter, extra: tuple[str, ...]) -> list[str]:
    """The workspace's dotfiles and VCS folders (the top level of each of ``extra``), but those
    that hold the interpreter or its packages (a ``.venv``).  Kept a few seconds, like
    ``exposed_paths``, but never past a change of a folder's entries: a ``.env`` written a
    second before a check must be hidden from it (a folder's mtime moves when an entry is
    added, removed or renamed; one stat per folder)."""
    key = (interp.executable, interp.stamp, tuple(extra), mtimes(extra))
    now = time.monotonic()
    known = _hidden.get(key)
    if known is not None and now - known[0] < _EXPOSED_SECONDS:
        return list(known[1])
    needed = [
        os.path.realpath(p)
        for p in (*interp.prefixes, *interp.site_dirs, os.path.dirname(interp.executable), _WORKER_DIR)
        if p
    ]
    out: list[str] = []
    for root in extra:
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        for name in names:
            if not (name.startswith(".") or name in _VCS):
                continue
            path = os.path.realpath(os.path.join(root, name))
            if path not in out and not any(under(n, path) for n in needed):
                out.append(path)
    if len(_hidden) > 64:
        _hidden.clear()
    _hidden[key] = (now, tuple(out))
    return out
