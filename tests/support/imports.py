"""A package's imports read from its source with ``ast`` (nothing is imported), for the structure
tests: every import counts, under ``TYPE_CHECKING`` and inside functions too, and relative ones are
resolved against the file's package as Python resolves them."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from importlib.util import resolve_name
from pathlib import Path
from typing import NamedTuple


class Import(NamedTuple):
    """One imported name: ``from module import name``, or ``import module`` (``name`` None).
    ``module`` is absolute either way; ``level`` counts a relative import's dots."""

    module: str
    name: str | None
    level: int = 0


def package_of(path: Path) -> str:
    """The dotted package of a source file: its folders upward while each holds ``__init__.py``."""
    parts: list[str] = []
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.append(folder.name)
        folder = folder.parent
    return ".".join(reversed(parts))


def imports(path: Path, package: str | None = None) -> list[Import]:
    """Every import in a source file, one per imported name; relative imports are resolved
    against ``package`` (by default the file's own)."""
    package = package_of(path) if package is None else package
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [Import(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                # raises ImportError past the top-level package, as the import itself would
                module = resolve_name("." * node.level + module, package)
            found += [Import(module, a.name, node.level) for a in node.names]
    return found


def modules_imported(path: Path, package: str | None = None) -> set[str]:
    """Every module a file imports: ``from pkg import sub`` imports ``pkg`` and, when ``sub`` is
    one of its modules, ``pkg.sub`` too."""
    out: set[str] = set()
    for i in imports(path, package):
        out.add(i.module)
        if i.name is not None:
            out.add(f"{i.module}.{i.name}")
    return out


def import_graph(folder: Path, package: str | None = None) -> dict[str, set[str]]:
    """Module -> the modules of the same package (one folder) it imports, ``__init__`` for the
    package itself; ``package`` is the folder's dotted name (by default read from the disk)."""
    package = package_of(folder / "__init__.py") if package is None else package
    modules = {p.stem for p in folder.glob("*.py")}

    def module_of(dotted: str) -> str | None:
        if dotted == package:
            return "__init__"
        head = dotted[len(package) + 1 :].split(".")[0] if dotted.startswith(package + ".") else None
        return head if head in modules else None

    graph: dict[str, set[str]] = {}
    for module in sorted(modules):
        graph[module] = set()
        for i in imports(folder / f"{module}.py", package):
            # `from pkg import sub` names the module pkg.sub when there is one, else a name of pkg
            target = (module_of(f"{i.module}.{i.name}") if i.name else None) or module_of(i.module)
            if target is not None:
                graph[module].add(target)
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of ``graph`` that hold a cycle (two nodes or more, or one
    with an edge to itself), each sorted, in sorted order."""
    reach = {node: _reachable(graph, node) for node in graph}
    groups = {
        tuple(sorted({node} | {n for n in reach[node] if node in reach.get(n, ())}))
        for node in graph
        if node in reach[node]
    }
    return [list(g) for g in sorted(groups)]


def _reachable(graph: Mapping[str, Iterable[str]], start: str) -> set[str]:
    """The nodes a path of one edge or more leads to from ``start``."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += graph.get(node, ())
    return seen
