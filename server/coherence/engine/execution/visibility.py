"""What the sandboxed children see of the file system: the roots hidden from them (``/tmp``, the
home directory), the paths under those roots re-exposed read-only because the interpreter, its
packages, the worker or the workspace live there, and the workspace's dotfiles and VCS folders,
hidden in every mode."""

from __future__ import annotations

import collections
import logging
import os
import time
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from coherence.engine.execution.sandbox import Interpreter

log = logging.getLogger(__name__)

# The worker's launcher (worker.py) and its package sit beside this module.
_WORKER_DIR = os.path.dirname(os.path.abspath(__file__))


def hidden_roots() -> list[str]:
    roots = ["/tmp"]
    home = os.path.expanduser("~")
    if home and home != "/" and os.path.isdir(home):
        roots.append(os.path.realpath(home))
    return roots


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
    # HOME is in the key: the home directory is a hidden root, and a path kept from under the
    # old one is under no root at all once it changes (bwrap_command's mounts assume one)
    key = (interp.executable, interp.stamp, tuple(extra), os.environ.get("HOME"))
    now = time.monotonic()
    known = _exposed.get(key)
    if known is not None and now - known[0] < _EXPOSED_SECONDS:
        return list(known[1])
    out = _find_exposed_paths(interp, extra)
    if len(_exposed) > 64:
        _exposed.clear()
    _exposed[key] = (now, tuple(out))
    return out


def _find_exposed_paths(interp: Interpreter, extra: tuple[str, ...]) -> list[str]:
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
    roots = hidden_roots()
    hidden = [p for p in wanted if any(under(p, r) and p != r for r in roots)]
    hidden.sort(key=lambda p: (p.count("/"), p))
    out: list[str] = []
    for p in hidden:
        if not any(under(p, q) for q in out):
            out.append(p)
    return out


# Entries of a workspace folder no program needs, which hold secrets (.env, .netrc, .npmrc) or
# history and remotes with credentials (.git, .hg, .svn): every dotfile, and VCS folders without
# a dot, at any depth (a monorepo keeps backend/.env).  Hidden from the children in every mode
# (the audit hook; bubblewrap's mounts; Landlock).
_VCS = frozenset(("CVS", "_darcs", "_FOSSIL_", ".fslckout"))
# Folders not looked into: packages, not the user's files.
_NOT_WALKED = frozenset(("node_modules", "__pycache__", "site-packages", "dist-packages"))
# Folders looked into per workspace, breadth first: a dotfile deeper than that in a huge tree is
# not found (said in the log).  A clean clone of this repository has about 50 (node_modules left
# out); with the extension's bundled packages built, about 1,300.
WALK_DIRS = 2000
_warned: set[tuple[str, ...]] = set()


class _Listing(NamedTuple):
    """What one folder holds for the walk, as of its mtime."""

    mtime: int
    hidden: tuple[str, ...]  # its hidden entries (real paths)
    folders: tuple[str, ...]  # the folders in it to look into


# per (interpreter, workspace folders): the listing of every folder looked into
_listings: dict[tuple[Any, ...], dict[str, _Listing]] = {}


def hidden_paths(interp: Interpreter, extra: tuple[str, ...]) -> list[str]:
    """The workspace's dotfiles and VCS folders, at any depth below each of ``extra``, but those
    that hold the interpreter or its packages (a ``.venv``).  Every check asks: each folder's
    listing is kept and read again only when its mtime moves (an entry added, removed or
    renamed), so an answer costs a stat per folder, and a ``.env`` saved a moment before a check
    is hidden from it (it was readable for 5 s when the answer was kept for a time)."""
    key = (interp.executable, interp.stamp, tuple(extra))
    needed = [
        os.path.realpath(p)
        for p in (*interp.prefixes, *interp.site_dirs, os.path.dirname(interp.executable), _WORKER_DIR)
        if p
    ]
    known = _listings.get(key, {})
    listings, out = _walk([os.path.realpath(r) for r in extra], needed, known)
    if key not in _listings and len(_listings) > 16:
        _listings.clear()
    _listings[key] = listings
    return out


def _walk(roots: list[str], needed: list[str], known: dict[str, _Listing]) -> tuple[dict[str, _Listing], list[str]]:
    """(the listing of each folder looked into, the hidden entries found), breadth first from
    the outermost of ``roots``, reusing ``known`` listings whose folder has not changed.
    Symbolic links to folders are not followed (a dotfile linked from elsewhere is hidden at
    its target)."""
    tops = [r for r in dict.fromkeys(roots) if not any(r != o and under(r, o) for o in roots)]
    queue = collections.deque(tops)
    listings: dict[str, _Listing] = {}
    out: list[str] = []
    found: set[str] = set()
    while queue:
        if len(listings) >= WALK_DIRS:
            if tuple(tops) not in _warned:
                _warned.add(tuple(tops))
                log.warning(
                    "coherence: more than %d folders under %s; dotfiles deeper than those are not hidden from generated code",
                    WALK_DIRS,
                    ", ".join(tops),
                )
            break
        folder = queue.popleft()
        if folder in listings:
            continue
        mtime = _mtime(folder)
        if mtime is None:
            continue
        listing = known.get(folder)
        if listing is None or listing.mtime != mtime:
            listing = _list(folder, mtime, needed)
            if listing is None:
                continue
        listings[folder] = listing
        for path in listing.hidden:
            if path not in found:
                found.add(path)
                out.append(path)
        queue.extend(listing.folders)
    return listings, out


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _list(folder: str, mtime: int, needed: list[str]) -> _Listing | None:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return None
    hidden: list[str] = []
    folders: list[str] = []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name in _VCS:
            path = os.path.realpath(entry.path)
            if not any(under(n, path) for n in needed):
                hidden.append(path)
            continue
        if name in _NOT_WALKED or any(under(n, entry.path) for n in needed):
            continue  # packages, or the interpreter's own tree (a venv in the workspace)
        try:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
        except OSError:
            continue
    return _Listing(mtime, tuple(hidden), tuple(folders))
