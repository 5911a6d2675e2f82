"""What the LLM sees of the module around a function: its imports, constants, other functions'
stubs and class skeletons, bounded in size; the module's classes as ``ClassInfo``s; and a
function's parameters and signature as the spec and the stubs both write them.
"""

from __future__ import annotations

import ast
import textwrap
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from coherence.engine.marker_comments import decorator_name
from coherence.engine.spec import ClassInfo, Param

# Module context shown to the LLM is bounded: a huge module must not become a huge prompt.
_CONTEXT_LIMIT = 6000
_CONSTANT_LIMIT = 200


def module_context(tree: ast.Module, source: str, exclude: ast.AST | None = None) -> str:
    """Imports, constants, class skeletons and sibling signatures+docstrings: what a programmer
    writing this function would see around it.  Never any function body."""
    return ModuleContext(tree).without(exclude)


class ModuleContext:
    """The module context of every function of one module: each top-level statement is rendered
    once (a module of k functions used to render all of them k times)."""

    def __init__(self, tree: ast.Module, lines: list[str] | None = None):
        self.nodes = tree.body
        self.lines = lines
        self._parts: list[str | None] = []  # rendering of nodes[i], filled in as far as needed
        # Where a function to leave out sits: its own statement, or the class holding it.
        self._home: dict[int, tuple[int, ast.ClassDef | None]] = {}
        for i, node in enumerate(self.nodes):
            self._home[id(node)] = (i, None)
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    self._home[id(item)] = (i, node)

    def without(self, exclude: ast.AST | None) -> str:
        # Rendered lazily: past the limit the rest would be cut off anyway (a big module).
        skip, cls = self._home.get(id(exclude), (-1, None)) if exclude is not None else (-1, None)
        rendered = self._parts
        parts: list[str] = []
        size = -1
        for i, node in enumerate(self.nodes):
            if i == len(rendered):
                rendered.append(_cached_part(node, self.lines))
            if i != skip:
                text = rendered[i]
            elif cls is None:
                continue
            else:
                text = _context_part(cls, exclude)
            if text is not None:
                parts.append(text)
                size += len(text) + 1
                if size > _CONTEXT_LIMIT:
                    break
        text = "\n".join(parts)
        if len(text) > _CONTEXT_LIMIT:
            text = text[:_CONTEXT_LIMIT] + "\n# ... (module context truncated)"
        return text


# Renderings that depend only on a statement's own text, kept across parses of a document being
# edited (editing one function re-renders only that function).
_MEMO: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
_MEMO_LIMIT = 20000
_T = TypeVar("_T")
_MEMO_LOCK = threading.Lock()


def memo(key: tuple[Any, ...], make: Callable[[], _T]) -> _T:
    with _MEMO_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            hit: _T = _MEMO[key]
            return hit
    value = make()
    with _MEMO_LOCK:
        _MEMO[key] = value
        while len(_MEMO) > _MEMO_LIMIT:
            _MEMO.popitem(last=False)
    return value


def _segment(node: Any, lines: list[str]) -> str:  # a statement or an expression: what has a lineno
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    return "\n".join(lines[first - 1 : node.end_lineno or node.lineno])


def _cached_part(node: ast.AST, lines: list[str] | None) -> str | None:
    if lines is None or not hasattr(node, "lineno"):
        return _context_part(node, None)
    key = ("part", type(node).__name__, getattr(node, "col_offset", None), _segment(node, lines))
    return memo(key, lambda: _context_part(node, None))


def _context_part(node: ast.AST, exclude: ast.AST | None) -> str | None:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return ast.unparse(node)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        text = ast.unparse(node)
        if len(text) > _CONSTANT_LIMIT:
            text = text[:_CONSTANT_LIMIT] + " ...  # (truncated)"
        return text
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _stub(node)
    if isinstance(node, ast.ClassDef):
        return _class_skeleton(node, exclude)
    return None


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str = "") -> str:
    decos = "".join(f"{indent}@{ast.unparse(d)}\n" for d in node.decorator_list)
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    head = f"{decos}{indent}{prefix} {node.name}{signature_of(node)}:"
    doc = ast.get_docstring(node, clean=True)
    if doc:
        doc_lines = doc.splitlines()
        body = f'\n{indent}    """' + ("\n" + indent + "    ").join(doc_lines) + '"""'
    else:
        body = ""
    return f"{head}{body}\n{indent}    ..."


def _class_skeleton(node: ast.ClassDef, exclude: ast.AST | None) -> str:
    decos = "".join(f"@{ast.unparse(d)}\n" for d in node.decorator_list)
    bases = ", ".join(ast.unparse(b) for b in node.bases + node.keywords) if (node.bases or node.keywords) else ""
    head = f"{decos}class {node.name}({bases}):" if bases else f"{decos}class {node.name}:"
    body: list[str] = []
    doc = ast.get_docstring(node, clean=True)
    if doc:
        body.append('    """' + "\n    ".join(doc.splitlines()) + '"""')
    owner = exclude is not None and any(item is exclude for item in node.body)
    for item in node.body:
        if item is exclude:
            continue
        if isinstance(item, (ast.Assign, ast.AnnAssign)):
            body.append("    " + ast.unparse(item))
        elif owner and isinstance(item, ast.FunctionDef) and item.name in ("__init__", "__post_init__"):
            # For a method, the object's state is part of the specification: what __init__ sets up
            # is context (the method's own body never is).
            body.append(textwrap.indent(ast.unparse(item), "    "))
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body.append(_stub(item, "    "))
    if not body:
        body.append("    ...")
    return head + "\n" + "\n".join(body)


def class_infos(tree: ast.Module) -> Iterable[ClassInfo]:
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        decos = [decorator_name(d) for d in node.decorator_list]
        bases = tuple(ast.unparse(b) for b in node.bases)
        is_dataclass = any(d.split(".")[-1] == "dataclass" for d in decos)
        is_enum = any(b.split(".")[-1] in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag") for b in bases)
        fields: list[Param] = []
        members: list[str] = []
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not is_enum:
                ann = ast.unparse(item.annotation)
                if ann.startswith(("ClassVar", "typing.ClassVar")):
                    continue
                default = ast.unparse(item.value) if item.value is not None else None
                fields.append(Param(item.target.id, "positional_or_keyword", ann, default))
            elif isinstance(item, ast.Assign) and is_enum:
                for t in item.targets:
                    if isinstance(t, ast.Name) and not t.id.startswith("_"):
                        members.append(t.id)
            elif isinstance(item, ast.FunctionDef) and item.name == "__init__" and not is_dataclass:
                # the first parameter is the receiver, whatever its name
                fields = [p for p in params_of(item.args)[1:] if p.kind not in ("var_positional", "var_keyword")]
        yield ClassInfo(
            name=node.name,
            bases=bases,
            is_dataclass=is_dataclass,
            is_enum=is_enum,
            fields=tuple(fields),
            members=tuple(members),
        )


def params_of(args: ast.arguments) -> tuple[Param, ...]:
    def ann(a: ast.arg) -> str | None:
        return ast.unparse(a.annotation) if a.annotation is not None else None

    out: list[Param] = []
    positional = list(args.posonlyargs) + list(args.args)
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults)):
        kind = "positional_only" if i < len(args.posonlyargs) else "positional_or_keyword"
        out.append(Param(a.arg, kind, ann(a), ast.unparse(d) if d is not None else None))
    if args.vararg:
        out.append(Param(args.vararg.arg, "var_positional", ann(args.vararg)))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(a.arg, "keyword_only", ann(a), ast.unparse(d) if d is not None else None))
    if args.kwarg:
        out.append(Param(args.kwarg.arg, "var_keyword", ann(args.kwarg)))
    return tuple(out)


def signature_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    sig = f"({ast.unparse(node.args)})"
    if node.returns is not None:
        sig += f" -> {ast.unparse(node.returns)}"
    return sig
