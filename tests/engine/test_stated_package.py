"""What the docstring states lives in one package, ``engine.stated``, that input generation and
judging both read: it imports none of the input builders and nothing of judging, and judging
reads the facts from it, not from the input generator (annotations' imports included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import coherence
from coherence.engine import stated
from tests.support.imports import imports, modules_imported

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


def _sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


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
        f"{p.relative_to(STATED)} imports {i.module}"
        for p in _sources(STATED)
        for i in imports(p)
        if i.module.startswith("coherence.engine.inputs") and i.module not in LEAVES
    )
    assert taken == []


def test_the_value_types_are_leaves():
    """The leaves stated/ imports import nothing of inputs/ but each other."""
    for leaf in LEAVES:
        path = SERVER / (leaf.replace(".", "/") + ".py")
        inner = {i.module for i in imports(path) if i.module.startswith("coherence.engine.inputs")}
        assert inner <= LEAVES, (leaf, inner - LEAVES)


def test_judging_reads_the_facts_from_stated():
    files = [*_sources(VERDICT), ENGINE / "calibration.py"]
    elsewhere = sorted(
        f"{p.relative_to(ENGINE)}: {i.name} from {i.module}"
        for p in files
        for i in imports(p)
        if i.name in FACTS and not i.module.startswith("coherence.engine.stated")
    )
    assert elsewhere == []
    read = {i.module for p in files for i in imports(p) if i.name in FACTS}
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
