"""Mutation of one number or one string (see :mod:`.mutate` for the whole scheme): ±1, ±10,
negation, halving, a fresh draw for numbers; inserted, deleted or replaced characters (mostly of
the string's own class), case, whitespace and word edits for strings.
"""

from __future__ import annotations

import math
import random

from coherence.engine.inputs.seeds.from_types import (
    MAX_STR,
    random_float,
    random_int,
    random_str,
)

GENERIC_CHARS = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 ,.!?-_é"
FLOAT_LIMIT = 1e12
INT_LIMIT = 10**12

# -- numbers ------------------------------------------------------------------------------------

# The draws below are ``rng.choice``'s, ``randrange``'s and ``randint``'s own, made directly with
# ``rng._randbelow`` (``choice(s)`` is ``s[_randbelow(len(s))]``, ``randrange(n)`` is
# ``_randbelow(n)``, ``randint(a, b)`` is ``a + _randbelow(b - a + 1)``): the same values, without a
# Python frame each (generation makes about a hundred thousand of them per function).  typeshed
# does not declare the private method, hence the ``type: ignore`` where it is bound.
_INT_OPS_LARGE = ("half", "half", "fresh", "inc", "dec", "neg", "zero")
_INT_OPS = ("inc", "dec", "inc10", "dec10", "neg", "zero", "fresh", "fresh", "double", "half", "inc", "dec")
_FLOAT_OPS = ("inc", "dec", "inc10", "dec10", "half", "double", "neg", "zero", "fresh", "fresh", "round", "nudge")
_NUDGES = (-0.1, 0.1, -0.01, 0.01)


def mutate_int(v: int, rng: random.Random) -> int:
    below = rng._randbelow  # type: ignore[attr-defined]  # see above
    if abs(v) > 1000:
        op = _INT_OPS_LARGE[below(7)]
    else:
        op = _INT_OPS[below(12)]
    if op == "inc":
        r = v + 1
    elif op == "dec":
        r = v - 1
    elif op == "inc10":
        r = v + 10
    elif op == "dec10":
        r = v - 10
    elif op == "neg":
        r = -v if v != 0 else (1, -1)[below(2)]
    elif op == "zero":
        r = 0 if v != 0 else 1
    elif op == "double":
        r = v * 2 if v != 0 else 2
    elif op == "half":
        r = int(v / 2)
    else:
        r = random_int(rng)
    return r if abs(r) <= INT_LIMIT else random_int(rng)


def mutate_float(v: float, rng: random.Random) -> float:
    if not math.isfinite(v):
        return random_float(rng)
    below = rng._randbelow  # type: ignore[attr-defined]  # see above
    op = _FLOAT_OPS[below(12)]
    if op == "inc":
        r = v + 1.0
    elif op == "dec":
        r = v - 1.0
    elif op == "inc10":
        r = v + 10.0
    elif op == "dec10":
        r = v - 10.0
    elif op == "half":
        r = v * 0.5
    elif op == "double":
        r = v * 2.0
    elif op == "neg":
        r = -v if v != 0 else (0.5, -0.5)[below(2)]
    elif op == "zero":
        r = 0.0 if v != 0 else 1.0
    elif op == "round":
        r = float(round(v)) if v != round(v) else v + 0.5
    elif op == "nudge":
        r = round(v + _NUDGES[below(4)], 10)
    else:
        r = random_float(rng)
    return r if math.isfinite(r) and abs(r) <= FLOAT_LIMIT else random_float(rng)


# -- strings ------------------------------------------------------------------------------------


_CLASSES = [
    ("0123456789", "0123456789"),
    ("0123456789.-+e", "0123456789.-"),
    ("01", "01"),
    ("abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),
    ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ "),
    ("0123456789abcdefABCDEF", "0123456789ABCDEF"),
]


def _char_class(s: str) -> str:
    """The smallest familiar alphabet containing every character of ``s`` (digits, binary,
    lowercase, letters, hex...), so inserted characters stay in the string's domain."""
    chars = set(s)
    best = None
    for members, draw in _CLASSES:
        if chars <= set(members) and (best is None or len(members) < len(best[0])):
            best = (members, draw)
    return best[1] if best else GENERIC_CHARS


def _char_for(s: str, rng: random.Random, byte_mode: bool) -> str:
    """A character to insert: from the string itself (70%), its alphabet (20%), anything (10%)."""
    r = rng.random()
    below = rng._randbelow  # type: ignore[attr-defined]  # see above
    if s and r < 0.7:
        return s[below(len(s))]
    if byte_mode:
        fresh = below(256)
        return chr((0, 10, 32, 65, 97, 122, 127, 200, 255, fresh)[below(10)])
    if s and r < 0.9:
        chars = _char_class(s)
        return chars[below(len(chars))]
    return GENERIC_CHARS[below(len(GENERIC_CHARS))]


_STR_OPS = (
    "insert",
    "insert",
    "delete",
    "delete",
    "replace",
    "replace",
    "truncate",
    "duplicate",
    "case",
    "space",
    "fresh",
)
_STR_OPS_2_WORDS = _STR_OPS + ("word_drop", "word_swap", "word_dup")
_STR_OPS_3_WORDS = _STR_OPS + ("word_drop", "word_swap", "word_dup") * 2
_STR_OPS_EMPTY = ("insert", "insert", "fresh", "space")
_CASES = (str.upper, str.lower, str.swapcase, str.capitalize, str.title)
_SPACES = (" ", " ", "  ", "\t", "\n")


def mutate_str(s: str, rng: random.Random, byte_mode: bool = False) -> str:
    below = rng._randbelow  # type: ignore[attr-defined]  # see above
    ops: tuple[str, ...]
    if not s:
        ops = _STR_OPS_EMPTY
    else:
        n_words = len(s.split())
        ops = _STR_OPS_3_WORDS if n_words >= 3 else _STR_OPS_2_WORDS if n_words == 2 else _STR_OPS
    op = ops[below(len(ops))]
    n = len(s)
    if op == "insert":
        i = below(n + 1)
        r = s[:i] + _char_for(s, rng, byte_mode) + s[i:]
    elif op == "delete":
        i = below(n)
        r = s[:i] + s[i + 1 :]
    elif op == "replace":
        i = below(n)
        r = s[:i] + _char_for(s, rng, byte_mode) + s[i + 1 :]
    elif op == "truncate":
        i = below(n)
        r = s[:i] if rng.random() < 0.6 else s[i:]
    elif op == "duplicate":
        if rng.random() < 0.4 and n <= MAX_STR // 2:
            r = s + s
        else:
            i = below(n)
            j = i + 1 + below(min(n, i + 4) - i)
            r = s[:j] + s[i:j] + s[j:]
    elif op == "case":
        r = _CASES[below(5)](s)
        if r == s:
            r = s.swapcase() if s.swapcase() != s else s + "A"
    elif op == "space":
        c = _SPACES[below(5)]
        choice = below(4)
        if choice == 0:
            r = c + s
        elif choice == 1:
            r = s + c
        elif choice == 2 and s != s.strip():
            r = s.strip()
        else:
            i = below(n + 1)
            r = s[:i] + c + s[i:]
    elif op.startswith("word_"):
        words = s.split(" ")
        if len(words) < 2:
            words = s.split()
        i = below(len(words))
        if op == "word_drop":
            del words[i]
        elif op == "word_swap":
            j = below(len(words))
            words[i], words[j] = words[j], words[i]
        else:
            words.insert(i, words[i])
        r = " ".join(words)
    else:
        r = random_str(rng)
        if byte_mode:
            r = r.encode("utf-8")[:MAX_STR].decode("latin-1")
    if len(r) > MAX_STR and len(r) > n:
        r = r[: max(MAX_STR, n)]
    return r
