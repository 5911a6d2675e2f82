"""The command line's package keeps its seams (issue 52): no module of ``coherence/cli/`` imports
another that imports it back, at the top or inside a function, and no function grows into a
whole command again.  Read from the source with ``ast``: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.imports import cycles, import_graph

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "coherence" / "cli"
NAME = "coherence.cli"
LONGEST_FUNCTION = 45  # lines, its docstring included


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
