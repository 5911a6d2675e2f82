"""THE wire format between coherence and its worker, imported by both sides.

Stdlib only: the worker imports it under the user's interpreter (any CPython >= 3.8), and
coherence's executor, ``records.py`` and ``pool.py`` import it as
``coherence.engine.execution.coherence_worker.protocol``.

Jobs (coherence -> worker) are JSON objects: a one-shot worker reads one from its whole stdin;
a warm worker (``--serve``) reads frames ``b"<length>\\n<json>"`` (``frame``).  A job sent ahead
of its inputs gets them in the next frame, an object with the keys ``INPUT_KEYS``.

Records (worker -> coherence) are ASCII lines ``"<t> <i> <payload>"`` on the descriptor named in
the job, never stdout:

    "<t> <i> <key>"    outcome of task t on input i; <key> is the JSON text of
                       [kind, value, mutated, error] (exactly ``Outcome.key``)
    "<t> <i> !<word>"  a reserved outcome of task t on input i (``reserved``): ``Timeout``,
                       ``BudgetExceeded``, ``InputError``, ``Crash(...)``
    "<t> -1 <json>"    task t loaded (``LOADED``): null, or why it could not be loaded
    "-1 0 <json>"      module context (``MODULE``): null when loaded, or why it failed
    "-1 1 <json>"      internal diagnostic (``DIAGNOSTIC``): a worker problem, not the user's
    "-1 2 null"        the run is complete (``DONE``)
    "-1 3 <json>"      serve mode only: the job is over (``OVER``, see ``serve.py``)
    "-1 4 <json>"      the kernel layers the children apply (``SANDBOX``, see ``kernel.py``)

The reserved outcome words are the errors of ``raise`` outcomes the worker and coherence make
themselves rather than take from an exception's type name.  They travel out of band, as "!"
records, which only the leader writes: a child may claim one (its call timed out, it skips
inputs past its budget), and its leader forwards the claim only when it can tell it is true
(``watch.check_claim``).  A ``raise`` record's error is always the program's own exception,
whatever it is called: coherence renames one spelled like a reserved word (``own_name``).
"""

from __future__ import annotations

import json
import os
import re
import signal
from functools import lru_cache

# Types for mypy only: ``typing`` is not imported at run time (it slows every one-shot worker's
# start, docs/results.md#import-costs, and the generated code would find it loaded).  mypy takes
# any name TYPE_CHECKING as true; every module of the worker says it this way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Job = dict[str, Any]  # a job as the executor sends it (JSON: see executor._job)

# -- records ---------------------------------------------------------------------------------
META = -1  # the task number of the records about the run itself
LOADED = -1  # the input index of a task's load record
MODULE = 0  # meta records, by their second number
DIAGNOSTIC = 1
DONE = 2
OVER = 3
SANDBOX = 4

# The longest line a child may send: a record holds at most two size-capped canonical values.
MAX_LINE = 4 * 16 * 1024 + 4096

# What a job sent ahead of its inputs gets in its second frame (see ahead.receive_inputs).
INPUT_KEYS = ("inputs", "packed", "order", "late", "anchor")

# -- reserved outcome words ------------------------------------------------------------------
TIMEOUT = "Timeout"  # a call that ran out of time (the child's timer, or the watchdog's kill)
BUDGET_EXCEEDED = "BudgetExceeded"  # an input never tried: the program's budget was gone
INPUT_ERROR = "InputError"  # the input itself could not be made
LOAD_ERROR = "LoadError"  # coherence's: every outcome of a program that did not load
CRASH_PROTOCOL = "Crash(protocol)"  # a child that wrote what no child writes
CRASH_WORKER = "Crash(worker)"  # coherence's: inputs a worker left without a record
CRASH_DISK = "Crash(disk)"  # a child killed for what the job's directory holds (disk.py)

RESERVED = frozenset((TIMEOUT, BUDGET_EXCEEDED, INPUT_ERROR, LOAD_ERROR, CRASH_PROTOCOL, CRASH_WORKER, CRASH_DISK))
# What marks a reserved record: "<t> <i> !<word>".  A record of an outcome starts with "[".
RESERVED_MARK = b"!"


def is_reserved(word: str) -> bool:
    """Whether an error name is spelled like one of the outcomes only coherence makes."""
    return word in RESERVED or word.startswith("Crash(")


def own_name(error: str) -> str:
    """The name a program's own exception is compared and shown by: itself, unless it is spelled
    like a reserved word (``class BudgetExceeded(Exception)`` in generated code is that code's
    exception, not an input left out)."""
    return "the program's own " + error if is_reserved(error) else error


# JSON as the worker writes it: compact separators and ASCII only
encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def crash(reason: str) -> str:
    """The outcome word of a process that died: ``Crash(SIGSEGV)``, ``Crash(exit 3)``."""
    return "Crash(%s)" % reason


def raised(error: str) -> bytes:
    """The key (bytes) of a ``raise`` outcome with this error (a program's exception)."""
    return encode(["raise", None, None, error]).encode("ascii")


def reserved(word: str) -> bytes:
    """The payload (bytes) of a reserved record: ``!Timeout``, ``!Crash(SIGSEGV)``."""
    return RESERVED_MARK + word.encode("ascii", "replace")


def record(t: int, i: int, obj: object) -> bytes:
    """One record line: ``obj`` as JSON."""
    return b"%d %d %s\n" % (t, i, encode(obj).encode("ascii"))


DIAGNOSTIC_PREFIX = b"%d %d " % (META, DIAGNOSTIC)
DONE_RECORD = record(META, DONE, None)


@lru_cache(maxsize=256)
def record_index(task: int) -> re.Pattern[bytes]:
    """The input index of each record line of ``task`` ("<task> <input> <outcome>"), found in a
    chunk with a newline put in front.  The task's own newline-prefix is a literal the regular
    expression engine scans for; ``^`` in multi-line mode was tried at every byte, several times
    slower.  Cached, and compiled ahead in the warm worker (see serve), since a compile would
    otherwise cost each job's new leader once per child (docs/results.md#call-costs)."""
    return re.compile(re.escape(b"\n%d " % task) + rb"(-?[0-9]+) ")


# A chunk of a child's records holds a reserved claim only if it holds this (a claim is
# "<t> <i> !<word>"); the text of a value may too, and then the chunk is read line by line.
CLAIM_HINT = b" " + RESERVED_MARK


def status_reason(status: int) -> str:
    """The outcome word of a child that ended with wait status ``status``."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == getattr(signal, "SIGXCPU", -1):
            return TIMEOUT
        return crash(_signal_name(sig))
    if os.WIFEXITED(status):
        return crash("exit %d" % os.WEXITSTATUS(status))
    return crash("unknown")


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except (ValueError, AttributeError):
        return "signal %d" % sig


def describe_exc(e: BaseException) -> str:
    """``Type: message`` (one line), like the last line of a traceback: how a record tells why
    a module or a program did not load."""
    try:
        name = type(e).__name__
    except BaseException:  # pragma: no cover
        name = "object"
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


# -- framing ---------------------------------------------------------------------------------
def frame(data: bytes) -> bytes:
    """One frame of a warm worker's stdin."""
    return b"%d\n" % len(data) + data


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


def read_line(fd: int) -> bytes | None:
    """A frame's header (without its newline), or None at EOF or for a header too long."""
    out: list[bytes] = []
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


def read_exact(fd: int, n: int) -> bytes | None:
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


def pread_all(fd: int, n: int) -> bytes:
    """``n`` bytes from the start of ``fd`` (fewer at its end).  Not ``read_exact``: the children
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


# -- between a job's leader and its children (shared memory, never seen by coherence) -------
# Each child's slot, written by the child and read by the leader's watchdog: the position of
# the call in progress, how many records it has written, its load state.
SLOT_SIZE = 24
SLOT_POS, SLOT_WRITTEN, SLOT_LOAD = 0, 8, 16
LOAD_PENDING, LOAD_OK, LOAD_FAILED = 0, 1, 2  # LOAD_FAILED: it wrote its load error itself
# The told map: what the anchor task tells the other programs.  Its cuts (two q, see
# Anchor.note_left_out) first, then one byte per input the anchor timed out on, from TOLD_HANGS.
TOLD_HANGS = 16
# Inputs a job whose children are forked before its inputs come can take (see ahead.prefork):
# the size of the told map's hangs, made before those forks.
PREFORK_INPUTS = 1 << 16
