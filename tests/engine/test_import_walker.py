"""The import walker the structure tests share (``tests/support/imports.py``) sees what they guard
against: an import cycle through a lazy import, relative imports at any depth, imports under
``TYPE_CHECKING``."""

from __future__ import annotations

import pytest

from tests.support.imports import Import, cycles, import_graph, imports, modules_imported, package_of


def _package(root, dotted: str, files: dict[str, str]):
    """A package ``dotted`` under ``root`` (each folder with its ``__init__.py``) holding ``files``."""
    folder = root
    for part in dotted.split("."):
        folder = folder / part
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_relative_imports_resolve_against_the_file_s_package(tmp_path):
    pkg = _package(
        tmp_path,
        "top.mid.low",
        {"mod.py": "from . import seeds\nfrom .kinds import Kind\nfrom ..up import x\nimport os.path\n"},
    )
    assert package_of(pkg / "mod.py") == "top.mid.low"
    assert set(imports(pkg / "mod.py")) == {
        Import("top.mid.low", "seeds", 1),
        Import("top.mid.low.kinds", "Kind", 1),
        Import("top.mid.up", "x", 2),
        Import("os.path", None, 0),
    }
    assert modules_imported(pkg / "mod.py") == {
        "top.mid.low",
        "top.mid.low.seeds",
        "top.mid.low.kinds",
        "top.mid.low.kinds.Kind",
        "top.mid.up",
        "top.mid.up.x",
        "os.path",
    }


def test_a_relative_import_past_the_top_package_is_refused(tmp_path):
    pkg = _package(tmp_path, "top", {"mod.py": "from .. import x\n"})
    with pytest.raises(ImportError):
        imports(pkg / "mod.py")


def test_imports_reads_relative_imports_and_annotations(tmp_path):
    pkg = tmp_path / "coherence_probe"
    pkg.mkdir()
    f = pkg / "mod.py"
    f.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from coherence.engine.inputs.kinds import Kind\n"
        "def g():\n    from . import seeds\n"
    )
    found = {(i.module, i.name) for i in imports(f, "coherence_probe")}
    assert ("coherence.engine.inputs.kinds", "Kind") in found
    assert ("coherence_probe", "seeds") in found


def test_the_finder_sees_a_cycle_through_a_lazy_import(tmp_path):
    pkg = tmp_path / "cli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from coherence.cli.a import run\n")
    (pkg / "a.py").write_text("from coherence.cli.b import helper\n")
    (pkg / "b.py").write_text("def helper():\n    from coherence.cli import a\n")
    graph = import_graph(pkg, "coherence.cli")
    assert graph == {"__init__": {"a"}, "a": {"b"}, "b": {"a"}}
    assert cycles(graph) == [["a", "b"]]


def test_the_graph_of_relative_imports_and_the_package_s_own_names(tmp_path):
    pkg = _package(
        tmp_path,
        "outer.worker",
        {
            "a.py": "from . import b\nfrom .c import f\n",
            "b.py": "from . import VERSION\nimport outer.worker.c\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import T\n",
        },
    )
    graph = import_graph(pkg)
    assert graph == {"__init__": set(), "a": {"b", "c"}, "b": {"__init__", "c"}, "c": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_cycles_finds_each_circle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    # two circles joined by a one-way edge stay two; a module that imports itself is one
    assert cycles({"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"e"}, "f": {"x"}}) == [
        ["a", "b"],
        ["c", "d"],
        ["e"],
    ]
