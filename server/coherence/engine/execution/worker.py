"""coherence execution worker: runs programs on inputs and reports canonical outcomes.

STDLIB ONLY.  This file is executed as a script by the *user's* interpreter (any CPython >= 3.8,
``python -S -B worker.py``), never imported by coherence's server code, so it must not import
anything from coherence.

Process layout (one run):

    parent (coherence)  --job JSON on stdin-->  zygote (this script)
                        <--result lines on fd--   |  imports the module context once,
                                                  |  pre-imports what the programs import,
                                                  |  readies every input once (marshal
                                                  |  data, or one compile of the rest),
                                                  |  then forks one child per program
                                                  +--> child (program 0)  -- lines --> zygote
                                                  +--> child (program 1)  ...
                                                  +--> spare (program 2, loaded, waiting
                                                       on a pipe for a free slot)

Result lines (to the parent, on the descriptor named in the job; never stdout), ASCII:

    "<t> <i> <key>"    outcome of task t on input i; <key> is the JSON text of
                       [kind, value, mutated, error] (exactly ``Outcome.key``)
    "<t> -1 <json>"    task t loaded: null, or why it could not be loaded
    "-1 0 <json>"      module context: null when loaded, or why it failed
    "-1 1 <json>"      internal diagnostic (a worker problem, not the user's)
    "-1 2 null"        the run is complete
    "-1 3 <json>"      serve mode only: the job is over (see ``serve``)

Children write their lines in that format, in batches, to their own pipe; the zygote forwards
complete lines as they are.  Each child also publishes, in a shared memory slot, the position of
the call in progress, how many records it has written and its load state, so that when it dies
(segfault, os._exit, watchdog kill) the zygote knows which input was responsible, records a
``Crash(...)``/``Timeout`` outcome for it and forks a fresh child for the inputs left.  When an
input is re-run that way the parent keeps the first record it got.  Calls are timed by one
periodic SIGALRM per child, whose handler raises ``_Timeout`` in a call that has run too long.
"""

import sys
import os
import ast
import errno
import gc
import io
import json
import marshal
import mmap
import operator
import re
import select
import signal
import struct
import time
import types
import binascii
from functools import lru_cache

_HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import resource
except ImportError:  # pragma: no cover - non-Unix
    resource = None

try:
    import fcntl
except ImportError:  # pragma: no cover - non-Unix
    fcntl = None

NOBODY = 65534
# Children that drop root privileges each get a uid (and gid) of their own instead of sharing
# "nobody": processes of one uid may signal each other, so with a shared uid a hostile program
# could kill(-1, SIGKILL) every other program's child (and any "nobody" process on the host).
# The range is far above real accounts; each zygote starts at a random point in it.
CHILD_UID_BASE = 1500000000
CHILD_UID_SPAN = 500000000
# The longest line a child may send: a record holds at most two size-capped canonical values.
MAX_LINE = 4 * 16 * 1024 + 4096
SIZE_CAP = 16 * 1024  # canonical JSON of one value larger than this becomes ["Z", type, sha]
MAX_DEPTH = 100
MAX_NODES = 200000
# Big ints (63 bits and more) of this many bits in all write as more than SIZE_CAP characters of
# JSON: at least 0.30103 * (bits - 1) digits each, plus 8 characters of ["I",""] and a comma.
_CAP_BITS = int(SIZE_CAP * 3.33)
MAX_ITER_ITEMS = 10000
GRACE = 0.5  # seconds past a deadline before the watchdog kills
# A call past its timeout is over whatever happens next: its outcome is Timeout, from the child's
# own timer or from the kill.  A child still in that call this long after (stuck in C, where the
# timer cannot reach: ``sum(range(2**40))``) is killed now rather than after GRACE, which cost
# the program's budget half a second per such call (two of them ended a 2 s budget, and the
# user's function took every input after them away from all programs).  Killing a child the timer
# was about to free costs only a fork.
CALL_GRACE = 0.15

# Imported in the zygote before forking, so children share them.  CORE always; FULL as well when
# the children (dropped to "nobody") could not read the standard library to import it lazily.
PREIMPORT_CORE = (
    "math", "itertools", "collections", "functools", "re", "string", "heapq", "bisect", "operator",
    "copy", "random",
)
PREIMPORT = (
    # imported lazily by the standard library itself (what a program imports explicitly is found
    # by scanning its source and imported anyway)
    "_strptime", "encodings.idna", "encodings.latin_1", "encodings.ascii", "encodings.cp1252",
    "encodings.utf_16", "encodings.utf_32", "encodings.unicode_escape",
    "encodings.raw_unicode_escape", "encodings.punycode", "unicodedata",
    # common enough in helpers and programs to be worth sharing
    "collections.abc", "fractions", "decimal", "datetime", "enum", "json", "numbers", "struct",
    "array", "hashlib", "base64", "binascii", "zlib", "textwrap", "weakref", "contextlib",
)


# How marshal (version 2, as the parent packs inputs) begins a pair whose first item is a tuple:
# the (args, kwargs) of a packed input
_PACKED_PAIR = b"(\x02\x00\x00\x00("

# Where the anchor's timeouts start in the map the leader shares with every child (after its
# cuts: see Zygote.schedule)
_TOLD_HANGS = 16
# Inputs a job whose children are forked before its inputs come can take (see Zygote.prefork):
# the size of the shared map of the anchor's hangs, one byte each, made before those forks.
_PREFORK_INPUTS = 1 << 16

# What a job sent ahead of its inputs gets in its second frame (see Zygote.receive_inputs).
INPUT_KEYS = ("inputs", "packed", "order", "late", "anchor")


@lru_cache(maxsize=256)
def _record_index(task):
    """The input index of each record line of ``task`` ("<task> <input> <outcome>"), found in a
    chunk with a newline put in front.  The task's own newline-prefix is a literal the regular
    expression engine scans for; ``^`` in multi-line mode was tried at every byte (0.8 ms against
    0.2 ms per thousand records).  Cached, and compiled ahead in the warm worker (see serve): a
    compile costs 0.1 ms, once per child in each job's new leader otherwise."""
    return re.compile(re.escape(b"\n%d " % task) + br"(-?[0-9]+) ")


_enc = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_ADDR = re.compile(r"0x[0-9a-fA-F]{4,}")


class _Timeout(BaseException):
    """Raised by the SIGALRM handler inside a call that ran out of time."""


class _TooBig(BaseException):
    pass


class _TooLong(_TooBig):
    """The big ints of a value have more digits than SIZE_CAP: it cannot be shown, and writing
    all of them in decimal (quadratic in their length before Python 3.12) would cost more than
    the call that made them."""


def _tname(x):
    try:
        return type(x).__name__
    except BaseException:  # pragma: no cover
        return "object"


def _sha(text):
    if not isinstance(text, bytes):
        text = text.encode("utf-8", "surrogatepass")
    import hashlib

    return hashlib.sha256(text).hexdigest()[:32]


def _safe_repr(x):
    try:
        r = repr(x)
        return r if isinstance(r, str) else None
    except _Timeout:
        raise
    except BaseException:
        return None


def _stable_digest(x):
    r = _safe_repr(x)
    if r is None:
        return _sha(_tname(x))
    return _sha(_tname(x) + ":" + _ADDR.sub("0x", r))


def _unordered_digest(x):
    """The digest of a value too big to canonicalize: ``_stable_digest``, except that the sets and
    dicts in it, at any depth, give the same digest whatever order they were built in (their repr
    follows that order, and two programs that build one word-count dict, or a list of sets, in
    different orders agree).  One repr says whether there is any: without a brace it has none."""
    try:
        if isinstance(x, (set, frozenset, dict)):
            r = _orderless_repr(x, 0)
        else:
            r = repr(x)
            if not isinstance(r, str):
                return _stable_digest(x)
            if "{" in r or "OrderedDict(" in r:  # a string holding a brace only costs the walk
                r = _orderless_repr(x, 0)
    except _Timeout:
        raise
    except BaseException:
        return _stable_digest(x)
    return _sha(_tname(x) + ":" + _ADDR.sub("0x", r))


_PLAIN = frozenset((int, float, str, bool, bytes, type(None), complex))


def _plain(items):
    for v in items:
        if type(v) not in _PLAIN:
            return False
    return True


def _orderless_repr(x, d):
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


# --------------------------------------------------------------------------------------------
# canonical form (see coherence/engine/outcomes.py for the definition)
# --------------------------------------------------------------------------------------------


def make_canonicalizer():
    import enum
    import decimal
    import fractions
    import itertools
    import collections
    import collections.abc as cabc

    Enum = enum.Enum
    Decimal = decimal.Decimal
    Fraction = fractions.Fraction
    deque = collections.deque
    Mapping = cabc.Mapping
    KeysView = cabc.KeysView
    ItemsView = cabc.ItemsView
    ValuesView = cabc.ValuesView
    islice = itertools.islice
    NONE = ["N"]
    CYCLE = ["CYCLE"]
    LIM = 1 << 62
    stack = []
    nodes = [0]
    bits = [0]  # bits of the big ints written so far in this value
    hexints = [False]
    consume = [True]  # materialize iterators? (not for arguments: the call must get them intact)

    def fl(x):
        if x != x:
            return "nan"
        if x > 0:
            return "inf" if x - x != 0 else x
        if x < 0:
            return "-inf" if x - x != 0 else x
        return x

    def big_int(x):
        b = x.bit_length()
        if b > 53000:
            return ["Z", "int", _sha(format(x, "x"))]
        if hexints[0]:
            return ["H", format(x, "x")]  # only ever hashed (see digest_too_long)
        # ints of so many bits in all have more than SIZE_CAP digits: the value will be a "Z"
        bits[0] += b
        if bits[0] > _CAP_BITS:
            raise _TooLong()
        return ["I", str(x)]

    def digest_too_long(x):
        """The digest of a value whose ints were too long to write: the same walk with the big
        ints in hex, which is linear in their length.  Equal values give equal digests: the
        decision to take this path depends only on the total bits, whatever the order."""
        del stack[:]
        nodes[0] = 0
        hexints[0] = True
        try:
            return _sha(_enc(canon(x, 0)))
        except _Timeout:
            raise
        except BaseException:
            return _stable_digest(x)
        finally:
            hexints[0] = False
            del stack[:]

    def seq(tag, x, d):
        if d > MAX_DEPTH:
            return ["Z", _tname(x), _stable_digest(x)]
        for s in stack:
            if s is x:
                return CYCLE
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

    def mapping(x, d):
        if d > MAX_DEPTH:
            return ["Z", _tname(x), _stable_digest(x)]
        for s in stack:
            if s is x:
                return CYCLE
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

    def setlike(x, d):
        if d > MAX_DEPTH:
            return ["Z", _tname(x), _stable_digest(x)]
        for s in stack:
            if s is x:
                return CYCLE
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

    def canon(x, d):
        t = type(x)
        if t is int:
            if -LIM < x < LIM:
                return ["I", str(x)]
            return big_int(x)
        if t is str:
            return ["S", x]
        if t is float:
            return ["F", x if x - x == 0 else fl(x)]
        if t is bool:
            return ["B", x]
        if x is None:
            return NONE
        if t is list:
            return seq("L", x, d)
        if t is tuple:
            return seq("T", x, d)
        if t is dict:
            return mapping(x, d)
        if t is set or t is frozenset:
            return setlike(x, d)
        return other(x, t, d)

    def other(x, t, d):
        try:
            if isinstance(x, Enum):
                return ["R", t.__name__, _safe_repr(x) or t.__name__]
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
            if isinstance(x, (Decimal, Fraction)):
                try:
                    return ["F", fl(float(x))]
                except (OverflowError, ValueError):
                    return ["X", t.__name__, _sha(str(x))]
            if isinstance(x, (list, deque)):
                return seq("L", x, d)
            if isinstance(x, tuple):
                return seq("T", x, d)
            if isinstance(x, (set, frozenset, KeysView, ItemsView)):
                return setlike(x, d)
            if isinstance(x, ValuesView):
                return seq("L", list(x), d)
            if isinstance(x, (dict, Mapping)):
                return mapping(x, d)
            if isinstance(x, BaseException):
                return ["R", t.__name__, _ADDR.sub("0x", _safe_repr(x) or t.__name__)]
            if isinstance(x, type):
                return ["R", "type", getattr(x, "__qualname__", None) or _tname(x)]
            if isinstance(x, types.ModuleType):
                return ["R", "module", getattr(x, "__name__", "?")]
            if isinstance(x, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
                return ["X", t.__name__, _sha(getattr(x, "__qualname__", "") or "")]
            tolist = getattr(t, "tolist", None)
            if tolist is not None and callable(tolist):
                v = x.tolist()
                if type(v) is not t:
                    return canon(v, d + 1)
            if getattr(t, "__next__", None) is not None and getattr(t, "__iter__", None) is not None:
                if not consume[0]:
                    return ["X", t.__name__, _sha(t.__name__)]
                items = list(islice(x, MAX_ITER_ITEMS + 1))
                stack.append(x)
                try:
                    body = [canon(v, d + 1) for v in items]
                finally:
                    stack.pop()
                return ["X", t.__name__, _sha(_enc(body))]
            state = None
            dct = getattr(x, "__dict__", None)
            if isinstance(dct, dict):
                state = dict(dct)
            slots = _slot_state(x, t)
            if state is not None:
                if slots:
                    state.update(slots)
                return _obj(x, t, state, d)
            r = _safe_repr(x)
            if r is not None and not _ADDR.search(r):
                return ["R", t.__name__, r]
            if slots:
                return _obj(x, t, slots, d)
            return ["X", t.__name__, _stable_digest(x)]
        except (_Timeout, _TooBig):
            raise
        except RecursionError:
            return ["Z", _tname(x), _sha(_tname(x))]
        except BaseException:
            return ["X", _tname(x), _stable_digest(x)]

    def _obj(x, t, state, d):
        if d > MAX_DEPTH:
            return ["Z", t.__name__, _stable_digest(x)]
        for s in stack:
            if s is x:
                return CYCLE
        stack.append(x)
        try:
            return ["O", t.__name__, mapping(state, d + 1)]
        finally:
            stack.pop()

    def _slot_state(x, t):
        out = {}
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
        except (_Timeout, _TooBig):
            raise
        except BaseException:
            pass
        return out

    def top(x, consume_iterators=True):
        """Canonical structure of x (never raises except _Timeout)."""
        del stack[:]
        nodes[0] = 0
        bits[0] = 0
        consume[0] = consume_iterators
        try:
            return canon(x, 0)
        except _Timeout:
            raise
        except _TooLong:
            return ["Z", _tname(x), digest_too_long(x)]
        except _TooBig:
            return ["Z", _tname(x), _unordered_digest(x)]
        except RecursionError:
            return ["Z", _tname(x), _sha(_tname(x))]
        except BaseException:
            return ["X", _tname(x), _sha(_tname(x))]
        finally:
            del stack[:]

    def dump(c, x):
        """JSON text of canonical structure c (of value x), size-capped."""
        s = _enc(c)
        if len(s) > SIZE_CAP:
            s = _enc(["Z", _tname(x), _sha(s)])
        return s

    return top, dump


# --------------------------------------------------------------------------------------------
# guards: an audit hook that blocks the dangerous parts of the OS interface
# --------------------------------------------------------------------------------------------


def install_guard(state):
    """Install the audit hook.  ``state`` (mutable dict) holds the mode and allowed write root:

    mode "load"  : importing user code in the zygote: block processes, network, foreign writes
    mode "zygote": our own bookkeeping: allow everything
    mode "child" : running a program: like "load", plus only kill of itself
    """
    realpath = os.path.realpath
    join = os.path.join
    getcwd = os.getcwd
    fspath = os.fspath
    fsdecode = os.fsdecode
    readlink = os.readlink
    sep = os.sep
    WFLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    getpid = os.getpid

    def inside(path, dir_fd=None):
        try:
            if isinstance(path, int):
                return True  # an already-open descriptor
            p = fspath(path)
            if isinstance(p, bytes):
                p = fsdecode(p)
            if not p.startswith("/") and isinstance(dir_fd, int) and dir_fd >= 0:
                base = readlink("/proc/self/fd/%d" % dir_fd)
            else:
                base = getcwd()
            full = realpath(join(base, p))
            root = state["root"]
            return full == root or full.startswith(root + sep)
        except BaseException:
            return False

    def under(path, roots):
        for r in roots:
            if path == r or path.startswith(r + sep):
                return True
        return False

    def readable(path):
        """Reads are free except other processes' /proc entries (their environment holds the
        editor's API keys) and the private directories (the user's home) outside the paths the
        program legitimately needs (interpreter, site-packages, workspace)."""
        try:
            if isinstance(path, int):
                return True
            p = fspath(path)
            if isinstance(p, bytes):
                p = fsdecode(p)
            if not p.startswith("/"):
                p = join(getcwd(), p)
            if p.startswith("/proc/"):
                head = p[6:].split("/", 1)[0]
                if head.isdigit() and int(head) != getpid():
                    return False
            private = state.get("private") or ()
            if private:
                full = realpath(p)
                if under(full, private) and not under(full, state.get("allow") or ()):
                    return False
            return True
        except BaseException:
            return False

    def deny(event):
        raise PermissionError(errno.EACCES, "blocked by the coherence sandbox: " + event)

    # event -> (indices of path arguments, index of dir_fd argument or None)
    PATHS = {
        "os.remove": ((0,), 1),
        "os.rmdir": ((0,), 1),
        "os.mkdir": ((0,), 2),
        "os.rename": ((0, 1), 2),
        "os.link": ((1,), 3),
        "os.symlink": ((1,), 2),
        "os.chmod": ((0,), 2),
        "os.chown": ((0,), 3),
        "os.lchown": ((0,), None),
        "os.utime": ((0,), 3),
        "os.truncate": ((0,), None),
        "os.setxattr": ((0,), None),
        "os.removexattr": ((0,), None),
        "os.chflags": ((0,), None),
        "os.lchflags": ((0,), None),
        "os.mkfifo": ((0,), 2),
        "os.mknod": ((0,), 3),
        "shutil.rmtree": ((0,), 1),
        "shutil.copyfile": ((1,), None),
        "shutil.copymode": ((1,), None),
        "shutil.copystat": ((1,), None),
        "shutil.copytree": ((1,), None),
        "shutil.move": ((0, 1), None),
        "shutil.chown": ((0,), None),
    }
    PROCS = frozenset((
        "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.fork",
        "os.forkpty", "pty.spawn", "os.startfile", "socket.connect", "socket.bind",
        "socket.sendto", "socket.sendmsg", "socket.getaddrinfo", "socket.gethostbyname",
        "_thread.start_new_thread", "_thread.start_joinable_thread", "os.setuid", "os.setgid",
        "os.setreuid", "os.setregid", "os.setresuid", "os.setresgid", "os.setgroups",
        "os.chroot", "os.pidfd_open",
    ))
    KILL = frozenset(("os.kill", "os.killpg", "signal.pthread_kill"))
    WATCH = frozenset(PATHS) | PROCS | KILL | {"open"}

    def hook(event, args):
        if event not in WATCH:
            return
        mode = state["mode"]
        if mode == "zygote":
            return
        if event == "open":
            try:
                m = args[1]
                fl = args[2]
                writing = (isinstance(m, str) and ("w" in m or "a" in m or "x" in m or "+" in m)) or (
                    isinstance(fl, int) and fl & WFLAGS
                )
            except BaseException:
                writing = True
            if writing:
                if not inside(args[0]):
                    deny("writing " + str(args[0])[:200])
            elif mode == "child" and not readable(args[0]):
                deny("reading " + str(args[0])[:200])
            return
        spec = PATHS.get(event)
        if spec is not None:
            idx, dfd = spec
            dir_fd = None
            if dfd is not None and len(args) > dfd:
                dir_fd = args[dfd]
            for k in idx:
                if k < len(args) and not inside(args[k], dir_fd):
                    deny(event + " " + str(args[k])[:200])
            return
        if event in PROCS:
            deny(event)
        if event in KILL:
            try:
                pid = args[0]
            except BaseException:
                pid = None
            if event == "os.kill" and (pid == getpid() or pid == 0) and mode == "child":
                return
            if event == "signal.pthread_kill":
                return
            deny(event)

    sys.addaudithook(hook)


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------


class _Sink(io.TextIOBase):
    """sys.stdout / sys.stderr replacement: keeps at most ``cap`` characters, drops the rest."""

    def __init__(self, cap):
        self.cap = cap
        self.size = 0
        self.parts = []
        self.buffer = _ByteSink(self)

    def write(self, s):
        n = len(s)
        if self.size < self.cap:
            self.parts.append(s[: self.cap - self.size])
        self.size += n
        return n

    def writelines(self, lines):
        for s in lines:
            self.write(s)

    def reset(self):
        if self.size:
            self.size = 0
            self.parts = []

    def writable(self):
        return True

    def fileno(self):
        return 1  # /dev/null in the worker

    def isatty(self):
        return False

    @property
    def encoding(self):
        return "utf-8"

    def flush(self):
        pass


class _ByteSink(io.RawIOBase):
    """``sys.stdout.buffer`` of a _Sink: counts what is written, keeps nothing."""

    def __init__(self, owner):
        self.owner = owner

    def write(self, b):
        n = len(b)
        self.owner.size += n
        return n

    def writable(self):
        return True


def _describe_exc(e):
    """``Type: message`` (one line), like the last line of a traceback."""
    name = _tname(e)
    if isinstance(e, SyntaxError):
        where = ""
        if e.lineno:
            where = " (line %d%s)" % (e.lineno, ", column %d" % e.offset if e.offset else "")
        return "%s: %s%s" % (name, e.msg, where)
    try:
        msg = str(e)
    except BaseException:
        msg = ""
    msg = (msg.strip().splitlines() or [""])[0][:500]
    return "%s: %s" % (name, msg) if msg else name


def _signal_name(sig):
    try:
        return signal.Signals(sig).name
    except (ValueError, AttributeError):
        return "signal %d" % sig


def _status_reason(status):
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == getattr(signal, "SIGXCPU", -1):
            return "Timeout"
        return "Crash(%s)" % _signal_name(sig)
    if os.WIFEXITED(status):
        return "Crash(exit %d)" % os.WEXITSTATUS(status)
    return "Crash(unknown)"


def _module_imports(tree):
    """Modules a source imports (anywhere), plus the submodules it reaches through attributes
    of imported names (``np.random.rand`` -> ``numpy.random``): packages load those lazily,
    which a child that dropped its privileges may no longer be able to do."""
    names = []
    alias = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names.append(a.name)
                if a.asname:
                    alias[a.asname] = a.name
                else:
                    alias[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.append(node.module)
                for a in node.names:
                    names.append(node.module + "." + a.name)
                    alias[a.asname or a.name] = node.module + "." + a.name
    if alias:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                parts = []
                cur = node
                while isinstance(cur, ast.Attribute):
                    parts.append(cur.attr)
                    cur = cur.value
                if isinstance(cur, ast.Name) and cur.id in alias:
                    dotted = alias[cur.id]
                    for part in reversed(parts[1:]):  # the last attribute is rarely a module
                        dotted += "." + part
                        names.append(dotted)
    seen = set()
    out = []
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out[:300]


@lru_cache(maxsize=64)
def _anchor_records(anchor, error):
    """The input index of each record of task ``anchor`` that raised ``error``, found in a chunk
    of forwarded records."""
    return re.compile(br'(?:^|\n)%d (-?[0-9]+) \["raise",null,null,"%s"\]' % (anchor, error))


def _source_imports(source):
    """``_module_imports`` of a source; most generated programs import nothing, and one that has
    no "import" in its text cannot (a parse and two walks of the tree cost a program 0.17 ms)."""
    if "import" not in source:
        return []
    return _module_imports(ast.parse(source))


def _vm_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except BaseException:
        return 0


def _prctl_pdeathsig():
    """Return a function that makes the calling process die with its parent (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl

        def set_pdeathsig():
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

        return set_pdeathsig
    except BaseException:
        return None


def _isolate_as_root(tmp):
    """Guard mode as root (bubblewrap missing or not working): the audit hook stops Python-level
    writes and connections, but ctypes calls libc directly, and the children's own uid may still
    create files in world-writable directories (/tmp, /var/tmp, /dev/shm) and connect to any
    address, loopback included.  So the zygote, while still root, moves into a network namespace
    of its own (no interface but a down loopback: every connect fails) and a mount namespace of its
    own where every mount is read-only except ``tmp``, the run's temp dir.  Its children inherit
    both.  Nothing changes outside this process tree.  Returns what it could not do (best effort:
    without CAP_SYS_ADMIN, e.g. in a container, the guards stay as they were)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    problems = []
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
        MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 0x20, 0x1000, 0x4000, 1 << 18
        if libc.unshare(CLONE_NEWNET) != 0:
            problems.append("network namespace: errno %d" % ctypes.get_errno())
        if libc.unshare(CLONE_NEWNS) != 0:
            problems.append("mount namespace: errno %d" % ctypes.get_errno())
            return problems
        # our mounts stop propagating to the host's namespace
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            problems.append("private mounts: errno %d" % ctypes.get_errno())
            return problems
        # every mount read-only: mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, {MOUNT_ATTR_RDONLY})
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", 1, 0, 0, 0), 32)
        if libc.syscall(442, -100, b"/", 0x8000, attr, 32) != 0:
            # an older kernel: remount each mount point read-only, one by one
            with open("/proc/self/mountinfo", "rb") as f:
                points = [line.split()[4] for line in f.read().splitlines() if len(line.split()) > 4]
            for point in points:
                point = point.replace(b"\\040", b" ")
                libc.mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
        # the run's temp dir writable again: a bind mount of it, remounted read-write
        real = os.path.realpath(tmp).encode()
        if libc.mount(real, real, None, MS_BIND, None) != 0 or libc.mount(
            None, real, None, MS_REMOUNT | MS_BIND, None
        ) != 0:
            problems.append("writable temp dir: errno %d" % ctypes.get_errno())
    except BaseException as e:
        problems.append(_describe_exc(e))
    return problems


def _setrlimit(which, soft, extra=0):
    """Lower a limit (soft, and hard = soft + extra so the program cannot raise it again)."""
    if resource is None:
        return
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
            new_hard = min(soft + extra, hard)
        else:
            new_hard = soft + extra
        resource.setrlimit(which, (soft, new_hard))
    except BaseException:
        try:
            resource.setrlimit(which, (soft, resource.getrlimit(which)[1]))
        except BaseException:
            pass


# --------------------------------------------------------------------------------------------
# fast paths for flat values (the common case: ints, strings and lists of them)
# --------------------------------------------------------------------------------------------
# Both must agree exactly with the general canonicalizer: a value takes the fast path in one
# program and, say, a subclass takes the slow one in another, and their keys must still match.

_FLAT = frozenset((int, str, bool, float, type(None)))
_FLAT_LEN = 4096  # well under MAX_NODES: long sequences take the general path and its caps
_LIM = 1 << 62
_enc_str = json.encoder.encode_basestring_ascii


def _modules_mark():
    """What changes when a module is imported: cheap, unlike a walk over ``sys.modules``, which
    touches every module object and so copies their pages in a forked child."""
    try:
        return len(sys.modules), next(reversed(sys.modules.keys()))
    except BaseException:  # before 3.8 dict views are not reversible: always look
        return None


def _draws(roots, scanned):
    """Whether a module loaded from under ``roots`` (the workspace) may draw random numbers:
    its source mentions random, the same test as for the program's own text.  ``scanned`` holds
    the files already read (none of them does), so a second look reads only new modules.
    Conservative: a virtualenv inside the workspace counts as workspace."""
    for mod in list(sys.modules.values()):
        try:  # anything can sit in sys.modules, with any __getattr__
            f = getattr(mod, "__file__", None)
        except BaseException:
            continue
        if type(f) is not str or f in scanned or not f.startswith(roots):
            continue
        try:
            with open(f, "rb") as fh:
                text = fh.read()
        except BaseException:
            text = b"random"  # unreadable (a compiled extension is read as bytes): assume it draws
        if b"random" in text:
            return True
        scanned.add(f)
    return False


def _snapshotter(canon, dump):
    """``take(argv)`` before a call and ``changed(before, argv)`` after it: the canonical JSON
    (bytes) of the arguments when the call changed them, else None.

    Flat arguments (scalars, and lists or tuples of scalars) are kept as shallow copies and
    compared by identity, element by element: a fraction of a microsecond, where their repr (or
    canonical structure) cost a few per call.  Scalars cannot change in place, so equal identities
    mean an unchanged argument; different ones (``xs.sort()``, or ``xs[0] = xs[0] + 0`` for a big
    int) are settled element by element as their canonical structures would be (``_flat_same``),
    so an equal value put back is no change, and only a changed call canonicalizes its arguments.
    Anything else is compared by canonical structure."""
    flat = _FLAT
    same = operator.is_

    def take(argv):
        copies = None
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
            return canon(argv, False)
        return argv if copies is None else tuple(copies)

    def changed(before, argv):
        if type(before) is tuple:
            for a, b in zip(argv, before):
                if a is not b and (len(a) != len(b) or not all(map(same, a, b))):
                    kept = _flat_same(a, b)
                    if kept is None:  # something not flat came in: compare the structures
                        after = canon(argv, False)
                        return dump(after, argv).encode("ascii") if after != canon(before, False) else None
                    if not kept:
                        return _flat_args(argv) or dump(canon(argv, False), argv).encode("ascii")
            return None
        after = canon(argv, False)
        return dump(after, argv).encode("ascii") if after != before else None

    return take, changed


def _flat_same(a, b):
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


def _scalars_json(r):
    """The canonical JSON of each element of ``r``, joined by commas, when every element is a
    flat scalar (an int of less than 63 bits, str, float, bool or None); else None."""
    parts = []
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


def _flat_args(argv):
    """Canonical JSON (bytes) of the argument tuple ``argv`` when each argument is a flat scalar
    or a flat list or tuple (the usual in-place sort), else None."""
    parts = []
    for a in argv:
        ta = type(a)
        if ta is list or ta is tuple:
            part = _flat_seq(a, ta)
            if part is None:
                return None
            parts.append(part.decode("ascii"))
        else:
            part = _scalars_json((a,))
            if part is None:
                return None
            parts.append(part)
    text = '["T",[' + ",".join(parts) + "]]"
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def _flat_seq(r, tr):
    """Canonical JSON (bytes) of a list/tuple of flat scalars, or None for anything else."""
    n = len(r)
    if n > _FLAT_LEN:
        return None
    if n == 0:
        return b'["L",[]]' if tr is list else b'["T",[]]'
    kinds = set(map(type, r))
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind is int:
        if min(r) <= -_LIM or max(r) >= _LIM:
            return None
        body = ",".join(map('["I","%d"]'.__mod__, r))
    elif kind is str:
        body = ",".join(['["S",' + e + "]" for e in map(_enc_str, r)])
    else:
        body = _scalars_json(r)  # mixed (an int and a str), floats, bools, Nones
        if body is None:
            return None
    text = ('["L",[' if tr is list else '["T",[') + body + "]]"
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def _scalar_json(e):
    """The canonical JSON of one flat scalar (see ``_scalars_json``), or None."""
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


def _flat_map(r):
    """Canonical JSON (bytes) of a dict whose keys and values are flat scalars (a word count), or
    None for anything else.  The general path took 2 us per call for a dict of one item and 6 us
    for three: more than most calls that return one."""
    n = len(r)
    if n > _FLAT_LEN:
        return None
    items = []
    add = items.append
    for k, v in r.items():
        ke = _scalar_json(k)
        if ke is None:
            return None
        ve = _scalar_json(v)
        if ve is None:
            return None
        add((ke, "[" + ke + "," + ve + "]"))
    if n > 1:
        # by key alone, and stable: two NaN keys keep their order, as in the general path
        items.sort(key=_first)
    text = '["D",[' + ",".join([x for _, x in items]) + "]]"
    if len(text) > SIZE_CAP:
        return None  # the general path applies the size cap
    return text.encode("ascii")


def _flat_set(r):
    """Canonical JSON (bytes) of a set or frozenset of flat scalars, or None for anything else."""
    if len(r) > _FLAT_LEN:
        return None
    parts = list(map(_scalar_json, r))
    if None in parts:
        return None
    parts.sort()
    text = '["E",[' + ",".join(parts) + "]]"
    if len(text) > SIZE_CAP:
        return None
    return text.encode("ascii")


_first = operator.itemgetter(0)


# --------------------------------------------------------------------------------------------
# the zygote
# --------------------------------------------------------------------------------------------


class Zygote(object):
    def __init__(self, job):
        self.job = job
        self.preimported = set()  # names preimport tried (failures included)
        self.out_fd = job["fd"]
        lim = job.get("limits") or {}
        self.call_timeout = float(lim.get("call_timeout", 1.0))
        self.program_budget = float(lim.get("program_budget", 20.0))
        self.load_timeout = float(lim.get("load_timeout", 30.0))
        self.prog_load_timeout = min(self.load_timeout, max(5.0, 2 * self.call_timeout))
        self.memory_mb = int(lim.get("memory_mb", 1024))
        self.file_size_mb = int(lim.get("file_size_mb", 16))
        self.max_output = int(lim.get("max_output_kb", 64)) * 1024
        jobs = int(lim.get("jobs", 0) or 0)
        if jobs <= 0:
            try:
                jobs = len(os.sched_getaffinity(0))
            except BaseException:
                jobs = os.cpu_count() or 1
        self.jobs = max(1, jobs)
        # children forked ahead and parked until a slot frees up (see schedule)
        self.max_parked = min(16, 4 * self.jobs)
        self.seed = int(job.get("seed", 0))
        self._read_order(job)
        self.cuts = [1 << 60, 1 << 60]
        self.rank = []  # input index -> position in the order (set by schedule)
        self.order = None  # see _order
        self.allowed_all = None  # see allowed_for
        self.child_fds = set()  # descriptors a new child closes (its siblings' pipes)
        self.told = None  # see schedule
        self.preforked = {}  # task number -> child forked before the inputs came (see prefork)
        self.tasks = None  # see _make_tasks
        self.next_uid = None
        self.memfd = None  # see prefork
        self.tmp = job["tmp"]
        self.out_buf = []
        self.running = {}  # fd -> child
        self.guard = {"mode": "load", "root": os.path.realpath(self.tmp)}
        # armed, fired, start of the call in progress, its limit (None: a one-shot timer is set)
        self.timer = [False, False, 0.0, None]
        self.sink_out = _Sink(self.max_output)
        self.sink_err = _Sink(self.max_output)

    def _read_order(self, job):
        # inputs run after all others (the executor ordered them last): see child_main
        self.late = frozenset(i for i in job.get("late") or () if isinstance(i, int))
        # The task whose left-out inputs are left out for every program (the caller drops an
        # input any program did not reach, and never drops this program): once it leaves inputs
        # out, the others skip them.  cuts: the first position in the order it left out, among
        # the likely inputs and among the late ones (see note_left_out).
        anchor = job.get("anchor")
        self.anchor = anchor if isinstance(anchor, int) and not isinstance(anchor, bool) else None

    def receive_inputs(self):
        """A job sent ahead of its inputs ("inputs_follow", see serve) gets them here, as the
        next frame on the warm worker's stdin: the module and the programs are loaded by then,
        while the parent was still generating the inputs.  False when the parent gave up on the
        run (an empty frame, or EOF)."""
        fd = self.job.pop("inputs_fd", None)
        if fd is None:
            return True
        more = None
        try:
            header = _read_line(fd)
            raw = _read_exact(fd, int(header)) if header else None
            if raw:
                more = json.loads(raw.decode("utf-8"))
        except BaseException:
            more = None
        finally:
            try:
                os.close(fd)
            except OSError:
                pass
        if not isinstance(more, dict) or not isinstance(more.get("inputs"), list):
            return False
        for key in INPUT_KEYS:
            self.job[key] = more.get(key)
        self._read_order(self.job)
        return True

    # -- output to the parent ---------------------------------------------------------------
    def emit(self, line):
        self.out_buf.append(line)

    def flush(self):
        if not self.out_buf:
            return
        data = b"".join(self.out_buf)
        self.out_buf = []
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.out_fd, view)
            except InterruptedError:
                continue
            view = view[n:]

    def emit_json(self, t, i, obj):
        self.emit(b"%d %d %s\n" % (t, i, _enc(obj).encode("ascii")))

    # -- timer -----------------------------------------------------------------------------
    def _on_alarm(self, signum, frame):
        timer = self.timer
        if not timer[0]:
            return
        if timer[3] is None:  # a one-shot timer ran out (see timed)
            timer[1] = True
            signal.setitimer(signal.ITIMER_REAL, 0.05)  # keep poking code that swallows it
            raise _Timeout()
        if time.monotonic() - timer[2] >= timer[3]:  # a tick of the calls' timer (see child_main)
            timer[1] = True
            raise _Timeout()  # the next tick pokes again if the code swallows it

    def timed(self, seconds, fn, *args):
        """fn(*args) under the SIGALRM timer; raises _Timeout when it ran out of time."""
        timer = self.timer
        timer[1] = False
        try:
            timer[0] = True
            signal.setitimer(signal.ITIMER_REAL, seconds)
            result = fn(*args)
        finally:
            timer[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            if timer[1]:
                timer[1] = False
                raise _Timeout()
        return result

    def _on_term(self, signum, frame):
        self.guard["mode"] = "zygote"
        # and the children forked ahead, parked before schedule took them in (see prefork)
        running = list({c["pid"]: c for c in list(self.running.values()) + list(self.preforked.values())}.values())
        for c in running:
            self.kill(c)
        until = time.monotonic() + 1.0
        for c in running:
            while time.monotonic() < until:
                try:
                    if os.waitpid(c["pid"], os.WNOHANG)[0]:
                        break
                except OSError:
                    break
                time.sleep(0.002)
        os._exit(1)

    # -- setup -------------------------------------------------------------------------------
    def setup(self):
        job = self.job
        try:
            if hasattr(sys, "set_int_max_str_digits"):
                sys.set_int_max_str_digits(0)
        except BaseException:
            pass
        sys.dont_write_bytecode = True
        os.makedirs(self.tmp, exist_ok=True)
        try:
            os.chmod(self.tmp, 0o711)
        except OSError:
            pass
        if job.get("isolate", True):
            self.isolation_problems = _isolate_as_root(self.tmp)
        # sys.path: the module context's entries first, then the interpreter's own path
        path = list(job.get("module", {}).get("sys_path") or [])
        path += [p for p in (job.get("path") or []) if p]
        seen = set()
        new = []
        for p in path + list(sys.path):
            if p not in seen:
                seen.add(p)
                new.append(p)
        sys.path[:] = new
        self._editable_pth(job.get("site_dirs") or [])
        signal.signal(signal.SIGALRM, self._on_alarm)
        for name in ("SIGINT", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                try:
                    signal.signal(sig, signal.SIG_DFL)
                except BaseException:
                    pass
        # SIGTERM from the parent: kill and reap the children, then leave (nothing orphaned)
        signal.signal(signal.SIGTERM, self._on_term)
        if resource is not None:
            _setrlimit(resource.RLIMIT_CORE, 0)
        self.set_pdeathsig = _prctl_pdeathsig()
        if self.set_pdeathsig is not None and job.get("die_with_parent", True):
            try:
                self.set_pdeathsig()
            except BaseException:
                pass
        self.guard["private"] = tuple(os.path.realpath(p) for p in job.get("private") or () if p)
        allow = [os.path.realpath(p) for p in (job.get("allow") or []) + sys.path if p and os.path.isabs(p)]
        self.guard["allow"] = tuple(allow) + (self.guard["root"],)
        install_guard(self.guard)
        sys.stdout = self.sink_out
        sys.stderr = self.sink_err
        sys.stdin = io.StringIO("")
        self.canon, self.dump = make_canonicalizer()

    def _editable_pth(self, site_dirs):
        """-S skipped site.py; run the import lines of editable-install .pth files ourselves
        (their plain path lines already are in ``path``)."""
        for d in site_dirs:
            try:
                names = sorted(os.listdir(d))
            except OSError:
                continue
            for name in names:
                if not name.endswith(".pth") or "editable" not in name.lower():
                    continue
                try:
                    with open(os.path.join(d, name)) as f:
                        lines = f.read().splitlines()
                except OSError:
                    continue
                for line in lines:
                    if line.startswith(("import ", "import\t")):
                        try:
                            exec(line, {"sys": sys, "os": os})
                        except BaseException:
                            pass

    def preimport(self, names):
        tried = self.preimported
        for name in names:
            if name in sys.modules or name in tried:
                continue
            # a name that is not a module ("typing.List") fails after a search of every path
            # entry: once per run, not once per program that imports it
            tried.add(name)
            try:
                self.timed(self.load_timeout, __import__, name)
            except BaseException:
                pass

    def load_module(self):
        mod_spec = self.job.get("module") or {}
        name = mod_spec.get("module_name") or "coherence_target"
        filename = mod_spec.get("filename") or "<module>"
        source = mod_spec.get("source")
        module = types.ModuleType(name)
        module.__file__ = filename
        sys.modules[name] = module
        self.module = module
        if source is None:
            exec("", module.__dict__)
            return None
        try:
            code = compile(source, filename, "exec", dont_inherit=True)
        except BaseException as e:
            return _describe_exc(e)
        try:
            self.preimport(_source_imports(source))
        except BaseException:
            pass
        try:
            self.timed(self.load_timeout, exec, code, module.__dict__)
        except _Timeout:
            return "Timeout: the module took longer than %gs to import" % self.load_timeout
        except BaseException as e:
            return _describe_exc(e)
        return None

    def prepare_programs(self):
        self.programs = []
        for spec in self.job["programs"]:
            entry = spec.get("entry_point") or ""
            source = spec.get("source")
            info = {"entry": entry, "code": None, "error": None, "source": source or "",
                    "owner": spec.get("owner"), "kind": spec.get("kind")}
            if source is not None:
                try:
                    info["code"] = compile(source, "<%s>" % (spec.get("label") or "program"), "exec",
                                           dont_inherit=True)
                    self.preimport(_source_imports(source))
                except BaseException as e:
                    info["error"] = _describe_exc(e)
            elif info["owner"]:
                cls = self.module.__dict__.get(info["owner"])
                if not isinstance(cls, type) or entry not in cls.__dict__:
                    info["error"] = "the module defines no method %s.%s" % (info["owner"], entry)
            else:
                f = self.module.__dict__.get(entry)
                if f is None:
                    info["error"] = "the module defines no function named %r" % entry
            self.programs.append(info)

    def bind_method(self, info, ns):
        """(function to call, class to build the receiver from or None, load error or None).

        An alternative takes the method's place in the user's class itself: each program runs in
        a process of its own, and the rest of the class (its other methods, the attributes
        ``__init__`` sets up) is the module context every program shares."""
        owner, entry, kind = info["owner"], info["entry"], info["kind"] or "instance"
        cls = self.module.__dict__.get(owner)
        if not isinstance(cls, type):
            return None, None, "the module defines no class named %r" % owner
        if info["code"] is not None:
            theirs = ns.get(owner)
            raw = None
            extras = {}
            if isinstance(theirs, type) and theirs is not cls:
                # they wrote the whole class: take the method, and the helpers the user's class lacks
                raw = theirs.__dict__.get(entry)
                extras = dict((k, v) for k, v in theirs.__dict__.items()
                              if k not in cls.__dict__ and not (k.startswith("__") and k.endswith("__")))
                ns[owner] = cls
            if raw is None:
                raw = ns.get(entry)
                if raw is not None and raw is self.module.__dict__.get(entry):
                    raw = None
            if raw is None:
                return None, None, "the program defines no method named %r" % entry
            if kind == "static" and not isinstance(raw, staticmethod):
                raw = staticmethod(raw)
            elif kind == "class" and not isinstance(raw, classmethod):
                raw = classmethod(raw)
            for k, v in extras.items():
                setattr(cls, k, v)
            setattr(cls, entry, raw)
        # (the user's own method: prepare_programs made sure the class defines it)
        f = getattr(cls, entry)
        if not callable(f):
            return None, None, "%s.%s is not callable" % (owner, entry)
        if kind != "instance":
            return f, None, None
        try:
            self.timed(self.prog_load_timeout, cls)
        except _Timeout:
            return None, None, "Timeout: building %s() took longer than %gs" % (owner, self.prog_load_timeout)
        except BaseException as e:
            return None, None, "%s() cannot be built without arguments: %s" % (owner, _describe_exc(e))
        return f, cls, None

    def prepare_inputs(self):
        """Make every input loadable afresh per call (that is the per-call deep copy): plain data
        the parent packed with marshal loads from its bytes (kept as they are: each call loads
        them), ten times cheaper than compiling; the rest compiles once, as ``lambda:
        (<source>)``, in one compile when possible."""
        sources = self.job["inputs"]
        self.input_codes = [None] * len(sources)
        a2b = binascii.a2b_base64
        loads = marshal.loads
        trusted = False
        for i, b64 in enumerate(self.job.get("packed") or ()):
            if b64 is None or i >= len(sources):
                continue
            try:
                data = a2b(b64)
                if not data.startswith(_PACKED_PAIR):
                    continue  # not an (args, kwargs) pair: its source compiles
                if not trusted:
                    # An interpreter that cannot read the parent's marshal data compiles the
                    # sources instead.  All of it comes from one marshal version: once one input
                    # loads, so do the others (loading each here cost 1 us per input).
                    args, kwargs = loads(data)
                    if type(args) is not tuple or type(kwargs) is not dict:
                        continue
                    trusted = True
                self.input_codes[i] = ("marshal", data)
            except BaseException:
                pass
        # one lambda per two lines; multi-line sources (rare) are compiled one by one
        todo = [i for i in range(len(sources)) if self.input_codes[i] is None
                and "\n" not in sources[i] and "\r" not in sources[i]]
        chunk = 500
        for start in range(0, len(todo), chunk):
            part = todo[start:start + chunk]
            text = "".join("(lambda: (%s\n))\n" % sources[i] for i in part)
            lines = {}
            try:
                code = compile(text, "<input>", "exec", dont_inherit=True)
                for c in code.co_consts:
                    if isinstance(c, types.CodeType):
                        lines[c.co_firstlineno] = c
                if sorted(lines) != list(range(1, 2 * len(part), 2)):
                    lines = {}  # an odd source changed the layout: compile one by one
            except BaseException:
                lines = {}
            for k, i in enumerate(part):
                c = lines.get(2 * k + 1)
                if c is not None:
                    self.input_codes[i] = ("fn", c)
        for i, src in enumerate(sources):
            if self.input_codes[i] is None:
                self.input_codes[i] = self._compile_input(src)

    @staticmethod
    def _compile_input(src):
        try:
            outer = compile("lambda: (" + src + "\n)", "<input>", "eval", dont_inherit=True)
            for c in outer.co_consts:
                if isinstance(c, types.CodeType):
                    return ("fn", c)
        except BaseException:
            pass
        try:
            return ("eval", compile(src, "<input>", "eval", dont_inherit=True))
        except BaseException:
            return None

    # -- scheduling --------------------------------------------------------------------------
    def run(self):
        self.setup()
        self.preimport(PREIMPORT_CORE)
        if not self._children_can_import():
            self.preimport(PREIMPORT)
        err = self.load_module()
        self.guard["mode"] = "zygote"
        self.emit_json(-1, 0, err)
        if err is not None:
            self.emit(b"-1 2 null\n")
            self.flush()
            return
        self.guard["mode"] = "load"
        texts = [p.get("source") or "" for p in self.job["programs"]]
        texts.append((self.job.get("module") or {}).get("source") or "")
        if any("async" in t for t in texts):
            self.preimport(("asyncio",))
        self.prepare_programs()
        # read here, where the workspace is readable: children of root run as nobody
        mod_spec = self.job.get("module") or {}
        dirs = [d for d in mod_spec.get("sys_path") or () if d]
        self.workspace_roots = tuple({os.path.join(x, "") for d in dirs for x in (d, os.path.realpath(d))})
        self.scanned = {mod_spec.get("filename")}  # the module's source is checked as text already
        self.workspace_draws = bool(self.workspace_roots) and _draws(self.workspace_roots, self.scanned)
        self.modules_scanned = _modules_mark()
        self.guard["mode"] = "zygote"
        sys.stdout = self.sink_out
        sys.stderr = self.sink_err
        self.flush()
        if self.job.get("inputs_fd") is not None:
            self.prefork()
        if not self.receive_inputs():
            self._drop_preforked()  # and their directories: the job's must be left empty
            return
        self.prepare_inputs()
        if self.preforked:
            self.publish_inputs()
        self.schedule()
        self.emit(b"-1 2 null\n")
        self.flush()

    @staticmethod
    def _children_can_import():
        """Whether a child that dropped to "nobody" can still read the standard library (so
        lazy imports inside stdlib functions keep working without pre-importing them)."""
        if not hasattr(os, "geteuid") or os.geteuid() != 0:
            return True
        try:
            path = os.path.dirname(os.path.realpath(os.__file__))
            st = os.stat(os.path.join(path, "os.py"))
            if not st.st_mode & 0o004:
                return False
            while True:
                if not os.stat(path).st_mode & 0o001:
                    return False
                parent = os.path.dirname(path)
                if parent == path:
                    return True
                path = parent
        except OSError:
            return False

    def prefork(self):
        """Fork the first children, one per program up to the slots and the spare ones, while the
        parent is still making the inputs: a child's fork, setup and program load (about 1.5 ms
        each) then run on a core that would wait for the inputs, not in the run.  They park
        with their programs loaded; publish_inputs hands them the inputs and schedule releases
        them like any parked child.  Nothing happens where the inputs cannot be handed over
        this way (no memfd or no file seals)."""
        if fcntl is None or not hasattr(os, "memfd_create") or not hasattr(fcntl, "F_ADD_SEALS"):
            return
        try:
            if select.select([self.job["inputs_fd"]], [], [], 0)[0]:
                # The inputs are there already (cached ones, a shrinking round): nothing to wait
                # for, and forking ahead would only add the hand-over (re-checks took 4 ms more).
                return
        except (OSError, ValueError):
            return
        tasks = [t for t in self._make_tasks() if t["program"]["error"] is None][: self.jobs + self.max_parked]
        if not tasks:
            return
        try:
            self.memfd = os.memfd_create("coherence-inputs", os.MFD_ALLOW_SEALING)
        except (OSError, AttributeError):
            return
        self._share_told(_PREFORK_INPUTS)
        self._before_forks()
        # the worker's stdin, where this leader reads its inputs, is no child's business
        stdin = self.job.get("inputs_fd")
        self.child_fds.add(stdin)
        try:
            children = self.spawn_all([(task, None, True) for task in tasks])
        finally:
            self.child_fds.discard(stdin)
        for child in children:
            self.preforked[child["task"]["t"]] = child
        # The memfd is for these children alone: publish_inputs closes the leader's copy before
        # any other fork, so no later child inherits it.

    def publish_inputs(self):
        """Write the inputs where the children forked before them read them (see prefork): the
        order, the late inputs, the anchor and each input's maker, marshalled into the memfd,
        which is then sealed against writes and read back.  Generated code ran in those
        children (each loaded its program), and could have written to the memfd, which they
        hold: whatever it wrote is overwritten or cut off before the seal, and after it nothing
        can be written.  If any of this fails, the children are killed and the programs start
        afresh like the others."""
        fd, self.memfd = self.memfd, None
        ok = len(self.input_codes) + _TOLD_HANGS <= len(self.told)
        try:
            if ok:
                blob = marshal.dumps((self._order(), sorted(self.late), self.anchor, self.input_codes))
                view = memoryview(blob)
                done = 0
                while done < len(blob):
                    done += os.pwrite(fd, view[done:], done)
                os.ftruncate(fd, len(blob))
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
                ok = os.fstat(fd).st_size == len(blob) and _pread_all(fd, len(blob)) == blob
        except (OSError, ValueError, TypeError):
            ok = False
        finally:
            os.close(fd)
        if not ok:
            self._drop_preforked()

    def _drop_preforked(self):
        for c in self.preforked.values():
            self.kill(c)
            try:
                os.waitpid(c["pid"], 0)
            except OSError:
                pass
            for fd in (c["fd"], c["go"]):
                self.child_fds.discard(fd)
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._rmtree(c["cwd"])
        self.preforked = {}

    def inputs_from_memfd(self):
        """In a child forked before the inputs came: what publish_inputs wrote (the order it
        runs them in)."""
        fd = self.memfd
        try:
            blob = _pread_all(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        order, late, anchor, codes = marshal.loads(blob)
        self.input_codes = codes
        self.late = frozenset(late)
        self.anchor = anchor
        self.rank = rank = [0] * len(order)
        for p, i in enumerate(order):
            rank[i] = p
        return order

    def _make_tasks(self):
        """One task per program to run (the job's "tasks", or one per program), made once."""
        if self.tasks is None:
            specs = self.job.get("tasks")
            if specs is None:
                specs = [{"program": p} for p in range(len(self.programs))]
            self.tasks = [{
                "t": t,
                "program": self.programs[int(spec.get("program", t))],
                "deadline": None,
                "seed": int(spec.get("seed", self.seed)),
                "restarts": 0,
                "stalls": 0,
            } for t, spec in enumerate(specs)]
        return self.tasks

    def _order(self):
        """The order every program runs the inputs in (the job's, when it is one); checked once
        (publish_inputs and schedule both ask)."""
        n = len(self.input_codes)
        if self.order is None or len(self.order) != n:
            order = self.job.get("order")
            if not (isinstance(order, list) and len(order) == n and sorted(order) == list(range(n))):
                order = list(range(n))
            self.order = order
        return self.order

    def _share_told(self, n):
        """What the anchor task tells the other programs, shared with every child: its cuts (see
        note_left_out), then one byte per input it timed out on (see child_main: a program that
        hangs on one of them too skips the others), for ``n`` inputs.  Children forked before
        the inputs came (see prefork) keep the one made then, which is large enough."""
        if self.told is None or len(self.told) < _TOLD_HANGS + n:
            self.told = mmap.mmap(-1, _TOLD_HANGS + max(1, n))
        struct.pack_into("qq", self.told, 0, *self.cuts)

    def _before_forks(self):
        """What every child is forked with: the shared objects out of the collector's sight, the
        address-space limit, the first child uid."""
        # Everything built so far is shared with every child.  Out of the collector's sight, it is
        # not traversed (and so not copied page by page) each time a child's allocations trigger
        # a collection: that cost a child 3 ms before its first call.
        gc.freeze()
        vm = _vm_bytes()
        self.as_limit = vm + self.memory_mb * 1024 * 1024 if vm else self.memory_mb * 1024 * 1024
        if self.next_uid is None:
            try:
                self.next_uid = CHILD_UID_BASE + int.from_bytes(os.urandom(4), "big") % (CHILD_UID_SPAN - 1000000)
            except BaseException:
                self.next_uid = CHILD_UID_BASE + os.getpid() * 1000 % CHILD_UID_SPAN

    def schedule(self):
        n = len(self.input_codes)
        queue = []
        order = self._order()
        self.rank = rank = [0] * n
        for p, i in enumerate(order):
            rank[i] = p
        self._share_told(n)
        if self.anchor is not None:
            self.left_out = _anchor_records(self.anchor, b"BudgetExceeded")
            self.hung = _anchor_records(self.anchor, b"Timeout")
        running = self.running
        for task in self._make_tasks():
            t = task["t"]
            info = task["program"]
            if info["error"] is not None:
                self.emit_json(t, -1, info["error"])
                continue
            child = self.preforked.get(t)
            if child is not None:  # parked with its program loaded: released in this order
                child["indices"] = list(order)
                child["allowed"] = self.allowed_for(child["indices"])
                running[child["fd"]] = child
                continue
            queue.append((task, list(order)))
        self.flush()
        self._before_forks()
        while queue or running:
            now = time.monotonic()
            waiting = [c for c in running.values() if c["parked"]]  # in the queue's order
            active = len(running) - len(waiting)
            # A restarted task (its child died in a call) goes before the parked ones: its budget
            # is running, and theirs has not started.
            restart_first = bool(queue) and queue[0][0]["deadline"] is not None
            while waiting and active < self.jobs and not restart_first:
                self.release(waiting.pop(0), now)
                active += 1
            parked = len(waiting)
            wanted = []
            while queue and active < self.jobs:
                task, indices = queue.pop(0)
                wanted.append((task, indices, False))
                active += 1
            # Spare children, forked while the others run and parked with their programs loaded,
            # take the next free slots at once (a fork, the program's load and the child's setup
            # cost 3-4 ms per program).  They are forked several at a time: see spawn_all.  A
            # restart waits in the queue for the next slot instead, ahead of them.
            if queue and parked < self.jobs:
                while queue and parked < self.max_parked and queue[0][0]["deadline"] is None:
                    task, indices = queue.pop(0)
                    wanted.append((task, indices, True))
                    parked += 1
            for child in self.spawn_all(wanted):
                if child is not None:
                    running[child["fd"]] = child
            if not running:
                continue
            fds = [fd for fd, c in running.items() if not c["eof"]]
            # short ticks while a child is gone from its pipe but not yet reaped
            tick = 0.02 if len(fds) == len(running) else 0.002
            try:
                ready = select.select(fds, [], [], tick)[0] if fds else []
            except InterruptedError:
                ready = []
            if not fds:
                time.sleep(tick)
            for fd in ready:
                self.read_child(running[fd])
            now = time.monotonic()
            for fd in list(running):
                c = running[fd]
                if self.check_child(c, now):
                    del running[fd]
                    self.child_fds.discard(fd)
                    follow = self.finish_child(c)
                    if follow is not None:
                        queue.insert(0, follow)
            self.flush()

    def spawn_all(self, wanted):
        """Fork a child for each ``(task, indices, park)`` of ``wanted`` (None for a task whose
        budget is gone).  A parked child loads its program, then waits for ``release`` to send
        its deadline; its time budget starts then.  ``indices`` None: forked before the inputs
        exist (see prefork).

        The forks come one right after the other.  After a fork every page of this process is
        copy-on-write again, so each page it writes until the next fork costs it a page fault
        and a copy: one fork per program, each after the previous program ended, cost a leader
        about 2,800 page faults while it ran ten programs, against about 850 forked together."""
        now = time.monotonic()
        made = []
        batch = []
        for task, indices, park in wanted:
            if not park:
                self.start_clock(task, now)
                if now >= task["deadline"]:
                    self.timeout_rest(task, indices)
                    made.append(None)
                    continue
            # shared slot: [position of the call in progress, positions written, load state]
            slot = mmap.mmap(-1, 24)
            struct.pack_into("qqq", slot, 0, -1, 0, 0)
            cwd = os.path.join(self.tmp, "p%d-%d" % (task["t"], task["restarts"]))
            task["restarts"] += 1
            uid = self.next_uid
            self.next_uid += 1
            try:
                os.mkdir(cwd, 0o700)
                if os.geteuid() == 0:
                    try:
                        os.chown(cwd, uid, uid)
                    except OSError:
                        os.chmod(cwd, 0o777)
            except OSError:
                cwd = self.tmp
            r, w = os.pipe()
            go_r, go_w = os.pipe() if park else (None, None)
            made.append((task, indices, park, slot, cwd, uid, r, w, go_r, go_w))
            batch += [fd for fd in (r, w, go_r, go_w) if fd is not None]
        self.flush()
        pids = []
        fork = os.fork
        for spec in made:
            if spec is None:
                pids.append(None)
                continue
            pid = fork()
            if pid == 0:
                self._child(spec, batch)
            pids.append(pid)
        out = []
        for spec, pid in zip(made, pids):
            if spec is None:
                out.append(None)
                continue
            task, indices, park, slot, cwd, uid, r, w, go_r, go_w = spec
            os.close(w)
            if go_r is not None:
                os.close(go_r)
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
            # what every child forked later closes (see child_main)
            self.child_fds.add(r)
            if go_w is not None:
                self.child_fds.add(go_w)
            out.append({
                "pid": pid, "fd": r, "slot": slot, "task": task, "indices": indices, "buf": b"",
                "eof": False, "status": None, "seen_pos": -2, "seen_time": now, "kill_reason": None,
                "cwd": cwd, "eof_time": None, "prefix": b"%d " % task["t"],
                "allowed": None if indices is None else self.allowed_for(indices),
                "records": _record_index(task["t"]),
                "diag": 0, "parked": park, "go": go_w,
            })
        return out

    def allowed_for(self, indices):
        """The input indices a child may write records for (and -1, its load line), as ints and
        as the bytes its records spell them in.  A child that runs every input (all but
        restarts) shares one pair per job: the sets cost 0.1 ms to build, and testing a
        thousand records' indices as bytes takes a third of the time it takes as ints."""
        full = len(indices) == len(self.input_codes)
        if full and self.allowed_all is not None:
            return self.allowed_all
        pair = (set(indices) | {-1}, set(b"%d" % i for i in indices) | {b"-1"})
        if full:
            self.allowed_all = pair
        return pair

    def _child(self, spec, batch):
        """A forked child: never returns."""
        task, indices, park, slot, cwd, uid, r, w, go_r, go_w = spec
        code = 1
        try:
            for fd in batch:  # its siblings' pipes: held here, they would never see EOF
                if fd != w and fd != go_r:
                    os.close(fd)
            self.child_main(task, indices, w, slot, cwd, uid, go_r)
            code = 0
        except BaseException:
            try:
                import traceback

                os.write(w, b"-1 1 " + _enc(traceback.format_exc()[-2000:]).encode("ascii") + b"\n")
            except BaseException:
                pass
        finally:
            os._exit(code)

    def start_clock(self, task, now):
        """A task's budget runs while one of its children holds a slot: it starts with the first
        child, and a restart (its child died in a call) is not charged for the time it waited for
        a slot, parked or queued."""
        if task["deadline"] is None:
            task["deadline"] = now + self.program_budget
        elif task.get("queued_at") is not None:
            task["deadline"] += now - task["queued_at"]
        task["queued_at"] = None

    def release(self, c, now):
        """Let a parked child start its calls: its time budget starts now (or went on from an
        earlier child of the same task)."""
        task = c["task"]
        self.start_clock(task, now)
        c["parked"] = False
        c["seen_time"] = now
        go, c["go"] = c["go"], None
        self.child_fds.discard(go)
        try:
            os.write(go, struct.pack("d", task["deadline"]))
        except OSError:
            pass  # it died while parked: it is reaped like any other
        try:
            os.close(go)
        except OSError:
            pass

    def timeout_rest(self, task, indices):
        # Not "Timeout": these inputs were never tried.  The caller leaves them out of the metrics
        # instead of reading the program's slowness as disagreement on every one of them.
        key = _enc(["raise", None, None, "BudgetExceeded"]).encode("ascii")
        t = task["t"]
        for i in indices:
            self.emit(b"%d %d %s\n" % (t, i, key))
        if t == self.anchor:
            self.note_left_out(indices)

    def note_left_out(self, indices):
        """The anchor task left these inputs out: so does every program from now on (the children
        read the cuts from the map they share with the leader)."""
        cuts = self.cuts
        old = list(cuts)
        rank, late = self.rank, self.late
        for i in indices:
            r = rank[i] if 0 <= i < len(rank) else None
            if r is not None:
                g = 1 if i in late else 0
                if r < cuts[g]:
                    cuts[g] = r
        if cuts != old:
            struct.pack_into("qq", self.told, 0, cuts[0], cuts[1])

    def read_child(self, c):
        """Forward the child's complete lines as they are (the child writes the parent's format)."""
        try:
            data = os.read(c["fd"], 1 << 16)
        except InterruptedError:
            return
        except OSError:
            data = b""
        if not data:
            c["eof"] = True
            c["eof_time"] = time.monotonic()
            try:
                _, written, load_state = struct.unpack_from("qqq", c["slot"], 0)
            except BaseException:
                written, load_state = 0, 0
            if written >= len(c["indices"]) or load_state == 2:
                # it finished and is exiting: reap it now rather than on the next tick
                try:
                    c["status"] = os.waitpid(c["pid"], 0)[1]
                except ChildProcessError:
                    c["status"] = 0
            return
        buf = c["buf"] + data if c["buf"] else data
        k = buf.rfind(b"\n")
        if k < 0:
            c["buf"] = buf
            if len(buf) > MAX_LINE:  # a flood without newlines: no record is that long
                c["buf"] = b""
                self.reject(c)
            return
        if k == len(buf) - 1:
            c["buf"] = b""
            chunk = buf
        else:
            c["buf"] = buf[k + 1:]
            chunk = buf[:k + 1]
            if len(c["buf"]) > MAX_LINE:
                c["buf"] = b""
                self.reject(c)
        # Forward only the child's own records: its task number, one of its inputs (or -1, the
        # load line), no longer than a record can be.  Generated code can write to this pipe
        # (it is an open descriptor in its process), and a forged line for another task or for
        # the module status ("-1 0", "-1 2") would change other programs' results.
        prefix = c["prefix"]
        allowed, allowed_b = c["allowed"]
        # The usual chunk, only well-formed records, is checked with a few passes in C: the
        # per-line loop below cost the leader 3 ms per thousand records, on every run's critical path.
        # One match per line means every line starts with the task's prefix and an index.
        n_lines = chunk.count(b"\n")
        if len(chunk) <= MAX_LINE or max(map(len, chunk.split(b"\n"))) <= MAX_LINE:
            found = c["records"].findall(b"\n" + chunk)
            if len(found) == n_lines and set(found) <= allowed_b:
                self.out_buf.append(chunk)
                self._note_anchor_records(c, chunk)
                return
        good = []
        bad = False
        for line in chunk.split(b"\n")[:-1]:
            if len(line) <= MAX_LINE:
                if line.startswith(prefix):
                    try:
                        i = int(line[len(prefix):line.index(b" ", len(prefix))])
                    except ValueError:
                        i = None
                    if i in allowed:
                        good.append(line)
                        continue
                elif line.startswith(b"-1 1 ") and c["diag"] < 3:  # its own traceback
                    c["diag"] += 1
                    good.append(line)
                    continue
            bad = True
        if good:
            good.append(b"")
            data = b"\n".join(good)
            self.out_buf.append(data)
            self._note_anchor_records(c, data)
        if bad:
            self.reject(c)

    def _note_anchor_records(self, c, data):
        """The inputs the anchor task's forwarded records leave out (see note_left_out), and
        those it timed out on."""
        if c["task"]["t"] != self.anchor:
            return
        if b"BudgetExceeded" in data:
            self.note_left_out([int(x) for x in self.left_out.findall(data)])
        if b'"Timeout"' in data:
            for x in self.hung.findall(data):
                self.note_anchor_hang(int(x))

    def note_anchor_hang(self, i):
        if 0 <= i < len(self.told) - _TOLD_HANGS:
            self.told[_TOLD_HANGS + i] = 1

    def reject(self, c):
        """The child wrote what no child writes: kill it; the input in progress gets the crash."""
        if c["kill_reason"] is None:
            c["kill_reason"] = "Crash(protocol)"
            self.kill(c)

    def check_child(self, c, now):
        """Watchdog; returns True when the child is gone (reaped, pipe drained)."""
        if c["status"] is None and (c["eof"] or now - c.get("polled", 0) > 0.05):
            c["polled"] = now
            try:
                pid, status = os.waitpid(c["pid"], os.WNOHANG)
            except ChildProcessError:
                pid, status = c["pid"], 0
            if pid:
                c["status"] = status
        if c["status"] is not None:
            while not c["eof"]:
                try:
                    ready = select.select([c["fd"]], [], [], 0)[0]
                except InterruptedError:
                    continue
                if not ready:
                    break
                self.read_child(c)
            return True
        if c["parked"]:
            return False  # waiting for a slot: no clock runs yet
        try:
            pos = struct.unpack_from("q", c["slot"], 0)[0]
        except BaseException:
            pos = c["seen_pos"]
        if pos != c["seen_pos"]:
            c["seen_pos"] = pos
            c["seen_time"] = now
            return False
        limit = self.prog_load_timeout + GRACE if pos < 0 else self.call_timeout + CALL_GRACE
        reason = None
        if now - c["seen_time"] > limit:
            reason = "Timeout"
        elif now > c["task"]["deadline"] + self.call_timeout + GRACE:
            reason = "Timeout"
        elif c["eof"] and now - c["eof_time"] > GRACE + 0.5:
            reason = "Crash(closed its pipe)"
        if reason is not None and c["kill_reason"] is None:
            c["kill_reason"] = reason
            self.kill(c)
        return False

    def kill(self, c):
        for fn in (lambda: os.killpg(c["pid"], signal.SIGKILL), lambda: os.kill(c["pid"], signal.SIGKILL)):
            try:
                fn()
            except OSError:
                pass

    def finish_child(self, c):
        """The child is reaped.  Record the outcome of the input in progress if it died in a
        call; return (task, remaining indices) for a fresh child, or None."""
        for fd in (c["fd"], c["go"]):
            if fd is not None:
                self.child_fds.discard(fd)
                try:
                    os.close(fd)
                except OSError:
                    pass
        try:
            os.killpg(c["pid"], signal.SIGKILL)  # anything left in its process group
        except OSError:
            pass
        task = c["task"]
        t = task["t"]
        indices = c["indices"]
        try:
            pos, written, load_state = struct.unpack_from("qqq", c["slot"], 0)
        except BaseException:
            pos, written, load_state = -1, 0, 0
        try:
            c["slot"].close()
        except BaseException:
            pass
        self._rmtree(c["cwd"])
        if load_state == 2:
            return None  # it reported its load error itself
        status = c["status"] or 0
        reason = c["kill_reason"] or _status_reason(status)
        if load_state == 0:
            self.emit_json(t, -1, "%s while loading the program" % reason)
            return None
        if written >= len(indices):
            return None  # finished normally
        remaining = indices[written:]
        cur = None
        if written <= pos < len(indices):
            cur = indices[pos]
        elif task["stalls"] >= 2:
            cur = remaining[0]  # dies between calls again and again: blame the next input
        else:
            task["stalls"] += 1
        if cur is not None:
            task["stalls"] = 0
            task["careful"] = True  # its replacement writes every record at once (see child_main)
            self.emit_json(t, cur, ["raise", None, None, reason])
            if t == self.anchor and reason == "Timeout":
                self.note_anchor_hang(cur)
            remaining = [i for i in remaining if i != cur]
        if not remaining:
            return None
        if task["deadline"] is not None and time.monotonic() >= task["deadline"]:
            self.timeout_rest(task, remaining)
            return None
        task["queued_at"] = time.monotonic()
        return (task, remaining)

    def _rmtree(self, path):
        if path == self.tmp:
            return
        try:
            os.rmdir(path)  # usually empty
            return
        except OSError:
            pass
        try:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
        except BaseException:
            pass

    # -- the child ---------------------------------------------------------------------------
    def child_main(self, task, indices, w, slot, cwd, uid=NOBODY, go=None):
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        for fd in [self.out_fd] + [x for x in self.child_fds if x != w]:
            try:
                os.close(fd)
            except OSError:
                pass
        signal.signal(signal.SIGALRM, self._on_alarm)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if resource is not None:
            _setrlimit(resource.RLIMIT_AS, self.as_limit)
            _setrlimit(resource.RLIMIT_FSIZE, self.file_size_mb * 1024 * 1024)
            # backstop only (SIGXCPU -> Timeout); the wall-clock watchdog acts first
            _setrlimit(resource.RLIMIT_CPU, int(self.program_budget + self.call_timeout + 5), 2)
            _setrlimit(resource.RLIMIT_NOFILE, max(64, w + 16))
            _setrlimit(resource.RLIMIT_CORE, 0)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            try:
                os.setgroups([])
            except BaseException:
                pass
            try:
                os.setgid(uid)
                os.setuid(uid)
            except BaseException:
                pass
        if self.set_pdeathsig is not None:
            try:
                self.set_pdeathsig()  # after the uid change, which clears it
            except BaseException:
                pass
        if os.getppid() == 1:
            os._exit(1)
        if resource is not None and hasattr(resource, "RLIMIT_NPROC"):
            _setrlimit(resource.RLIMIT_NPROC, 0)
        try:
            os.chdir(cwd)
        except OSError:
            pass
        os.environ["HOME"] = cwd
        os.environ["TMPDIR"] = cwd
        if "tempfile" in sys.modules:
            try:
                sys.modules["tempfile"].tempdir = cwd
            except BaseException:
                pass
        try:
            os.umask(0o077)
        except BaseException:
            pass
        self.guard["root"] = os.path.realpath(cwd)
        self.guard["mode"] = "child"
        sink_out = self.sink_out
        sink_err = self.sink_err
        sys.stdout = sink_out
        sys.stderr = sink_err

        pack = struct.pack_into
        t = task["t"]
        lines = []
        state = [0, time.monotonic()]  # bytes pending, last flush

        def flush(written):
            if lines:
                data = b"".join(lines)
                del lines[:]
                view = memoryview(data)
                while view:
                    try:
                        k = os.write(w, view)
                    except InterruptedError:
                        continue
                    view = view[k:]
            pack("q", slot, 8, written)
            state[0] = 0
            state[1] = time.monotonic()

        # load the program
        info = task["program"]
        ns = dict(self.module.__dict__)
        f = None
        load_error = None
        receiver = None
        try:
            if info["code"] is not None:
                self.timed(self.prog_load_timeout, exec, info["code"], ns)
            if info["owner"]:
                f, receiver, load_error = self.bind_method(info, ns)
            else:
                f = ns.get(info["entry"])
                if info["code"] is not None and f is not None and f is self.module.__dict__.get(info["entry"]):
                    f = None  # it did not define its own: the module's function is not an alternative
                if f is None:
                    where = "program" if info["code"] is not None else "module"
                    load_error = "the %s defines no function named %r" % (where, info["entry"])
                elif not callable(f):
                    load_error = "%r is not callable" % info["entry"]
        except _Timeout:
            load_error = "Timeout: loading the program took longer than %gs" % self.prog_load_timeout
        except BaseException as e:
            load_error = _describe_exc(e)
        lines.append(b"%d -1 %s\n" % (t, _enc(load_error).encode("ascii")))
        flush(0)
        pack("q", slot, 16, 1 if load_error is None else 2)
        if load_error is not None:
            return
        if indices is None:
            # forked before the inputs existed (see prefork): parked until they did and a slot is
            # free; they are in the memfd then
            task["deadline"] = _wait_for_slot(go)
            go = None
            indices = self.inputs_from_memfd()

        # input makers: marshal data (bytes) that each call loads afresh, or a function that
        # evaluates the input afresh in the program's namespace
        makers = []
        add_maker = makers.append
        for code in self.input_codes:
            if code is None:
                add_maker(None)
            elif code[0] == "marshal":
                add_maker(code[1])
            elif code[0] == "fn":
                add_maker(types.FunctionType(code[1], ns))
            else:
                add_maker(lambda c=code[1]: eval(c, ns))
        if receiver is not None:
            # an instance method: called on an object built afresh for each call, which goes
            # first among the arguments, so what the call does to it is part of the outcome
            def on_fresh(mk, build=receiver, loads=marshal.loads):
                def make():
                    args, kwargs = loads(mk) if mk.__class__ is bytes else mk()
                    return (build(),) + tuple(args), kwargs
                return make

            makers = [None if mk is None else on_fresh(mk) for mk in makers]

        seed = task["seed"]
        import random

        rseed = random.seed
        text = info["source"] + (self.job.get("module", {}).get("source") or "")
        # Reseeding costs 5 us, more than a typical call: per call only when the code may draw
        # numbers.  It does when it mentions random, or when a module it imported from the
        # workspace holds a generator (see _draws); a module imported during a call is looked at
        # after that call.
        roots = self.workspace_roots
        # (the leader looked at every module it had; the program's load may have imported more)
        mark = _modules_mark()
        per_call_seed = "random" in text or self.workspace_draws or (
            (mark is None or mark != self.modules_scanned) and _draws(roots, self.scanned))
        watch = not per_call_seed and bool(roots)
        seen_modules = len(sys.modules)
        np_seed = None

        def numpy_seed():
            if "numpy" in sys.modules:
                try:
                    return sys.modules["numpy"].random.seed
                except BaseException:
                    pass
            return None

        if per_call_seed:
            np_seed = numpy_seed()
        np_s = seed % (2 ** 32)
        rseed(seed)
        if np_seed is not None:
            try:
                np_seed(np_s)
            except BaseException:
                np_seed = None

        coroutine_type = None
        run_coroutine = None
        if "async" in text:
            try:
                import asyncio

                async def _probe():
                    pass

                probe = _probe()
                coroutine_type = type(probe)
                probe.close()
                run_coroutine = asyncio.run
            except BaseException:
                coroutine_type = None

        canon = self.canon
        dump = self.dump
        loads = marshal.loads
        enc = _enc
        take, changed = _snapshotter(canon, dump)
        flat_seq = _flat_seq
        flat_map = _flat_map
        flat_set = _flat_set
        timer = self.timer
        setitimer = signal.setitimer
        REAL = signal.ITIMER_REAL
        ct = self.call_timeout
        monotonic = time.monotonic
        deadline = task["deadline"]
        if go is not None:  # parked: wait for a slot (and the deadline) from the leader
            deadline = _wait_for_slot(go)
        IMMUT = frozenset((int, float, str, bool, bytes, type(None), complex))
        LIM = 1 << 62
        flt_repr = float.__repr__
        prefix = b"%d " % t
        K_TIMEOUT = enc(["raise", None, None, "Timeout"]).encode("ascii")
        K_BUDGET = enc(["raise", None, None, "BudgetExceeded"]).encode("ascii")
        K_INPUT = enc(["raise", None, None, "InputError"]).encode("ascii")
        K_NONE = b'["ok",["N"],null,null]'
        K_TRUE = b'["ok",["B",true],null,null]'
        K_FALSE = b'["ok",["B",false],null,null]'
        count = len(indices)
        # Inputs come cheapest first: after this many timeouts in a row the larger inputs that
        # follow would mostly time out too, at call_timeout each.  They are left out like inputs
        # past the budget (for every program), which keeps an exponential program to a second or
        # two instead of its whole budget.
        streak_limit = 3
        streak = 0
        # The late inputs (ones the function is likely not meant for) come last in the order.
        # Timeouts in a row before them say the likely inputs grew too large, not that the late
        # ones would hang; and the late ones are often cheap (a negative n is an empty range).
        # So the likely inputs stop at three timeouts in a row or a fifth of the budget before
        # the deadline, and what is left of them is left out; then the late ones run.
        late = self.late
        late_from = count
        if late:
            for p, i in enumerate(indices):
                if i in late:
                    late_from = p
                    break
        likely_deadline = deadline - 0.2 * self.program_budget if late_from < count else deadline
        skip_to = 0
        # what the anchor task has left out (see note_left_out), looked at every 20 ms
        rank = self.rank
        unpack = struct.unpack_from
        told = self.told
        cut_likely, cut_late = unpack("qq", told, 0)
        peek = 0.0
        # Where the user's function (the anchor) hangs, a program that hangs too agrees with it,
        # and each further such input would cost it a whole call_timeout to agree again (ten
        # programs, three hangs each: 7.6 s of HumanEval/107's check).  So once this program has
        # timed out on an input the anchor timed out on, it leaves the anchor's other timeouts
        # out (dropped for every program, as inputs past a budget are).  A program that returns
        # where the anchor hangs, the disagreement that matters there, runs them all.
        hangs = told if self.anchor is not None and t != self.anchor else None
        hangs_too = False
        careful = bool(task.get("careful"))  # a child of this program was killed in a call
        # One periodic timer for all the calls instead of two setitimer calls per call (a third of
        # the per-call overhead for a fast function): each tick checks the call in progress, so a
        # call times out between ct and ct + tick.
        tick = min(0.05, ct / 4)
        timer[3] = ct
        setitimer(REAL, tick, tick)
        for pos in range(count):
            if pos < skip_to:
                continue
            i = indices[pos]
            pack("q", slot, 0, pos)
            now = monotonic()
            if now > peek:
                cut_likely, cut_late = unpack("qq", told, 0)
                peek = now + 0.02
            if pos < late_from and (streak >= streak_limit or now > likely_deadline or rank[i] >= cut_likely):
                for j in indices[pos:late_from]:
                    lines.append(prefix + b"%d %s\n" % (j, K_BUDGET))
                skip_to = late_from
                streak = 0
                continue
            if now > deadline or streak >= streak_limit or (pos >= late_from and rank[i] >= cut_late):
                for j in indices[pos:]:
                    lines.append(prefix + b"%d %s\n" % (j, K_BUDGET))
                break
            if hangs_too and hangs[_TOLD_HANGS + i]:
                lines.append(prefix + b"%d %s\n" % (i, K_BUDGET))
                continue
            mk = makers[i]
            if mk is None:
                lines.append(prefix + b"%d %s\n" % (i, K_INPUT))
                continue
            if per_call_seed:
                rseed(seed)
                if np_seed is not None:
                    np_seed(np_s)
            if sink_out.size:
                sink_out.reset()
            if sink_err.size:
                sink_err.reset()
            stage = 0
            timer[1] = False
            try:
                try:
                    timer[2] = now
                    timer[0] = True
                    args, kwargs = loads(mk) if mk.__class__ is bytes else mk()
                    if type(args) is not tuple:
                        args = tuple(args)
                    if type(kwargs) is not dict:
                        kwargs = dict(kwargs)
                    check = False
                    for x in args:
                        if type(x) not in IMMUT:
                            check = True
                            break
                    if kwargs and not check:
                        for x in kwargs.values():
                            if type(x) not in IMMUT:
                                check = True
                                break
                    if check:
                        argv = args + (kwargs,) if kwargs else args
                        pre = take(argv)
                    stage = 1
                    r = f(*args, **kwargs)
                    stage = 2
                    tr = type(r)
                    if tr is coroutine_type:
                        r = run_coroutine(r)
                        tr = type(r)
                    if tr is int and -LIM < r < LIM:
                        v = b'["I","%d"]' % r
                    elif r is None:
                        v = None
                    elif tr is bool:
                        v = True if r else False
                    elif tr is float and r - r == 0:
                        v = b'["F",' + flt_repr(r).encode("ascii") + b"]"
                    elif tr is str and len(r) < 2000:
                        v = b'["S",' + enc(r).encode("ascii") + b"]"
                    else:
                        if tr is list or tr is tuple:
                            v = flat_seq(r, tr)
                        elif tr is dict:
                            v = flat_map(r)
                        elif tr is set or tr is frozenset:
                            v = flat_set(r)
                        else:
                            v = None
                        if v is None:
                            v = dump(canon(r), r).encode("ascii")
                    m = changed(pre, argv) if check else None
                finally:
                    timer[0] = False
                if timer[1]:
                    raise _Timeout()
                if m is None:
                    if v is None:
                        key = K_NONE
                    elif v is True:
                        key = K_TRUE
                    elif v is False:
                        key = K_FALSE
                    else:
                        key = b'["ok",' + v + b",null,null]"
                else:
                    if v is None:
                        v = b'["N"]'
                    elif v is True:
                        v = b'["B",true]'
                    elif v is False:
                        v = b'["B",false]'
                    key = b'["ok",' + v + b"," + m + b",null]"
            except _Timeout:
                key = K_TIMEOUT
            except BaseException as e:
                if timer[1]:
                    key = K_TIMEOUT
                elif stage == 0:
                    key = K_INPUT
                else:
                    key = enc(["raise", None, None, _tname(e)]).encode("ascii")
            lines.append(prefix + b"%d %s\n" % (i, key))
            if key is K_TIMEOUT:
                streak += 1
                if hangs is not None and hangs[_TOLD_HANGS + i]:
                    hangs_too = True
            else:
                streak = 0
            if watch and len(sys.modules) != seen_modules:
                seen_modules = len(sys.modules)
                if _draws(roots, self.scanned):
                    per_call_seed, watch = True, False
                    np_seed = numpy_seed()
            state[0] += len(key)
            # A child killed in a call stuck in C (the timer cannot interrupt ``sum(range(2**31))``)
            # loses what it has not written, and its replacement re-runs that against the same
            # deadline: at most 50 ms of work, once, because the replacement writes every record
            # at once (``careful``) and so loses nothing to the next stuck call.  Writing more often
            # in every child would cost each run a leader wake-up per write.
            if careful or state[0] > 32768 or now - state[1] > 0.05:
                flush(pos + 1)
        setitimer(REAL, 0)
        timer[3] = None
        pack("q", slot, 0, count)
        flush(count)


def _run_job(job):
    """One run, start to finish, in this process (the single-run worker or a job leader)."""
    z = Zygote(job)
    try:
        z.run()
    except BaseException:
        try:
            z.guard["mode"] = "zygote"
            import traceback

            z.emit(b"-1 1 " + _enc(traceback.format_exc()[-4000:]).encode("ascii") + b"\n")
            z.flush()
        except BaseException:
            pass
        os._exit(3)
    os._exit(0)


_NICE = 10


def main():
    # the script's own directory must never shadow user modules (program.py, sandbox.py, ...)
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != _HERE]
    # Checks are background work: on a 2-core laptop the children running m programs must not
    # take the CPU from the editor and the language server (hover p99 went from ~50 ms to
    # 100-700 ms in an edit storm when they ran at the server's priority).  Inherited by every
    # child; a raise of priority back needs privileges the children drop.
    try:
        os.nice(_NICE)
    except OSError:
        pass
    if "--serve" in sys.argv[1:]:
        serve()
        return
    raw = sys.stdin.buffer.read()
    job = json.loads(raw.decode("utf-8"))
    # user code must never reach our stdin/stdout/stderr
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    if not job.get("keep_stderr"):
        os.dup2(devnull, 2)
    if devnull > 2:
        os.close(devnull)
    _run_job(job)


# --------------------------------------------------------------------------------------------
# serve mode: a warm, long-lived worker that runs one job after another
# --------------------------------------------------------------------------------------------
#
# Starting the interpreter (under bubblewrap) costs tens of milliseconds per run, and a check
# makes several runs (the main run, the re-run, shrinking rounds).  In serve mode this process
# stays up, reads jobs framed as b"<length>\n<json>" from stdin, and forks a *job leader* per
# job that does exactly what a one-shot worker does.  Nothing of a job outlives it here: the
# leader loads the module context and every program, and this process never runs user code,
# so one job cannot poison the next.  After the leader exits this process sweeps any process
# left in its session, removes the job's temp dir, and reports on the job's result descriptor:
#
#     "-1 3 <json>"      the job is over: {"status": <wait status as returncode>, "clean": bool,
#                        "cpu": CPU seconds of the leader and its children}
#
# "clean" is false when something of the job could not be removed; the parent then retires
# this worker instead of reusing it.  EOF on stdin (the parent is gone) ends it.
#
# A job marked "inputs_follow" comes without its inputs (INPUT_KEYS): they are the next frame,
# and the job's leader reads it from stdin itself once it has loaded the module and the
# programs (Zygote.receive_inputs).  An empty frame there means the parent gave the run up.  A
# frame that is no job (the inputs of a leader that ended before reading them) is skipped.


_WARM_TASKS = 32  # programs per job whose record patterns the warm worker compiles ahead


def _wait_for_slot(go):
    """In a parked child: the deadline the leader sends when it gives the child a slot."""
    got = b""
    while len(got) < 8:
        try:
            part = os.read(go, 8 - len(got))
        except InterruptedError:
            continue
        if not part:
            os._exit(0)  # the leader is gone
        got += part
    os.close(go)
    return struct.unpack("d", got)[0]


def _pread_all(fd, n):
    """``n`` bytes from the start of ``fd`` (fewer at its end).  Not ``_read_exact``: the children
    that read the inputs' memfd share its file offset, and would move it under each other."""
    chunks = []
    at = 0
    while at < n:
        b = os.pread(fd, n - at, at)
        if not b:
            break
        chunks.append(b)
        at += len(b)
    return b"".join(chunks)


def _read_exact(fd, n):
    chunks = []
    while n > 0:
        try:
            b = os.read(fd, min(n, 1 << 20))
        except InterruptedError:
            continue
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _read_line(fd):
    out = []
    while True:
        try:
            b = os.read(fd, 1)
        except InterruptedError:
            continue
        if not b:
            return None
        if b == b"\n":
            return b"".join(out)
        out.append(b)
        if len(out) > 32:
            return None


def _returncode(status):
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 255


def _sweep(keep):
    """SIGKILL every other process of this session (what a job left behind); True if none."""
    try:
        sid = os.getsid(0)
    except OSError:
        return True
    found = False
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit() or int(name) in keep:
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2:].split()
            if int(fields[3]) != sid or fields[0] == b"Z":
                continue
            os.kill(int(name), signal.SIGKILL)
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return not found


def serve():
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    # what job leaders import (PREIMPORT when the children cannot read the standard library,
    # ctypes for the root guard's namespaces, typing for most generated code's annotations): once
    # here, shared by every fork, instead of 5-8 ms at the start of every run (typing: 5 ms)
    for name in PREIMPORT_CORE + PREIMPORT + ("ctypes", "typing"):
        try:
            __import__(name)
        except BaseException:
            pass
    # the patterns a leader reads its children's records with, compiled once here for every job
    for t in range(_WARM_TASKS):
        _record_index(t)
    for error in (b"BudgetExceeded", b"Timeout"):
        _anchor_records(0, error)
    set_pdeathsig = _prctl_pdeathsig()
    if set_pdeathsig is not None:
        try:
            set_pdeathsig()
        except BaseException:
            pass
    leader = [0]

    def on_term(signum, frame):
        # the leader's own SIGTERM handler kills and reaps its children
        if leader[0]:
            try:
                os.kill(leader[0], signal.SIGTERM)
            except OSError:
                pass
            until = time.monotonic() + 1.0
            while time.monotonic() < until:
                try:
                    if os.waitpid(leader[0], os.WNOHANG)[0]:
                        break
                except OSError:
                    break
                time.sleep(0.005)
        _sweep((os.getpid(),))
        os._exit(1)

    signal.signal(signal.SIGTERM, on_term)
    me = os.getpid()
    while True:
        header = _read_line(0)
        if not header:
            os._exit(0)
        try:
            raw = _read_exact(0, int(header))
            job = json.loads(raw.decode("utf-8")) if raw else None
        except (TypeError, ValueError):
            os._exit(4)
        if not isinstance(job, dict) or "fd" not in job:
            # The inputs frame of a job sent ahead of its inputs, whose leader ended before it
            # read them (its module failed to load), or the parent giving such a job up.
            continue
        fd = job["fd"]
        tmp = job["tmp"]
        pid = os.fork()
        if pid == 0:
            try:
                if job.get("inputs_follow"):
                    # the leader reads the job's inputs, the next frame, itself (receive_inputs);
                    # this process reads stdin again only once the leader is gone
                    job["inputs_fd"] = os.dup(0)
                os.dup2(devnull, 0)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.makedirs(tmp, exist_ok=True)
                os.chdir(tmp)
            except BaseException:
                pass
            _run_job(job)
        leader[0] = pid
        status = 255
        cpu = None
        while True:
            try:
                # the leader's CPU time with its children's: what the job cost, free of the time a
                # busy machine (or its hypervisor) took away, which wall time is not
                _, raw, usage = os.wait4(pid, 0)
                status = _returncode(raw)
                cpu = round(usage.ru_utime + usage.ru_stime, 6)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                break
        leader[0] = 0
        clean = _sweep((me, 1)) if job.get("sweep_session", True) else True
        if job.get("remove_tmp", True):
            try:
                os.rmdir(tmp)
            except FileNotFoundError:
                pass
            except OSError:
                clean = False
        record = b"-1 3 " + _enc({"status": status, "clean": clean, "cpu": cpu}).encode("ascii") + b"\n"
        try:
            os.write(fd, record)
        except OSError:
            os._exit(0)


if __name__ == "__main__":
    main()
