"""The parser, behind one lock, for every syntax tree the server builds.

CPython 3.11 keeps the AST constructor's recursion depth in interpreter-wide state. When two
threads build trees at once and a finalizer hands the GIL over in the middle of one (the garbage
collector runs in whichever thread allocates), the other thread's count lands in it and
``ast.parse`` raises ``SystemError: AST constructor recursion depth mismatch`` (cpython
gh-106905). The server parses on its event loop and in ``asyncio.to_thread`` workers at the same
time (a check's inputs and its programs' distinctness run side by side), and CI on a517508 hit it:
a function came back "internal error" instead of a verdict. Under the stress in
``tests/engine/test_syntax.py``, 3.11.7 failed every time and 3.12.1 and 3.13.0 never did; the
lock is kept for every version (it costs a few microseconds a parse).

``coherence_worker`` does not use this: it is single-threaded, in its own process, and stdlib-only.
"""

from __future__ import annotations

import ast
import threading
from typing import Any, Literal, overload

# Reentrant: a finalizer that runs during a parse may itself parse, in the same thread.
_LOCK = threading.RLock()


@overload
def parse(source: str, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse(source: str, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...
@overload
def parse(source: str, filename: str, mode: Literal["eval"]) -> ast.Expression: ...


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse``, one thread at a time.  Source nested past the parser's limit (``1 + 1 + …``
    20,000 terms long) raises SyntaxError, as for any code Python cannot compile: CPython
    cannot run it either, and every caller already says why code does not parse."""
    with _LOCK:
        try:
            return ast.parse(source, filename=filename, mode=mode)
        except RecursionError:
            raise SyntaxError("too deeply nested for Python's parser", (filename, 1, 1, "")) from None


def literal_eval(node_or_string: str | ast.AST) -> Any:
    """``ast.literal_eval``; a string is parsed under the lock (as ``ast.literal_eval`` would,
    leading spaces and tabs stripped), a tree is evaluated as it is."""
    if isinstance(node_or_string, str):
        node_or_string = parse(node_or_string.lstrip(" \t"), mode="eval")
    return ast.literal_eval(node_or_string)
