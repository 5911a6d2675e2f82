"""The fast paths of the canonical form for flat values (the common case: ints, strings, and
lists, tuples, sets and dicts of them) and for trees of them (a grid, pairs, a dict of lists),
and the snapshots that tell whether a call changed its arguments.

Each writes the canonical JSON directly, without building the structure ``canon.py`` builds.
Both must agree exactly with the general canonicalizer: a value takes the fast path in one
program and, say, a subclass takes the slow one in another, and their keys must still match
(tests/engine/test_fast_paths.py holds them to it).
"""

from __future__ import annotations

import json
import operator

from .canon import LIM as _LIM
from .canon import SIZE_CAP

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .canon import Dump, Top

_FLAT = frozenset((int, str, bool, float, type(None)))
_FLAT_LEN = 4096  # well under canon.MAX_NODES: long sequences take the general path and its caps
_enc_str = json.encoder.encode_basestring_ascii
_int_repr = int.__repr__
_NESTED = frozenset((list, tuple, dict))  # containers the tree paths take


def snapshotter(canon: Top, dump: Dump) -> tuple[Callable[[Any], Any], Callable[[Any, Any], bytes | None]]:
    """``take(argv)`` before a call and ``changed(before, argv)`` after it: the canonical JSON
    (bytes) of the arguments when the call changed them, else None.

    Flat arguments (scalars, and lists or tuples of scalars) are kept as shallow copies and
    compared by identity, element by element: a fraction of a microsecond, where their repr (or
    canonical structure) cost a few per call.  Scalars cannot change in place, so equal identities
    mean an unchanged argument; different ones (``xs.sort()``, or ``xs[0] = xs[0] + 0`` for a big
    int) are settled element by element as their canonical structures would be (``flat_same``),
    so an equal value put back is no change, and only a changed call canonicalizes its arguments.
    Nested lists, tuples and dicts whose leaves are flat scalars (a grid, pairs, a record) are
    copied as trees and compared leaf by leaf by identity (``tree_copy``, ``tree_same``), a few
    microseconds where their canonical structures cost 10-30; where they differ, the structures
    decide, as for anything else."""
    flat = _FLAT
    same = operator.is_

    def take(argv: Any) -> Any:
        copies = None
        trees = False
        for k, a in enumerate(argv):
            ta = type(a)
            if ta in flat:
                continue
            if (ta is list or ta is tuple) and len(a) <= _FLAT_LEN and set(map(type, a)) <= flat:
                if ta is list:
                    if copies is None:
                        copies = list(argv)
                    copies[k] = a[:]
                continue
            copy = tree_copy(a)
            if copy is None:
                return canon(argv, False)
            if copies is None:
                copies = list(argv)
            copies[k] = copy
            trees = True
        if copies is None:
            return argv
        return _Trees(copies) if trees else tuple(copies)

    def changed(before: Any, argv: Any) -> bytes | None:
        tb = type(before)
        if tb is _Trees:
            for a, b in zip(argv, before):
                if a is not b and not tree_same(a, b):
                    after = canon(argv, False)
                    return dump(after, argv).encode("ascii") if after != canon(tuple(before), False) else None
            return None
        if tb is tuple:
            for a, b in zip(argv, before):
                if a is not b and (len(a) != len(b) or not all(map(same, a, b))):
                    kept = flat_same(a, b)
                    if kept is None:  # something not flat came in: compare the structures
                        after = canon(argv, False)
                        return dump(after, argv).encode("ascii") if after != canon(before, False) else None
                    if not kept:
                        return flat_args(argv) or dump(canon(argv, False), argv).encode("ascii")
            return None
        after = canon(argv, False)
        return dump(after, argv).encode("ascii") if after != before else None

    return take, changed


class _Trees(tuple):  # type: ignore[type-arg]
    """A snapshot holding copies of nested arguments (``tree_copy``): compared by ``tree_same``."""

    __slots__ = ()


class _NotTree(Exception):
    """A value that is no tree of flat scalars (or too deep, or too large) for the fast paths."""


_TREE_NODES = 4096  # leaves and items one value may have to take the tree paths
_TREE_DEPTH = 16  # a cycle reaches it: the general path marks cycles


def tree_copy(v: Any) -> Any:
    """A copy of ``v``'s containers (lists, tuples, dicts) down to its leaves, which are kept as
    they are (flat scalars cannot change in place, nor tuples of them), or None when ``v`` holds
    anything else, nests deeper than ``_TREE_DEPTH`` or has more than ``_TREE_NODES`` items."""
    try:
        return _copy(v, [_TREE_NODES], 0)
    except _NotTree:
        return None


def _copy(v: Any, budget: list[int], depth: int) -> Any:
    t = type(v)
    if t in _FLAT:
        return v
    if depth >= _TREE_DEPTH or not (t is list or t is tuple or t is dict):
        raise _NotTree
    budget[0] -= len(v)
    if budget[0] < 0:
        raise _NotTree
    if t is list:
        return [x if type(x) in _FLAT else _copy(x, budget, depth + 1) for x in v]
    if t is tuple:  # kept itself where nothing inside can change (a pair of ints)
        if set(map(type, v)) <= _FLAT:
            return v
        items = [x if type(x) in _FLAT else _copy(x, budget, depth + 1) for x in v]
        return v if all(map(operator.is_, items, v)) else tuple(items)
    out = {}  # a dict
    for k, x in v.items():
        if type(k) not in _FLAT:
            raise _NotTree
        out[k] = x if type(x) in _FLAT else _copy(x, budget, depth + 1)
    return out


def tree_same(a: Any, b: Any) -> bool:
    """Whether ``a`` still has every container and leaf of ``b``, its ``tree_copy``: the same
    types and lengths, the same leaf objects, dict items in the same order.  False does not mean
    changed (an equal value put back, a dict's order), only that the structures must decide."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b) or len(a) != len(b):
        return False
    if t is dict:
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            if ka is not kb or (va is not vb and (type(va) in _FLAT or not tree_same(va, vb))):
                return False
        return True
    if t is list or t is tuple:
        for x, y in zip(a, b):  # (a loop: all() over a generator costs more per call)
            if x is not y and (type(x) in _FLAT or not tree_same(x, y)):
                break
        else:
            return True
    return False


def flat_same(a: Any, b: Any) -> bool | None:
    """Whether the list ``a`` still has the canonical structure of ``b``, its flat copy taken
    before the call: True, False, or None when ``a`` now holds something that is not flat (the
    caller compares canonical structures then).  Element by element as the structures compare:
    same type and equal value, where every NaN is "nan" (equal) and 0.0 equals -0.0."""
    if len(a) != len(b):
        return False if set(map(type, a)) <= _FLAT else None
    for x, y in zip(a, b):
        if x is y:
            continue
        tx = type(x)
        if tx not in _FLAT:
            return None
        if tx is not type(y):
            return False
        if x == y or (tx is float and x != x and y != y):
            continue
        return False
    return True


def scalars_json(r: Any) -> str | None:
    """The canonical JSON of each element of ``r``, joined by commas, when every element is a
    flat scalar (an int of less than 63 bits, str, float, bool or None); else None."""
    parts: list[str] = []
    add = parts.append
    for e in r:
        te = type(e)
        if te is int:
            if not -_LIM < e < _LIM:
                return None
            add('["I","%d"]' % e)
        elif te is str:
            add('["S",' + _enc_str(e) + "]")
        elif te is float:
            if e - e == 0:
                add('["F",' + float.__repr__(e) + "]")
            else:
                add('["F","nan"]' if e != e else '["F","inf"]' if e > 0 else '["F","-inf"]')
        elif te is bool:
            add('["B",true]' if e else '["B",false]')
        elif e is None:
            add('["N"]')
        else:
            return None
    return ",".join(parts)


def flat_args(argv: Any) -> bytes | None:
    """Canonical JSON (bytes) of the argument tuple ``argv`` when each argument is a flat scalar
    or a flat list or tuple (the usual in-place sort), else None."""
    parts: list[str] = []
    for a in argv:
        ta = type(a)
        if ta is list or ta is tuple:
            part = flat_seq(a, ta)
            if part is None:
                return None
            parts.append(part.decode("ascii"))
        else:
            scalar = scalars_json((a,))
            if scalar is None:
                return None
            parts.append(scalar)
    text = '["T",[' + ",".join(parts) + "]]"
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def flat_seq(r: Any, tr: type) -> bytes | None:
    """Canonical JSON (bytes) of a list/tuple of flat scalars, or of a tree of them
    (``tree_json``), or None for anything else."""
    n = len(r)
    if n > _FLAT_LEN:
        return None
    if n == 0:
        return b'["L",[]]' if tr is list else b'["T",[]]'
    kinds = set(map(type, r))
    if not kinds.isdisjoint(_NESTED):
        return tree_json(r)
    kind = kinds.pop() if len(kinds) == 1 else None
    # one join over C-level conversions: formatting each element costs twice as much, and this
    # runs for every call that returns a list (docs/results.md#call-costs)
    if kind is int:
        if min(r) <= -_LIM or max(r) >= _LIM:
            return None
        body = '["I","' + '"],["I","'.join(map(_int_repr, r)) + '"]'
    elif kind is str:
        body = '["S",' + '],["S",'.join(map(_enc_str, r)) + "]"
    else:
        mixed = scalars_json(r)  # mixed (an int and a str), floats, bools, Nones
        if mixed is None:
            return None
        body = mixed
    text = ('["L",[' if tr is list else '["T",[') + body + "]]"
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def tree_json(r: Any) -> bytes | None:
    """Canonical JSON (bytes) of a list, tuple or dict nested at most ``_TREE_DEPTH`` deep, of
    at most ``_TREE_NODES`` nodes, whose leaves and dict keys are flat scalars (a grid, pairs, a
    dict of lists), or None for anything else (then the general path decides)."""
    try:
        text = _tree_text(r, [_TREE_NODES], 0)
    except _NotTree:
        return None
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def _tree_text(v: Any, budget: list[int], depth: int) -> str:
    t = type(v)
    if depth >= _TREE_DEPTH or not (t is list or t is tuple or t is dict):
        raise _NotTree
    budget[0] -= len(v)
    if budget[0] < 0:
        raise _NotTree
    if t is list or t is tuple:
        parts: list[str] = []
        add = parts.append
        for e in v:
            te = type(e)
            if te is int and -_LIM < e < _LIM:
                add('["I","' + _int_repr(e) + '"]')
            elif te is str:
                add('["S",' + _enc_str(e) + "]")
            elif te is list or te is tuple or te is dict:
                add(_tree_text(e, budget, depth + 1))
            else:
                one = scalar_json(e)
                if one is None:
                    raise _NotTree
                add(one)
        return ('["L",[' if t is list else '["T",[') + ",".join(parts) + "]]"
    items: list[tuple[str, str]] = []  # a dict
    for k, x in v.items():
        ke = scalar_json(k)
        tx = type(x)
        ve = _tree_text(x, budget, depth + 1) if tx is list or tx is tuple or tx is dict else scalar_json(x)
        if ke is None or ve is None:
            raise _NotTree
        items.append((ke, "[" + ke + "," + ve + "]"))
    if len(items) > 1:
        items.sort(key=_first)  # by key alone, and stable, as the general path sorts
    return '["D",[' + ",".join([x for _, x in items]) + "]]"


def scalar_json(e: Any) -> str | None:
    """The canonical JSON of one flat scalar (see ``scalars_json``), or None."""
    te = type(e)
    if te is str:
        return '["S",' + _enc_str(e) + "]"
    if te is int:
        return '["I","%d"]' % e if -_LIM < e < _LIM else None
    if te is float:
        if e - e == 0:
            return '["F",' + float.__repr__(e) + "]"
        return '["F","nan"]' if e != e else '["F","inf"]' if e > 0 else '["F","-inf"]'
    if te is bool:
        return '["B",true]' if e else '["B",false]'
    if e is None:
        return '["N"]'
    return None


def flat_map(r: Any) -> bytes | None:
    """Canonical JSON (bytes) of a dict whose keys and values are flat scalars (a word count), or
    whose values are trees of them (``tree_json``), or None for anything else.  The general path
    costs more than most calls that return one (docs/results.md#call-costs)."""
    n = len(r)
    if n > _FLAT_LEN:
        return None
    items: list[tuple[str, str]] = []
    add = items.append
    for k, v in r.items():
        ke = scalar_json(k)
        if ke is None:
            return None
        ve = scalar_json(v)
        if ve is None:
            return tree_json(r) if type(v) in _NESTED else None
        add((ke, "[" + ke + "," + ve + "]"))
    if n > 1:
        # by key alone, and stable: two NaN keys keep their order, as in the general path
        items.sort(key=_first)
    text = '["D",[' + ",".join([x for _, x in items]) + "]]"
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def flat_set(r: Any) -> bytes | None:
    """Canonical JSON (bytes) of a set or frozenset of flat scalars, or None for anything else."""
    if len(r) > _FLAT_LEN:
        return None
    parts = list(map(scalar_json, r))
    if None in parts:
        return None
    parts.sort()
    text = '["E",[' + ",".join(parts) + "]]"  # type: ignore[arg-type]  # no None left (above)
    if len(text) > SIZE_CAP:
        return None
    return text.encode("ascii")


_first = operator.itemgetter(0)
