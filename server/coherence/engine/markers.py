"""Find the functions marked for checking, and cut each into a Spec (what the LLM sees) and a Target.

Markers are matched by name so the user's project needs no import:
- a ``# coherence`` comment on the ``def`` line, or on the line above it (above the decorators too);
- a decorator whose name ends in ``generated``: ``@generated``, ``@llm_generated``,
  ``@coherence.generated``, ``@generated(...)``.
With ``mode="docstring"`` every function that has a docstring is checked instead.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import threading
import tokenize
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from coherence.engine import syntax
from coherence.engine.marker_comments import decorator_name, is_marked, is_off, user_statements
from coherence.engine.module_context import ModuleContext, class_infos, memo, params_of, signature_of
from coherence.engine.selection import name_matches
from coherence.engine.spec import ClassInfo, Spec, Target

MODES = ("marked", "docstring")


# The last few modules' targets: the language server parses a document for hover, code lens and
# diagnostics, and results_key() parses it again for each of its functions (Targets are frozen).
_RECENT: OrderedDict[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], tuple[Target, ...]] = OrderedDict()
_RECENT_LIMIT = 8
_RECENT_LOCK = threading.Lock()


def read_source(path: str | os.PathLike[str]) -> str:
    """A module's text as Python reads it: the encoding its PEP 263 ``# -*- coding: ... -*-``
    line or BOM declares, else UTF-8.  Raises OSError, SyntaxError (an unknown encoding) or
    UnicodeDecodeError."""
    try:
        with tokenize.open(path) as fh:
            return fh.read()
    except UnicodeDecodeError:
        raise
    except (LookupError, UnicodeError) as exc:  # "coding: zlib" (no text codec), "coding: utf-16" without a BOM
        raise SyntaxError(f"its coding line names an encoding Python cannot read it in ({exc})") from exc


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
    tree = syntax.parse(source, filename=path)
    lines = source.splitlines()
    classes = tuple(class_infos(tree))
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
    context = ModuleContext(tree, lines)
    for i, (fn, qualname, reason) in enumerate(found):
        marked = is_marked(fn, lines, mode)
        # include names module-level functions and methods: nested ones and lambdas never run
        if not (marked or (i < top and name_matches(qualname, include))):
            continue
        if is_off(fn, lines) or name_matches(qualname, exclude):
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
    decos = {decorator_name(d).split(".")[-1] for d in node.decorator_list}
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


def _skip_reason(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    if isinstance(node, ast.AsyncFunctionDef):
        return "async functions are not checked yet"
    for sub in ast.walk(node):
        if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(sub, (ast.Yield, ast.YieldFrom)) and _owner(node, sub):
            return "generator functions are not checked yet"
    if any(decorator_name(d) in ("overload", "typing.overload") for d in node.decorator_list):
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
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    reason: str | None,
    tree: ast.Module,
    source: str,
    lines: list[str],
    path: str,
    classes: tuple[ClassInfo, ...],
    context: ModuleContext | None = None,
    *,
    owner: str | None = None,
    method_kind: str | None = None,
) -> Target:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    end = node.end_lineno or node.lineno
    function_source = "\n".join(lines[first - 1 : end])
    # What depends only on the function's own text is kept across parses: while one function is
    # edited, the others come back unchanged.
    docstring, params, signature, returns, own_reason, own_hash = memo(
        ("function", type(node).__name__, function_source),
        lambda: (
            ast.get_docstring(node, clean=True),
            params_of(node.args),
            signature_of(node),
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
        context=(context or ModuleContext(tree)).without(node),
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
    assume, accept = user_statements(node, lines)
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


def target_for(source: str, name: str, path: str = "<memory>", *, docstring: str | None = None) -> Target:
    """The module-level function ``name`` of ``source`` as a Target, marked or not.

    For replaying recorded programs (benchmarks, ``coherence eval``): ``docstring`` stands in when
    the recorded function carries none (MBPP states its task in a separate sentence).
    """
    tree = syntax.parse(source, filename=path)
    lines = source.splitlines()
    classes = tuple(class_infos(tree))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            target = _make_target(node, name, None, tree, source, lines, path, classes)
            if docstring and not target.spec.docstring:
                from dataclasses import replace

                target = replace(target, spec=replace(target.spec, docstring=docstring.strip()))
            return target
    raise LookupError(f"{path} defines no module-level function {name!r}")
