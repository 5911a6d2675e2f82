"""Seed inputs: doctest examples, calls in the workspace's tests, defaults, and values built from
types (annotations, or names when there are none).

Everything is read with ``ast``; user code is never executed.  Arguments that are not literals
(``date(2024, 2, 28)``) become :class:`Expr` nodes, kept verbatim, provided every free name in them
resolves in the user's module (a module-level name, a builtin, or a name the doctest / test file
imported, which is rewritten to ``__import__('mod').name``).
"""

from __future__ import annotations

import ast
import builtins
import doctest
import os
import random
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from coherence.engine.inputs.types import (
    ANY,
    INT,
    MIXED,
    STR,
    TypeDesc,
    infer_from_default,
    infer_from_name,
    parse_annotation,
)
from coherence.engine.inputs.values import Construct, Expr, Input
from coherence.engine.markers import read_source
from coherence.engine.spec import Param, Spec

__all__ = [
    "MAX_ITEMS",
    "MAX_STR",
    "MAX_DEPTH",
    "doctest_seeds",
    "workspace_seeds",
    "default_seed",
    "type_seeds",
    "boundary_values",
    "random_value",
    "bind",
    "module_names",
    "field_types",
]

MAX_ITEMS = 20  # items in a generated container
MAX_STR = 40  # characters in a generated string
MAX_DEPTH = 3  # nesting of generated containers / constructs

# Test-file scan limits.
MAX_TEST_FILES = 300
MAX_TEST_BYTES = 4_000_000
MAX_FILE_BYTES = 400_000
MAX_TEST_SEEDS = 400
SKIP_DIRS = {
    ".git", ".hg", ".svn", "node_modules", "site-packages", "dist-packages", "__pycache__",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "build", "dist",
    "venv", ".venv", "env", ".env", "virtualenv", ".idea", ".vscode",
}

_BUILTIN_NAMES = set(dir(builtins))

# ---------------------------------------------------------------------------------------------
# Binding arguments to parameters
# ---------------------------------------------------------------------------------------------


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
        tree = ast.parse(source)
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


# ---------------------------------------------------------------------------------------------
# Turning argument expressions into values
# ---------------------------------------------------------------------------------------------


class _Unsupported(Exception):
    pass


def _literalish(node: ast.AST) -> Any:
    """``ast.literal_eval`` plus ``set()``, ``frozenset({..})``, ``tuple([..])``, ``float('nan')``,
    ``-x``, simple arithmetic on numbers.  Raises ``_Unsupported`` otherwise."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = node.func.id
        if fn in ("set", "frozenset", "tuple", "list", "dict") and len(node.args) <= 1:
            inner = _literalish(node.args[0]) if node.args else ()
            if fn == "dict" and not node.args:
                return {}
            try:
                return {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "dict": dict}[fn](inner)
            except (TypeError, ValueError) as e:
                raise _Unsupported from e
        if fn in ("float", "int", "complex", "str", "bytes", "bool") and len(node.args) <= 2:
            args = [_literalish(a) for a in node.args]
            if fn == "float" and args and isinstance(args[0], str) and args[0].strip().lower() in (
                "nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
                return float(args[0])
            if all(isinstance(a, (int, float, str, bool)) for a in args) and fn != "bytes":
                try:
                    return {"float": float, "int": int, "complex": complex, "str": str, "bool": bool}[fn](*args)
                except (TypeError, ValueError) as e:
                    raise _Unsupported from e
    if isinstance(node, ast.List):
        return [_literalish(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literalish(e) for e in node.elts)
    if isinstance(node, ast.Set):
        try:
            return {_literalish(e) for e in node.elts}
        except TypeError as e:
            raise _Unsupported from e
    if isinstance(node, ast.Dict) and None not in node.keys:
        try:
            return {_literalish(k): _literalish(v) for k, v in zip(node.keys, node.values)}
        except TypeError as e:
            raise _Unsupported from e
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literalish(node.operand)
        if isinstance(v, (int, float, complex)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.Div)):
        a, b = _literalish(node.left), _literalish(node.right)
        num = (int, float)
        if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
            if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > 10**6):
                raise _Unsupported
            try:
                return {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                        ast.Pow: lambda: a ** b, ast.Div: lambda: a / b}[type(node.op)]()
            except (ZeroDivisionError, OverflowError) as e:
                raise _Unsupported from e
        if isinstance(node.op, ast.Mult) and isinstance(a, (str, list, tuple, bytes)) and isinstance(b, int) \
                and not isinstance(b, bool) and 0 <= b and len(a) * b <= 10_000:
            return a * b
        if isinstance(node.op, ast.Add) and type(a) is type(b) and isinstance(a, (str, list, tuple, bytes)):
            return a + b
    raise _Unsupported


def _free_names(node: ast.AST) -> set[str]:
    loaded: set[str] = set()
    bound: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    return loaded - bound


class _Subst(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.AST]):
        self.env = env
        self.changed = False

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            self.changed = True
            return ast.copy_location(_clone(self.env[node.id]), node)
        return node


def _clone(node: ast.AST) -> ast.AST:
    """A fresh copy of an expression node (so substitutions never alter the original tree)."""
    return ast.parse(ast.unparse(node), mode="eval").body


def _import_expr(module: str, attr: str | None) -> ast.AST:
    src = f"__import__({module!r})" if attr is None else f"__import__({module!r}, fromlist=[{attr!r}]).{attr}"
    return ast.parse(src, mode="eval").body


class _Harvester:
    """Finds calls of the function in statements and turns them into Inputs."""

    def __init__(self, spec: Spec, source: str, origin: str, allowed: Callable[[str], bool],
                 require_literal: bool = False):
        self.name = spec.name
        # a method: ``Owner().name(...)``, ``Owner.name(...)`` or ``obj.name(...)`` after
        # ``obj = Owner(...)`` (the receiver is not part of the input)
        self.owner = spec.owner
        self.receivers: set[str] = set()
        self.source = source
        self.origin = origin
        self.allowed = allowed
        self.require_literal = require_literal
        self.found: list[Input] = []
        # Local names bound by imports: ``mod.name(...)`` counts only when ``mod`` is one of them
        # (so ``some_set.add(1)`` is not a call of a function named ``add``).
        self.modules: set[str] = set()

    # -- env ------------------------------------------------------------------------------------
    def note_import(self, st: ast.stmt, env: dict[str, ast.AST], known: set[str] | None) -> None:
        if isinstance(st, ast.Import):
            for a in st.names:
                local = a.asname or a.name.split(".")[0]
                self.modules.add(local)
                if known is not None and local in known:
                    continue
                env[local] = _import_expr(a.name if a.asname else a.name.split(".")[0], None)
        elif isinstance(st, ast.ImportFrom) and st.module and not st.level:
            for a in st.names:
                if a.name == "*":
                    continue
                local = a.asname or a.name
                self.modules.add(local)
                if known is not None and local in known:
                    continue  # the user's module has it too: keep the plain name
                env[local] = _import_expr(st.module, a.name)

    def note_assign(self, st: ast.stmt, env: dict[str, ast.AST]) -> None:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            tgt, val = st.targets[0], st.value
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            tgt, val = st.target, st.value
        else:
            return
        if isinstance(tgt, ast.Name) and self.owner is not None:
            if self._builds_owner(val):
                self.receivers.add(tgt.id)
            else:
                self.receivers.discard(tgt.id)
        if isinstance(tgt, ast.Name):
            if self._calls_self(val) or len(ast.unparse(val)) > 4000:
                env.pop(tgt.id, None)
                return
            sub = _Subst(env)
            env[tgt.id] = sub.visit(_clone(val))
        elif isinstance(tgt, ast.Tuple) and isinstance(val, ast.Tuple) and len(tgt.elts) == len(val.elts):
            for t, v in zip(tgt.elts, val.elts):
                if isinstance(t, ast.Name):
                    env[t.id] = _Subst(env).visit(_clone(v))

    # -- calls ----------------------------------------------------------------------------------
    def _builds_owner(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == self.owner

    def _is_target(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        if self.owner is not None:
            if not (isinstance(f, ast.Attribute) and f.attr == self.name):
                return False
            v = f.value
            return self._builds_owner(v) or (isinstance(v, ast.Name) and (v.id == self.owner or v.id in self.receivers))
        return (isinstance(f, ast.Name) and f.id == self.name) or (
            isinstance(f, ast.Attribute) and f.attr == self.name and isinstance(f.value, ast.Name)
            and f.value.id in self.modules)

    def _calls_self(self, node: ast.AST) -> bool:
        return any(self._is_target(n) for n in ast.walk(node))

    def harvest(self, node: ast.AST, env: dict[str, ast.AST]) -> None:
        for n in ast.walk(node):
            if self._is_target(n):
                inp = self.call_to_input(n, env)
                if inp is not None:
                    self.found.append(inp)

    def call_to_input(self, call: ast.Call, env: dict[str, ast.AST]) -> Input | None:
        args: list[Any] = []
        kwargs: list[tuple[str, Any]] = []
        try:
            for a in call.args:
                if isinstance(a, ast.Starred):
                    v = self.value(a.value, env)
                    if not isinstance(v, (list, tuple)):
                        return None
                    args.extend(v)
                else:
                    args.append(self.value(a, env))
            for kw in call.keywords:
                v = self.value(kw.value, env)
                if kw.arg is None:
                    if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
                        return None
                    kwargs.extend(v.items())
                else:
                    kwargs.append((kw.arg, v))
        except _Unsupported:
            return None
        return Input(tuple(args), tuple(kwargs), origin=self.origin)

    def value(self, node: ast.AST, env: dict[str, ast.AST]) -> Any:
        if self._calls_self(node):
            raise _Unsupported
        sub = _Subst(env)
        new = sub.visit(_clone(node)) if env else node
        try:
            return _literalish(new)
        except _Unsupported:
            pass
        if self.require_literal:
            raise _Unsupported
        if self._calls_self(new):
            raise _Unsupported
        if not all(self.allowed(n) for n in _free_names(new)):
            raise _Unsupported
        src = None if sub.changed else ast.get_source_segment(self.source, node)
        if src is None or "\n" in src:
            src = ast.unparse(new)
        return Expr(src)


def _allowed_names(spec: Spec, module_source: str | None) -> Callable[[str], bool]:
    known = module_names(module_source)
    classes = {c.name for c in spec.classes}
    if known is not None:
        ok = known | classes | _BUILTIN_NAMES
        return lambda n: n in ok
    ctx_words = set(re.findall(r"[A-Za-z_]\w*", spec.context or ""))
    ok = classes | _BUILTIN_NAMES | ctx_words
    return lambda n: n in ok


# ---------------------------------------------------------------------------------------------
# Doctests
# ---------------------------------------------------------------------------------------------

_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)\s?(.*)$")


def _examples(doc: str) -> list[str]:
    try:
        return [ex.source for ex in doctest.DocTestParser().get_examples(doc)]
    except ValueError:
        pass
    out: list[str] = []
    for line in doc.splitlines():
        m = _PROMPT.match(line)
        if not m:
            continue
        if m.group(1) == "..." and out:
            out[-1] += "\n" + m.group(2)
        elif m.group(1) == ">>>":
            out.append(m.group(2))
    return out


def _balanced_call(text: str, start: int) -> str | None:
    """The ``name(...)`` text starting at ``start`` (parentheses balanced, strings respected)."""
    i = text.find("(", start)
    if i < 0:
        return None
    depth = 0
    quote: str | None = None
    j = i
    while j < len(text) and j - i < 2000:
        ch = text[j]
        if quote:
            if ch == "\\":
                j += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : j + 1]
        j += 1
    return None


def doctest_seeds(spec: Spec, module_source: str | None = None) -> list[Input]:
    """Calls of ``spec.name`` in the docstring's ``>>>`` examples (with the names those examples
    assign or import), then literal calls written inline in its prose (``f(3) == 5``,
    ``f([1, 2]) ➞ 3``)."""
    doc = spec.docstring
    if not doc:
        return []
    allowed = _allowed_names(spec, module_source)
    known = module_names(module_source)
    out: list[Input] = []
    env: dict[str, ast.AST] = {}
    h = _Harvester(spec, "", "doctest", allowed)  # one for all examples: they share names
    for src in _examples(doc):
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        h.source = src
        for st in tree.body:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                h.note_import(st, env, known)
                continue
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            h.harvest(st, env)
            h.note_assign(st, env)
    out.extend(h.found)
    # Inline examples in prose: literal arguments only.
    prompt_free = "\n".join(ln for ln in doc.splitlines() if not _PROMPT.match(ln))
    for m in re.finditer(r"(?<![\w.])" + re.escape(spec.name) + r"\s*\(", prompt_free):
        text = _balanced_call(prompt_free, m.start())
        if not text:
            continue
        try:
            node = ast.parse(text.replace("\n", " "), mode="eval").body
        except (SyntaxError, ValueError):
            continue
        h = _Harvester(spec, text, "doctest", allowed, require_literal=True)
        h.harvest(node, {})
        out.extend(h.found)
    out.extend(_prose_assignments(spec, prompt_free))
    return out


def _literal_prefix(text: str) -> tuple[Any, bool]:
    """The longest prefix of ``text`` that is a literal (not ending in a bare comma)."""
    cuts = [m.start() for m in re.finditer(r"[,\s)]", text)] + [len(text)]
    for j in sorted(set(cuts), reverse=True):
        cand = text[:j].rstrip()
        if not cand or cand.endswith(","):
            continue
        try:
            node = ast.parse(cand, mode="eval").body
        except (SyntaxError, ValueError):
            continue
        if isinstance(node, ast.Tuple) and not cand.lstrip().startswith("("):
            continue  # ``1, 2`` without brackets: ambiguous
        try:
            return _literalish(node), True
        except _Unsupported:
            continue
    return None, False


def _prose_assignments(spec: Spec, text: str) -> list[Input]:
    """Examples written as assignments to the parameters in prose: ``For lst = [1,2,3] the output
    should be 14``, ``Input: arr = [-3, -4, 5], k = 3``, ``For s = "abcde", c = "ae"``.  A line
    that assigns every required parameter is one example."""
    params = [p for p in spec.params if p.kind not in ("var_positional", "var_keyword")]
    if not params:
        return []
    names = {p.name for p in params}
    required = {p.name for p in params if p.default is None}
    rx = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                    + r")\s*=(?!=)\s*")
    out: list[Input] = []
    for line in text.splitlines():
        found: dict[str, Any] = {}
        for m in rx.finditer(line):
            v, ok = _literal_prefix(line[m.end():].strip()[:2000])
            if ok and m.group(1) not in found:
                found[m.group(1)] = v
        if not found or not required <= set(found):
            continue
        args: list[Any] = []
        kwargs: list[tuple[str, Any]] = []
        for p in params:
            if p.name not in found:
                continue  # a defaulted parameter left out: later ones go by keyword
            if p.kind == "keyword_only" or len(args) < [q.name for q in params].index(p.name):
                kwargs.append((p.name, found[p.name]))
            else:
                args.append(found[p.name])
        out.append(Input(tuple(args), tuple(kwargs), origin="doctest"))
    return out


# ---------------------------------------------------------------------------------------------
# Workspace test files
# ---------------------------------------------------------------------------------------------


def _test_files(root: Path, deadline: float) -> list[Path]:
    found: list[Path] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
        )
        rel_parts = Path(dirpath).relative_to(root).parts
        in_tests = any(p in ("tests", "test") for p in rel_parts)
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            if not (in_tests or fn.startswith("test_") or fn.endswith("_test.py") or fn == "conftest.py"):
                continue
            p = Path(dirpath) / fn
            try:
                size = p.stat().st_size
            except OSError:
                continue
            if size > MAX_FILE_BYTES or total + size > MAX_TEST_BYTES:
                continue
            total += size
            found.append(p)
            if len(found) >= MAX_TEST_FILES:
                return found
        if time.monotonic() > deadline:
            break
    return found


def _parametrize_rows(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, ast.AST]]:
    """``@pytest.mark.parametrize`` rows of a test function (their cartesian product)."""
    rows: list[dict[str, ast.AST]] = [{}]
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, (ast.Attribute, ast.Name))):
            continue
        name = dec.func.attr if isinstance(dec.func, ast.Attribute) else dec.func.id
        if name != "parametrize" or len(dec.args) < 2:
            continue
        names_node, values_node = dec.args[0], dec.args[1]
        try:
            names = ast.literal_eval(names_node)
        except (ValueError, SyntaxError):
            continue
        if isinstance(names, str):
            names = [x.strip() for x in names.split(",") if x.strip()]
        if not isinstance(values_node, (ast.List, ast.Tuple)):
            continue
        new_rows: list[dict[str, ast.AST]] = []
        for elt in values_node.elts[:100]:
            if isinstance(elt, ast.Call) and getattr(elt.func, "attr", getattr(elt.func, "id", "")) == "param":
                vals = list(elt.args)
            elif len(names) == 1:
                vals = [elt]
            elif isinstance(elt, (ast.Tuple, ast.List)):
                vals = list(elt.elts)
            else:
                continue
            if len(vals) != len(names):
                continue
            row = dict(zip(names, vals))
            for r in rows:
                new_rows.append({**r, **row})
        rows = new_rows[:200] or rows
    return rows


def _file_seeds(spec: Spec, text: str, allowed: Callable[[str], bool], known: set[str] | None) -> list[Input]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    h = _Harvester(spec, text, "test", allowed)

    def block(body: list[ast.stmt], env: dict[str, ast.AST], top: bool) -> None:
        for st in body:
            if len(h.found) > MAX_TEST_SEEDS:
                return
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                h.note_import(st, env, known)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if st.name == spec.name and top:
                    continue
                for row in _parametrize_rows(st)[:100]:
                    block(st.body, {**env, **row}, False)
            elif isinstance(st, ast.ClassDef):
                block(st.body, dict(env), False)
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                h.harvest(st.iter, env)
                items = _iter_items(st.iter, env)
                if items is not None and isinstance(st.target, (ast.Name, ast.Tuple)):
                    for item in items[:50]:
                        sub = dict(env)
                        if _bind_target(st.target, item, sub):
                            block(st.body, sub, False)
                else:
                    block(st.body, dict(env), False)
                block(st.orelse, env, False)
            elif isinstance(st, (ast.If, ast.While)):
                h.harvest(st.test, env)
                block(st.body, env, False)
                block(st.orelse, env, False)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                for it in st.items:
                    h.harvest(it.context_expr, env)
                block(st.body, env, False)
            elif isinstance(st, ast.Try):
                block(st.body, env, False)
                for hd in st.handlers:
                    block(hd.body, env, False)
                block(st.orelse, env, False)
                block(st.finalbody, env, False)
            else:
                h.harvest(st, env)
                h.note_assign(st, env)

    block(tree.body, {}, True)
    return h.found


def _iter_items(node: ast.AST, env: dict[str, ast.AST]) -> list[ast.AST] | None:
    if isinstance(node, ast.Name) and node.id in env:
        node = env[node.id]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    return None


def _bind_target(target: ast.AST, item: ast.AST, env: dict[str, ast.AST]) -> bool:
    if isinstance(target, ast.Name):
        env[target.id] = item
        return True
    if isinstance(target, ast.Tuple) and isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == len(target.elts):
        return all(_bind_target(t, v, env) for t, v in zip(target.elts, item.elts))
    return False


def workspace_seeds(spec: Spec, workspace: str | Path | None, module_source: str | None = None,
                    deadline: float | None = None) -> list[Input]:
    """Calls ``name(...)`` / ``module.name(...)`` in the workspace's test files (``test_*.py``,
    ``*_test.py``, ``conftest.py``, anything under ``tests/``), including the rows of
    ``pytest.mark.parametrize`` and loops over literal lists.  Files that do not parse are skipped."""
    if workspace is None:
        return []
    root = Path(workspace)
    if not root.is_dir():
        return []
    deadline = deadline if deadline is not None else time.monotonic() + 1.0
    allowed = _allowed_names(spec, module_source)
    known = module_names(module_source)
    out: list[Input] = []
    for path in _test_files(root, deadline):
        if time.monotonic() > deadline or len(out) >= MAX_TEST_SEEDS:
            break
        try:
            try:
                text = read_source(path)  # a latin-1 test file's strings are seeds too
            except (SyntaxError, UnicodeDecodeError):  # a wrong coding line: what reads still counts
                text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        if spec.name not in text:
            continue
        out.extend(_file_seeds(spec, text, allowed, known))
    return out[:MAX_TEST_SEEDS]


# ---------------------------------------------------------------------------------------------
# Values from types
# ---------------------------------------------------------------------------------------------

_INT_BOUNDARY = [3, 0, 1, -1, 2, 5, 10, -7, 42, 100, 7, -100, 1000, 10**6]
_FLOAT_BOUNDARY = [1.5, 0.0, 1.0, -1.0, 0.5, -2.75, 3.14159, 100.0, 1e-09, 0.1, -0.5, 12345.678, 1e6]
_STR_BOUNDARY = [
    "hello", "", "a", "Hello World", " ", "abc def ghi", "aAbB", "12345", "racecar", "  padded  ",
    "ünïcödé ✓ 中文", "a,b;c.d!", "\t\n", "AbCdEfGhIjKlMnOpQrStUvWxYz", "aaaa",
]
_CHAR_BOUNDARY = ["a", "z", "A", " ", "1", "é", "b"]
_BYTES_BOUNDARY = [b"hello", b"", b"\x00", b"abc", b"\xff\xfe", b"Hello World"]
_COMPLEX_BOUNDARY = [complex(1, 2), complex(0, 0), complex(0, -1), complex(3, 0), complex(-1.5, 2.5)]
_WORDS = [
    "hello", "world", "the", "quick", "brown", "fox", "a", "Python", "is", "fun", "abc", "racecar",
    "level", "apple", "Banana", "x", "test", "data", "one", "two", "Zebra",
]
_LAMBDAS = {
    0: ["lambda: 0", "lambda: 1", "lambda: None"],
    1: ["lambda x: x", "lambda x: x * 2", "lambda x: not x", "lambda x: 0", "lambda x: str(x)"],
    2: ["lambda a, b: a + b", "lambda a, b: a", "lambda a, b: b", "lambda a, b: a < b", "lambda a, b: (a, b)"],
    -1: ["lambda *a, **k: a[0] if a else None", "lambda *a, **k: 0", "lambda *a, **k: len(a)"],
}


@lru_cache(maxsize=1024)
def field_types(t: TypeDesc) -> tuple[list[tuple[Param, TypeDesc]], list[tuple[Param, TypeDesc]]]:
    """Positional and keyword-only fields of a class descriptor, with their types (cached; do not
    modify the lists)."""
    info = t.info
    if info is None:
        return [], []
    classes = t.values  # every class of the module, so fields can refer to them
    pos: list[tuple[Param, TypeDesc]] = []
    kw: list[tuple[Param, TypeDesc]] = []
    for f in info.fields:
        if f.kind in ("var_positional", "var_keyword"):
            continue
        ft = parse_annotation(f.annotation, classes) if f.annotation else None
        if ft is None:
            ft = infer_from_default(f.default) or infer_from_name(f.name)
        (kw if f.kind == "keyword_only" else pos).append((f, ft))
    return pos, kw


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, set):
        return frozenset(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple((_hashable(k), _hashable(x)) for k, x in v.items())
    if isinstance(v, tuple):
        return tuple(_hashable(x) for x in v)
    return v


def _is_hashable(v: Any) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _set_from(items: list, frozen: bool) -> set | frozenset:
    out = []
    for x in items:
        x = _hashable(x)
        if _is_hashable(x):
            out.append(x)
    return frozenset(out) if frozen else set(out)


def _dict_from(pairs: list[tuple[Any, Any]]) -> dict:
    d: dict = {}
    for k, v in pairs:
        k = _hashable(k)
        if _is_hashable(k) and k not in d:
            d[k] = v
    return d


def _rot(xs: list, j: int) -> Any:
    return xs[j % len(xs)]


def boundary_values(t: TypeDesc, depth: int = 0) -> list[Any]:
    """Deterministic values of ``t``: a typical one first, then edge cases (empty, zero, negative,
    one item, duplicates, whitespace, unicode...)."""
    k = t.kind
    if k == "int":
        return list(_INT_BOUNDARY)
    if k == "float":
        return list(_FLOAT_BOUNDARY)
    if k == "bool":
        return [True, False]
    if k == "str":
        return list(_STR_BOUNDARY)
    if k == "char":
        return list(_CHAR_BOUNDARY)
    if k == "bytes":
        return list(_BYTES_BOUNDARY)
    if k == "none":
        return [None]
    if k == "complex":
        return list(_COMPLEX_BOUNDARY)
    if k == "literal":
        return list(t.values)
    if k == "expr":
        return list(t.values) or [None]
    if k == "enum":
        info = t.info
        if info and info.members:
            return [Construct(f"{t.name}.{m}", attr=True) for m in info.members]
        return [Construct(f"next(iter({t.name}))", attr=True)]
    if k == "callable":
        arity = t.values[0] if t.values else -1
        return [Expr(s) for s in _LAMBDAS.get(arity, _LAMBDAS[-1])]
    if k == "stdlib":
        return _stdlib_boundary(t)
    if k == "any":
        return [1, "a", [1, 2, 3], 0, None, "", 2.5, [], -3, "hello world", True]
    if k == "union":
        if depth >= MAX_DEPTH and any(a.kind == "none" for a in t.args):
            return [None]  # bounded recursion: ``next: Optional[Node]``
        # The most likely member keeps all its values; the others appear in proportion to their
        # weights (each at least once), spread evenly, the most likely member first.
        ws = list(t.weights) if t.weights else [1.0] * len(t.args)
        order = sorted(range(len(t.args)), key=lambda i: -ws[i])
        lists = [boundary_values(t.args[i], depth) for i in order]
        top = ws[order[0]] or 1.0
        quota = [len(lists[0])] + [
            max(1, min(len(xs), round(len(lists[0]) * ws[i] / top))) for i, xs in zip(order[1:], lists[1:])
        ]
        placed = [((k + 0.5) / q, m, lists[m][k]) for m, q in enumerate(quota) for k in range(q)]
        placed.sort(key=lambda x: (x[0], x[1]))
        return [v for _, _, v in placed]
    if depth >= MAX_DEPTH:
        return [_empty(t)]
    if k == "list" and t.args and t.args[0].kind == "list":
        return _matrix_boundary(t.args[0], depth)
    if k in ("list", "set", "frozenset") or (k == "tuple" and t.variadic):
        elem = t.args[0] if t.args else ANY
        mixed = elem.kind == "any"
        ev = boundary_values(INT if mixed else elem, depth + 1)  # homogeneous, mostly
        typical = [_rot(ev, j) for j in range(min(5, max(3, len(ev))))]
        seqs: list[list] = [
            typical,
            [],
            [ev[0]],
            [ev[0], ev[0]],
            ev[: min(len(ev), 8)],
            list(reversed(ev[: min(len(ev), 6)])),
            [_rot(ev, j * 3 + 1) for j in range(min(MAX_ITEMS, 12))],
        ]
        try:
            seqs.insert(5, sorted(ev[: min(len(ev), 8)]))
        except TypeError:
            pass
        if mixed:
            seqs.append(boundary_values(ANY, depth + 1)[:5])
            seqs.append(["a", "b", "a"])
        if k == "list":
            return seqs
        if k == "tuple":
            return [tuple(s) for s in seqs]
        return [_set_from(s, k == "frozenset") for s in seqs]
    if k == "tuple":
        if not t.args:
            return [()]
        lists = [boundary_values(a, depth + 1) for a in t.args]
        n = max(len(x) for x in lists)
        return [tuple(_rot(xs, j) for xs in lists) for j in range(min(n, 12))]
    if k == "dict":
        kt, vt = (t.args + (ANY, ANY))[:2]
        kv = boundary_values(kt, depth + 1)
        vv = boundary_values(vt, depth + 1)
        return [
            _dict_from([(_rot(kv, j), _rot(vv, j)) for j in range(3)]),
            {},
            _dict_from([(kv[0], vv[0])]),
            _dict_from([(_rot(kv, j), _rot(vv, j + 1)) for j in range(min(8, len(kv)))]),
            _dict_from([(_rot(kv, j), vv[0]) for j in range(4)]),
        ]
    if k == "class":
        pos, kw = field_types(t)
        if not pos and not kw:
            return [Construct(t.name)]
        pl = [boundary_values(ft, depth + 1) for _, ft in pos]
        kl = [boundary_values(ft, depth + 1) for _, ft in kw]
        n = max(len(x) for x in pl + kl)
        return [
            Construct(t.name, tuple(_rot(xs, j) for xs in pl),
                      tuple((f.name, _rot(xs, j)) for (f, _), xs in zip(kw, kl)))
            for j in range(min(n, 8))
        ]
    return [1, "a", [1, 2, 3]]


def _matrix_boundary(row: TypeDesc, depth: int) -> list[Any]:
    """Lists of lists: rectangular and square ones first (what matrix code expects), then
    the empty cases and one ragged list."""
    cell = row.args[0] if row.args else INT
    ev = boundary_values(INT if cell.kind == "any" else cell, depth + 2)
    flat = [_rot(ev, j) for j in range(64)]
    if cell.kind in ("int", "any"):
        flat = list(range(1, 65))  # distinct cells: 1..rows*cols
        flat[4], flat[7] = -3, 0

    def grid(r: int, c: int, shift: int = 0) -> list[list]:
        return [[flat[(i * c + j + shift) % len(flat)] for j in range(c)] for i in range(r)]

    out = [grid(3, 3), [], [[]], grid(1, 1), grid(2, 3), grid(4, 4, 5), grid(3, 2), grid(1, 5),
           [[ev[0], ev[0]], [ev[0], ev[0]]], grid(5, 5, 11), [flat[:3], flat[3:4], flat[4:6]]]
    return out


def _empty(t: TypeDesc) -> Any:
    k = t.kind
    if k == "list":
        return []
    if k == "tuple":
        return () if t.variadic or not t.args else tuple(_empty_scalar(a) for a in t.args)
    if k == "set":
        return set()
    if k == "frozenset":
        return frozenset()
    if k == "dict":
        return {}
    if k == "class":
        pos, kw = field_types(t)
        return Construct(t.name, tuple(_empty_scalar(ft) for _, ft in pos),
                         tuple((f.name, _empty_scalar(ft)) for f, ft in kw))
    return _empty_scalar(t)


def _empty_scalar(t: TypeDesc) -> Any:
    k = t.kind
    if k == "union":
        if any(a.kind == "none" for a in t.args):
            return None
        return _empty_scalar(t.args[0])
    if k in ("list", "tuple", "set", "frozenset", "dict"):
        return _empty(t)
    if k == "class":
        return None
    vals = boundary_values(t, MAX_DEPTH) if k not in ("class",) else [None]
    return vals[0] if vals else None


def _stdlib_boundary(t: TypeDesc) -> list[Any]:
    kind = t.values[0]
    c = t.name
    if kind == "date":
        return [Construct(c, a) for a in [(2024, 2, 28), (2024, 2, 29), (2000, 1, 1), (1999, 12, 31), (2023, 6, 15)]]
    if kind == "datetime":
        return [Construct(c, a) for a in [(2024, 2, 28, 12, 30, 0), (2000, 1, 1, 0, 0, 0), (1999, 12, 31, 23, 59, 59)]]
    if kind == "timedelta":
        kws = [(("days", 1),), (("seconds", 0),), (("days", -1), ("seconds", 30)), (("hours", 36),)]
        return [Construct(c, kwargs=a) for a in kws]
    if kind == "Decimal":
        return [Construct(c, (s,)) for s in ["3.14", "0", "-1.5", "100", "0.1"]]
    if kind == "Fraction":
        return [Construct(c, a) for a in [(1, 3), (0, 1), (-5, 2), (7, 1)]]
    return [1]


def _stdlib_random(t: TypeDesc, rng: random.Random) -> Any:
    kind = t.values[0]
    c = t.name
    if kind == "date":
        return Construct(c, (rng.randint(1970, 2050), rng.randint(1, 12), rng.randint(1, 28)))
    if kind == "datetime":
        return Construct(c, (rng.randint(1970, 2050), rng.randint(1, 12), rng.randint(1, 28),
                             rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)))
    if kind == "timedelta":
        return Construct(c, kwargs=(("days", rng.randint(-10, 400)), ("seconds", rng.randint(0, 86399))))
    if kind == "Decimal":
        return Construct(c, (f"{rng.uniform(-1000, 1000):.{rng.randint(0, 4)}f}",))
    if kind == "Fraction":
        return Construct(c, (rng.randint(-50, 50), rng.randint(1, 20)))
    return rng.randint(0, 10)


def random_int(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.55:
        return rng.randint(0, 20)
    if r < 0.85:
        return rng.randint(-20, 100)
    if r < 0.97:
        return rng.randint(-1000, 1000)
    return rng.choice([10**6, -(10**6), 2**31 - 1, 10**4])


def random_float(rng: random.Random) -> float:
    r = rng.random()
    if r < 0.5:
        return round(rng.uniform(-10, 10), rng.choice([1, 2]))
    if r < 0.8:
        return round(rng.uniform(-100, 100), 2)
    if r < 0.9:
        return float(rng.randint(-20, 20))
    if r < 0.97:
        return rng.uniform(-1, 1)
    return rng.choice([1e-9, -1e-9, 1e6, 0.1 + 0.2])


_ALPHABETS = [
    ("abcdefghijklmnopqrstuvwxyz", 0.5),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 0.15),
    ("abcdefghij ", 0.1),
    ("0123456789", 0.07),
    ("abcABC123 ,.!?-_()[]{}'\"", 0.1),
    ("aéüßñçø中文日本😀 ", 0.03),
    ("ab", 0.05),
]


def random_str(rng: random.Random, max_len: int = MAX_STR) -> str:
    if rng.random() < 0.2:
        n = rng.randint(1, 5)
        s = " ".join(rng.choice(_WORDS) for _ in range(n))
        return s[:max_len]
    alphabet = rng.choices([a for a, _ in _ALPHABETS], weights=[w for _, w in _ALPHABETS])[0]
    n = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, max_len])
    return "".join(rng.choice(alphabet) for _ in range(min(n, max_len)))


def _random_len(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.8:
        return rng.randint(1, 6)
    if r < 0.95:
        return rng.randint(7, 12)
    return rng.randint(13, MAX_ITEMS)


def random_value(t: TypeDesc, rng: random.Random, depth: int = 0) -> Any:
    """A fresh random value of ``t`` (bounded: ≤ MAX_ITEMS items, ≤ MAX_STR chars, depth ≤ MAX_DEPTH)."""
    k = t.kind
    if k == "int":
        return random_int(rng)
    if k == "float":
        return random_float(rng)
    if k == "bool":
        return rng.random() < 0.5
    if k == "str":
        return random_str(rng)
    if k == "char":
        return rng.choice("abcdefghijklmnopqrstuvwxyzAEZ 01!é")
    if k == "bytes":
        return random_str(rng, 20).encode("utf-8")[:MAX_STR]
    if k == "none":
        return None
    if k == "complex":
        return complex(rng.randint(-5, 5), rng.randint(-5, 5))
    if k == "literal":
        return rng.choice(t.values) if t.values else None
    if k in ("enum", "callable", "expr"):
        return rng.choice(boundary_values(t, depth))
    if k == "stdlib":
        return _stdlib_random(t, rng)
    if k == "any":
        return random_value(MIXED, rng, depth)
    if k == "union":
        ws = list(t.weights) if t.weights else [1.0] * len(t.args)
        if depth >= MAX_DEPTH and any(a.kind == "none" for a in t.args):
            return None
        m = rng.choices(t.args, weights=ws)[0]
        return random_value(m, rng, depth)
    if depth >= MAX_DEPTH:
        return _empty(t)
    if k in ("list", "set", "frozenset") or (k == "tuple" and t.variadic):
        elem = t.args[0] if t.args else ANY
        if elem.kind == "any":  # one concrete item type per container, mostly
            elem = rng.choices([INT, STR, MIXED], weights=[0.6, 0.25, 0.15])[0]
        n = _random_len(rng)
        if depth >= 1:
            n = min(n, 6)
        if k == "list" and elem.kind == "list" and elem.args and rng.random() < 0.7:
            # a rectangular matrix
            cols = rng.randint(1, 6)
            cell = elem.args[0] if elem.args[0].kind != "any" else INT
            return [[random_value(cell, rng, depth + 2) for _ in range(cols)] for _ in range(min(n, 6))]
        items = [random_value(elem, rng, depth + 1) for _ in range(n)]
        if k == "list":
            if rng.random() < 0.1:
                try:
                    items.sort()
                except TypeError:
                    pass
            return items
        if k == "tuple":
            return tuple(items)
        return _set_from(items, k == "frozenset")
    if k == "tuple":
        return tuple(random_value(a, rng, depth + 1) for a in t.args)
    if k == "dict":
        kt, vt = (t.args + (ANY, ANY))[:2]
        if kt.kind == "any":
            kt = rng.choice([STR, INT])
        n = _random_len(rng)
        if depth >= 1:
            n = min(n, 6)
        return _dict_from([(random_value(kt, rng, depth + 1), random_value(vt, rng, depth + 1)) for _ in range(n)])
    if k == "class":
        pos, kw = field_types(t)
        return Construct(t.name, tuple(random_value(ft, rng, depth + 1) for _, ft in pos),
                         tuple((f.name, random_value(ft, rng, depth + 1)) for f, ft in kw))
    return random_value(MIXED, rng, depth)


# ---------------------------------------------------------------------------------------------
# Seeds from defaults and types
# ---------------------------------------------------------------------------------------------


def _default_value(p: Param) -> Any:
    if p.default is None:
        raise _Unsupported
    try:
        return _literalish(ast.parse(p.default, mode="eval").body)
    except (SyntaxError, ValueError):
        raise _Unsupported from None
    except _Unsupported:
        return Expr(p.default)


def default_seed(params: list[Param], types: dict[str, TypeDesc], typical: dict[str, Any]) -> list[Input]:
    """One call that leaves every parameter with a default at its default (required parameters
    take their typical value)."""
    if not any(p.default is not None for p in params):
        return []
    args: list[Any] = []
    kwargs: list[tuple[str, Any]] = []
    for p in params:
        if p.default is not None or p.kind in ("var_positional", "var_keyword"):
            continue
        v = typical.get(p.name)
        if p.kind == "keyword_only":
            kwargs.append((p.name, v))
        else:
            args.append(v)
    return [Input(tuple(args), tuple(kwargs), origin="default")]


def type_seeds(params: list[Param], types: dict[str, TypeDesc], limit: int = 24) -> list[Input]:
    """Calls combining each parameter's boundary values: call j takes value j (mod its count) of
    every parameter, so the first call is all-typical and every edge case appears at least once.
    A ``*args`` parameter adds one call with two extra positional arguments of its item type."""
    if not params:
        return []
    lists: list[list[Any]] = []
    slots: list[Param] = []
    for p in params:
        if p.kind in ("var_positional", "var_keyword"):
            continue
        lists.append(boundary_values(types.get(p.name, MIXED)) or [None])
        slots.append(p)
    out: list[Input] = []
    n = min(limit, max(len(x) for x in lists)) if lists else 1
    for j in range(n):
        args: list[Any] = []
        kwargs: list[tuple[str, Any]] = []
        for p, vals in zip(slots, lists):
            v = vals[j % len(vals)]
            if p.kind == "keyword_only":
                kwargs.append((p.name, v))
            else:
                args.append(v)
        out.append(Input(tuple(args), tuple(kwargs), origin="annotation"))
    star = next((p for p in params if p.kind == "var_positional"), None)
    if star is not None:
        extra = boundary_values(types.get(star.name, INT))[:2]
        out.insert(1, Input(out[0].args + tuple(extra), out[0].kwargs, origin="annotation"))
    return out
