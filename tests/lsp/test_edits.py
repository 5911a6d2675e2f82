"""The text of the code actions' edits (pure functions, no server)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap

import pytest

from coherence.engine.result import CheckResult, Cluster, ClusterOutput, Counterexample
from coherence.lsp import edits


def result(name: str, call: str, yours: str, theirs: str) -> CheckResult:
    return CheckResult(
        name=name,
        qualname=name,
        path="m.py",
        line=3,
        status="incoherent",
        trust=0.4,
        samples=10,
        clusters=[Cluster(7), Cluster(3, yours=True)],
        user_cluster=1,
        counterexample=Counterexample(
            call=call,
            yours=yours,
            theirs=theirs,
            alternatives=[ClusterOutput(theirs, 7), ClusterOutput(yours, 2)],
            disagreeing=7,
            total=9,
        ),
    )


MODULE = textwrap.dedent(
    '''
    """Doc."""
    from __future__ import annotations

    import math
    from dataclasses import dataclass


    @dataclass
    class Point:
        x: int
        y: int


    def area(r: float) -> float:  # coherence
        """Area of a circle of radius r."""
        return 3.14 * r * r


    # coherence
    def norm(p: Point) -> float: return abs(p.x) + abs(p.y)
    '''
).lstrip()


def test_regression_test_pins_one_value():
    r = result("area", "area(2.0)", "12.56", "12.566370614359172")
    imp, test = edits.regression_test(r, "/w/m.py", MODULE, "theirs")
    assert imp == "from m import area"
    src = edits.new_test_file(imp, test, "/w/m.py")
    ast.parse(src)
    assert test.startswith(f"def {edits.pinned_test_name(r, 'theirs')}():")
    assert "    result = area(2.0)\n    assert result == 12.566370614359172\n" in test
    assert "Rejected: 12.56" in test
    _, mine = edits.regression_test(r, "/w/m.py", MODULE, "yours")
    assert "    assert result == 12.56\n" in mine and "in (" not in mine
    assert edits.pinned_test_name(r, "yours") != edits.pinned_test_name(r, "theirs")


def test_regression_test_pins_an_exception_or_the_value():
    r = result("norm", "norm(Point(x=0, y=-1))", "raises ValueError", "1")
    imp, mine = edits.regression_test(r, "/w/m.py", MODULE, "yours")
    assert imp == "from m import norm, Point"
    ast.parse(mine)
    assert (
        "    try:\n        result = norm(Point(x=0, y=-1))\n    except Exception as exc:\n        assert type(exc).__name__ == 'ValueError', exc\n"
        in mine
    )
    _, theirs = edits.regression_test(r, "/w/m.py", MODULE, "theirs")
    assert "    result = norm(Point(x=0, y=-1))\n    assert result == 1\n" in theirs


def test_regression_test_without_literal_outputs_compares_the_printed_form():
    r = result("area", "area(1.0)", "<object at 0x1>", "Point(x=1, y=2)")
    _, test = edits.regression_test(r, "/w/m.py", MODULE, "theirs")
    ast.parse(test)
    assert "assert repr(result) == 'Point(x=1, y=2)'" in test


def test_regression_test_is_not_written_for_what_a_test_cannot_reproduce():
    assert (
        edits.regression_test(result("area", "area(1e300)", "raises Timeout", "1.0"), "/w/m.py", MODULE, "yours")
        is None
    )
    assert edits.regression_test(result("area", "area(1.0)", "[1, 2, 3, …", "1.0"), "/w/m.py", MODULE, "yours") is None
    assert edits.regression_test(result("area", "area(1.0)", "1", "2"), "/w/m.py", MODULE, "both") is None


def test_pinned_tests_are_recognised_in_the_test_file():
    r = result("area", "area(2.0)", "1", "2")
    imp, test = edits.regression_test(r, "/w/m.py", MODULE, "yours")
    assert edits.pinned_tests(r, None) == []
    src = edits.new_test_file(imp, test, "/w/m.py")
    assert edits.pinned_tests(r, src) == ["yours"]
    # another counterexample of the same function is another test
    assert edits.pinned_tests(result("area", "area(3.0)", "1", "2"), src) == []


def test_append_adds_the_import_once():
    existing = "import pytest\n\n\ndef test_other():\n    pass\n"
    r = result("area", "area(2.0)", "1", "2")
    imp, test = edits.regression_test(r, "/w/m.py", MODULE, "yours")
    after = edits.apply_changes(existing, edits.append_to_test_file(existing, imp, test))
    ast.parse(after)
    assert after.splitlines()[1] == "from m import area"
    _, other = edits.regression_test(result("area", "area(3.0)", "1", "2"), "/w/m.py", MODULE, "theirs")
    again = edits.apply_changes(after, edits.append_to_test_file(after, imp, other))
    assert again.count("from m import area") == 1 and edits.pinned_tests(r, again) == ["yours"]


VOWELS = textwrap.dedent(
    '''
    def count_vowels(s: str) -> int:
        """Count the vowels in s."""
        return sum(1 for ch in s if ch in "aeiou")
    '''
).lstrip()
VOWELS_FIXED = VOWELS.replace("for ch in s if", "for ch in s.lower() if")


# pinning theirs is the mirror image of pinning yours: the default run takes one side
@pytest.mark.parametrize("side", ["yours", pytest.param("theirs", marks=pytest.mark.slow)])
def test_a_pinned_test_fails_on_the_side_it_rejects(tmp_path, side):
    """The written test, run with pytest against the buggy function (yours: 0 vowels in 'A') and
    the fixed one (theirs: 1): it passes on the side it keeps and fails on the other."""
    r = result("count_vowels", "count_vowels('A')", "0", "1")
    imp, test = edits.regression_test(r, str(tmp_path / "vowels.py"), VOWELS, side)
    (tmp_path / edits.test_module_name("vowels.py")).write_text(edits.new_test_file(imp, test, "vowels.py"))
    outcomes = {}
    for name, source in (("yours", VOWELS), ("theirs", VOWELS_FIXED)):
        (tmp_path / "vowels.py").write_text(source)
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", edits.test_module_name("vowels.py")],
            cwd=tmp_path,
            # the written test needs plain pytest; this venv's plugins (hypothesis, pytest-lsp) cost seconds to load
            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        outcomes[name] = run.returncode
        if name != side:
            assert "assert 0 == 1" in run.stdout or "assert 1 == 0" in run.stdout, run.stdout
    rejected = "theirs" if side == "yours" else "yours"
    assert outcomes == {side: 0, rejected: 1}


def test_replace_body_keeps_header_comment_docstring_and_adds_imports():
    alt = textwrap.dedent(
        '''
        import math
        from functools import lru_cache

        def area(r: float) -> float:
            """Other docstring."""
            # uses pi
            return math.pi * r ** 2
        # End of python code
        '''
    )
    changes = edits.replace_body(
        MODULE, "area", MODULE.splitlines().index("def area(r: float) -> float:  # coherence") + 1, alt
    )
    after = edits.apply_changes(MODULE, changes)
    ast.parse(after)
    assert (
        'def area(r: float) -> float:  # coherence\n    """Area of a circle of radius r."""\n    # uses pi\n    return math.pi * r ** 2\n'
        in after
    )
    assert "Other docstring" not in after
    # `import math` is there already; lru_cache is new and goes after the last import.
    assert after.count("import math") == 1
    assert "from dataclasses import dataclass\nfrom functools import lru_cache\n" in after
    assert after.index("from __future__") < after.index("from functools")


def test_replace_body_of_a_one_line_def_with_helpers():
    alt = textwrap.dedent(
        """
        def _manhattan(a, b):
            return abs(a) + abs(b)

        def norm(p: Point) -> float:
            return float(_manhattan(p.x, p.y))
        """
    )
    line = MODULE.splitlines().index("def norm(p: Point) -> float: return abs(p.x) + abs(p.y)") + 1
    after = edits.apply_changes(MODULE, edits.replace_body(MODULE, "norm", line, alt))
    tree = ast.parse(after)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert names == ["area", "norm", "_manhattan"]
    assert "# coherence\ndef norm(p: Point) -> float:\n    return float(_manhattan(p.x, p.y))\n" in after


def test_replace_body_keeps_crlf():
    src = "# coherence\r\ndef f(x: int) -> int:\r\n    return x\r\n"
    after = edits.apply_changes(src, edits.replace_body(src, "f", 2, "def f(x: int) -> int:\n    return x + 1\n"))
    assert after == "# coherence\r\ndef f(x: int) -> int:\r\n    return x + 1\r\n"


def test_replace_body_without_the_function_in_the_alternative():
    assert edits.replace_body(MODULE, "area", 14, "def other():\n    pass\n") is None


CART = textwrap.dedent(
    '''
    import math


    class Cart:
        def __init__(self):
            self.items = {}

        # coherence
        def add(self, item: str, qty: int = 1) -> int:
            """Add qty of item; return the total."""
            self.items[item] = self.items.get(item, 0) + qty
            return sum(self.items.values())

        def total(self) -> int:
            return sum(self.items.values())
    '''
).lstrip()


def test_replace_body_of_a_method_written_as_the_whole_class():
    alt = textwrap.dedent(
        """
        class Cart:
            def add(self, item, qty=1):
                if qty > 0:
                    self._put(item, qty)
                return self.total()

            def _put(self, item, qty):
                self.items[item] = self.items.get(item, 0) + qty

            def total(self):
                return 0
        """
    )
    line = CART.splitlines().index("    def add(self, item: str, qty: int = 1) -> int:") + 1
    after = edits.apply_changes(CART, edits.replace_body(CART, "add", line, alt))
    cls = next(n for n in ast.parse(after).body if isinstance(n, ast.ClassDef))
    # the new helper method joins the class; the user's own total() stays as it was
    assert [n.name for n in cls.body] == ["__init__", "add", "_put", "total"]
    assert (
        '    # coherence\n    def add(self, item, qty=1):\n        """Add qty of item; return the total."""\n        if qty > 0:\n'
        in after
    )
    assert "return sum(self.items.values())\n" in after.split("def total")[1]


def test_replace_body_of_a_method_with_a_module_level_helper():
    alt = "def _positive(q):\n    return max(q, 0)\n\n\ndef add(self, item: str, qty: int = 1) -> int:\n    self.items[item] = self.items.get(item, 0) + _positive(qty)\n    return self.total()\n"
    line = CART.splitlines().index("    def add(self, item: str, qty: int = 1) -> int:") + 1
    after = edits.apply_changes(CART, edits.replace_body(CART, "add", line, alt))
    tree = ast.parse(after)
    assert [type(n).__name__ + ":" + getattr(n, "name", "") for n in tree.body] == [
        "Import:",
        "FunctionDef:_positive",
        "ClassDef:Cart",
    ]
    assert "        self.items[item] = self.items.get(item, 0) + _positive(qty)\n        return self.total()\n" in after


def test_regression_test_of_a_method_imports_its_class():
    r = result(
        "add",
        "Cart().add('', 0)",
        "0 (and leaves the object as Cart(items={'': 0}))",
        "0 (and leaves the object unchanged)",
    )
    r.qualname = "Cart.add"
    import_line, mine = edits.regression_test(r, "shop/cart.py", CART, "yours")
    _, theirs = edits.regression_test(r, "shop/cart.py", CART, "theirs")
    assert import_line == "from cart import Cart"
    # the call on a fresh object, then what it returned and the state it left the object in
    assert "    obj = Cart()\n    result = obj.add('', 0)\n" in mine
    assert "assert (result, vars(obj)) == (0, {'items': {'': 0}})" in mine
    assert "assert (result, vars(obj)) == (0, vars(Cart()))" in theirs

    def passes(test: str, module_source: str) -> bool:
        ns: dict = {}
        exec(compile(module_source, "cart.py", "exec"), ns)  # the generated test against a real class
        exec(compile(test, "test.py", "exec"), ns)
        try:
            next(v for k, v in ns.items() if k.startswith("test_add_expects"))()
        except AssertionError:
            return False
        return True

    guarded = CART.replace(
        "self.items[item] = self.items.get(item, 0) + qty",
        "if qty > 0:\n            self.items[item] = self.items.get(item, 0) + qty",
    )
    assert passes(mine, CART) and not passes(mine, guarded)  # yours records the item with 0
    assert passes(theirs, guarded) and not passes(theirs, CART)
