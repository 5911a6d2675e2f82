"""Find the functions marked for checking, and cut each into a Spec (what the LLM sees) and a Target.

Markers are matched by name so the user's project needs no import:
- a ``# coherence`` comment on the ``def`` line, or on the line above it (above the decorators too);
- a decorator whose name ends in ``generated``: ``@generated``, ``@llm_generated``,
  ``@coherence.generated``, ``@generated(...)``.
With ``mode="docstring"`` every function that has a docstring is checked instead.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import os
import re
import textwrap
import threading
import tokenize
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from coherence.engine.selection import name_matches
from coherence.engine.spec import ClassInfo, Param, Spec, Target

MARKER_COMMENT = re.compile(r"#\s*coherence\b(?!\s*:\s*(?:off|ignore|skip))", re.IGNORECASE)
OFF_COMMENT = re.compile(r"#\s*coherence\s*:\s*(?:off|ignore|skip)\b", re.IGNORECASE)
MODES = ("marked", "docstring")
# Module context shown to the LLM is bounded: a huge module must not become a huge prompt.
_CONTEXT_LIMIT = 6000
_CONSTANT_LIMIT = 200


# The last few modules' targets: the language server parses a document for hover, code lens and
# diagnostics, and results_key() parses it again for each of its functions (Targets are frozen).
_RECENT: OrderedDict[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], tuple[Target, ...]] = OrderedDict()
_RECENT_LIMIT = 8
_RECENT_LOCK = threading.Lock()


def read_source(path: str | os.PathLike) -> str:
    """A module's text as Python reads it: the encoding its PEP 263 ``# -*- coding: ... -*-``
    line or BOM declares, else UTF-8.  Raises OSError, SyntaxError (an unknown encoding) or
    UnicodeDecodeError."""
    with tokenize.open(path) as fh:
        return fh.read()


def find_targets(
    source: str,
    path: str = "<untitled>",
    *,
    mode: str = "marked",
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
) -> list[Target]:
    """Every marked function in ``source``, module-level first.

    ``include`` and ``exclude`` are name globs (``selection.names_for`` picks the ones of a
    file): a function whose qualified name matches ``include`` is checked unmarked, one that
    matches ``exclude`` or carries ``# coherence: off`` is left out, in either mode.
    Raises ``SyntaxError`` when the module does not parse (callers report it, e.g. mid-typing).
    Functions that are marked but cannot be checked come back with ``skip_reason`` set.
    """
    if mode not in MODES:
        raise ValueError(f"unknown marker mode {mode!r}; expected one of {', '.join(MODES)}")
    key = (source, path, mode, include, exclude)
    with _RECENT_LOCK:
        hit = _RECENT.get(key)
        if hit is not None:
            _RECENT.move_to_end(key)
            return list(hit)
    targets = _find_targets(source, path, mode, include, exclude)
    with _RECENT_LOCK:
        _RECENT[key] = tuple(targets)
        while len(_RECENT) > _RECENT_LIMIT:
            _RECENT.popitem(last=False)
    return targets


def _find_targets(
    source: str, path: str, mode: str, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
) -> list[Target]:
    tree = ast.parse(source, filename=path)
    lines = source.splitlines()
    classes = tuple(_class_infos(tree))
    found: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str, str | None]] = []  # (node, qualname, skip reason)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node, node.name, None))
    methods: dict[int, tuple[str | None, str | None]] = {}  # id(def) -> (class, method kind)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            info = next((c for c in classes if c.name == node.name), None)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    kind, reason = _method_support(node, item, info)
                    methods[id(item)] = (node.name, kind)
                    found.append((item, f"{node.name}.{item.name}", reason))
    top = len(found)  # module-level functions and methods come first
    for fn, qual in _nested_functions(tree):
        found.append((fn, qual, "nested functions are not checked: only module-level functions are"))
    for node in tree.body:
        lam = _lambda_function(node)
        if lam is not None:
            found.append((lam, lam.name, "lambdas are not checked: write it as a def"))

    targets = []
    context = _ModuleContext(tree, lines)
    for i, (fn, qualname, reason) in enumerate(found):
        marked = _is_marked(fn, lines, mode)
        # include names module-level functions and methods: nested ones and lambdas never run
        if not (marked or (i < top and name_matches(qualname, include))):
            continue
        if _is_off(fn, lines) or name_matches(qualname, exclude):
            continue
        owner, method_kind = methods.get(id(fn), (None, None))
        target = _make_target(
            fn, qualname, reason, tree, source, lines, path, classes, context, owner=owner, method_kind=method_kind
        )
        if marked or not target.skip_reason:  # "Cart.*" means its checkable methods, not __init__
            targets.append(target)
    return targets


# Methods whose behaviour is about the object's life, not a computation over inputs.
_LIFECYCLE = frozenset(
    (
        "__init__",
        "__new__",
        "__del__",
        "__init_subclass__",
        "__post_init__",
        "__class_getitem__",
        "__set_name__",
        "__getattr__",
        "__getattribute__",
        "__setattr__",
        "__delattr__",
        "__enter__",
        "__exit__",
        "__aenter__",
        "__aexit__",
    )
)


def _required_init_args(cls: ast.ClassDef, info: ClassInfo | None) -> list[str]:
    """Arguments ``Owner()`` cannot do without, as far as the source shows (an inherited
    ``__init__`` is found out when the sandbox builds the object).  ``info.fields`` are the
    ``__init__`` parameters or the dataclass fields; a plain class without ``__init__`` has
    annotations there that its constructor does not take."""
    if info is None:
        return []
    has_init = any(isinstance(i, ast.FunctionDef) and i.name == "__init__" for i in cls.body)
    fieldy = info.is_dataclass or any(b.split(".")[-1] == "NamedTuple" for b in info.bases)
    if not (has_init or fieldy):
        return []
    return [p.name for p in info.fields if p.default is None]


def _method_support(
    cls: ast.ClassDef, node: ast.FunctionDef | ast.AsyncFunctionDef, info: ClassInfo | None
) -> tuple[str, str | None]:
    """How a method is called (instance, static or class), and why it cannot be checked, if so.

    An instance method is called on ``Owner()``, built afresh for every call, so the class must be
    buildable without arguments; what the method does to that object is part of its outcome."""
    decos = {_decorator_name(d).split(".")[-1] for d in node.decorator_list}
    if "staticmethod" in decos:
        kind = "static"
    elif "classmethod" in decos:
        kind = "class"
    else:
        kind = "instance"
    if decos & {"property", "setter", "getter", "deleter", "cached_property"}:
        return kind, "properties are not checked: make it a method or a module-level function"
    if decos & {"abstractmethod"}:
        return kind, "abstract methods have no behaviour to check"
    if node.name in _LIFECYCLE:
        return kind, f"{node.name} is not checked: it is about the object's life, not a computation over inputs"
    if kind != "static" and not (node.args.posonlyargs or node.args.args):
        return kind, f"{cls.name}.{node.name} takes no {'cls' if kind == 'class' else 'self'} argument"
    if info is not None and info.is_enum:
        return kind, f"methods of enums are not checked: {cls.name}() cannot be built"
    if kind == "instance":
        required = _required_init_args(cls, info)
        if required:
            return (
                kind,
                f"{cls.name}() needs arguments ({', '.join(required[:4])}), and methods are called on an object built without any",
            )
    return kind, None


def _lambda_function(node: ast.stmt) -> ast.FunctionDef | None:
    """``name = lambda ...`` as the equivalent def, so a marked lambda is reported (as skipped)
    instead of being silently ignored."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target = node.target
    else:
        return None
    if not isinstance(target, ast.Name) or not isinstance(node.value, ast.Lambda):
        return None
    lam = node.value
    fn = ast.FunctionDef(
        name=target.id,
        args=lam.args,
        body=[ast.Return(value=lam.body)],
        decorator_list=[],
        returns=None,
        type_params=[],
    )  # type: ignore[call-arg]  # 3.12's field
    ast.copy_location(fn, node)
    fn.col_offset = target.col_offset
    return fn


def _is_marked(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], mode: str) -> bool:
    if mode == "docstring":
        return ast.get_docstring(node) is not None
    for dec in node.decorator_list:
        if _decorator_name(dec).endswith("generated"):
            return True
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    candidates = {node.lineno, first - 1, node.lineno - 1}
    return any(1 <= ln <= len(lines) and MARKER_COMMENT.search(_comment_part(lines[ln - 1])) for ln in candidates)


def _is_off(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> bool:
    """``# coherence: off`` (or ``ignore``, ``skip``) where a marker would go: never checked."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    for ln in {node.lineno, first - 1, node.lineno - 1}:
        if 1 <= ln <= len(lines) and OFF_COMMENT.search(_comment_part(lines[ln - 1])):
            return True
    return False


def _comment_part(line: str) -> str:
    # Only the comment counts: a string literal "# coherence" on the def line must not mark it.
    if "#" not in line:
        return ""
    return _tokenized_comment(line)


@functools.lru_cache(maxsize=4096)
def _tokenized_comment(line: str) -> str:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line[line.index("#") :]
    return " ".join(t.string for t in toks if t.type == tokenize.COMMENT)


# "# coherence: assume lo <= hi", "# coherence: accept clamp(0, 1, 0)" on the def line, the lines
# of its decorators, or the line above them.
_STATEMENT_COMMENT = re.compile(r"#\s*coherence\s*:\s*(assume|accept)\s+(.+?)\s*$", re.IGNORECASE)


def _user_statements(
    node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The preconditions (``assume``) and accepted calls (``accept``) the user wrote for this
    function: a marker decorator's ``assume=`` argument (a string or a list of strings) and
    ``# coherence: assume ...`` / ``# coherence: accept ...`` comments around its header."""
    assume: list[str] = []
    accept: list[str] = []
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and _decorator_name(dec).endswith("generated"):
            for kw in dec.keywords:
                if kw.arg in ("assume", "accept"):
                    values = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
                    texts = [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
                    (assume if kw.arg == "assume" else accept).extend(texts)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    # the comment block right above the header, the decorators and the def line
    start = first - 1
    while start >= 1 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    for ln in range(start + 1, node.lineno + 1):
        if 1 <= ln <= len(lines) and "#" in lines[ln - 1]:
            m = _STATEMENT_COMMENT.search(_comment_part(lines[ln - 1]))
            if m:
                (assume if m.group(1).lower() == "assume" else accept).append(m.group(2))
    return tuple(assume), tuple(accept)


def _decorator_name(dec: ast.expr) -> str:
    if isinstance(dec, ast.Call):
        dec = dec.func
    parts = []
    while isinstance(dec, ast.Attribute):
        parts.append(dec.attr)
        dec = dec.value
    if isinstance(dec, ast.Name):
        parts.append(dec.id)
    return ".".join(reversed(parts))


_BLOCKS = frozenset(("body", "orelse", "finalbody", "handlers", "cases"))


def _nested_functions(tree: ast.Module) -> Iterable[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    def walk(
        node: ast.AST, prefix: str, inside_function: bool
    ) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
        # Functions are statements, so only the blocks of statements are walked: expressions and
        # simple statements (most of the tree) hold none.
        for block in node._fields:
            if block not in _BLOCKS:
                continue
            for child in getattr(node, block):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qual = f"{prefix}{child.name}"
                    if inside_function:
                        yield child, qual
                    yield from walk(child, qual + ".", True)
                elif isinstance(child, ast.ClassDef):
                    yield from walk(child, f"{prefix}{child.name}.", inside_function)
                elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    yield from walk(child, prefix, inside_function)

    yield from walk(tree, "", False)


def _params(args: ast.arguments) -> tuple[Param, ...]:
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


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    sig = f"({ast.unparse(node.args)})"
    if node.returns is not None:
        sig += f" -> {ast.unparse(node.returns)}"
    return sig


def _skip_reason(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    if isinstance(node, ast.AsyncFunctionDef):
        return "async functions are not checked yet"
    for sub in ast.walk(node):
        if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(sub, (ast.Yield, ast.YieldFrom)) and _owner(node, sub):
            return "generator functions are not checked yet"
    if any(_decorator_name(d) in ("overload", "typing.overload") for d in node.decorator_list):
        return "@overload stubs have no behaviour to check"
    return None


def _owner(func: ast.AST, target: ast.AST) -> bool:
    """True when ``target`` belongs to ``func`` itself, not to a function nested inside it."""

    def search(node: ast.AST) -> bool:
        for child in ast.iter_child_nodes(node):
            if child is target:
                return True
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if search(child):
                return True
        return False

    return search(func)


def _make_target(
    node,
    qualname,
    reason,
    tree,
    source,
    lines,
    path,
    classes,
    context: _ModuleContext | None = None,
    *,
    owner: str | None = None,
    method_kind: str | None = None,
) -> Target:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    end = node.end_lineno or node.lineno
    function_source = "\n".join(lines[first - 1 : end])
    # What depends only on the function's own text is kept across parses: while one function is
    # edited, the others come back unchanged.
    docstring, params, signature, returns, own_reason, own_hash = _memo(
        ("function", type(node).__name__, function_source),
        lambda: (
            ast.get_docstring(node, clean=True),
            _params(node.args),
            _signature(node),
            ast.unparse(node.returns) if node.returns is not None else None,
            _skip_reason(node),
            body_hash(node),
        ),
    )
    if (
        method_kind in ("instance", "class")
        and params
        and params[0].kind in ("positional_only", "positional_or_keyword")
    ):
        params = params[1:]  # the receiver: the executor supplies it
    spec = Spec(
        name=node.name,
        signature=signature,
        params=params,
        returns=returns,
        docstring=docstring,
        context=(context or _ModuleContext(tree)).without(node),
        classes=classes,
        is_async=isinstance(node, ast.AsyncFunctionDef),
        owner=owner,
        method_kind=method_kind,
    )
    if reason is None:
        reason = own_reason
    if (
        reason is None
        and any(p.kind == "var_keyword" for p in spec.params)
        and not any(p.kind in ("positional_only", "positional_or_keyword", "keyword_only") for p in spec.params)
    ):
        star = "*args and **kwargs" if any(p.kind == "var_positional" for p in spec.params) else "**kwargs"
        reason = f"functions that take only {star} have no signature to build inputs from"
    # Column of the name: "def name" / "async def name" on the def line.
    def_line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
    m = re.search(r"\bdef\s+(" + re.escape(node.name) + r")\b", def_line)
    column = m.start(1) if m else node.col_offset
    assume, accept = _user_statements(node, lines)
    return Target(
        assume=assume,
        accept=accept,
        spec=spec,
        path=path,
        line=first,
        column=column,
        end_line=end,
        name_line=node.lineno,
        module_source=source,
        function_source=function_source,
        body_hash=own_hash,
        qualname=qualname,
        skip_reason=reason,
    )


def body_hash(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Hash of what the function does: its AST without the docstring (formatting and comments
    do not change behaviour, so they do not invalidate results)."""
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    dumped = ast.dump(ast.Module(body=body, type_ignores=[]), annotate_fields=False)
    dumped += "|" + ast.dump(node.args) + "|" + "|".join(ast.dump(d) for d in node.decorator_list)
    return hashlib.sha256(dumped.encode()).hexdigest()[:32]


def module_context(tree: ast.Module, source: str, exclude: ast.AST | None = None) -> str:
    """Imports, constants, class skeletons and sibling signatures+docstrings: what a programmer
    writing this function would see around it.  Never any function body."""
    return _ModuleContext(tree).without(exclude)


class _ModuleContext:
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
_MEMO: OrderedDict[tuple, object] = OrderedDict()
_MEMO_LIMIT = 20000


def _memo(key: tuple, make):
    with _RECENT_LOCK:
        if key in _MEMO:
            _MEMO.move_to_end(key)
            return _MEMO[key]
    value = make()
    with _RECENT_LOCK:
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
    return _memo(key, lambda: _context_part(node, None))


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
    head = f"{decos}{indent}{prefix} {node.name}{_signature(node)}:"
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


def _class_infos(tree: ast.Module) -> Iterable[ClassInfo]:
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        decos = [_decorator_name(d) for d in node.decorator_list]
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
                fields = [p for p in _params(item.args)[1:] if p.kind not in ("var_positional", "var_keyword")]
        yield ClassInfo(
            name=node.name,
            bases=bases,
            is_dataclass=is_dataclass,
            is_enum=is_enum,
            fields=tuple(fields),
            members=tuple(members),
        )


def target_for(source: str, name: str, path: str = "<memory>", *, docstring: str | None = None) -> Target:
    """The module-level function ``name`` of ``source`` as a Target, marked or not.

    For replaying recorded programs (benchmarks, ``coherence eval``): ``docstring`` stands in when
    the recorded function carries none (MBPP states its task in a separate sentence).
    """
    tree = ast.parse(source, filename=path)
    lines = source.splitlines()
    classes = tuple(_class_infos(tree))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            target = _make_target(node, name, None, tree, source, lines, path, classes)
            if docstring and not target.spec.docstring:
                from dataclasses import replace

                target = replace(target, spec=replace(target.spec, docstring=docstring.strip()))
            return target
    raise LookupError(f"{path} defines no module-level function {name!r}")
