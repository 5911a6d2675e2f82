"""Outcomes of single calls, and when two outcomes are equal.

An outcome is ``ok`` with the canonical return value and the canonical in-place changes to the
arguments, or ``raise`` with an exception type name.  Timeouts and process deaths are ``raise``
outcomes with their own names: ``Timeout``, ``MemoryError``, ``Crash(SIGSEGV)``.

Canonical values are produced by the worker (stdlib only, under the user's interpreter) as tagged
JSON lists, so they cross process and Python-version boundaries: ``["I", "123"]``, ``["S",
"text"]``, ``["L", [...]]``, ... ``execution/coherence_worker/canon.py`` is the one definition of
that form (its docstring lists every tag); ``canonical`` below computes it in this process with
the same code.

Equality (``outcomes_equal``): ints and floats compare by value, floats with
``math.isclose(rel_tol=1e-6, abs_tol=1e-9)`` and NaN == NaN; sets and dicts ignore order (the
canonical order makes that exact, except for floats within tolerance of each other inside sets);
everything else compares exactly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from coherence.engine.canonical_text import SCALAR_TAGS, render_canonical, truncate

__all__ = [
    "Outcome",
    "canonical",
    "gives",
    "group_outcomes",
    "label_matrix",
    "outcomes_equal",
]

# Notes on the equality as implemented (the docstring above defines it):
# - ``["Z", ...]`` (too large/deep) and ``["X", ...]`` (unrepresentable) compare by digest, so
#   floats inside a value too large to show lose their tolerance;
# - lists and tuples are different kinds (``[1, 2]`` != ``(1, 2)``), as in Python;
# - numbers compare across int and float only at the same position; ``True`` is never ``1``;
# - the argument changes (``mutated``) follow the same rules; an outcome that changed its
#   arguments never equals one that did not;
# - two outcomes with the same ``key`` are equal; tolerance is only consulted when a float
#   (``"F"``/``"C"``) occurs in one of the keys.
REL_TOL = 1e-6
ABS_TOL = 1e-9
_NUMERIC = ("I", "F")
_FLOATY = ('["F",', '["C",')


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


_UNDECODED = object()
MESSAGE_CAP = 160  # the worker's own cap (coherence_worker.canon.MESSAGE_CAP)


def shown_message(said: Any) -> str | None:
    """A record's exception message as the user may read it: a string, cut to ``MESSAGE_CAP``,
    printable in any encoding (a lone surrogate from the child becomes "?"); anything else None."""
    if not isinstance(said, str) or not said:
        return None
    return said[:MESSAGE_CAP].encode("utf-8", "replace").decode("utf-8")


class Outcome:
    """One call's outcome.  ``==`` and ``hash`` are exact (by ``key``); use ``outcomes_equal``
    for the tolerant equality of the design.  Immutable.

    An outcome made from a checked key (``from_valid_key``, what the executor makes of the
    worker's records) decodes ``value`` and ``mutated`` only when they are first read: most
    outcomes are only ever compared by key, and decoding thousands of long lists up front cost
    seconds and made the garbage collector stall the caller (see ``execution/records.py``)."""

    __slots__ = ("kind", "error", "message", "_value", "_mutated", "_key")

    kind: str  # "ok" | "raise"
    error: str | None  # exception type name (raise)
    # what a builtin exception said (raise): shown to the user, never part of ``key`` or ``==``
    message: str | None
    _value: Any  # _UNDECODED until first read, for an outcome made from a key
    _mutated: Any
    _key: str | None

    def __init__(
        self, kind: str, value: Any = None, mutated: Any = None, error: str | None = None, message: str | None = None
    ):
        init = object.__setattr__
        init(self, "kind", kind)
        init(self, "error", error)
        init(self, "message", message)
        init(self, "_value", value)  # canonical form of the return value (ok)
        init(self, "_mutated", mutated)  # canonical form of the arguments after the call, if it changed them
        init(self, "_key", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Outcome is immutable: cannot set {name!r}")

    def _decode(self) -> None:
        rec = json.loads(self._key)  # type: ignore[arg-type]  # set whenever a value is undecoded
        # ``_mutated`` first: whoever sees ``_value`` decoded (``decoded``, in another thread)
        # then sees ``_mutated`` decoded too
        object.__setattr__(self, "_mutated", rec[2])
        object.__setattr__(self, "_value", rec[1])

    @property
    def value(self) -> Any:
        """The canonical form of the return value (ok), else None."""
        if self._value is _UNDECODED:
            self._decode()
        return self._value

    @property
    def mutated(self) -> Any:
        """The canonical form of the arguments after the call, only if it changed them."""
        if self._mutated is _UNDECODED:
            # A key ending in two nulls changed nothing (no JSON value but null ends in "null"):
            # asking must not decode a long return value (the verdict asks of every outcome).
            if self._key.endswith(",null,null]"):  # type: ignore[union-attr]  # set whenever undecoded
                return None
            self._decode()
        return self._mutated

    def decoded(self) -> tuple[Any, Any]:
        """``(value, mutated)`` without keeping a lazy outcome's decoded form: for comparing
        many outcomes once (``group_outcomes``) without holding all their lists afterwards."""
        if self._value is _UNDECODED:
            rec = json.loads(self._key)  # type: ignore[arg-type]  # set whenever a value is undecoded
            return rec[1], rec[2]
        return self._value, self._mutated

    @property
    def key(self) -> str:
        """Exact identity: the JSON text of ``[kind, value, mutated, error]`` (cached)."""
        k = self._key
        if k is None:
            k = _dumps([self.kind, self._value, self._mutated, self.error])
            object.__setattr__(self, "_key", k)
        return k

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Outcome({self.render(80)!r})"

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def raised(error: str, message: str | None = None) -> Outcome:
        return Outcome("raise", None, None, error, message)

    @staticmethod
    def returned(value: Any, mutated: Any = None) -> Outcome:
        """From canonical forms (see ``canonical`` to get one from a Python value)."""
        return Outcome("ok", value, mutated, None)

    @staticmethod
    def from_record(rec: Any) -> Outcome:
        """From the worker's JSON record: a dict (``kind``/``value``/``mutated``/``error`` or
        ``k``/``v``/``m``/``e``) or the key list ``[kind, value, mutated, error]``."""
        said = None
        if isinstance(rec, (list, tuple)):
            kind, value, mutated, error, said = (list(rec) + [None] * 5)[:5]
        else:
            kind = rec.get("kind", rec.get("k"))
            value = rec.get("value", rec.get("v"))
            mutated = rec.get("mutated", rec.get("m"))
            error = rec.get("error", rec.get("e"))
        if kind not in ("ok", "raise"):
            raise ValueError(f"not an outcome record: {rec!r}")
        if kind == "raise":
            return Outcome("raise", None, None, str(error or "Exception"), shown_message(said))
        return Outcome("ok", value, mutated, None)

    @staticmethod
    def from_key(key: str) -> Outcome:
        """From the exact key text (what the worker streams); the key is kept as is."""
        o = Outcome.from_record(json.loads(key))
        object.__setattr__(o, "_key", key)
        return o

    @staticmethod
    def from_valid_key(key: str) -> Outcome:
        """From the key text of an ``ok`` record already known to be well formed, four items
        with a canonical value (``execution/records.py`` checks that); decoded when read."""
        o = Outcome("ok", _UNDECODED, _UNDECODED, None)
        object.__setattr__(o, "_key", key)
        return o

    # -- display --------------------------------------------------------------------------
    def render(self, limit: int = 120, *, receiver: bool = False) -> str:
        """Python-like display: ``[1, 2]``, ``'abc'``, ``Point(x=1, y=2)``, ``raises ValueError``.

        ``receiver``: the first argument is the object a method was called on, shown as "the
        object" rather than as an argument."""
        limit = max(int(limit), 8)
        if self.kind != "ok":
            return truncate(f"raises {self.error}", limit)
        if self.mutated is None:
            return render_canonical(self.value, limit)
        items = self.mutated[1] if isinstance(self.mutated, list) and self.mutated[:1] == ["T"] else [self.mutated]
        value = render_canonical(self.value, max(12, limit // 3))
        if receiver and items:
            obj = items[0]
            # numbers, strings and the like cannot have changed: only containers and objects might
            rest = [a for a in items[1:] if not (isinstance(a, list) and a[:1] and a[0] in SCALAR_TAGS)]
            tail = f", arguments as {', '.join(render_canonical(a, 40) for a in rest)}" if rest else ""
            room = max(limit - len(value) - len(" (and leaves the object as )") - len(tail), 8)
            return truncate(f"{value} (and leaves the object as {render_canonical(obj, room)}{tail})", limit)
        noun = "argument" if len(items) == 1 else "arguments"
        room = limit - len(value) - len(f" (and changes its {noun} to )")
        args = ", ".join(render_canonical(a, max(room, 8)) for a in items)
        return truncate(f"{value} (and changes its {noun} to {truncate(args, max(room, 8))})", limit)


# ------------------------------------------------------------------------------------------
# equality
# ------------------------------------------------------------------------------------------


def _feq(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b  # "nan" == "nan", "inf" == "inf"
    return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _num_eq(x: list[Any], y: list[Any]) -> bool:
    if x[0] == "I":
        x, y = y, x
    # x is F, y is I
    f = x[1]
    if isinstance(f, str):
        return False
    try:
        i = float(int(y[1]))
    except (OverflowError, ValueError):
        return False
    return _feq(f, i)


def _has_float(x: Any) -> bool:
    return any(t in _dumps(x) for t in _FLOATY)


def _unordered(a: list[Any], b: list[Any], eq: Callable[[Any, Any], bool]) -> bool:
    if len(a) != len(b):
        return False
    if all(eq(p, q) for p, q in zip(a, b)):
        return True
    if not (_has_float(a) or _has_float(b)):
        return False
    used = [False] * len(b)
    for p in a:
        for j, q in enumerate(b):
            if not used[j] and eq(p, q):
                used[j] = True
                break
        else:
            return False
    return True


def _pair_eq(p: list[Any], q: list[Any]) -> bool:
    return _ceq(p[0], q[0]) and _ceq(p[1], q[1])


def _ceq(x: Any, y: Any) -> bool:
    """Tolerant equality of two canonical forms."""
    if x is y:
        return True
    if not isinstance(x, list) or not isinstance(y, list) or not x or not y:
        return x == y
    tx, ty = x[0], y[0]
    if tx != ty:
        if tx in _NUMERIC and ty in _NUMERIC:
            return _num_eq(x, y)
        return False
    if tx == "F":
        return _feq(x[1], y[1])
    if tx in ("L", "T"):
        a, b = x[1], y[1]
        return len(a) == len(b) and all(_ceq(p, q) for p, q in zip(a, b))
    if tx == "E":
        return _unordered(x[1], y[1], _ceq)
    if tx == "D":
        return _unordered(x[1], y[1], _pair_eq)
    if tx == "C":
        return _feq(x[1], y[1]) and _feq(x[2], y[2])
    if tx == "O":
        return x[1] == y[1] and _ceq(x[2], y[2])
    return x == y  # N, B, I, S, Y, R, X, Z, CYCLE: exact


def outcomes_equal(a: Outcome, b: Outcome) -> bool:
    """The design's equality of outcomes (numbers by value with tolerance, sets/dicts unordered)."""
    if a.kind != b.kind:
        return False
    if a.kind != "ok":
        return a.error == b.error
    ka, kb = a.key, b.key
    if ka == kb:
        return True
    if not any(t in ka or t in kb for t in _FLOATY):
        return False  # no floats anywhere: the canonical form is exact
    return _forms_equal(a.decoded(), b.decoded())


def gives(outcome: Outcome, value: Any = None, raises: str | None = None, shown: str = "") -> bool:
    """Whether ``outcome`` is the stated result of a worked example: the exception ``raises``,
    or the return value ``value`` (a Python literal; the arguments' changes do not matter).  A
    float stated with few digits (``0.333``) matches a value that rounds to it, as its writer
    meant it."""
    if raises is not None:
        return outcome.kind == "raise" and outcome.error == raises
    if outcome.kind != "ok":
        return False
    got, want = outcome.value, canonical(value)
    if _ceq(want, got):
        return True
    if (
        isinstance(value, float)
        and not isinstance(value, bool)
        and isinstance(got, list)
        and got[:1] == ["F"]
        and not isinstance(got[1], str)
    ):
        digits = shown.strip().split(".")[-1] if "." in shown and "e" not in shown.lower() else ""
        return digits.isdigit() and abs(got[1] - value) <= 0.5 * 10 ** -len(digits) + 1e-12
    return False


def _forms_equal(fa: tuple[Any, Any], fb: tuple[Any, Any]) -> bool:
    """Tolerant equality of two ok outcomes' ``(value, mutated)``."""
    (va, ma), (vb, mb) = fa, fb
    return _ceq(va, vb) and ((ma is None and mb is None) or (ma is not None and mb is not None and _ceq(ma, mb)))


def group_outcomes(outcomes: Sequence[Outcome]) -> list[int]:
    """Labels of equal outcomes (tolerant equality, closed transitively), numbered by first
    appearance: ``[o0, o1, o2] -> [0, 1, 0]`` when o0 equals o2."""
    index: dict[str, int] = {}
    distinct: list[Outcome] = []
    ids: list[int] = []
    for o in outcomes:
        k = o.key
        j = index.get(k)
        if j is None:
            j = index[k] = len(distinct)
            distinct.append(o)
        ids.append(j)
    r = len(distinct)
    if r == 1:
        return [0] * len(ids)
    parent = list(range(r))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    oks = [j for j in range(r) if distinct[j].kind == "ok"]
    floaty = [j for j in oks if any(t in distinct[j].key for t in _FLOATY)]
    if floaty:
        # Distinct keys without a float are never equal; each outcome is decoded once, here, and
        # not kept (see ``Outcome.decoded``).
        has_float = set(floaty)
        forms: dict[int, tuple[Any, Any]] = {}

        def form(j: int) -> tuple[Any, Any]:
            f = forms.get(j)
            if f is None:
                f = forms[j] = distinct[j].decoded()
            return f

        for a_pos, a in enumerate(oks):
            for b in oks[a_pos + 1 :]:
                if a in has_float or b in has_float:
                    ra, rb = find(a), find(b)
                    if ra != rb and _forms_equal(form(a), form(b)):
                        parent[rb] = ra
    labels: dict[int, int] = {}
    out = []
    for j in ids:
        root = find(j)
        lab = labels.get(root)
        if lab is None:
            lab = labels[root] = len(labels)
        out.append(lab)
    return out


def outcome_ids(matrix: Sequence[Sequence[Outcome]]) -> tuple[np.ndarray, list[Outcome]]:
    """The m x n matrix as ids into its distinct outcomes (equal keys share an id), and those.

    The executor hands out one object per distinct outcome, so most lookups are by object, in C;
    only a new object's key is read."""
    m = len(matrix)
    n = len(matrix[0]) if m else 0
    ids = np.zeros((m, n), dtype=np.int32)
    by_obj: dict[int, int] = {}
    by_key: dict[str, int] = {}
    distinct: list[Outcome] = []
    get = by_obj.get
    for i, row in enumerate(matrix):
        ks = list(map(get, map(id, row)))
        if None in ks:
            for x, o in enumerate(row):
                if ks[x] is None:
                    k = by_key.get(o.key)
                    if k is None:
                        k = by_key[o.key] = len(distinct)
                        distinct.append(o)
                    by_obj[id(o)] = ks[x] = k
        ids[i] = ks  # type: ignore[assignment]  # every None was filled in above
    return ids, distinct


def labels_from_ids(ids: np.ndarray, distinct: Sequence[Outcome]) -> np.ndarray:
    """``label_matrix`` from ``outcome_ids``: each column numbered by first appearance, in numpy;
    only columns with more than one outcome, one of them float-bearing (it may equal another
    within the tolerance, an int ``2`` included), go through ``group_outcomes``."""
    m, n = ids.shape
    if m == 0 or n == 0:
        return np.zeros((m, n), dtype=np.int32)
    first = (ids[:, None, :] == ids[None, :, :]).argmax(axis=1)  # first row equal to row i, per column
    rank = np.cumsum(first == np.arange(m)[:, None], axis=0) - 1
    labels = np.take_along_axis(rank, first, axis=0).astype(np.int32)
    floaty = np.fromiter(
        (o.kind == "ok" and any(t in o.key for t in _FLOATY) for o in distinct), dtype=bool, count=len(distinct)
    )
    if floaty.any():
        for j in np.flatnonzero(floaty[ids].any(axis=0) & (labels.max(axis=0) > 0)).tolist():
            labels[:, j] = group_outcomes([distinct[k] for k in ids[:, j].tolist()])
    return labels


def label_matrix(matrix: Sequence[Sequence[Outcome]]) -> np.ndarray:
    """m x n int32 labels; column j is ``group_outcomes`` of input j over the programs."""
    return labels_from_ids(*outcome_ids(matrix))


def canonical(value: Any) -> Any:
    """The canonical form of a Python value, computed in this process with the worker's own
    canonicalizer (for tests and for values coherence builds itself)."""
    global _CANON
    if _CANON is None:
        from coherence.engine.execution.coherence_worker.canon import make_canonicalizer

        top, dump = make_canonicalizer()
        _CANON = lambda v: json.loads(dump(top(v), v))  # noqa: E731
    return _CANON(value)


_CANON: Callable[[Any], Any] | None = None
