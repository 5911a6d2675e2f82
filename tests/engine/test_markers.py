import textwrap

import pytest

from coherence.engine.markers import find_targets

SOURCE = textwrap.dedent(
    '''
    from typing import List
    import math
    LIMIT = 10

    def helper(x: int) -> int:
        """Double x."""
        return 2 * x

    # coherence
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    @llm_generated
    def sub(a, b):
        return a - b

    @coherence.generated()
    def neg(a):
        return -a

    def mul(a, b):  # coherence
        def inner():  # coherence
            pass
        return a * b

    def plain(a):
        """Not marked."""
        return a

    def tricky(a):
        s = "# coherence"
        return s

    # coherence
    async def fetch(x):
        return x

    # coherence
    def gen(n):
        yield n

    class C:
        # coherence
        def method(self):
            return 1
    '''
)


def by_name(targets):
    return {t.qualname: t for t in targets}


def test_markers_comment_and_decorators():
    found = by_name(find_targets(SOURCE, "m.py"))
    assert {"add", "sub", "neg", "mul"} <= set(found)
    assert "plain" not in found and "helper" not in found and "tricky" not in found
    assert found["add"].skip_reason is None
    assert found["add"].name_line == SOURCE.splitlines().index("def add(a: int, b: int = 2) -> int:") + 1


def test_unsupported_functions_are_skipped_with_reason():
    found = by_name(find_targets(SOURCE, "m.py"))
    assert "async" in found["fetch"].skip_reason
    assert "generator" in found["gen"].skip_reason
    # a method of a class built without arguments is checked (tests/engine/test_methods.py)
    assert found["C.method"].skip_reason is None and found["C.method"].spec.owner == "C"
    assert "nested" in found["mul.inner"].skip_reason


def test_docstring_mode_checks_every_documented_function():
    names = {t.qualname for t in find_targets(SOURCE, "m.py", mode="docstring")}
    assert {"helper", "add", "plain"} <= names
    assert "sub" not in names


def test_spec_never_carries_the_body():
    add = by_name(find_targets(SOURCE, "m.py"))["add"]
    spec_text = add.spec.header() + add.spec.context
    assert "return a + b" not in spec_text
    assert "return 2 * x" not in spec_text  # sibling bodies are hidden too
    assert "def helper(x: int) -> int:" in add.spec.context
    assert "Double x." in add.spec.context
    assert "import math" in add.spec.context and "LIMIT = 10" in add.spec.context
    assert add.spec.signature == "(a: int, b: int=2) -> int"
    assert [p.name for p in add.spec.params] == ["a", "b"]
    assert add.spec.params[1].default == "2"


def test_body_edit_changes_body_hash_but_not_spec_hash():
    before = by_name(find_targets(SOURCE, "m.py"))["add"]
    after = by_name(find_targets(SOURCE.replace("return a + b", "return b + a"), "m.py"))["add"]
    assert before.spec.spec_hash == after.spec.spec_hash
    assert before.body_hash != after.body_hash
    # Comments and formatting do not change behaviour, so they do not change the body hash.
    reformatted = by_name(find_targets(SOURCE.replace("return a + b", "return (a  +  b)  # sum"), "m.py"))["add"]
    assert reformatted.body_hash == before.body_hash


def test_docstring_edit_changes_spec_hash():
    before = by_name(find_targets(SOURCE, "m.py"))["add"]
    after = by_name(find_targets(SOURCE.replace("Add two numbers.", "Add two integers."), "m.py"))["add"]
    assert before.spec.spec_hash != after.spec.spec_hash


def test_syntax_error_is_raised_for_the_caller():
    with pytest.raises(SyntaxError):
        find_targets("def broken(:\n    pass\n", "m.py")


def test_dataclass_and_enum_classes_are_described():
    src = textwrap.dedent(
        """
        from dataclasses import dataclass
        from enum import Enum

        @dataclass
        class Point:
            x: int
            y: int = 0

        class Color(Enum):
            RED = 1
            GREEN = 2

        # coherence
        def f(p: Point, c: Color) -> int:
            return p.x
        """
    )
    (t,) = find_targets(src, "m.py")
    classes = {c.name: c for c in t.spec.classes}
    assert classes["Point"].is_dataclass and [f.name for f in classes["Point"].fields] == ["x", "y"]
    assert classes["Color"].is_enum and classes["Color"].members == ("RED", "GREEN")
