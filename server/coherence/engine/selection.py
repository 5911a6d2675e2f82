"""``include`` / ``exclude`` patterns of ``[tool.coherence]``: which functions to check without
editing the source.

A pattern reads like a pytest node id, ``path_glob::name_glob``:

- ``path_glob`` is matched against the file's path relative to the project root (the folder of
  the ``pyproject.toml``), with ``/`` separators; ``*`` also matches ``/``, so ``src/*.py`` covers
  the whole tree under ``src``, and a leading ``**/`` also matches files at the top.
- ``name_glob`` is matched against the function's qualified name (``parse``, ``Cart.add``;
  ``Cart.*`` is every method of ``Cart``); ``Cart::add`` is read as ``Cart.add``, as pytest
  writes it.  Without ``::`` the pattern names every function of the matching files, and
  ``::name_glob`` names functions in any file.

The patterns of one file come down to the name globs that apply to it (``names_for``), which is
what the marker code needs and what keeps its cache keys small.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path

EVERY_NAME = "*"


def _split(pattern: str) -> tuple[str, str]:
    path_glob, sep, name_glob = pattern.strip().partition("::")
    return (path_glob or "*"), (name_glob.replace("::", ".") if sep else EVERY_NAME) or EVERY_NAME


def _relative(path: str | Path, root: str | Path | None) -> str:
    p = Path(os.path.abspath(path))
    if root is not None:
        try:
            return p.relative_to(Path(os.path.abspath(root))).as_posix()
        except ValueError:  # a file outside the project: its absolute path is all there is
            pass
    return p.as_posix()


def _path_matches(rel: str, path_glob: str) -> bool:
    glob = path_glob[2:] if path_glob.startswith("./") else path_glob
    if fnmatchcase(rel, glob):
        return True
    return glob.startswith("**/") and fnmatchcase(rel, glob[3:])


def names_for(path: str | Path, patterns: Iterable[str], root: str | Path | None) -> tuple[str, ...]:
    """The name globs of ``patterns`` whose path part matches ``path``."""
    rel = _relative(path, root)
    out = []
    for pattern in patterns:
        path_glob, name_glob = _split(pattern)
        if _path_matches(rel, path_glob):
            out.append(name_glob)
    return tuple(dict.fromkeys(out))


def name_matches(qualname: str, globs: Iterable[str]) -> bool:
    return any(fnmatchcase(qualname, g) for g in globs)


def check_patterns(value: object, key: str) -> tuple[str, ...]:
    """``value`` as a tuple of patterns, or ValueError with what is wrong with it."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{key} must be a list of 'path/glob.py::name_glob' strings, got {value!r}")
    return tuple(v.strip() for v in value)


# Folders no one means when they ask for "the Python files under here": tools' caches, virtual
# environments, VCS data, build output (dot-folders are skipped as well).
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "__pycache__",
        "build",
        "dist",
        ".tox",
        ".nox",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
    }
)


def walk_python_files(root: str | Path) -> Iterator[Path]:
    """The ``.py`` files below ``root``, in a stable order, without ``SKIP_DIRS`` and dot-folders:
    what ``coherence check DIR`` and the editor's Check Workspace both look at."""
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        yield from (Path(dirpath) / n for n in sorted(names) if n.endswith(".py"))
