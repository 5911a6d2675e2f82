"""The value model of generated inputs, and its rendering as Python source.

Inputs are built in coherence's own process from the signature alone, so they cannot hold objects
of the user's classes.  They are plain Python values plus two nodes:

- ``Construct("Point", (1, 2))`` renders as ``Point(1, 2)``; the worker evaluates it in the user's
  module namespace, so user classes, dataclasses and enums (``Construct("Color.RED")`` with
  ``attr=True``) resolve there.
- ``Expr("date(2024, 2, 28)")`` is source taken verbatim from a doctest or a test file.

The worker evaluates ``Input.source()`` afresh for every call, which doubles as the deep copy.
"""

from __future__ import annotations

import base64
import marshal
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Expr:
    """Source text used verbatim (cannot be mutated, only evaluated)."""

    source: str


@dataclass(frozen=True)
class Construct:
    """A call of a name from the user's module: ``callee(*args, **kwargs)``, or ``callee`` alone
    when ``attr`` is true (enum members: ``Color.RED``)."""

    callee: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    attr: bool = False


# exact types whose repr is their source (floats are not: nan, inf)
_REPR_IS_SOURCE = frozenset((int, str, bool, type(None)))
_STR = {str}


def to_source(value: Any) -> str:
    """Python source that evaluates to ``value`` (in the user's module namespace)."""
    # exact types first: most values are ints, strings and lists of them, and this runs for every
    # candidate input (de-duplication); subclasses and the rest take the general path below
    t = type(value)
    if t is int or t is str:
        return repr(value)
    if t is float and value - value == 0:  # finite: nan and inf take the general path
        return repr(value)
    if t is list:
        # repr spells a list of these exactly as the join below does, in C
        if set(map(type, value)) <= _REPR_IS_SOURCE:
            return repr(value)
        return "[" + ", ".join(map(to_source, value)) + "]"
    if t is tuple and len(value) != 1:
        if set(map(type, value)) <= _REPR_IS_SOURCE:
            return repr(value)
        return "(" + ", ".join(map(to_source, value)) + ")"
    if isinstance(value, Expr):
        return value.source
    if isinstance(value, Construct):
        if value.attr:
            return value.callee
        parts = [to_source(a) for a in value.args]
        parts += [f"{k}={to_source(v)}" for k, v in value.kwargs]
        return f"{value.callee}({', '.join(parts)})"
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, complex):
        return f"complex({to_source(value.real)}, {to_source(value.imag)})"
    if isinstance(value, (int, str, bytes)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(to_source(v) for v in value) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return "(" + to_source(value[0]) + ",)"
        return "(" + ", ".join(to_source(v) for v in value) + ")"
    if isinstance(value, (set, frozenset)):
        items = sorted(to_source(v) for v in value)
        if not items:
            return "set()" if isinstance(value, set) else "frozenset()"
        inner = "{" + ", ".join(items) + "}"
        return inner if isinstance(value, set) else f"frozenset({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_source(k)}: {to_source(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as source")


def value_size(value: Any) -> int:
    """A rough size used to prefer small counterexamples."""
    t = type(value)
    if t is int:
        return 1 + len(str(abs(value)))
    if t is str:
        return 1 + len(value)
    if t is list or t is tuple:
        if value and set(map(type, value)) == _STR:
            return 1 + len(value) + sum(map(len, value))
        return 1 + sum(map(value_size, value))
    if isinstance(value, Expr):
        return len(value.source)
    if isinstance(value, Construct):
        return 1 + sum(value_size(a) for a in value.args) + sum(value_size(v) for _, v in value.kwargs)
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return 2
        return 1 + len(str(abs(int(value))))
    if isinstance(value, complex):
        return value_size(value.real) + value_size(value.imag)
    if isinstance(value, (str, bytes)):
        return 1 + len(value)
    if isinstance(value, dict):
        return 1 + sum(value_size(k) + value_size(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return 1 + sum(value_size(v) for v in value)
    return 10


@dataclass(frozen=True)
class Input:
    """One call's arguments."""

    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    origin: str = "mutation"  # doctest | test | default | annotation | mutation | shrink

    @classmethod
    def made(cls, args: tuple[Any, ...], kwargs: tuple[Any, ...], origin: str) -> Input:
        """``Input(args, kwargs, origin)`` without the frozen dataclass's ``__init__`` (a
        quarter of its cost): generation makes tens of thousands of candidates per function."""
        obj = _new(cls)
        d = obj.__dict__
        d["args"] = args
        d["kwargs"] = kwargs
        d["origin"] = origin
        return obj

    def values(self) -> tuple[Any, ...]:
        """The call's argument values, positional then keyword."""
        return (*self.args, *(v for _, v in self.kwargs)) if self.kwargs else tuple(self.args)

    def source(self) -> str:
        """Source of ``(args_tuple, kwargs_dict)``; what the worker evaluates per call."""
        # cached by hand: de-duplication, the executor and the counterexample all ask for it, and
        # functools.cached_property takes a lock per access before Python 3.12
        src = self.__dict__.get("_src")
        if src is None:
            kw = "{" + ", ".join(f"{k!r}: {to_source(v)}" for k, v in self.kwargs) + "}" if self.kwargs else "{}"
            src = self.__dict__["_src"] = (
                f"({to_source(self.args if type(self.args) is tuple else tuple(self.args))}, {kw})"
            )
        return src

    def call(self, name: str) -> str:
        """A pasteable call expression: ``name(1, [2], key='x')``."""
        parts = [to_source(a) for a in self.args]
        parts += [f"{k}={to_source(v)}" for k, v in self.kwargs]
        return f"{name}({', '.join(parts)})"

    def size(self) -> int:
        n = sum(map(value_size, self.args))
        return n + sum(value_size(v) for _, v in self.kwargs) if self.kwargs else n

    def key(self) -> str:
        """Identity for de-duplication."""
        return self.source()

    @cached_property
    def packed(self) -> str | None:
        """``(args_tuple, kwargs_dict)`` as base64 marshal data, which the worker loads per call far
        faster than it compiles and evaluates the source; None when marshal could not give the same
        value that evaluating ``source()`` gives (see ``_marshal_safe``)."""
        args = tuple(self.args)
        kwargs = dict(self.kwargs)
        if not (_marshal_safe(args, 0) and _marshal_safe(kwargs, 0)):
            return None
        try:
            # version 2: no back-references, so a value that appears twice loads as two objects,
            # as it does when the source is evaluated
            return base64.b64encode(marshal.dumps((args, kwargs), 2)).decode("ascii")
        except (ValueError, RecursionError):
            return None


_new = object.__new__

_MARSHAL_ATOMS = frozenset((type(None), bool, int, float, complex, str, bytes))


def _marshal_safe(value: Any, depth: int) -> bool:
    """Whether marshal round-trips ``value`` to what its source evaluates to.  Exact builtin types
    only (no Expr or Construct: they evaluate in the user's module), and no sets: a set rebuilt
    from marshal data may iterate in another order than the one evaluated from sorted source."""
    t = type(value)
    if t in _MARSHAL_ATOMS:
        return True
    if depth > 100:
        return False
    if t is list or t is tuple:
        return set(map(type, value)) <= _MARSHAL_ATOMS or all(_marshal_safe(v, depth + 1) for v in value)
    if t is dict:
        return all(_marshal_safe(k, depth + 1) and _marshal_safe(v, depth + 1) for k, v in value.items())
    return False
