"""Which functions a check covers without editing the source (include / exclude patterns and
``# coherence: off``), and reading source files as Python does."""

from __future__ import annotations

import pytest

from coherence.engine.inputs.seeds import workspace_seeds
from coherence.engine.markers import find_targets, read_source
from coherence.engine.selection import check_patterns, names_for

SOURCE = '''\
def parse(text: str) -> int:
    """Parse a number."""
    return int(text)


# coherence
def render(n: int) -> str:
    """Render a number."""
    return str(n)


def helper(n: int) -> int:
    return n


def outer(n: int) -> int:
    """Has a nested function."""
    def inner(m: int) -> int:
        return m
    return inner(n)


class Cart:
    def __init__(self):
        self.items = []

    async def fetch(self) -> int:
        """Not checked yet: async."""
        return 0

    def add(self, item: str) -> int:
        """Add an item."""
        return 1

    def total(self) -> int:
        """The total."""
        return 0
'''


def names(**kw) -> list[str]:
    return [t.qualname for t in find_targets(SOURCE, "lib/m.py", **kw)]


def test_include_marks_functions_without_editing_them():
    assert names() == ["render"]
    assert names(include=("parse", "Cart.*")) == ["parse", "render", "Cart.add", "Cart.total"]
    # never outer.inner, Cart.__init__ or the async Cart.fetch: what include adds is checkable
    assert names(include=("*",)) == ["parse", "render", "helper", "outer", "Cart.add", "Cart.total"]
    assert names(include=("Cart.fetch",)) == ["render"]
    assert "Cart.fetch" in names(mode="docstring")  # marked (a docstring): reported as skipped


def test_exclude_wins_over_markers_include_and_docstring_mode():
    assert names(exclude=("render",)) == []
    assert names(include=("*",), exclude=("Cart.t*", "h*")) == ["parse", "render", "outer", "Cart.add"]
    assert names(mode="docstring", exclude=("Cart.*",)) == ["parse", "render", "outer"]


def test_coherence_off_on_a_def_leaves_it_out_in_every_mode():
    off = SOURCE.replace("def parse(text: str) -> int:", "def parse(text: str) -> int:  # coherence: off")
    off = off.replace("# coherence\ndef render", "# coherence: off\ndef render")
    assert [t.qualname for t in find_targets(off, "m.py", mode="docstring")] == [
        "outer",
        "Cart.fetch",
        "Cart.add",
        "Cart.total",
    ]
    assert [t.qualname for t in find_targets(off, "m.py", include=("*",))] == [
        "helper",
        "outer",
        "Cart.add",
        "Cart.total",
    ]


def test_patterns_read_like_pytest_node_ids(tmp_path):
    root = tmp_path
    patterns = ["lib/*.py::parse", "lib/gen/**/*.py", "::Cart::add", "**/conftest.py::fix*", "./tools/x.py::main"]
    assert names_for(root / "lib/m.py", patterns, root) == ("parse", "Cart.add")
    assert names_for(root / "lib/gen/a/b.py", patterns, root) == ("parse", "*", "Cart.add")  # * crosses folders
    assert names_for(root / "other.py", patterns, root) == ("Cart.add",)
    assert names_for(root / "conftest.py", patterns, root) == ("Cart.add", "fix*")
    assert names_for(root / "tools/x.py", patterns, root) == ("Cart.add", "main")


@pytest.mark.parametrize("value", [3, ["ok.py", 4], ["  "], {"a": 1}])
def test_a_malformed_pattern_list_is_refused(value):
    with pytest.raises(ValueError, match=r"include must be a list of 'path/glob\.py::name_glob' strings"):
        check_patterns(value, "include")


def test_source_is_read_with_its_declared_encoding(tmp_path):
    text = '# -*- coding: latin-1 -*-\ndef f(s: str) -> str:\n    """Say caf\u00e9."""\n    return s\n'
    (tmp_path / "m.py").write_bytes(text.encode("latin-1"))
    assert read_source(tmp_path / "m.py") == text
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + "x = '\u00e9'\n".encode())
    assert read_source(tmp_path / "bom.py") == "x = '\u00e9'\n"
    (tmp_path / "bad.py").write_bytes(b"x = '\xe9'\n")
    with pytest.raises(SyntaxError):  # no coding line: UTF-8, as Python itself would refuse it
        read_source(tmp_path / "bad.py")


def test_a_latin_1_test_file_gives_its_strings_as_seeds(tmp_path):
    spec = find_targets(
        '# coherence\ndef shout(s: str) -> str:\n    """Upper case."""\n    return s.upper()\n', "m.py"
    )[0].spec
    (tmp_path / "tests").mkdir()
    test = '# -*- coding: latin-1 -*-\nfrom m import shout\n\ndef test_shout():\n    assert shout("caf\u00e9") == "CAF\u00c9"\n'
    (tmp_path / "tests" / "test_m.py").write_bytes(test.encode("latin-1"))
    seeds = workspace_seeds(spec, tmp_path)
    assert [s.args for s in seeds] == [("caf\u00e9",)]
