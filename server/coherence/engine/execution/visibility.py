"""What the sandboxed children see of the file system: the roots hidden from them (``/tmp``, the
home directory), the paths under those roots re-exposed read-only because the interpreter, its
packages, the worker or the workspace live there, and the workspace's dotfiles and VCS folders,
hidden in every mode."""

from __future__ import annotations

import bisect
import collections
import logging
import os
import time
from collections.abc import Iterable
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
# exists on each of the interpreter's paths), each of which in a check hands the GIL to the thread
# generating the inputs and waits to get it back (docs/results.md#hidden-paths).
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
# history and remotes with credentials (.git, .hg, .svn): at the top of each workspace folder
# (and of the checked file's folder), every dotfile and VCS folder; deeper (a monorepo keeps
# backend/.env), the same but for the tool settings and caches below, which hold no secret and
# which a monorepo has in every package (each hidden entry is a mount under bubblewrap and
# turns its folder into a list of Landlock rules).  Hidden from the children in every mode (the
# audit hook; bubblewrap's mounts; Landlock).
_VCS = frozenset(("CVS", "_darcs", "_FOSSIL_", ".fslckout"))
_HARMLESS_BELOW_TOP = frozenset(
    (
        # not here, because they can hold keys in plain text: .vscode and .idea (launch and run
        # configurations with environment variables), .devcontainer, CI files (.github,
        # .gitlab-ci.yml, .circleci, .travis.yml), .gitmodules (remote URLs with a token)
        ".gitignore", ".gitattributes", ".gitkeep", ".keep", ".editorconfig",
        ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", ".flake8", ".pylintrc",
        ".coveragerc", ".isort.cfg", ".python-version", ".ruby-version", ".node-version",
        ".nvmrc", ".tool-versions", ".dockerignore", ".npmignore", ".prettierrc",
        ".prettierignore", ".eslintrc", ".eslintignore", ".eslintrc.js", ".eslintrc.cjs",
        ".eslintrc.json", ".eslintrc.yml", ".babelrc", ".browserslistrc", ".stylelintrc",
        ".markdownlint.json", ".yamllint", ".clang-format", ".clang-tidy", ".readthedocs.yaml",
        ".readthedocs.yml", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
        ".tox", ".nox", ".ipynb_checkpoints", ".DS_Store",
    )
)  # fmt: skip
# Files without a leading dot that hold keys by their name or kind (an SSH or TLS private key, a
# cloud service account, Terraform state): hidden at any depth too.  Matched on the lower-cased
# name; public halves (id_rsa.pub, *.crt) are not.
_SECRET_NAMES = frozenset(
    (
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "credentials", "credentials.json",
        "credentials.yml", "credentials.yaml", "secrets.json", "secrets.yml", "secrets.yaml",
        "secrets.toml", "terraform.tfstate", "terraform.tfstate.backup", "htpasswd", "pgpass",
        "_netrc",
    )
)  # fmt: skip
_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".tfvars")
_SECRET_PREFIXES = ("service-account", "service_account", "client_secret")


def secret_name(name: str) -> bool:
    """Whether a file called ``name`` holds keys, by its name alone."""
    low = name.lower()
    return (
        low in _SECRET_NAMES
        or low.endswith(_SECRET_SUFFIXES)
        or (low.startswith(_SECRET_PREFIXES) and low.endswith(".json"))
    )


# Folders not looked into: packages, not the user's files.
_NOT_WALKED = frozenset(("node_modules", "__pycache__", "site-packages", "dist-packages"))
# Folders looked into per workspace, breadth first: a dotfile deeper than that in a huge tree is
# not found (said in the log); a repository's own folders, packages left out, fit well within it
# (docs/results.md#hidden-paths).
WALK_DIRS = 2000
# Hidden entries past which whole folders are hidden instead (see _collapse).  Each is a mount,
# and bubblewrap's start grows faster than their number (docs/results.md#hidden-paths);
# benchmarks/hidden_paths.py prints the figures with and without this bound.
HIDDEN_MAX = 128
_warned: set[tuple[str, ...]] = set()


class _Listing(NamedTuple):
    """What one folder holds for the walk, as of its mtime."""

    mtime: int
    hidden: tuple[str, ...]  # its hidden entries (real paths)
    folders: tuple[str, ...]  # the folders in it to look into


# per (interpreter, workspace folders): the listing of every folder looked into
_listings: dict[tuple[Any, ...], dict[str, _Listing]] = {}


def hidden_paths(interp: Interpreter, extra: tuple[str, ...]) -> list[str]:
    """The workspace's dotfiles and VCS folders, at any depth below each of ``extra`` (see
    ``_HARMLESS_BELOW_TOP``), but those that hold the interpreter or its packages (a ``.venv``);
    past ``HIDDEN_MAX`` of them, whole folders (``_collapse``).  Real paths.  Every check asks:
    each folder's listing is kept and read again only when its mtime moves (an entry added,
    removed or renamed), so an answer costs a stat per folder, and a ``.env`` saved a moment
    before a check is hidden from it, which an answer kept for a time did not do
    (docs/results.md#hidden-paths)."""
    key = (interp.executable, interp.stamp, tuple(extra))
    needed = [
        os.path.realpath(p)
        for p in (*interp.prefixes, *interp.site_dirs, os.path.dirname(interp.executable), _WORKER_DIR)
        if p
    ]
    known = _listings.get(key, {})
    roots = [os.path.realpath(r) for r in (*extra, *foreign_entries(interp))]
    listings, out = _walk(roots, needed, known)
    if key not in _listings and len(_listings) > 16:
        _listings.clear()
    _listings[key] = listings
    if len(out) > HIDDEN_MAX:
        keep = needed + roots + [os.path.realpath(p) for p in interp.path if p and os.path.isabs(p)]
        collapsed = _collapse(out, keep, HIDDEN_MAX)
        if ("collapse", *roots) not in _warned and len(collapsed) < len(out):
            _warned.add(("collapse", *roots))
            entries = set(out)
            folders = [p for p in collapsed if p not in entries]
            log.warning(
                "coherence: %d dotfiles and VCS folders under %s; %d folders that hold them are hidden "
                "whole from generated code (e.g. %s)",
                len(out),
                ", ".join(roots),
                len(folders),
                ", ".join(folders[:3]),
            )
        out = collapsed
    return out


def foreign_entries(interp: Interpreter) -> list[str]:
    """The interpreter's path entries outside its own prefixes: a sibling project installed
    editable (``pip install -e ../common``), a folder on PYTHONPATH.  The programs may read
    them (they import from there), and so their dotfiles (a ``.env``, ``.git/config``) are
    hidden like the workspace's."""
    prefixes = [os.path.realpath(p) for p in interp.prefixes if p]
    out = []
    for p in interp.path:
        if not p or not os.path.isabs(p):
            continue
        real = os.path.realpath(p)
        if real == "/" or any(under(real, q) for q in prefixes) or not os.path.isdir(real):
            continue
        out.append(real)
    return out


def _collapse(hidden: list[str], keep: list[str], limit: int) -> list[str]:
    """``hidden`` with folders that hold two or more of its entries put in their place, deepest
    first, until at most ``limit`` remain (or none can be).  Never a folder that holds, or is, a
    path in ``keep`` (the workspace folders, the checked file's, the interpreter's): in a
    workspace like a home folder, the other projects are hidden whole."""
    blocked: set[str] = set()
    for k in keep:
        while k not in blocked:
            blocked.add(k)
            if k == "/":
                break
            k = os.path.dirname(k)
    counts: dict[str, int] = {}
    for h in hidden:
        parent = os.path.dirname(h)
        while parent not in blocked:
            counts[parent] = counts.get(parent, 0) + 1
            parent = os.path.dirname(parent)
    current = sorted(set(hidden))
    for folder in sorted((f for f, c in counts.items() if c >= 2), key=lambda f: (-f.count("/"), f)):
        if len(current) <= limit:
            break
        # the entries under ``folder`` are one run of the sorted list
        prefix = folder + "/"
        lo = bisect.bisect_left(current, prefix)
        hi = lo
        while hi < len(current) and current[hi].startswith(prefix):
            hi += 1
        if hi - lo >= 2:
            del current[lo:hi]
            bisect.insort(current, folder)
    return current


def _walk(roots: list[str], needed: list[str], known: dict[str, _Listing]) -> tuple[dict[str, _Listing], list[str]]:
    """(the listing of each folder looked into, the hidden entries found), breadth first from
    the outermost of ``roots``, reusing ``known`` listings whose folder has not changed.
    Symbolic links to folders are not followed (a dotfile linked from elsewhere is hidden at
    its target)."""
    tops = [r for r in dict.fromkeys(roots) if not any(r != o and under(r, o) for o in roots)]
    # every one of ``roots`` is listed, however large the tree: each is a top whose every
    # dotfile is hidden (the checked file's folder, deep in a big workspace)
    queue = collections.deque([*tops, *(r for r in dict.fromkeys(roots) if r not in tops)])
    listings: dict[str, _Listing] = {}
    out: list[str] = []
    found: set[str] = set()
    while queue:
        if len(listings) >= WALK_DIRS + len(roots):
            if ("walk", *tops) not in _warned:
                _warned.add(("walk", *tops))
                log.warning(
                    "coherence: more than %d folders under %s; dotfiles deeper than those are not hidden from generated code",
                    WALK_DIRS,
                    ", ".join(tops),
                )
            break
        folder = queue.popleft()
        if folder in listings:
            continue
        mtime = mtimes((folder,))[0]
        if mtime is None:
            continue
        listing = known.get(folder)
        if listing is None or listing.mtime != mtime:
            listing = _list(folder, mtime, needed, folder in roots)
            if listing is None:
                continue
        listings[folder] = listing
        for path in listing.hidden:
            if path not in found:
                found.add(path)
                out.append(path)
        queue.extend(listing.folders)
    return listings, out


def _list(folder: str, mtime: int, needed: list[str], top: bool) -> _Listing | None:
    """``folder``'s entries for the walk; ``top``: it is one of the workspace folders (or the
    checked file's), where every dotfile is hidden."""
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
            if name in _HARMLESS_BELOW_TOP and not top:
                continue  # (not looked into either: caches, a .tox's environments)
            path = os.path.realpath(entry.path)
            if not any(under(n, path) for n in needed):
                hidden.append(path)
            continue
        if name in _NOT_WALKED or any(under(n, entry.path) for n in needed):
            continue  # packages, or the interpreter's own tree (a venv in the workspace)
        if secret_name(name):
            hidden.append(os.path.realpath(entry.path))
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
        except OSError:
            continue
    if any(e.name.endswith(".dist-info") for e in entries):
        # installed packages (a bundled libs folder, pip --target): not the user's files, and the
        # extension's bundled packages alone would be many folders to stat on every check.  (Not
        # .egg-info, which an editable install leaves beside the user's own package.)
        folders = []
    return _Listing(mtime, tuple(hidden), tuple(folders))
