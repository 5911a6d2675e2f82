"""Outcome records from a worker, checked before anything else in this process trusts them.

A program can write to its own result pipe, so a record may be anything.  A malformed value would
break rendering and equality later, here, so a record that is not an outcome of the form
``coherence_worker/canon.py`` defines becomes ``FORGED`` (a crash).

Checking is the check process's main cost on functions that return long lists, and decoding every
record as JSON and walking the result built so many small lists that the garbage collector stalled
the event loop (see docs/results.md#long-outputs).  So the common shapes (a scalar, or a flat list, tuple or set of scalars, with
no argument changes) are checked on the text with one regular expression, nested ones by
reducing innermost lists on the text, and only what neither accepts is decoded and walked.  The
text checks accept a subset of what the walk accepts; an accepted ``ok`` record becomes a lazy
``Outcome`` that decodes its value only if it is ever rendered or compared within tolerance.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from coherence.engine.execution.coherence_worker import protocol
from coherence.engine.outcomes import Outcome

__all__ = ["FORGED", "RECORD_BYTES", "RunRecords", "outcome_from_record", "reserved_outcome", "valid_canonical"]

FORGED = Outcome.raised(protocol.CRASH_PROTOCOL)  # a record no worker writes
# The reserved outcomes a job's leader writes ("!<word>", see protocol): one object each
_RESERVED = {
    protocol.reserved(w): Outcome.raised(w) for w in (protocol.TIMEOUT, protocol.BUDGET_EXCEEDED, protocol.INPUT_ERROR)
}
_CRASH_WORD = re.compile(r"Crash\([ -~]{1,100}\)")


def reserved_outcome(raw: bytes) -> Outcome:
    """The outcome of a reserved record's payload (``!Timeout``, ``!Crash(SIGSEGV)``); only a
    job's leader writes one, having checked what its children claimed (``coherence_worker.watch``)."""
    o = _RESERVED.get(raw)
    if o is not None:
        return o
    word = raw[1:].decode("ascii", "replace")
    return Outcome.raised(word) if _CRASH_WORD.fullmatch(word) else FORGED


_SPECIAL_FLOATS = ("nan", "inf", "-inf")
_NAMED = frozenset(("R", "X", "Z"))
_SEQUENCES = frozenset(("L", "T", "E"))
_MAX_DEPTH = 400

# JSON as the worker writes it: compact separators and ASCII only.  The string pattern is the
# unrolled loop (runs of plain characters between escapes), which cannot backtrack badly.
_STR = r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
_NUM = r'(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|"nan"|"inf"|"-inf")'
# A scalar canonical form (see coherence_worker/canon.py), the most frequent tags first.  Every
# alternative starts with '["', which cannot occur inside a JSON string (its quote would be
# escaped), so a match always starts at a real list.
_LEAF = "|".join(
    (
        rf'\["F",{_NUM}\]',
        r'\["I","-?[0-9]+"\]',
        rf'\["S",{_STR}\]',
        r'\["N"\]',
        r'\["B",(?:true|false)\]',
        rf'\["C",{_NUM},{_NUM}\]',
        r'\["CYCLE"\]',
        r'\["Y","(?:[0-9a-f]{2})*"\]',
        rf'\["[RXZ]",{_STR},{_STR}\]',
    )
)
_FLAT = re.compile(rf'\["ok",(?:\["[LTE]",\[(?:(?:{_LEAF})(?:,(?:{_LEAF}))*)?\]\]|{_LEAF}),null,null\]')
# Reduction: every scalar becomes a hole, then every list whose items are all holes does, innermost
# first, one nesting level per pass.  The hole is not ASCII, so it cannot be in a record's text.
_HOLE = "\u00b7"
_LEAVES = re.compile(_LEAF)
_NODES = re.compile(
    "|".join(
        (
            rf'\["[LTE]",\[(?:{_HOLE}(?:,{_HOLE})*)?\]\]',
            rf'\["D",\[(?:\[{_HOLE},{_HOLE}\](?:,\[{_HOLE},{_HOLE}\])*)?\]\]',
            rf'\["O",{_STR},{_HOLE}\]',
        )
    )
)
_REDUCED = re.compile(rf'\["ok",{_HOLE},(?:null|{_HOLE}),null\]')
_PASSES = 16  # deeper values take the decoding path


def _text_ok(text: str) -> bool:
    """Whether ``text`` is an ``ok`` record with a well-formed value, judged on the text alone.
    False means "not shown here", not "malformed"."""
    if _FLAT.fullmatch(text):
        return True
    if not text.startswith('["ok",') or not text.isascii():
        return False
    t = _LEAVES.sub(_HOLE, text)
    for _ in range(_PASSES):
        if _REDUCED.fullmatch(t):
            return True
        reduced = _NODES.sub(_HOLE, t)
        if reduced == t:
            return False
        t = reduced
    return False


def valid_canonical(c: Any, depth: int = 0) -> bool:
    """Whether the decoded ``c`` has the canonical form ``coherence_worker/canon.py`` defines
    (tags and shapes only)."""
    if depth > _MAX_DEPTH or not isinstance(c, list) or not c:
        return False
    tag, n = c[0], len(c)
    if not isinstance(tag, str):  # a list here is unhashable: the set lookups below would raise
        return False
    if tag == "N" or tag == "CYCLE":
        return n == 1
    if n == 2:
        v = c[1]
        if tag == "I":
            return isinstance(v, str) and v.lstrip("-").isdigit()
        if tag == "S":
            return isinstance(v, str)
        if tag == "F":
            return _number(v)
        if tag == "B":
            return isinstance(v, bool)
        if tag == "Y":
            return isinstance(v, str) and len(v) % 2 == 0 and all(ch in "0123456789abcdef" for ch in v)
        if tag in _SEQUENCES:
            return isinstance(v, list) and all(valid_canonical(x, depth + 1) for x in v)
        if tag == "D":
            return isinstance(v, list) and all(
                isinstance(kv, list)
                and len(kv) == 2
                and valid_canonical(kv[0], depth + 1)
                and valid_canonical(kv[1], depth + 1)
                for kv in v
            )
        return False
    if n == 3:
        if tag in _NAMED:
            return isinstance(c[1], str) and isinstance(c[2], str)
        if tag == "O":
            return isinstance(c[1], str) and valid_canonical(c[2], depth + 1)
        if tag == "C":
            return _number(c[1]) and _number(c[2])
    return False


def _number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) or v in _SPECIAL_FLOATS


def _valid_outcome(o: Outcome) -> bool:
    if o.kind == "raise":
        return isinstance(o.error, str) and 0 < len(o.error) <= 300
    return valid_canonical(o.value) and (o.mutated is None or valid_canonical(o.mutated))


def _checked(o: Outcome) -> Outcome:
    """A well-formed record's outcome.  A ``raise`` is the program's own exception, whatever its
    type is called: one named like a reserved outcome (its own ``class BudgetExceeded``) is
    renamed, and compared like any other exception (the key is rebuilt from the decoded name, so
    that two spellings of one name in JSON are one outcome)."""
    if o.kind == "raise" and o.error is not None:  # (a well-formed raise names its error)
        return Outcome.raised(protocol.own_name(o.error), o.message)
    return o


def outcome_from_record(raw: bytes) -> Outcome:
    """The outcome a worker's record (its key text) stands for, or ``FORGED``."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return FORGED
    return _outcome_from_text(text)


def _outcome_from_text(text: str) -> Outcome:
    if _text_ok(text):
        return Outcome.from_valid_key(text)
    try:
        o = Outcome.from_key(text)
    except Exception:  # noqa: BLE001 - not only ValueError: deep nesting is a RecursionError
        return FORGED
    return _checked(o) if _valid_outcome(o) else FORGED


# What one run keeps of its records' text.  The children decide what they send, and a program that
# returns a different large value on every input would make the parent hold them all (see
# docs/results.md#long-outputs).  Past this budget a
# new distinct record longer than ``_SHORT`` is kept as a digest (``["Z", type, sha]``, as the
# worker does for a single value over its size cap): it still equals every copy of the same text,
# the first record of a text decides for all its copies, and only floats inside such a value
# lose their tolerance.  The budget is above what the longest recorded outputs need.
RECORD_BYTES = 64 * 1024 * 1024
_SHORT = 256
_TYPES = {"L": "list", "T": "tuple", "E": "set", "D": "dict", "S": "str", "Y": "bytes", "O": "object"}


class RunRecords:
    """The outcome of each record a run streams, each distinct text decoded once (``outcome``),
    in at most ``budget`` bytes of record text.

    A record's text is held once: the lookup key is the same ``str`` the outcome keeps (keying by
    the received bytes held every record twice).  Records kept as digests are looked up by a
    digest of their text, so their text is not held at all."""

    def __init__(self, budget: int | None = None):
        self.budget = RECORD_BYTES if budget is None else budget
        self.kept = 0  # characters of record text held
        self.digested = 0  # distinct records kept as a digest
        self._seen: dict[str, Outcome] = {}
        self._digests: dict[bytes, Outcome] = {}

    def outcome(self, raw: bytes) -> Outcome:
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            return FORGED
        o = self._seen.get(text)
        if o is not None:
            return o
        if len(text) > _SHORT and self.kept + len(text) > self.budget:
            digest = hashlib.sha1(raw).digest()
            o = self._digests.get(digest)
            if o is None:
                o = _outcome_from_text(text)
                if o.kind == "ok":
                    o = _digest(raw, digest)
                    self.digested += 1
                self._digests[digest] = o
            return o
        o = self._seen[text] = _outcome_from_text(text)
        self.kept += len(text)
        return o


def _digest(raw: bytes, digest: bytes) -> Outcome:
    """A well-formed ``ok`` record's outcome as a digest of its text."""
    tag = raw[8:9].decode("ascii", "replace")  # '["ok",["L",...': the value's tag
    return Outcome.from_valid_key(f'["ok",["Z","{_TYPES.get(tag, "object")}","{digest.hex()}"],null,null]')
