"""Binding a call's arguments to the parameters they fill, and the names a module binds."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from coherence.engine import syntax
from coherence.engine.inputs.values import Input
from coherence.engine.spec import Param


def bind(params: Iterable[Param], inp: Input) -> tuple[list[Param | None], list[Param | None]]:
    """The parameter each positional argument and each keyword argument of ``inp`` binds to
    (``None`` when nothing matches).  ``*args`` / ``**kwargs`` parameters absorb the rest."""
    params = list(params)
    positional = [p for p in params if p.kind in ("positional_only", "positional_or_keyword")]
    star = next((p for p in params if p.kind == "var_positional"), None)
    starstar = next((p for p in params if p.kind == "var_keyword"), None)
    by_name = {p.name: p for p in params if p.kind in ("positional_or_keyword", "keyword_only")}
    arg_params: list[Param | None] = []
    for i in range(len(inp.args)):
        arg_params.append(positional[i] if i < len(positional) else star)
    kw_params = [by_name.get(k, starstar) for k, _ in inp.kwargs]
    return arg_params, kw_params


def module_names(source: str | None) -> set[str] | None:
    """Names bound at the top level of a module's source (defs, classes, imports, assignments)."""
    if source is None:
        return None
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(st.name)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    names.add(a.asname or a.name.split(".")[0])
            elif isinstance(st, ast.ImportFrom):
                for a in st.names:
                    names.add(a.asname or a.name)
            elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            names.add(n.id)
            elif isinstance(st, (ast.If, ast.Try, ast.With)):
                visit(st.body)
                visit(getattr(st, "orelse", []))
                for h in getattr(st, "handlers", []):
                    visit(h.body)

    visit(tree.body)
    return names
