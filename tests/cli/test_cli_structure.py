"""The command line's package keeps its seams (issue 52): no module of ``coherence/cli/`` imports
another that imports it back, at the top or inside a function, and no function grows into a
whole command again.  Read from the source with ``ast``: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "coherence" / "cli"
NAME = "coherence.cli"
LONGEST_FUNCTION = 45  # lines, its docstring included


def import_graph(folder: Path, name: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (``__init__`` for the package itself)."""
    modules = {p.stem for p in folder.glob("*.py")}

    def module_of(dotted: str) -> str | None:
        if dotted == name:
            return "__init__"
        head = dotted[len(name) + 1 :].split(".")[0] if dotted.startswith(name + ".") else None
        return head if head in modules else None

    graph: dict[str, set[str]] = {}
    for module in sorted(modules):
        imported: list[str] = []
        for node in ast.walk(ast.parse((folder / f"{module}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = name + (f".{node.module}" if node.module else "") if node.level else node.module or ""
                # `from coherence.cli import exits` names the submodule; `import main` the face
                imported += [
                    f"{base}.{a.name}" if f"{base}.{a.name}"[len(name) + 1 :] in modules else base for a in node.names
                ]
        graph[module] = {m for m in map(module_of, imported) if m is not None and m != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_finder_sees_a_cycle_through_a_lazy_import(tmp_path):
    pkg = tmp_path / "cli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from coherence.cli.a import run\n")
    (pkg / "a.py").write_text("from coherence.cli.b import helper\n")
    (pkg / "b.py").write_text("def helper():\n    from coherence.cli import a\n")
    graph = import_graph(pkg, NAME)
    assert graph == {"__init__": {"a"}, "a": {"b"}, "b": {"a"}}
    assert cycles(graph) == [["a", "b"]]


def test_the_command_line_package_has_no_import_cycle():
    graph = import_graph(PACKAGE, NAME)
    assert {"exits", "files", "check", "trust", "eval", "main", "parser"} <= set(graph)
    assert "exits" in graph["check"] and "exits" in graph["trust"]  # the graph is read, not empty
    assert cycles(graph) == []


def test_exit_codes_and_the_file_walk_depend_on_no_other_module_of_the_package():
    graph = import_graph(PACKAGE, NAME)
    assert graph["exits"] == set()
    assert graph["files"] == set()


def test_the_old_entry_modules_are_gone():
    server = PACKAGE.parent
    assert not [p.name for p in (server / "cli.py", server / "cli_check.py", server / "trust_cli.py") if p.exists()]


def test_no_function_of_the_command_line_is_a_whole_command():
    long = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST_FUNCTION:
                    long.append(f"{path.name}:{node.name} ({lines} lines)")
    assert long == []
