"""Samples that are the same program run once.

At temperature 0.6 an LLM often writes the same code more than once, up to comments and
formatting (see docs/results.md#duplicate-programs).  Programs with the same syntax tree run the same way on the
same inputs in the same sandbox (calls are seeded, and the children of one run share their hash
seed), so each distinct program runs once and its row of outcomes stands for every copy.  The
metrics still count every sample: a program the LLM wrote three times is three votes.

Often it writes the same code with other names for its variables (``result`` or ``res``, ``i``
or ``idx``), or another docstring.  Those are the same program too: the syntax tree is compared
with docstrings left out and with every local name renamed by where it first appears
(``_canonical``).  Only names nothing can reach by their text are renamed: a function's locals
and parameters, never the entry point's parameters (inputs may pass them by keyword), names
bound at module or class level, imported, def or class names (a function's ``__name__``), names
used as keywords or spelled in a string anywhere in the program, and nothing at all in a program
that reads names dynamically (``locals()``, ``eval``, frames, code objects).  Two programs with
one key then differ by a consistent renaming of such names, which changes nothing they compute.

The user's own function (``source=None``) is never merged with anything: it runs against its
module, not against its own text.
"""

from __future__ import annotations

import ast
import functools
import re
import symtable
from collections.abc import Sequence
from typing import Any

from coherence.engine import syntax
from coherence.engine.execution.program import ExecutionReport, Program


def program_key(program: Program) -> tuple[Any, ...] | None:
    """What makes two programs the same: how they are called and the syntax tree of their code
    (comments, blank lines, formatting, docstrings and the names of locals left out).  None for
    the user's own function, and for a program whose tree is too deep to compare."""
    if program.source is None:
        return None
    try:
        tree = _tree(program.source, program.entry_point)
    except (RecursionError, MemoryError):  # too deep for ast.dump (a 1000-term sum): it runs on its own
        return None
    return (program.entry_point, program.owner, program.method_kind, tree)


# A check runs the same alternatives again and again (the main run, every shrinking round, the
# run that describes the counterexample): each source is parsed once.
@functools.lru_cache(maxsize=512)
def _tree(source: str, entry_point: str = "") -> str:
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source  # loading it will fail the same way for every exact copy
    if not _DYNAMIC.search(source):
        try:
            tree = _canonical(tree, source, entry_point)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = syntax.parse(source)
    return ast.dump(tree)


# What reads names (or docstrings) by their text: a program that mentions any of these keeps its
# tree as written.
_DYNAMIC = re.compile(
    r"\b(?:locals|vars|globals|eval|exec|compile|_getframe|inspect|__code__|co_varnames|f_back|f_locals|__doc__)\b"
)
# The identifier fields of the syntax tree that bind or use a variable
_NAME_FIELDS = {ast.Name: "id", ast.arg: "arg", ast.ExceptHandler: "name", ast.MatchAs: "name", ast.MatchStar: "name"}


def _canonical(tree: ast.Module, source: str, entry_point: str) -> ast.Module:
    """``tree`` without docstrings, and with the names ``_renamable`` finds renamed to " 0",
    " 1", ... (no identifier has a space) in the order they first appear."""
    nodes = _in_order(tree)
    names = _renamable(nodes, source, entry_point)
    if not names:
        return tree
    given: dict[str, str] = {}
    fields = _NAME_FIELDS
    for node in nodes:
        field = fields.get(type(node))
        if field is not None:
            name = getattr(node, field)
            if name in names:
                setattr(node, field, given.setdefault(name, f" {len(given)}"))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [given.setdefault(n, f" {len(given)}") if n in names else n for n in node.names]
        elif isinstance(node, ast.MatchMapping) and node.rest in names:
            node.rest = given.setdefault(node.rest, f" {len(given)}")
    return tree


_DOCUMENTED = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _in_order(tree: ast.Module) -> list[ast.AST]:
    """Every node of ``tree``, depth first in field order (the same order for two trees that
    differ only in names), its docstrings taken out on the way."""
    out = []
    stack: list[ast.AST] = [tree]
    children = ast.iter_child_nodes
    while stack:
        node = stack.pop()
        if isinstance(node, _DOCUMENTED):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
        out.append(node)
        stack.extend(reversed(list(children(node))))
    return out


def _renamable(nodes: list[ast.AST], source: str, entry_point: str) -> set[str]:
    """The names that are local to functions wherever they occur (parameters, assigned, or a
    closure's), and that nothing reaches by their text."""
    top = symtable.symtable(source, "<program>", "exec")
    candidates: set[str] = set()
    blocked: set[str] = set(top.get_identifiers())  # module-level names

    def visit(table: symtable.SymbolTable) -> None:
        for child in table.get_children():
            if child.get_type() == "function":
                for sym in child.get_symbols():
                    local = sym.is_local() or sym.is_parameter() or sym.is_free()
                    if local and not (sym.is_global() or sym.is_imported() or sym.is_declared_global()):
                        candidates.add(sym.get_name())
                    else:
                        blocked.add(sym.get_name())
            else:  # a class body (or a newer kind of scope): its names stay
                blocked.update(child.get_identifiers())
            visit(child)

    visit(top)
    # (attribute names are not variables: they are never renamed)
    node: Any  # narrowed by the exact type checks below (isinstance would cost more here)
    for node in nodes:
        t = type(node)
        if t is ast.Constant:
            if type(node.value) is str:
                blocked.update(_WORD.findall(node.value))
        elif t is ast.keyword:
            if node.arg:
                blocked.add(node.arg)
        elif t is ast.alias:
            blocked.add((node.asname or node.name).split(".")[0])
        elif t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            blocked.add(node.name)
            if node.name == entry_point and t is not ast.ClassDef:
                a = node.args
                blocked.update(
                    x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None
                )
    return candidates - blocked


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def distinct_programs(programs: Sequence[Program]) -> tuple[list[Program], list[int]]:
    """The programs to run, and for each of ``programs`` the index of the one that runs for it."""
    first: dict[tuple[Any, ...], int] = {}
    run: list[Program] = []
    runs_for: list[int] = []
    for program in programs:
        key = program_key(program)
        if key is not None and key in first:
            runs_for.append(first[key])
            continue
        if key is not None:
            first[key] = len(run)
        runs_for.append(len(run))
        run.append(program)
    return run, runs_for


def copy_rows(report: ExecutionReport, runs_for: Sequence[int]) -> ExecutionReport:
    """The report of the distinct programs, with a row per original program (copies share the
    outcome lists, which nothing downstream changes in place)."""
    report.outcomes = [report.outcomes[r] for r in runs_for]
    report.load_errors = [report.load_errors[r] for r in runs_for]
    report.timeouts = [report.timeouts[r] for r in runs_for]
    return report


__all__ = ["copy_rows", "distinct_programs", "program_key"]
