"""The shape of the server code (issue 27's evidence): a tree of modules with their line counts,
the modules over the module limit and the functions over the function limit.

    python benchmarks/code_shape.py [ROOT ...] [--module-limit 500] [--function-limit 150]

ROOT defaults to the engine (``server/coherence/engine``, the worker package included).  Lines
are physical lines; a function's length runs from its ``def`` (or first decorator) to its last
line, nested functions counted inside their parent and listed on their own as well.  Reads the
files with ``ast``; imports nothing of coherence.  Exit status 0 always: it prints figures.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def function_lengths(tree: ast.Module) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function and method in ``tree``."""
    out: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append((prefix + child.name, first, (child.end_lineno or child.lineno) - first + 1))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def tree_lines(root: Path) -> list[tuple[Path, int]]:
    """Every Python file under ``root`` (sorted, a package's ``__init__`` first) with its lines."""
    files = sorted(root.rglob("*.py"), key=lambda p: (p.parent.parts, p.name != "__init__.py", p.name))
    return [(p, len(p.read_text(encoding="utf-8").splitlines())) for p in files]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*", type=Path, default=[REPO / "server/coherence/engine"])
    ap.add_argument("--module-limit", type=int, default=500)
    ap.add_argument("--function-limit", type=int, default=150)
    args = ap.parse_args(argv)

    big_modules: list[tuple[Path, int]] = []
    long_functions: list[tuple[Path, str, int, int]] = []
    for root in args.roots:
        root = root.resolve()
        print(f"{root.relative_to(REPO)}/")
        total = 0
        shown: set[tuple[str, ...]] = {()}
        for path, n in tree_lines(root):
            rel = path.relative_to(root)
            depth = len(rel.parts) - 1
            for k in range(1, depth + 1):  # each folder once, before its files
                if rel.parts[:k] not in shown:
                    shown.add(rel.parts[:k])
                    print(f"  {'  ' * (k - 1)}{rel.parts[k - 1]}/")
            print(f"  {'  ' * depth}{rel.name:<{40 - 2 * depth}} {n:>5}")
            total += n
            if n > args.module_limit:
                big_modules.append((path, n))
            tree = ast.parse(path.read_text(encoding="utf-8"))
            long_functions += [(path, q, line, k) for q, line, k in function_lengths(tree) if k > args.function_limit]
        print(f"  {'total':<40} {total:>5}\n")

    print(f"modules over {args.module_limit} lines: {len(big_modules)}")
    for path, n in sorted(big_modules, key=lambda x: -x[1]):
        print(f"  {path.relative_to(REPO)}  {n}")
    print(f"functions over {args.function_limit} lines: {len(long_functions)}")
    for path, q, line, k in sorted(long_functions, key=lambda x: -x[3]):
        print(f"  {path.relative_to(REPO)}:{line}  {q}  {k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
