"""Strings, characters and bytes: their boundary values, random draws, mutations and shrinks.

Mutation inserts, deletes or replaces a character (drawn mostly from the string's own alphabet, so
``"(()())"`` stays a string of parentheses), truncates, duplicates, changes case, adds or strips
whitespace, or drops, swaps or duplicates a word.  Shrinking empties, halves or drops a character.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random
from typing import Any, ClassVar

from coherence.engine.inputs.kinds.registry import MAX_STR, Kind
from coherence.engine.inputs.types import TypeDesc

GENERIC_CHARS = "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 ,.!?-_é"
_DROPS = 12  # single-character drops tried per string

_STR_BOUNDARY = [
    "hello",
    "",
    "a",
    "Hello World",
    " ",
    "abc def ghi",
    "aAbB",
    "12345",
    "racecar",
    "  padded  ",
    "ünïcödé ✓ 中文",
    "a,b;c.d!",
    "\t\n",
    "AbCdEfGhIjKlMnOpQrStUvWxYz",
    "aaaa",
]
_CHAR_BOUNDARY = ["a", "z", "A", " ", "1", "é", "b"]
_BYTES_BOUNDARY = [b"hello", b"", b"\x00", b"abc", b"\xff\xfe", b"Hello World"]

_WORDS = [
    "hello",
    "world",
    "the",
    "quick",
    "brown",
    "fox",
    "a",
    "Python",
    "is",
    "fun",
    "abc",
    "racecar",
    "level",
    "apple",
    "Banana",
    "x",
    "test",
    "data",
    "one",
    "two",
    "Zebra",
]
_ALPHABETS = [
    ("abcdefghijklmnopqrstuvwxyz", 0.5),
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 0.15),
    ("abcdefghij ", 0.1),
    ("0123456789", 0.07),
    ("abcABC123 ,.!?-_()[]{}'\"", 0.1),
    ("aéüßñçø中文日本😀 ", 0.03),
    ("ab", 0.05),
]


def random_str(rng: Random, max_len: int = MAX_STR) -> str:
    if rng.random() < 0.2:
        n = rng.randint(1, 5)
        s = " ".join(rng.choice(_WORDS) for _ in range(n))
        return s[:max_len]
    alphabet = rng.choices([a for a, _ in _ALPHABETS], weights=[w for _, w in _ALPHABETS])[0]
    n = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, max_len])
    return "".join(rng.choice(alphabet) for _ in range(min(n, max_len)))


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


def _char_for(s: str, rng: Random, byte_mode: bool) -> str:
    """A character to insert: from the string itself (70%), its alphabet (20%), anything (10%)."""
    r = rng.random()
    below = rng._randbelow  # type: ignore[attr-defined]  # see scalars.py
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


def mutate_str(s: str, rng: Random, byte_mode: bool = False) -> str:
    below = rng._randbelow  # type: ignore[attr-defined]  # see scalars.py
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


def drop_positions(n: int) -> list[int]:
    """Positions whose single-item drop shrinking tries (all of them, up to a dozen spread out)."""
    if n <= _DROPS:
        return list(range(n))
    step = n / _DROPS
    return sorted({int(i * step) for i in range(_DROPS)} | {n - 1})


class Str(Kind):
    name = "str"
    value_types: ClassVar[tuple[type, ...]] = (str,)
    exact: ClassVar[tuple[type, ...]] = (str,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(_STR_BOUNDARY)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return random_str(rng)

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, str)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        return mutate_str(v, rng)

    def shrink(self, v: Any) -> Iterator[Any]:
        s: Any = v  # str or bytes (mypy cannot see that a slice and a sum stay the same type)
        n = len(s)
        if n == 0:
            return
        yield s[:0]
        if n >= 4:
            yield s[: n // 2]
            yield s[n // 2 :]
        for i in drop_positions(n):
            yield s[:i] + s[i + 1 :]

    def magnitude(self, v: Any) -> tuple[float, int]:
        return (0.0, 0)


class Char(Str):
    name = "char"
    value_types = ()

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(_CHAR_BOUNDARY)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return rng.choice("abcdefghijklmnopqrstuvwxyzAEZ 01!é")

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        if len(v) <= 1:
            return rng.choice([c for c in GENERIC_CHARS if c != v] + ([v.upper()] if v.upper() != v else []))
        return mutate_str(v, rng)


class Bytes(Str):
    name = "bytes"
    value_types = (bytes,)
    exact = (bytes,)

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return list(_BYTES_BOUNDARY)

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return random_str(rng, 20).encode("utf-8")[:MAX_STR]

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, bytes)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        s = mutate_str(v.decode("latin-1"), rng, byte_mode=True)
        return s.encode("latin-1", errors="replace")[: MAX_STR * 2]


KINDS = (Str(), Char(), Bytes())
