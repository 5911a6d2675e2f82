"""Turning argument expressions (from doctests and test files) into values, or into verbatim
:class:`Expr` nodes when every free name in them resolves in the user's module."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable
from typing import Any, TypeGuard

from coherence.engine import syntax
from coherence.engine.inputs.seeds.module_names import module_names
from coherence.engine.inputs.values import Expr, Input
from coherence.engine.spec import Spec

_BUILTIN_NAMES = set(dir(builtins))


class Unsupported(Exception):
    pass


def literalish(node: ast.AST) -> Any:
    """``ast.literal_eval`` plus ``set()``, ``frozenset({..})``, ``tuple([..])``, ``float('nan')``,
    ``-x``, simple arithmetic on numbers.  Raises ``Unsupported`` otherwise."""
    try:
        return syntax.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = node.func.id
        if fn in ("set", "frozenset", "tuple", "list", "dict") and len(node.args) <= 1:
            inner = literalish(node.args[0]) if node.args else ()
            if fn == "dict" and not node.args:
                return {}
            try:
                return {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "dict": dict}[fn](inner)
            except (TypeError, ValueError) as e:
                raise Unsupported from e
        if fn in ("float", "int", "complex", "str", "bytes", "bool") and len(node.args) <= 2:
            args = [literalish(a) for a in node.args]
            if (
                fn == "float"
                and args
                and isinstance(args[0], str)
                and args[0].strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity")
            ):
                return float(args[0])
            if all(isinstance(a, (int, float, str, bool)) for a in args) and fn != "bytes":
                try:
                    return {"float": float, "int": int, "complex": complex, "str": str, "bool": bool}[fn](*args)
                except (TypeError, ValueError) as e:
                    raise Unsupported from e
    if isinstance(node, ast.List):
        return [literalish(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(literalish(e) for e in node.elts)
    if isinstance(node, ast.Set):
        try:
            return {literalish(e) for e in node.elts}
        except TypeError as e:
            raise Unsupported from e
    if isinstance(node, ast.Dict) and None not in node.keys:
        try:
            return {literalish(k): literalish(v) for k, v in zip(node.keys, node.values) if k is not None}
        except TypeError as e:
            raise Unsupported from e
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = literalish(node.operand)
        if isinstance(v, (int, float, complex)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.Div)):
        a, b = literalish(node.left), literalish(node.right)
        num = (int, float)
        if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
            if isinstance(node.op, ast.Pow) and (abs(b) > 64 or abs(a) > 10**6):
                raise Unsupported
            try:
                ops: dict[type[ast.operator], Callable[[], Any]] = {
                    ast.Add: lambda: a + b,
                    ast.Sub: lambda: a - b,
                    ast.Mult: lambda: a * b,
                    ast.Pow: lambda: a**b,
                    ast.Div: lambda: a / b,
                }
                return ops[type(node.op)]()
            except (ZeroDivisionError, OverflowError) as e:
                raise Unsupported from e
        if (
            isinstance(node.op, ast.Mult)
            and isinstance(a, (str, list, tuple, bytes))
            and isinstance(b, int)
            and not isinstance(b, bool)
            and b >= 0
            and len(a) * b <= 10_000
        ):
            return a * b
        if isinstance(node.op, ast.Add) and type(a) is type(b) and isinstance(a, (str, list, tuple, bytes)):
            return a + b
    raise Unsupported


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
    return syntax.parse(ast.unparse(node), mode="eval").body


def _import_expr(module: str, attr: str | None) -> ast.AST:
    src = f"__import__({module!r})" if attr is None else f"__import__({module!r}, fromlist=[{attr!r}]).{attr}"
    return syntax.parse(src, mode="eval").body


class Harvester:
    """Finds calls of the function in statements and turns them into Inputs."""

    def __init__(
        self, spec: Spec, source: str, origin: str, allowed: Callable[[str], bool], require_literal: bool = False
    ):
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

    def _is_target(self, node: ast.AST) -> TypeGuard[ast.Call]:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        if self.owner is not None:
            if not (isinstance(f, ast.Attribute) and f.attr == self.name):
                return False
            v = f.value
            return self._builds_owner(v) or (isinstance(v, ast.Name) and (v.id == self.owner or v.id in self.receivers))
        return (isinstance(f, ast.Name) and f.id == self.name) or (
            isinstance(f, ast.Attribute)
            and f.attr == self.name
            and isinstance(f.value, ast.Name)
            and f.value.id in self.modules
        )

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
        except Unsupported:
            return None
        return Input(tuple(args), tuple(kwargs), origin=self.origin)

    def value(self, node: ast.AST, env: dict[str, ast.AST]) -> Any:
        if self._calls_self(node):
            raise Unsupported
        sub = _Subst(env)
        new = sub.visit(_clone(node)) if env else node
        try:
            return literalish(new)
        except Unsupported:
            pass
        if self.require_literal:
            raise Unsupported
        if self._calls_self(new):
            raise Unsupported
        if not all(self.allowed(n) for n in _free_names(new)):
            raise Unsupported
        src = None if sub.changed else ast.get_source_segment(self.source, node)
        if src is None or "\n" in src:
            src = ast.unparse(new)
        return Expr(src)


def allowed_names(spec: Spec, module_source: str | None) -> Callable[[str], bool]:
    known = module_names(module_source)
    classes = {c.name for c in spec.classes}
    if known is not None:
        ok = known | classes | _BUILTIN_NAMES
        return lambda n: n in ok
    ctx_words = set(re.findall(r"[A-Za-z_]\w*", spec.context or ""))
    ok = classes | _BUILTIN_NAMES | ctx_words
    return lambda n: n in ok
