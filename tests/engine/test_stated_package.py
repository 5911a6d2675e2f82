"""What the docstring states lives in one package, ``engine.stated``, that input generation and
judging both read: it imports none of the input builders and nothing of judging, and judging
reads the facts from it, not from the input generator (annotations' imports included)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import coherence
from coherence.engine import stated

STATED = Path(stated.__file__).parent
ENGINE = STATED.parent
INPUTS = ENGINE / "inputs"
VERDICT = ENGINE / "verdict"

# The plain value types stated/ may take from inputs/: none of them imports an input builder.
LEAVES = {"coherence.engine.inputs.values", "coherence.engine.inputs.types", "coherence.engine.inputs.binding"}
BUILDERS = ("generate", "seeds", "kinds", "mutate", "shrink")
FORBIDDEN = tuple(f"coherence.engine.inputs.{m}" for m in BUILDERS) + ("coherence.engine.verdict",)
# The names of the facts judging reads.
FACTS = {
    "Domain",
    "Rule",
    "EVIDENCE_ORIGINS",
    "StatedExample",
    "stated_examples",
    "degenerate",
    "empty_value",
    "empty_string_argument",
    "empty_collection_argument",
    "Assumption",
    "assumption",
    "stated_assumptions",
    "stated_signs",
    "backed_signs",
}


SERVER = Path(coherence.__file__).resolve().parent.parent


def _package(path: Path) -> str:
    return ".".join(path.resolve().relative_to(SERVER).parent.parts)


def imports(path: Path, package: str | None = None) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every import in a source file, anywhere in it (under
    ``TYPE_CHECKING`` and inside functions too); ``name`` is None for ``import module``.
    Relative imports are resolved against ``package`` (by default the file's own)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = (package if package is not None else _package(path)).split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            found += [(module, a.name) for a in node.names]
    return found


def modules_imported(path: Path) -> set[str]:
    """Every module a file imports: ``from pkg import sub`` imports ``pkg`` and, when ``sub`` is
    one of its modules, ``pkg.sub`` too."""
    out: set[str] = set()
    for module, name in imports(path):
        out.add(module)
        if name is not None:
            out.add(f"{module}.{name}")
    return out


def _sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_imports_reads_relative_imports_and_annotations(tmp_path):
    pkg = tmp_path / "coherence_probe"
    pkg.mkdir()
    f = pkg / "mod.py"
    f.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from coherence.engine.inputs.kinds import Kind\n"
        "def g():\n    from . import seeds\n"
    )
    found = set(imports(f, "coherence_probe"))
    assert ("coherence.engine.inputs.kinds", "Kind") in found
    assert ("coherence_probe", "seeds") in found


def test_stated_imports_no_input_builder_and_nothing_of_judging():
    bad = sorted(
        f"{p.relative_to(STATED)} imports {m}"
        for p in _sources(STATED)
        for m in modules_imported(p)
        if m.startswith(FORBIDDEN)
    )
    assert bad == []


def test_stated_takes_from_inputs_only_the_value_types():
    """Anything else of inputs/ (type inference, the face) is handed in by the caller."""
    taken = sorted(
        f"{p.relative_to(STATED)} imports {module}"
        for p in _sources(STATED)
        for module, _ in imports(p)
        if module.startswith("coherence.engine.inputs") and module not in LEAVES
    )
    assert taken == []


def test_the_value_types_are_leaves():
    """The leaves stated/ imports import nothing of inputs/ but each other."""
    for leaf in LEAVES:
        path = SERVER / (leaf.replace(".", "/") + ".py")
        inner = {m for m, _ in imports(path) if m.startswith("coherence.engine.inputs")}
        assert inner <= LEAVES, (leaf, inner - LEAVES)


def test_judging_reads_the_facts_from_stated():
    files = [*_sources(VERDICT), ENGINE / "calibration.py"]
    elsewhere = sorted(
        f"{p.relative_to(ENGINE)}: {name} from {module}"
        for p in files
        for module, name in imports(p)
        if name in FACTS and not module.startswith("coherence.engine.stated")
    )
    assert elsewhere == []
    read = {module for p in files for module, name in imports(p) if name in FACTS}
    # the domain, the worked examples and degenerate calls are all read, and only from stated/
    assert {
        "coherence.engine.stated.domain",
        "coherence.engine.stated.examples",
        "coherence.engine.stated.degenerate",
    } <= read


def test_each_fact_has_one_home():
    twins = {p.stem for p in STATED.glob("*.py")} & {p.stem for p in INPUTS.rglob("*.py")}
    assert twins == {"__init__"}


@pytest.mark.parametrize("module", sorted(p.stem for p in STATED.glob("*.py") if p.stem != "__init__"))
def test_each_stated_module_imports_first_and_loads_no_input_builder(module):
    """Imported first in a fresh interpreter (so no import order hides a circle), a module of
    stated/ loads none of the input builders and nothing of judging, through package faces
    included."""
    code = (
        f"import sys, coherence.engine.stated.{module}; "
        "print('\\n'.join(m for m in sys.modules if m.startswith('coherence.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(SERVER)},
    )
    assert out.returncode == 0, out.stderr
    loaded = out.stdout.split()
    assert f"coherence.engine.stated.{module}" in loaded
    assert [m for m in loaded if m.startswith(FORBIDDEN)] == []
