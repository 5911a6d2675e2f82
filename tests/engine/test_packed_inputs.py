"""Inputs of plain data reach the worker as marshal data (``Input.packed``) instead of source to
compile.  A program must not be able to tell: every call gets the value evaluating the source
would give, fresh, with no sharing between arguments."""

from __future__ import annotations

import base64
import marshal
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coherence.engine.execution.coherence_worker.canon import make_canonicalizer
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ModuleContext, Program
from coherence.engine.inputs.values import Construct, Expr, Input

CANON, _ = make_canonicalizer()

atoms = st.one_of(
    st.integers(),
    st.sampled_from([10**40, -(2**70), 0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5) | st.sampled_from(["\ud800", "😀", "\x00"]),
    st.binary(max_size=4),
    st.booleans(),
    st.none(),
    st.complex_numbers(allow_nan=False, max_magnitude=1e6),
)
values = st.recursive(
    atoms,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.one_of(st.integers(), st.text(max_size=3)), inner, max_size=3)
    ),
    max_leaves=12,
)


def _loaded(inp: Input):
    return marshal.loads(base64.b64decode(inp.packed))


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=3), st.dictionaries(st.sampled_from(["k", "key"]), values, max_size=2))
def test_packed_data_loads_as_the_source_evaluates(args, kwargs):
    inp = Input(args=tuple(args), kwargs=tuple(kwargs.items()))
    assert inp.packed is not None
    from_source = eval(inp.source(), {})  # our own rendering of plain data
    assert CANON(_loaded(inp), False) == CANON(from_source, False)
    for a, b in zip(_loaded(inp)[0], from_source[0]):
        if isinstance(a, float) and a == 0:
            assert math.copysign(1, a) == math.copysign(1, b)  # -0.0 stays -0.0


def test_what_marshal_cannot_reproduce_stays_source():
    assert Input(args=({3, 1, 2},)).packed is None  # a set: its order could differ
    assert Input(args=([frozenset({1})],)).packed is None
    assert Input(args=(Construct("Point", (1, 2)),)).packed is None  # evaluated in the user's module
    assert Input(args=(Expr("date(2024, 1, 1)"),)).packed is None
    assert Input(args=([1, 2],)).packed is not None


def test_a_shared_list_loads_as_two_lists():
    shared = [1, 2]
    inp = Input(args=(shared, shared))
    a, b = _loaded(inp)[0]
    assert a == b and a is not b


@pytest.mark.parametrize("mode", ["guard", "auto"])
def test_programs_cannot_tell_packed_inputs_from_source(mode):
    shared = [3, 1, 2]
    inputs = [
        Input(args=(shared, shared)),  # the same list twice: mutating one must leave the other
        Input(args=([[1], [1]], [])),
        Input(args=({"b": 1, "a": [2.5, -0.0]}, (1, "x"))),
        Input(args=([float("nan"), 10**30], ("\ud800", b"\x00"))),
        Input(args=({2, 1}, [])),  # not packable: compiled from source in the same run
    ]
    assert [i.packed is not None for i in inputs] == [True, True, True, True, False]
    program = Program(
        "f",
        (
            "def f(a, b):\n"
            "    before = repr(b)\n"
            "    if isinstance(a, list): a.append(len(a))\n"
            "    if isinstance(a, dict): a['z'] = list(a)\n"
            "    return (before, repr(b), a is b, [type(x).__name__ for x in (a, b)], repr(a))\n"
        ),
    )
    module = ModuleContext()
    ex = Executor(sandbox=mode)
    packed = ex.run(module, [program], inputs)
    source = ex.run(module, [program], [i.source() for i in inputs])
    assert [o.key for o in packed.outcomes[0]] == [o.key for o in source.outcomes[0]]
    first = packed.outcomes[0][0]
    assert first.kind == "ok"
    before, after, same = first.value[1][0], first.value[1][1], first.value[1][2]
    assert before == after and same == ["B", False]  # appending to a left b alone
    assert all(o.kind == "ok" for o in packed.outcomes[0])


class _Disagreeing:
    """An input whose packed data and source differ, to see which one the worker used."""

    def __init__(self, packed_value, source: str):
        self.packed = base64.b64encode(marshal.dumps(packed_value, 2)).decode("ascii")
        self._source = source

    def source(self) -> str:
        return self._source


def test_the_worker_runs_packed_data_and_falls_back_to_source_when_it_cannot_read_it():
    inputs = [
        _Disagreeing(((2,), {}), "((1,), {})"),
        _Disagreeing("not an (args, kwargs) pair", "((3,), {})"),
        _Disagreeing(["a", "list"], "((4,), {})"),  # marshal reads it, after one that loaded
        _Disagreeing(((5,), {}), "((6,), {})"),
    ]
    inputs[1].packed = "!!not base64!!"
    report = Executor(sandbox="guard").run(ModuleContext(), [Program("f", "def f(x):\n    return x * 10\n")], inputs)
    assert [o.value for o in report.outcomes[0]] == [["I", "20"], ["I", "30"], ["I", "40"], ["I", "50"]]
