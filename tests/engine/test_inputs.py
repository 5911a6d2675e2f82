"""Input generation from the signature alone: seeds, type-aware mutation, shrinking."""

from __future__ import annotations

import enum
import textwrap
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from coherence.engine.inputs import Construct, Expr, Input
from coherence.engine.inputs.annotation_types import parse_annotation
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.mutate import mutate_value
from coherence.engine.inputs.name_types import infer_from_name
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.inputs.seeds import doctest_seeds, workspace_seeds
from coherence.engine.inputs.shrink import shrink_candidates, shrink_key
from coherence.engine.spec import ClassInfo, Param, Spec


def P(
    name: str, annotation: str | None = None, default: str | None = None, kind: str = "positional_or_keyword"
) -> Param:
    return Param(name, kind, annotation, default)


def make_spec(name: str, params: list[Param], doc: str | None = None, classes: tuple = (), context: str = "") -> Spec:
    sig = "(" + ", ".join(p.name + (f": {p.annotation}" if p.annotation else "") for p in params) + ")"
    return Spec(name, sig, tuple(params), None, doc, context=context, classes=classes)


def evaluate(inp: Input, namespace: dict | None = None):
    ns = {"__builtins__": __builtins__}
    ns.update(namespace or {})
    return eval(inp.source(), ns)


HUMANEVAL_DOC = """Check if in given list of numbers, are any two numbers closer to each other than
    given threshold.
    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
    False
    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)
    True
    """

CLOSE = make_spec("has_close_elements", [P("numbers", "List[float]"), P("threshold", "float")], HUMANEVAL_DOC)


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------


def test_doctest_seeds_come_first_with_exact_values():
    inputs = generate_inputs(CLOSE, 50)
    assert inputs[0] == Input(([1.0, 2.0, 3.0], 0.5), origin="doctest")
    assert inputs[1] == Input(([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3), origin="doctest")
    assert all(i.origin != "doctest" for i in inputs[2:])
    origins = [i.origin for i in inputs]
    # seeds first (doctest, then type-derived), then mutations
    first_mut = origins.index("mutation")
    assert set(origins[:first_mut]) <= {"doctest", "annotation"}
    assert set(origins[first_mut:]) == {"mutation"}


def test_doctest_forms_print_compare_keywords_and_names():
    doc = textwrap.dedent("""\
        Shift a date.

        >>> from datetime import timedelta
        >>> shift(date(2024, 2, 28), 1)
        datetime.date(2024, 2, 29)
        >>> print(shift(date(2023, 12, 31), days=2))
        2024-01-02
        >>> shift(start=date(2024, 1, 1), days=-1) == date(2023, 12, 31)
        True
        >>> xs = [1, 2, 3]
        >>> shift(xs, len(xs))
        >>> shift(undefined_name, 3)
        >>> import calendar_utils as cu
        >>> cu.shift(date(2020, 1, 1), 7)
        >>> other.shift(1, 2)
        """)
    spec = make_spec("shift", [P("start"), P("days")], doc)
    seeds = doctest_seeds(spec, module_source="from datetime import date\n")
    calls = [s.call("shift") for s in seeds]
    assert calls == [
        "shift(date(2024, 2, 28), 1)",
        "shift(date(2023, 12, 31), days=2)",
        "shift(start=date(2024, 1, 1), days=-1)",
        "shift([1, 2, 3], len([1, 2, 3]))",
        "shift(date(2020, 1, 1), 7)",
    ]
    assert seeds[0].args[0] == Expr("date(2024, 2, 28)")
    assert seeds[1].kwargs == (("days", 2),)
    assert all(s.origin == "doctest" for s in seeds)


def test_inline_and_prose_examples_in_docstring():
    doc = textwrap.dedent("""\
        Examples:
        choose_num(12, 15) = 14
        choose_num(13, 12) = -1
        For x = 3, y = 7 the output should be 6
        """)
    spec = make_spec("choose_num", [P("x"), P("y")], doc)
    seeds = doctest_seeds(spec)
    assert [s.args for s in seeds] == [(12, 15), (13, 12), (3, 7)]


def test_defaults_seed():
    spec = make_spec("split", [P("text", "str"), P("sep", "str", "','"), P("maxsplit", "int", "-1")])
    inputs = generate_inputs(spec, 30)
    defaults = [i for i in inputs if i.origin == "default"]
    assert len(defaults) == 1 and len(defaults[0].args) == 1 and isinstance(defaults[0].args[0], str)


def test_workspace_test_calls_are_picked_up(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(
        textwrap.dedent("""\
        import pytest
        import mod
        from mod import add

        def test_add():
            assert add(2, 3) == 5
            assert mod.add(-1, 1) == 0
            x = [7, 8]
            assert add(x, [9]) == [7, 8, 9]

        @pytest.mark.parametrize("a,b,expected", [(10, 20, 30), (0.5, 0.25, 0.75)])
        def test_param(a, b, expected):
            assert add(a, b) == expected

        def test_loop():
            for a, b in [("x", "y"), ("", "z")]:
                assert add(a, b) == a + b

        def test_fixture(some_fixture):
            assert add(some_fixture, 1)  # unknown name: skipped
            seen = set()
            seen.add(99)  # a method that happens to share the name: not a call of add
        """)
    )
    (tmp_path / "test_top.py").write_text("from mod import add\nassert add(b=1, a=2) == 3\n")
    (tmp_path / "tests" / "test_broken.py").write_text("def oops(:\n    add(1, 1)\n")
    (tmp_path / "util.py").write_text("add(100, 100)\n")  # not a test file
    venv = tmp_path / ".venv" / "lib" / "site-packages"
    venv.mkdir(parents=True)
    (venv / "test_vendored.py").write_text("add(555, 555)\n")
    nm = tmp_path / "node_modules"
    nm.mkdir()
    (nm / "test_js.py").write_text("add(666, 666)\n")

    spec = make_spec("add", [P("a"), P("b")])
    seeds = workspace_seeds(spec, tmp_path, module_source="def add(a, b):\n    return a + b\n")
    got = {s.call("add") for s in seeds}
    assert got == {
        "add(2, 3)",
        "add(-1, 1)",
        "add([7, 8], [9])",
        "add(10, 20)",
        "add(0.5, 0.25)",
        "add('x', 'y')",
        "add('', 'z')",
        "add(b=1, a=2)",
    }
    assert all(s.origin == "test" for s in seeds)

    inputs = generate_inputs(spec, 100, workspace=tmp_path)
    assert inputs[0].origin == "test"
    assert {i.call("add") for i in inputs if i.origin == "test"} == got


def test_unannotated_tuples_and_strings():
    spec = make_spec(
        "index_multiplication",
        [P("test_tup1"), P("test_tup2")],
        "perform index wise multiplication of tuple elements in the given two tuples.",
    )
    inputs = generate_inputs(spec, 300)
    assert len(inputs) == 300
    assert all(isinstance(a, tuple) for i in inputs for a in i.args)
    assert sum(1 for i in inputs if any(a for a in i.args)) > 250  # mostly non-empty

    spec = make_spec("reverse_string", [P("s")], "reverse the given string.")
    inputs = generate_inputs(spec, 300)
    assert len(inputs) == 300
    assert all(isinstance(i.args[0], str) for i in inputs)


def test_unannotated_mbpp_names_and_docstring():
    t = infer_types(make_spec("f", [P("arr"), P("n")]))
    assert str(t["arr"]) == "list[int]" and str(t["n"]) == "int"
    t = infer_types(make_spec("f", [P("dict1")]))
    assert t["dict1"].kind == "dict"
    t = infer_types(make_spec("f", [P("matrix")]))
    assert str(t["matrix"]) == "list[list[int]]"
    t = infer_types(make_spec("f", [P("text"), P("words")]))
    assert str(t["text"]) == "str" and str(t["words"]) == "list[str]"
    # an ambiguous name takes the kind the docstring mentions
    t = infer_types(
        make_spec(
            "max_sub_array_sum",
            [P("a"), P("size")],
            "find the sum of the largest contiguous sublist in the given list.",
        )
    )
    assert t["a"].kind == "list" and str(t["size"]) == "int"
    t = infer_types(make_spec("rectangle_area", [P("l"), P("b")], "find the area of a rectangle."))
    assert t["l"].args[0].kind == "int" if t["l"].kind == "union" else t["l"].kind == "int"
    # "list of tuples" shapes a list parameter's items
    t = infer_types(make_spec("f", [P("test_list")], "find the max of the list of tuples."))
    assert str(t["test_list"]) == "list[tuple[int, int]]"
    # doctest values are the strongest evidence
    doc = ">>> f([[1, 2], [3]], 'ab')\n3\n"
    t = infer_types(make_spec("f", [P("x"), P("y")], doc), doctest_seeds(make_spec("f", [P("x"), P("y")], doc)))
    assert str(t["x"]) == "list[list[int]]" and str(t["y"]) == "str"
    # unknown names fall back to a mix of int, str, list[int] (int first)
    mix = infer_from_name("zork")
    assert mix.kind == "union" and str(mix.args[0]) == "int"
    assert {str(a) for a in mix.args} >= {"int", "str", "list[int]"}


def test_doctest_shapes_are_mutated_and_kept():
    doc = ">>> count_pairs([(1, 2), (3, 4)], 'ab')\n2\n"
    spec = make_spec("count_pairs", [P("pairs"), P("key")], doc)
    inputs = generate_inputs(spec, 400)
    assert inputs[0].args == ([(1, 2), (3, 4)], "ab")
    for i in inputs:
        lst, key = i.args
        assert isinstance(lst, list) and isinstance(key, str)
        assert all(isinstance(t, tuple) and len(t) == 2 for t in lst), i.call("count_pairs")


# ---------------------------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------------------------


def test_annotated_floats_distinct_deterministic_and_seed_dependent():
    inputs = generate_inputs(CLOSE, 1000, seed=0)
    assert len(inputs) == 1000
    assert len({i.key() for i in inputs}) == 1000
    for i in inputs:
        numbers, threshold = i.args
        assert isinstance(numbers, list) and all(isinstance(x, float) for x in numbers), i.call("f")
        assert isinstance(threshold, float)
        assert len(numbers) <= 20
    again = generate_inputs(CLOSE, 1000, seed=0)
    assert [i.key() for i in again] == [i.key() for i in inputs]
    other = generate_inputs(CLOSE, 1000, seed=1)
    assert [i.key() for i in other] != [i.key() for i in inputs]
    # the seeds are the same; the mutants differ
    assert [i.key() for i in other if i.origin != "mutation"] == [i.key() for i in inputs if i.origin != "mutation"]


@pytest.mark.parametrize(
    "annotation, expected",
    [
        ("int", "int"),
        ("List[int]", "list[int]"),
        ("list[str]", "list[str]"),
        ("typing.Dict[str, List[int]]", "dict[str, list[int]]"),
        ("Tuple[int, str]", "tuple[int, str]"),
        ("Tuple[int, ...]", "tuple[int, ...]"),
        ("Optional[float]", "float | none"),
        ("int | None", "int | none"),
        ("Union[int, str]", "int | str"),
        ("Sequence[int]", "list[int]"),
        ("Iterable[str]", "list[str]"),
        ("Mapping[str, int]", "dict[str, int]"),
        ("Set[int]", "set[int]"),
        ("FrozenSet[str]", "frozenset[str]"),
        ("'List[int]'", "list[int]"),
        ("Literal['asc', 'desc']", "Literal['asc', 'desc']"),
        ("Any", "any"),
        ("bytes", "bytes"),
        ("complex", "complex"),
        ("None", "none"),
    ],
)
def test_parse_annotation(annotation, expected):
    assert str(parse_annotation(annotation)) == expected


BUILTIN_SPECS = [
    make_spec("f", [P("a", "int"), P("b", "str"), P("c", "List[int]")]),
    make_spec("f", [P("xs", "Dict[str, List[float]]"), P("flag", "bool")]),
    make_spec("f", [P("t", "Tuple[int, str, float]"), P("o", "Optional[Set[int]]")]),
    make_spec("f", [P("u", "Union[int, str, None]"), P("fs", "frozenset"), P("b", "bytes"), P("z", "complex")]),
    make_spec("f", [P("mode", "Literal['asc', 'desc']"), P("data", "Sequence[Tuple[int, ...]]")]),
    make_spec("f", [P("anything", "Any"), P("unknown", "SomeType"), P("m", "Mapping[int, str]")]),
    make_spec("f", [P("test_tup1"), P("n"), P("s"), P("nums"), P("dict1"), P("grid")]),
    make_spec("f", [P("x", "float"), P("rest", "int", kind="var_positional"), P("key", "str", "'k'", "keyword_only")]),
]


@pytest.mark.parametrize("spec", BUILTIN_SPECS, ids=lambda s: s.signature[:40])
def test_every_source_evals_to_args_and_kwargs(spec):
    inputs = generate_inputs(spec, 300, seed=3)
    assert len(inputs) == 300
    for i in inputs:
        args, kwargs = eval(i.source(), {"__builtins__": __builtins__})
        assert isinstance(args, tuple) and isinstance(kwargs, dict)
        assert len(args) == len(i.args) and set(kwargs) == {k for k, _ in i.kwargs}


def test_literal_and_optional_values_stay_in_domain():
    spec = make_spec("f", [P("mode", "Literal['asc', 'desc']"), P("limit", "Optional[int]")])
    inputs = generate_inputs(spec, 200)
    assert {i.args[0] for i in inputs} == {"asc", "desc"}
    limits = [i.args[1] for i in inputs]
    assert None in limits and all(x is None or type(x) is int for x in limits)


def test_bounded_sizes():
    spec = make_spec("f", [P("s", "str"), P("xs", "List[List[int]]"), P("d", "Dict[str, List[str]]")])
    for i in generate_inputs(spec, 1000, seed=5):
        s, xs, d = i.args
        assert len(s) <= 40
        assert len(xs) <= 20 and all(len(x) <= 20 for x in xs)
        assert len(d) <= 20
    ints = [i.args[0] for i in generate_inputs(make_spec("f", [P("n", "int")]), 300)]
    assert {0, 1, -1} <= set(ints) and max(ints) >= 10**6
    # mostly small, though 300 distinct ints cannot all be tiny
    assert sum(abs(x) <= 1000 for x in ints) > 0.85 * len(ints)
    ks = [i.args[1] for i in generate_inputs(make_spec("f", [P("xs", "List[int]"), P("k", "int")]), 1000)]
    assert sum(abs(x) <= 100 for x in ks) > 0.8 * len(ks)


# ---------------------------------------------------------------------------------------------
# Classes
# ---------------------------------------------------------------------------------------------


@dataclass
class Point:
    x: int
    y: float
    label: str | None = None


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


@dataclass
class Node:
    val: int
    next: Node | None = None


CLASSES = (
    ClassInfo("Point", is_dataclass=True, fields=(P("x", "int"), P("y", "float"), P("label", "Optional[str]", "None"))),
    ClassInfo("Color", bases=("Enum",), is_enum=True, members=("RED", "GREEN", "BLUE")),
    ClassInfo("Node", is_dataclass=True, fields=(P("val", "int"), P("next", "Optional['Node']", "None"))),
)


def test_dataclass_and_enum_params_build_real_instances():
    spec = make_spec("f", [P("p", "Point"), P("c", "Color"), P("n", "Node"), P("ps", "List[Point]")], classes=CLASSES)
    ns = {"Point": Point, "Color": Color, "Node": Node}
    inputs = generate_inputs(spec, 300)
    assert len(inputs) == 300
    seen_colors = set()
    for i in inputs:
        p, c, _n, _ps = i.args
        assert isinstance(p, Construct) and p.callee == "Point"
        assert isinstance(c, Construct) and c.attr
        (rp, rc, rn, rps), _ = evaluate(i, ns)
        assert isinstance(rp, Point) and isinstance(rp.x, int) and isinstance(rp.y, float)
        assert isinstance(rc, Color)
        seen_colors.add(rc)
        depth = 0
        while rn is not None:
            assert isinstance(rn, Node)
            depth += 1
            rn = rn.next
        assert 1 <= depth <= 3
        assert all(isinstance(q, Point) for q in rps)
    assert seen_colors == set(Color)


# ---------------------------------------------------------------------------------------------
# Expr
# ---------------------------------------------------------------------------------------------


def test_expr_args_survive_unmutated_and_render_verbatim():
    doc = ">>> days_after(date(2024, 2, 28),  3)\ndatetime.date(2024, 3, 2)\n"
    spec = make_spec("days_after", [P("d"), P("n", "int")], doc)
    inputs = generate_inputs(spec, 200, module_source="from datetime import date\n")
    assert inputs[0].args == (Expr("date(2024, 2, 28)"), 3)
    assert len(inputs) == 200
    for i in inputs:
        assert i.args[0] == Expr("date(2024, 2, 28)")
        assert i.call("days_after").startswith("days_after(date(2024, 2, 28), ")
        (d, n), _ = evaluate(i, {"date": date})
        assert d == date(2024, 2, 28) and isinstance(n, int)
    assert len({i.args[1] for i in inputs}) == 200
    # mutate_value never changes an Expr
    import random

    rng = random.Random(0)
    e = Expr("date(2024, 2, 28)")
    assert all(mutate_value(e, None, rng) is e for _ in range(50))
    mixed = [e, 1, 2]
    for _ in range(200):
        mixed = mutate_value(mixed, None, rng)
        assert all(x == e or not isinstance(x, Expr) for x in mixed)


# ---------------------------------------------------------------------------------------------
# Shrinking
# ---------------------------------------------------------------------------------------------


def test_shrink_candidates_are_smaller_and_include_the_basics():
    inp = Input(([5, 3, 9, 1], 12, "hello world", {"a": 4}), origin="mutation")
    cands = shrink_candidates(inp, limit=200)
    assert cands and len({c.key() for c in cands}) == len(cands)
    for c in cands:
        assert shrink_key(c) < shrink_key(inp)
        assert c.size() <= inp.size()
        assert c.origin == "shrink"
    args = [c.args for c in cands]
    assert ([], 12, "hello world", {"a": 4}) in args  # empty list
    assert ([5, 3, 9, 1], 0, "hello world", {"a": 4}) in args  # 0
    assert ([5, 3, 9, 1], 6, "hello world", {"a": 4}) in args  # halved
    assert ([5, 9, 1], 12, "hello world", {"a": 4}) in args  # one item dropped
    assert ([5, 3, 9, 1], 12, "hllo world", {"a": 4}) in args  # one char dropped
    assert ([5, 3, 9, 1], 12, "hello", {"a": 4}) in args  # halved string
    assert ([5, 3, 9, 1], 12, "hello world", {}) in args
    assert ([5, 3, 4, 1], 12, "hello world", {"a": 4}) in args  # recursed into an item
    assert len(shrink_candidates(inp, limit=5)) == 5


def test_shrink_recurses_into_constructs_and_never_touches_expr():
    inp = Input((Construct("Point", (8, 2.5)), Expr("date(2024, 1, 1)"), (3, "ab")), kwargs=(("k", [1, 2]),))
    cands = shrink_candidates(inp)
    assert all(c.args[1] == Expr("date(2024, 1, 1)") for c in cands)
    assert any(c.args[0] == Construct("Point", (0, 2.5)) for c in cands)
    assert any(c.kwargs == (("k", []),) for c in cands)
    assert all(shrink_key(c) < shrink_key(inp) for c in cands)
    assert shrink_candidates(Input((0, "", [], None, Expr("x")))) == []


def test_greedy_shrinking_terminates():
    inp = Input(([100, -7, 3.5, "abc", (1, 2)], -33, {"k": [1, 2, 3]}))
    steps = 0
    while True:
        cands = shrink_candidates(inp)
        if not cands:
            break
        inp = cands[0]
        steps += 1
        assert steps < 500
    assert inp.args == ([], 0, {})


# ---------------------------------------------------------------------------------------------
# Scale
# ---------------------------------------------------------------------------------------------


def test_thousand_inputs_for_three_params():
    spec = make_spec("f", [P("xs", "List[int]"), P("s", "str"), P("k", "int")])
    start = time.perf_counter()
    inputs = generate_inputs(spec, 1000, time_budget=10.0)
    elapsed = time.perf_counter() - start
    assert len(inputs) == 1000 and len({i.key() for i in inputs}) == 1000
    print(f"n=1000, 3 params: {elapsed:.3f}s")


def test_small_domains_stop_early():
    spec = make_spec("f", [P("flag", "bool")])
    inputs = generate_inputs(spec, 1000)
    assert sorted(i.args for i in inputs) == [(False,), (True,)]
    assert generate_inputs(make_spec("f", []), 10) == [Input(origin="default")]


def test_deterministic_across_hash_seeds(tmp_path):
    """Sets of strings iterate in hash order; the output must not depend on it."""
    import os
    import subprocess
    import sys

    script = tmp_path / "gen.py"
    script.write_text(
        textwrap.dedent("""\
        import hashlib
        from coherence.engine.inputs.generate import generate_inputs
        from coherence.engine.spec import Param, Spec
        spec = Spec("f", "()", (Param("a", "positional_or_keyword", "Set[str]"),
                                Param("b", "positional_or_keyword", "Dict[str, FrozenSet[str]]"),
                                Param("words", "positional_or_keyword")), None, None)
        ins = generate_inputs(spec, 300, seed=7)
        print(len(ins), hashlib.sha1("".join(i.key() for i in ins).encode()).hexdigest())
        """)
    )
    outs = set()
    for h in ("1", "2"):
        import coherence

        server = str(Path(coherence.__file__).resolve().parents[1])
        path = os.pathsep.join(x for x in (server, os.environ.get("PYTHONPATH", "")) if x)
        env = {**os.environ, "PYTHONHASHSEED": h, "PYTHONPATH": path}
        res = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60, cwd=os.getcwd()
        )
        assert res.returncode == 0, res.stderr
        outs.add(res.stdout)
    assert len(outs) == 1 and outs.pop().startswith("300 ")


def test_soft_constraints_learned_from_examples():
    doc = ">>> f([1, 2, 3], 3)\n6\n>>> f([5, 6], 2)\n11\n"
    spec = make_spec("f", [P("arr"), P("n")], doc)
    muts = [i for i in generate_inputs(spec, 500) if i.origin == "mutation"]
    linked = sum(1 for i in muts if isinstance(i.args[0], list) and i.args[1] == len(i.args[0]))
    assert linked > 0.6 * len(muts)
    assert sum(1 for i in muts if all(x >= 0 for x in i.args[0]) and i.args[1] >= 0) > 0.8 * len(muts)
    assert linked < len(muts)  # soft: the boundary is still explored

    spec = make_spec("separate", [P("paren_string", "str")], ">>> separate('(()) ()')\n['(())', '()']\n")
    muts = [i for i in generate_inputs(spec, 500) if i.origin == "mutation"]
    assert sum(1 for i in muts if set(i.args[0]) <= set("() ")) > 0.7 * len(muts)

    spec = make_spec("magic", [P("my_matrix")], "check whether the matrix is a magic square")
    mats = [i.args[0] for i in generate_inputs(spec, 500)]
    square = [m for m in mats if m and all(len(r) == len(m) for r in m)]
    assert len(square) > 0.5 * len(mats)


def test_ambiguous_names_stay_int_first():
    spec = make_spec("find_parity", [P("x")], "find whether the parity of a given number is odd.")
    kinds = [type(i.args[0]).__name__ for i in generate_inputs(spec, 1000)]
    assert kinds.count("int") > 0.7 * len(kinds)
    assert {"float", "str"} <= set(kinds)


# -- rendering: the exact-type fast paths of to_source must give what the general path gives -------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from coherence.engine.inputs.values import to_source, value_size  # noqa: E402

_atoms = st.one_of(
    st.integers(),
    st.sampled_from([10**30, -(2**70), True, False, None]),
    st.text(max_size=4),
    st.floats(allow_nan=False),
    st.binary(max_size=3),
)
_values = st.recursive(
    _atoms,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner)
        | st.tuples(inner, inner)
        | st.tuples()
        | st.frozensets(st.integers(-3, 3), max_size=3)
    ),
    max_leaves=10,
)


def _typed(v):
    """``v`` with every scalar's type beside it: 1, 1.0 and True are equal but render differently."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_typed(x) for x in v])
    if isinstance(v, frozenset):
        return ("frozenset", sorted(_typed(x) for x in v))
    return (type(v).__name__, v)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_rendered_source_evaluates_back_to_the_same_value_and_types(value):
    assert _typed(eval(to_source(value))) == _typed(value)


def _spelled_out(v):
    """The source of ``v`` the long way (what ``to_source`` spells lists and tuples of plain atoms as,
    through ``repr`` in C): items joined by ", ", one-tuples with their comma."""
    if type(v) is list:
        return "[" + ", ".join(map(_spelled_out, v)) + "]"
    if type(v) is tuple:
        return "(" + _spelled_out(v[0]) + ",)" if len(v) == 1 else "(" + ", ".join(map(_spelled_out, v)) + ")"
    return repr(v)


_plain = st.recursive(
    st.one_of(st.integers(), st.text(max_size=4), st.booleans(), st.none()),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner) | st.tuples(inner, inner),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_plain)
def test_lists_and_tuples_of_plain_atoms_render_exactly_as_spelled_out(value):
    # the text is the inputs' identity (de-duplication) and what a counterexample shows
    assert to_source(value) == _spelled_out(value)


def test_large_numbers_are_found_in_flat_and_mixed_sequences():
    from coherence.engine.inputs.generate import _large

    assert _large([1, 20_000]) and _large((-10_000, 3)) and _large(["a", 10**6]) and _large([[1], [2, 50_000]])
    assert not _large([]) and not _large(["a", "b"]) and not _large([9_999, -9_999]) and not _large([True, 5])
    assert not _large(["x", 3]) and _large([2.5, 1e9])


def test_value_sizes_grow_with_digits_length_and_nesting():
    assert value_size(["ab", "c"]) == 1 + (1 + 2) + (1 + 1)
    assert value_size(7) == 2 and value_size(-12345) == 6 and value_size(True) == 1
    assert value_size("abc") == 4 and value_size([1, 22]) == 1 + 2 + 3 and value_size((1, [2])) == 1 + 2 + (1 + 2)
    assert value_size(2.5) == 2  # floats count their integer digits
