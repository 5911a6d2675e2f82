"""The names a module binds at its top level."""

from __future__ import annotations

import ast

from coherence.engine import syntax


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
