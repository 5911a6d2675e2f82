"""The registry of input kinds: generation, mutation and shrinking go through it, every kind
provides every step, and a kind added through it alone (``pathlib.Path``) is generated, mutated,
shrunk and checked end to end in the real sandbox."""

from __future__ import annotations

import ast
import json
import random
import textwrap
from pathlib import Path

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.inputs import Construct, Expr, Input, parse_annotation
from coherence.engine.inputs import kinds as kinds_pkg
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.kinds import Kind, boundary_values, fits, kind_of, kinds, mutate_value, random_value
from coherence.engine.inputs.shrink import shrink_candidates, shrink_key
from coherence.engine.inputs.types import (
    ANY,
    BOOL,
    BYTES,
    CHAR,
    COMPLEX,
    FLOAT,
    INT,
    NONE,
    STR,
    TypeDesc,
    dict_of,
    list_of,
    optional,
    set_of,
    tuple_of,
)
from coherence.engine.markers import find_targets
from coherence.engine.spec import ClassInfo, Param
from tests.support.imports import modules_imported

INPUTS = Path(kinds_pkg.__file__).resolve().parent.parent
POINT = ClassInfo(
    "Point", fields=(Param("x", "positional_or_keyword", "int"), Param("y", "positional_or_keyword", "int"))
)

# One descriptor per registered kind: a kind added without one here fails the coverage test.
SAMPLES: dict[str, TypeDesc] = {
    "int": INT,
    "float": FLOAT,
    "bool": BOOL,
    "complex": COMPLEX,
    "none": NONE,
    "str": STR,
    "char": CHAR,
    "bytes": BYTES,
    "list": list_of(INT),
    "tuple": tuple_of(INT, STR),
    "set": set_of(INT),
    "frozenset": set_of(STR, frozen=True),
    "dict": dict_of(STR, INT),
    "class": TypeDesc("class", name="Point", info=POINT, values=(POINT,)),
    "enum": TypeDesc("enum", name="Color", info=ClassInfo("Color", is_enum=True, members=("RED", "GREEN"))),
    "stdlib": TypeDesc("stdlib", name="date", values=("date",)),
    "literal": TypeDesc("literal", values=("r", "w", 3)),
    "expr": TypeDesc("expr", values=(Expr("x"), Expr("y"))),
    "callable": TypeDesc("callable", values=(1,)),
    "any": ANY,
    "union": optional(INT),
    "construct": TypeDesc("construct", name="Thing"),
    "path": TypeDesc("path", name="Path"),
}
# ``construct`` is a call of a class coherence does not know: nothing is known to fit it, so its
# values (a mix of basic ones) are not its own.
FOREIGN_VALUES = {"construct"}
STEPS = ("boundary", "random", "fits", "mutate", "shrink", "magnitude", "empty")


# -- structure ----------------------------------------------------------------------------------


def _kind_comparisons(path: Path) -> list[str]:
    """``x.kind == "..."``, ``k in ("...", ...)`` and the like: a ladder on a kind's name."""

    def names_kind(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "kind") or (
            isinstance(node, ast.Name) and node.id in ("k", "kind")
        )

    def is_str(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return bool(node.elts) and all(is_str(e) for e in node.elts)
        return isinstance(node, ast.Name) and node.id.isupper()  # a module constant of names

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(names_kind(s) for s in sides) and any(is_str(s) for s in sides):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", ["generate.py", "mutate.py", "shrink.py", "kinds/registry.py"])
def test_generation_mutation_and_shrinking_dispatch_through_the_registry(module):
    path = INPUTS / module
    assert _kind_comparisons(path) == []
    registry = kinds_pkg.__name__
    imported = {m for m in modules_imported(path) if m == registry or m.startswith(registry + ".")}
    assert imported or module == "kinds/registry.py", f"{module} does not ask the registry"


def test_the_ladder_finder_finds_a_ladder(tmp_path):
    """The structure test above would see a ladder if one came back."""
    src = tmp_path / "ladder.py"
    src.write_text(
        'def f(t, k):\n    if t.kind == "int":\n        return 1\n    if k in ("list", "set"):\n        return 2\n'
    )
    assert len(_kind_comparisons(src)) == 2


def test_shrinking_has_no_isinstance_ladder_of_its_own():
    tree = ast.parse((INPUTS / "shrink.py").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "isinstance"]
    assert calls == []


def test_every_registered_kind_has_a_sample_and_every_step():
    registered = kinds()
    assert set(registered) == set(SAMPLES), "give each registered kind a sample descriptor in SAMPLES"
    for name, kind in registered.items():
        assert isinstance(kind, Kind) and kind.name == name
        for step in STEPS:
            assert callable(getattr(kind, step)), (name, step)
        # the steps a kind cannot inherit are its own (the base class has none to give)
        for step in ("boundary", "random", "fits"):
            assert getattr(type(kind), step) is not getattr(Kind, step), (name, step)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_kind_generates_mutates_and_shrinks_values_that_fit_it(name):
    t = SAMPLES[name]
    assert kind_of(t).name == name
    rng = random.Random(7)
    values = boundary_values(t)
    assert values, name
    values += [random_value(t, rng) for _ in range(30)]
    mutants = [mutate_value(v, t, rng) for v in values for _ in range(5)]
    if name not in FOREIGN_VALUES:
        assert [v for v in values if not fits(v, t)] == [], name
        assert [m for m in mutants if not fits(m, t)] == [], name
    for v in values[:8]:
        # greedy shrinking descends strictly and ends
        inp = Input((v,))
        for _ in range(300):
            cands = shrink_candidates(inp)
            if not cands:
                break
            assert all(shrink_key(c) < shrink_key(inp) for c in cands)
            inp = cands[0]
        assert shrink_candidates(inp) == [], (name, v, inp)


def test_the_same_seed_gives_the_same_values_through_the_registry():
    t = dict_of(STR, list_of(optional(INT)))
    a = [random_value(t, random.Random(3)) for _ in range(3)]
    b = [random_value(t, random.Random(3)) for _ in range(3)]
    assert a == b
    ra, rb = random.Random(5), random.Random(5)
    assert [mutate_value(x, t, ra) for x in a] == [mutate_value(x, t, rb) for x in b]


def test_an_unknown_kind_at_the_depth_limit_gives_none():
    # it used to recurse between boundary values and the empty value until RecursionError
    t = TypeDesc("construct", name="Thing")
    assert boundary_values(t, depth=3) == [None]
    assert random_value(t, random.Random(0), depth=3) is None
    assert boundary_values(tuple_of(t, INT), depth=3) == [(None, 3)]


# -- pathlib.Path: a kind added through the registry alone --------------------------------------


PATH = TypeDesc("path", name="Path")


def test_path_annotations_are_the_path_kind_unless_the_module_defines_its_own_path():
    assert parse_annotation("Path") == PATH
    assert parse_annotation("pathlib.Path") == TypeDesc("path", name="pathlib.Path")
    assert parse_annotation("Optional[PurePath]").args[0] == TypeDesc("path", name="PurePath")
    assert parse_annotation("other.Path").kind != "path"
    own = ClassInfo("Path", fields=(Param("s", "positional_or_keyword", "str"),))
    assert parse_annotation("Path", (own,)).kind == "class"


def test_a_path_parameter_gets_path_inputs_with_the_edge_cases_first():
    src = textwrap.dedent(
        '''
        from pathlib import Path

        # coherence
        def depth(p: Path, limit: int = 3) -> int:
            """How many parts p has, at most limit."""
            return min(len(p.parts), limit)
        '''
    )
    target = find_targets(src, "m.py")[0]
    inputs = generate_inputs(target.spec, 300, module_source=src, seed=0)
    assert len(inputs) == 300
    paths = [i.args[0] for i in inputs]
    assert all(isinstance(p, Construct) and p.callee == "Path" and isinstance(p.args[0], str) for p in paths)
    strings = [p.args[0] for p in paths]
    for edge in ("", "..", "/", "dir/", "archive.tar.gz"):
        assert edge in strings[:60], edge
    assert len(set(strings)) > 100  # mutation reaches far beyond the boundary values
    assert inputs[0].call("depth").startswith("depth(Path('")


def test_path_mutations_edit_parts_suffixes_and_names_and_stay_paths():
    rng = random.Random(1)
    start = Construct("Path", ("src/data.csv",))
    seen = {mutate_value(start, PATH, rng).args[0] for _ in range(300)}
    assert all(isinstance(s, str) for s in seen)
    assert "src" in seen  # the parent
    assert "/src/data.csv" in seen  # made absolute
    assert any(s.startswith("src/data.csv/") for s in seen)  # a part appended
    assert any(s.startswith("src/data.") and s != "src/data.csv" for s in seen)  # another suffix


def test_a_path_shrinks_through_its_string_to_the_empty_path():
    inp = Input((Construct("Path", ("a/b/c.py",)),))
    cands = shrink_candidates(inp)
    assert cands[0].args[0] == Construct("Path", ("",))
    assert all(c.args[0].callee == "Path" and len(c.args[0].args[0]) < 8 for c in cands)
    while cands := shrink_candidates(inp):
        inp = cands[-1]  # the smallest step each time: the slowest descent still ends
    assert inp.args[0] == Construct("Path", ("",))


SUFFIX_MODULE = textwrap.dedent(
    '''
    from pathlib import Path

    # coherence
    def suffix_of(p: Path) -> str:
        """The file's extension without its dot: 'gz' for 'archive.tar.gz', '' when none."""
        return "".join(p.suffixes)[1:]
    '''
)


async def test_a_function_of_a_path_is_checked_in_the_sandbox_with_a_path_counterexample(tmp_path):
    (tmp_path / "files.py").write_text(SUFFIX_MODULE)
    alternatives = [
        "def suffix_of(p):\n    return p.suffix[1:]\n",
        "def suffix_of(p):\n    return p.suffix.lstrip('.')\n",
        "def suffix_of(p):\n    s = p.suffix\n    return s[1:] if s else ''\n",
    ]
    replay = tmp_path / "samples.jsonl"
    replay.write_text(json.dumps({"entry_point": "suffix_of", "candidates": alternatives}) + "\n")
    target = find_targets(SUFFIX_MODULE, str(tmp_path / "files.py"))[0]
    config = CheckConfig(replay=str(replay), samples=4, inputs=200, workspace=str(tmp_path))
    result = await Checker(config).check(target)
    assert result.status == "incoherent", (result.status, result.reason, result.load_errors)
    assert result.cluster_sizes == [3, 1] and result.user_cluster == 1
    ce = result.counterexample
    # shrunk, yet still a path with two suffixes: where the user's join of all suffixes differs
    call = ast.parse(ce.call, mode="eval").body
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "suffix_of"
    (arg,) = call.args
    assert isinstance(arg, ast.Call) and ast.unparse(arg.func) == "Path"
    name = Path(arg.args[0].value).name
    assert len(Path(name).suffixes) >= 2 and len(name) <= len("archive.tar.gz"), ce.call
    assert ce.yours != ce.theirs
