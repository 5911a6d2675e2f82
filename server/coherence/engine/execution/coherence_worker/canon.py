"""The canonical form of a value: the one definition, used by every program's child (under the
user's interpreter) and by coherence itself (``outcomes.canonical``).

Values cross process and Python-version boundaries as tagged JSON lists:

    ["N"]                 None
    ["B", true]           bool (kept apart from numbers: ``True`` and ``1`` are different outcomes)
    ["I", "123"]          int (decimal string: big ints survive JSON)
    ["F", 1.5]            float, Fraction, Decimal; "nan", "inf", "-inf" as strings
    ["C", re, im]         complex
    ["S", "text"]         str
    ["Y", "hex"]          bytes, bytearray, memoryview
    ["L", [...]]          list, deque, dict values
    ["T", [...]]          tuple (namedtuples too)
    ["E", [...]]          set, frozenset, dict keys and items (items in a canonical order)
    ["D", [[k, v], ...]]  dict, any Mapping (items in a canonical order)
    ["O", "Type", state]  other object, by its canonical state (``__dict__``/``__slots__``)
    ["R", "Type", "repr"] object whose repr is its state (datetime, enum members, exceptions, ...)
    ["X", "Type", "sha"]  unrepresentable: type name plus a stable digest
    ["Z", "Type", "sha"]  too large or too deep: type name plus digest of the canonical form
    ["CYCLE"]             a reference back to a container being canonicalized

Its JSON (compact, ASCII) is capped at ``SIZE_CAP`` characters: a larger value becomes a "Z".
``flat.py`` writes the same text for flat values without building the structure, and
``records.py`` (in coherence) checks records against this form; ``outcomes.py`` says when two
canonical values are equal.
"""

from __future__ import annotations

import builtins
import collections
import collections.abc as cabc
import decimal
import enum
import fractions
import itertools
import re
import types

from .protocol import encode as _enc
from .timer import Timeout

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Form = list[Any]  # a canonical structure: a tagged list (see above)
    Canon = Callable[[Any, int], Form]  # the walk: canon(x, depth)
    Top = Callable[..., Form]  # top(x, consume_iterators=True)
    Dump = Callable[[Form, Any], str]

SIZE_CAP = 16 * 1024  # canonical JSON of one value larger than this becomes ["Z", type, sha]
MAX_DEPTH = 100
MAX_NODES = 200000
# Big ints (63 bits and more) of this many bits in all write as more than SIZE_CAP characters of
# JSON: at least 0.30103 * (bits - 1) digits each, plus 8 characters of ["I",""] and a comma.
_CAP_BITS = int(SIZE_CAP * 3.33)
MAX_ITER_ITEMS = 10000
LIM = 1 << 62  # ints strictly between -LIM and LIM are "small" (the fast paths' range)
_ADDR = re.compile(r"0x[0-9a-fA-F]{4,}")
NONE = ["N"]
CYCLE = ["CYCLE"]


class _TooBig(BaseException):
    pass


class _TooLong(_TooBig):
    """The big ints of a value have more digits than SIZE_CAP: it cannot be shown, and writing
    all of them in decimal (quadratic in their length before Python 3.12) would cost more than
    the call that made them."""


def tname(x: object) -> str:
    try:
        return type(x).__name__
    except BaseException:  # pragma: no cover
        return "object"


# Exceptions whose message is read for the user: the builtin classes exactly, whose ``args`` is
# C-level state (a subclass's ``__str__`` or ``args`` is the checked code's, and could hang or lie).
_BUILTIN_EXCEPTIONS = frozenset(
    t for t in vars(builtins).values() if isinstance(t, type) and issubclass(t, BaseException)
)
MESSAGE_CAP = 160


def message(e: BaseException) -> str | None:
    """What a builtin exception says (``can only concatenate str (not "int") to str``), cut to
    ``MESSAGE_CAP`` characters; None for any other exception, or one not made of one string."""
    if type(e) not in _BUILTIN_EXCEPTIONS:
        return None
    args = e.args
    if len(args) != 1 or type(args[0]) is not str:
        return None
    return args[0][:MESSAGE_CAP]


def sha(text: str | bytes) -> str:
    if not isinstance(text, bytes):
        text = text.encode("utf-8", "surrogatepass")
    import hashlib

    return hashlib.sha256(text).hexdigest()[:32]


def safe_repr(x: object) -> str | None:
    try:
        r = repr(x)
        return r if isinstance(r, str) else None
    except Timeout:
        raise
    except BaseException:
        return None


def stable_digest(x: object) -> str:
    r = safe_repr(x)
    if r is None:
        return sha(tname(x))
    return sha(tname(x) + ":" + _ADDR.sub("0x", r))


def unordered_digest(x: object) -> str:
    """The digest of a value too big to canonicalize: ``stable_digest``, except that the sets and
    dicts in it, at any depth, give the same digest whatever order they were built in (their repr
    follows that order, and two programs that build one word-count dict, or a list of sets, in
    different orders agree).  One repr says whether there is any: without a brace it has none."""
    try:
        if isinstance(x, (set, frozenset, dict)):
            r = _orderless_repr(x, 0)
        else:
            r = repr(x)
            if not isinstance(r, str):
                return stable_digest(x)
            if "{" in r or "OrderedDict(" in r:  # a string holding a brace only costs the walk
                r = _orderless_repr(x, 0)
    except Timeout:
        raise
    except BaseException:
        return stable_digest(x)
    return sha(tname(x) + ":" + _ADDR.sub("0x", r))


_PLAIN = frozenset((int, float, str, bool, bytes, type(None), complex))


def _plain(items: Iterable[object]) -> bool:
    # a loop, not all() over a generator: this runs on every returned container, and the
    # generator costs a frame per call
    for v in items:  # noqa: SIM110
        if type(v) not in _PLAIN:
            return False
    return True


def _orderless_repr(x: Any, d: int) -> str:
    """``repr(x)`` with the items of every set and dict in it sorted by their own such text.  A
    list or tuple of plain values is one repr call, so the walk costs little more than repr."""
    if d > MAX_DEPTH:
        return repr(x)
    t = type(x)
    if isinstance(x, (set, frozenset)):
        if _plain(x):  # items of a set are hashable: mostly plain
            parts = list(map(repr, x))
        else:
            parts = [_orderless_repr(v, d + 1) for v in x]
        parts.sort()
        return t.__name__ + "{" + ", ".join(parts) + "}"
    if isinstance(x, dict):
        if _plain(x) and _plain(x.values()):
            parts = list(map("%r: %r".__mod__, x.items()))
        else:
            parts = [_orderless_repr(k, d + 1) + ": " + _orderless_repr(v, d + 1) for k, v in x.items()]
        parts.sort()
        return t.__name__ + "{" + ", ".join(parts) + "}"
    if t is list or t is tuple:
        if _plain(x):
            return repr(x)
        inner = ", ".join([_orderless_repr(v, d + 1) for v in x])
        return "[" + inner + "]" if t is list else "(" + inner + ",)"
    return repr(x)


def fl(x: float) -> float | str:
    """A float of the canonical form: itself, or "nan", "inf", "-inf"."""
    if x != x:
        return "nan"
    if x > 0:
        return "inf" if x - x != 0 else x
    if x < 0:
        return "-inf" if x - x != 0 else x
    return x


def dump(c: Form, x: object) -> str:
    """JSON text of canonical structure c (of value x), size-capped."""
    s = _enc(c)
    if len(s) > SIZE_CAP:
        s = _enc(["Z", tname(x), sha(s)])
    return s


def make_canonicalizer() -> tuple[Top, Dump]:
    """``(top, dump)``: ``top(x, consume_iterators=True)`` is the canonical structure of x (it
    never raises but ``Timeout``), ``dump(c, x)`` its JSON text.  One per process: the walk
    keeps its state (the containers it is inside, the nodes and big-int bits so far) in lists
    its closures share, which is cheaper per node than attributes of an object."""
    stack: list[object] = []
    nodes = [0]
    bits = [0]  # bits of the big ints written so far in this value
    hexints = [False]
    consume = [True]  # materialize iterators? (not for arguments: the call must get them intact)
    canon = _walker(stack, nodes, bits, hexints, consume)

    def digest_too_long(x: object) -> str:
        """The digest of a value whose ints were too long to write: the same walk with the big
        ints in hex, which is linear in their length.  Equal values give equal digests: the
        decision to take this path depends only on the total bits, whatever the order."""
        del stack[:]
        nodes[0] = 0
        hexints[0] = True
        try:
            return sha(_enc(canon(x, 0)))
        except Timeout:
            raise
        except BaseException:
            return stable_digest(x)
        finally:
            hexints[0] = False
            del stack[:]

    def top(x: object, consume_iterators: bool = True) -> Form:
        """Canonical structure of x (never raises except Timeout)."""
        del stack[:]
        nodes[0] = 0
        bits[0] = 0
        consume[0] = consume_iterators
        try:
            return canon(x, 0)
        except Timeout:
            raise
        except _TooLong:
            return ["Z", tname(x), digest_too_long(x)]
        except _TooBig:
            return ["Z", tname(x), unordered_digest(x)]
        except RecursionError:
            return ["Z", tname(x), sha(tname(x))]
        except BaseException:
            return ["X", tname(x), sha(tname(x))]
        finally:
            del stack[:]

    return top, dump


def _walker(stack: list[object], nodes: list[int], bits: list[int], hexints: list[bool], consume: list[bool]) -> Canon:
    """``canon(x, depth)``: the recursive walk over the builtin containers and scalars, the
    common types first; everything else goes to ``other`` (see ``_others``)."""
    lim, none, cycle = LIM, NONE, CYCLE  # closure cells, as the walk's own state

    def big_int(x: int) -> Form:
        b = x.bit_length()
        if b > 53000:
            return ["Z", "int", sha(format(x, "x"))]
        if hexints[0]:
            return ["H", format(x, "x")]  # only ever hashed (see digest_too_long)
        # ints of so many bits in all have more than SIZE_CAP digits: the value will be a "Z"
        bits[0] += b
        if bits[0] > _CAP_BITS:
            raise _TooLong()
        return ["I", str(x)]

    def seq(tag: str, x: Any, d: int) -> Form:
        if d > MAX_DEPTH:
            return ["Z", tname(x), stable_digest(x)]
        for s in stack:
            if s is x:
                return cycle
        n = nodes[0] + len(x)
        if n > MAX_NODES:
            raise _TooBig()
        nodes[0] = n
        stack.append(x)
        try:
            d += 1
            return [tag, [canon(v, d) for v in x]]
        finally:
            stack.pop()

    def mapping(x: Any, d: int) -> Form:
        if d > MAX_DEPTH:
            return ["Z", tname(x), stable_digest(x)]
        for s in stack:
            if s is x:
                return cycle
        n = nodes[0] + 2 * len(x)
        if n > MAX_NODES:
            raise _TooBig()
        nodes[0] = n
        stack.append(x)
        try:
            d += 1
            items = [[canon(k, d), canon(v, d)] for k, v in x.items()]
        finally:
            stack.pop()
        if len(items) > 1:
            items.sort(key=lambda kv: _enc(kv[0]))
        return ["D", items]

    def setlike(x: Any, d: int) -> Form:
        if d > MAX_DEPTH:
            return ["Z", tname(x), stable_digest(x)]
        for s in stack:
            if s is x:
                return cycle
        n = nodes[0] + len(x)
        if n > MAX_NODES:
            raise _TooBig()
        nodes[0] = n
        stack.append(x)
        try:
            d += 1
            items = [canon(v, d) for v in x]
        finally:
            stack.pop()
        if len(items) > 1:
            items.sort(key=_enc)
        return ["E", items]

    def obj(x: object, t: type, state: Any, d: int) -> Form:
        if d > MAX_DEPTH:
            return ["Z", t.__name__, stable_digest(x)]
        for s in stack:
            if s is x:
                return cycle
        stack.append(x)
        try:
            return ["O", t.__name__, mapping(state, d + 1)]
        finally:
            stack.pop()

    def canon(x: Any, d: int) -> Form:
        t = type(x)
        if t is int:
            if -lim < x < lim:
                return ["I", str(x)]
            return big_int(x)
        if t is str:
            return ["S", x]
        if t is float:
            return ["F", x if x - x == 0 else fl(x)]
        if t is bool:
            return ["B", x]
        if x is None:
            return none
        if t is list:
            return seq("L", x, d)
        if t is tuple:
            return seq("T", x, d)
        if t is dict:
            return mapping(x, d)
        if t is set or t is frozenset:
            return setlike(x, d)
        return other(x, t, d)

    other = _others(canon, seq, mapping, setlike, obj, stack, consume)
    return canon


_Enum = enum.Enum
_Decimal = decimal.Decimal
_Fraction = fractions.Fraction
_deque = collections.deque
_Mapping = cabc.Mapping
_KeysView = cabc.KeysView
_ItemsView = cabc.ItemsView
_ValuesView = cabc.ValuesView
_islice = itertools.islice


def _others(
    canon: Canon,
    seq: Callable[[str, Any, int], Form],
    mapping: Callable[[Any, int], Form],
    setlike: Callable[[Any, int], Form],
    obj: Callable[[object, type, Any, int], Form],
    stack: list[object],
    consume: list[bool],
) -> Callable[[Any, type, int], Form]:
    """``other(x, t, d)``: the canonical structure of a value of no builtin container or scalar
    type (subclasses, enums, numbers of other kinds, views, iterators, objects)."""

    def other(x: Any, t: type, d: int) -> Form:
        try:
            if isinstance(x, _Enum):
                return ["R", t.__name__, safe_repr(x) or t.__name__]
            if isinstance(x, int):  # int subclasses (not bool: bool cannot be subclassed)
                return canon(int(x), d)
            if isinstance(x, float):
                return ["F", fl(float(x))]
            if isinstance(x, str):
                return ["S", str.__str__(x)]
            if isinstance(x, (bytes, bytearray)):
                return ["Y", bytes(x).hex()]
            if isinstance(x, memoryview):
                return ["Y", x.tobytes().hex()]
            if isinstance(x, complex):
                return ["C", fl(x.real), fl(x.imag)]
            if isinstance(x, (_Decimal, _Fraction)):
                try:
                    return ["F", fl(float(x))]
                except (OverflowError, ValueError):
                    return ["X", t.__name__, sha(str(x))]
            if isinstance(x, (list, _deque)):
                return seq("L", x, d)
            if isinstance(x, tuple):
                return seq("T", x, d)
            if isinstance(x, (set, frozenset, _KeysView, _ItemsView)):
                return setlike(x, d)
            if isinstance(x, _ValuesView):
                return seq("L", list(x), d)
            if isinstance(x, (dict, _Mapping)):
                return mapping(x, d)
            if isinstance(x, BaseException):
                return ["R", t.__name__, _ADDR.sub("0x", safe_repr(x) or t.__name__)]
            if isinstance(x, type):
                return ["R", "type", getattr(x, "__qualname__", None) or tname(x)]
            if isinstance(x, types.ModuleType):
                return ["R", "module", getattr(x, "__name__", "?")]
            if isinstance(x, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
                return ["X", t.__name__, sha(getattr(x, "__qualname__", "") or "")]
            tolist = getattr(t, "tolist", None)
            if tolist is not None and callable(tolist):
                v = x.tolist()
                if type(v) is not t:
                    return canon(v, d + 1)
            if getattr(t, "__next__", None) is not None and getattr(t, "__iter__", None) is not None:
                if not consume[0]:
                    return ["X", t.__name__, sha(t.__name__)]
                items = list(_islice(x, MAX_ITER_ITEMS + 1))
                stack.append(x)
                try:
                    body = [canon(v, d + 1) for v in items]
                finally:
                    stack.pop()
                return ["X", t.__name__, sha(_enc(body))]
            state = None
            dct = getattr(x, "__dict__", None)
            if isinstance(dct, dict):
                state = dict(dct)
            slots = _slot_state(x, t)
            if state is not None:
                if slots:
                    state.update(slots)
                return obj(x, t, state, d)
            r = safe_repr(x)
            if r is not None and not _ADDR.search(r):
                return ["R", t.__name__, r]
            if slots:
                return obj(x, t, slots, d)
            return ["X", t.__name__, stable_digest(x)]
        except (Timeout, _TooBig):
            raise
        except RecursionError:
            return ["Z", tname(x), sha(tname(x))]
        except BaseException:
            return ["X", tname(x), stable_digest(x)]

    return other


def _slot_state(x: object, t: type) -> dict[str, object]:
    out: dict[str, object] = {}
    try:
        for klass in t.__mro__:
            names = klass.__dict__.get("__slots__")
            if names is None:
                continue
            if isinstance(names, str):
                names = (names,)
            for name in names:
                if name in ("__dict__", "__weakref__") or name in out:
                    continue
                try:
                    out[name] = getattr(x, name)
                except AttributeError:
                    pass
    except (Timeout, _TooBig):
        raise
    except BaseException:
        pass
    return out
