"""The server builds syntax trees from several threads at once; CPython 3.11's AST constructor
keeps its recursion depth in interpreter-wide state, so without ``coherence.engine.syntax``'s lock
this stress raises ``SystemError: AST constructor recursion depth mismatch`` (bare ``ast.parse``
in ``work`` below, on 3.11.7: 6 runs in 6; on 3.12.1: 0 in 6). CI on a517508 met it as an "internal error" verdict."""

from __future__ import annotations

import ast
import gc
import threading
import time
import types

import pytest

from coherence.engine import syntax

NESTED = (
    "def f(x):\n"
    + "".join("    " * (i + 1) + f"if x > {i}:\n" for i in range(30))
    + "    " * 31
    + "return [1, (2, {3: 4})]\n"
)


class _Churn:
    """A cycle with a finalizer that gives up the GIL: the collector runs it in whichever thread
    allocates, in the middle of that thread's tree construction."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        time.sleep(0)


def test_threads_parsing_at_once_all_get_their_trees() -> None:
    expected = ast.dump(ast.parse(NESTED))
    errors: list[BaseException] = []
    wrong: list[str] = []

    def work() -> None:
        try:
            for _ in range(300):
                _Churn()
                tree = syntax.parse(NESTED)
                if ast.dump(tree) != expected:
                    wrong.append(ast.dump(tree)[:80])
        except BaseException as e:
            errors.append(e)

    threshold = gc.get_threshold()
    gc.set_threshold(50)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*threshold)
    assert errors == [] and wrong == []


def test_literal_eval_reads_strings_as_ast_does() -> None:
    assert syntax.literal_eval("  {'a': (1, -2.5)}") == {"a": (1, -2.5)}
    assert syntax.literal_eval(ast.parse("[1, 2]", mode="eval").body) == [1, 2]
    with pytest.raises(ValueError):
        syntax.literal_eval("len([])")
    with pytest.raises(SyntaxError):
        syntax.literal_eval("(")


def test_source_nested_past_the_parser_limit_is_a_syntax_error(monkeypatch):
    # "X = 1 + 1 + ..." 20,000 terms long: CPython 3.11 (at the default recursion limit), 3.12 and
    # 3.13 raise RecursionError in ast.parse and cannot compile it either; before, the user's
    # module came back as "internal error in coherence: RecursionError ... (please report it)".
    # Whether a given depth raises depends on the version and on the process's recursion limit
    # (in CI's pytest worker this one parsed), so the parser's refusal is stood in for here.
    def refuse(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded during ast construction")

    # only syntax.py's reference to the ast module: pytest and other threads keep the real one
    monkeypatch.setattr(syntax, "ast", types.SimpleNamespace(parse=refuse))
    with pytest.raises(SyntaxError, match="too deeply nested for Python's parser"):
        syntax.parse("X = 1 + 1\n", "mod.py")
