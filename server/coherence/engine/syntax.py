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

Deep source is parsed on a stack that fits it.  Before 3.11, CPython builds a tree's Python
objects (``ast2obj``) by C recursion with no depth check: ``X = 1 + 1 + …`` 200,000 terms long
(800 KB) overflows an 8 MB stack and ends the process with SIGSEGV, and a language server that
parses a repository's files must not die of one.  Each level takes under 128 bytes of stack and
at least two characters of source, so a thread with 128 bytes of stack per character cannot
overflow; a thread's default stack can be far smaller than the main thread's (musl: 128 KB).

``coherence_worker`` does not use this: it is single-threaded, in its own process, and stdlib-only.
"""

from __future__ import annotations

import ast
import re
import sys
import threading
from typing import Any, Literal, overload

# Reentrant: a finalizer that runs during a parse may itself parse, in the same thread.
_LOCK = threading.RLock()

_SMALL = 20_000  # characters: at most 10,000 levels, which any thread's stack holds
_STACK_PER_CHAR = 128
_STACK_MIN = 32 << 20
_STACK_MAX = 1 << 30  # virtual: only the pages a deep tree touches are ever used
_in_parser_thread = threading.local()
# Before 3.11 a tree of any depth comes back, which CPython's compiler and coherence's walkers
# then cannot recurse through; 3.11 refuses past a depth (RecursionError), and so does this.
_UNCHECKED_DEPTH = sys.version_info < (3, 11)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_TOO_DEEP = "too deeply nested for Python's parser"


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
    if getattr(_in_parser_thread, "active", False):  # a finalizer parsing during a deep parse
        return _parse(source, filename, mode)
    with _LOCK:
        if len(source) <= _SMALL:
            return _parse(source, filename, mode)
        return _parse_on_own_stack(source, filename, mode)


def _parse(source: str, filename: str, mode: str) -> ast.AST:
    try:
        tree = ast.parse(source, filename=filename, mode=mode)
    except RecursionError:
        raise SyntaxError(_TOO_DEEP, (filename, 1, 1, "")) from None
    except MemoryError:
        # The parser's own stack overflowed ("- - - … 1" 200,000 signs deep); 3.10 and 3.11 give
        # no message.  A file too big for memory cannot be parsed either.
        raise SyntaxError("too complex for Python's parser", (filename, 1, 1, "")) from None
    if _UNCHECKED_DEPTH and len(source) > _SMALL and _deeper_than(tree, _depth_limit(), source):
        raise SyntaxError(_TOO_DEEP, (filename, 1, 1, ""))  # as 3.11 refuses this tree
    return tree


def _depth_limit() -> int:
    # 3.11's AST constructor: the recursion limit times COMPILER_STACK_FRAME_SCALE (3)
    return sys.getrecursionlimit() * 3


def _deeper_than(tree: ast.AST, limit: int, source: str) -> bool:
    """Whether a node of ``tree`` lies more than ``limit`` levels down.  Iterative (the tree may
    be far deeper than Python's recursion limit), and it skips every node whose source is too
    short to hold what is left: a level takes at least one character (``-x``), and a name adds
    two nodes, so a node spanning k characters has at most k + 2 levels below it.  A file of
    ordinary functions is then settled at its top-level statements."""
    # where each line starts, counted as the parser counts lines (str.splitlines would also
    # split at form feeds and U+2028, which the parser does not)
    starts = [0, *(m.end() for m in _NEWLINE.finditer(source))]
    todo = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        if depth > limit:
            return True
        for child in ast.iter_child_nodes(node):
            first, last = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if first is not None and last is not None and 0 < first <= last <= len(starts):
                # from the start of its first line to its end (a column counts bytes, at least
                # the characters): never less than the node's own length
                span = starts[last - 1] + (getattr(child, "end_col_offset", None) or 0) - starts[first - 1]
                if span + 2 < limit - depth:
                    continue
            todo.append((child, depth + 1))
    return False


def _parse_on_own_stack(source: str, filename: str, mode: str) -> ast.AST:
    """``_parse`` in a thread whose stack fits ``source`` (see the module docstring)."""
    size = max(_STACK_MIN, _STACK_PER_CHAR * len(source))
    if size > _STACK_MAX:
        raise SyntaxError(
            f"too large for coherence to parse safely ({len(source) // (1 << 20)} MB; the limit is "
            f"{_STACK_MAX // _STACK_PER_CHAR // (1 << 20)} MB)",
            (filename, 1, 1, ""),
        )
    trees: list[ast.AST] = []
    errors: list[BaseException] = []

    def run() -> None:
        _in_parser_thread.active = True
        try:
            trees.append(_parse(source, filename, mode))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    # stack_size is process-wide: set it for this one thread and put it back at once (a thread
    # another caller starts meanwhile gets a big virtual stack, which costs it nothing).
    size = -(-size // (1 << 20)) << 20  # whole MiB: some platforms want page multiples
    try:
        old = threading.stack_size(size)
    except (RuntimeError, ValueError):  # a platform that sets no thread stack size: the caller's
        return _parse(source, filename, mode)
    try:
        thread = threading.Thread(target=run, name="coherence-parse", daemon=True)
        thread.start()
    except RuntimeError:  # no memory for the stack (an address-space limit): say so, stay up
        raise SyntaxError(
            "too large for coherence to parse here (no memory for the parser's stack)", (filename, 1, 1, "")
        ) from None
    finally:
        threading.stack_size(old)
    thread.join()
    if errors:
        raise errors[0]
    return trees[0]


def literal_eval(node_or_string: str | ast.AST) -> Any:
    """``ast.literal_eval``; a string is parsed under the lock (as ``ast.literal_eval`` would,
    leading spaces and tabs stripped), a tree is evaluated as it is."""
    if isinstance(node_or_string, str):
        node_or_string = parse(node_or_string.lstrip(" \t"), mode="eval")
    return ast.literal_eval(node_or_string)
