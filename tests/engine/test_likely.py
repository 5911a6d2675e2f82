"""Which inputs run last (``coherence.engine.inputs.likely``), and what that does to a check."""

from __future__ import annotations

import textwrap

import pytest

from coherence.engine.check import Checker
from coherence.engine.inputs import Input
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.inputs.likely import run_last
from coherence.engine.inputs.param_types import infer_types
from coherence.engine.inputs.seeds import doctest_seeds
from coherence.engine.markers import target_for
from coherence.engine.stated.domain import Domain
from tests.conftest import EXAMPLES, corpus_check

COLLATZ = '''
def get_odd_collatz(n):
    """Given a positive integer n, return the sorted odd numbers of its Collatz sequence.
    >>> get_odd_collatz(5)
    [1, 5]
    """
'''


def spec_of(source: str, name: str):
    t = target_for(textwrap.dedent(source), name)
    return t.spec, t.module_source


def test_a_count_named_n_runs_its_negative_values_last_without_narrowing_the_domain():
    spec, module = spec_of(COLLATZ.replace("Given a positive integer n, return", "Return"), "get_odd_collatz")
    inputs = [Input((5,), origin="doctest"), Input((-1,)), Input((0,)), Input((12,)), Input((-40,))]
    assert run_last(spec, inputs) == [1, 4]
    # one example backs no rule: the guess orders the inputs, it does not say they are invalid
    assert Domain(spec, doctest_seeds(spec, module), infer_types).empty


def test_a_stated_positive_n_runs_zero_and_negatives_last_and_is_the_domain():
    spec, module = spec_of(COLLATZ, "get_odd_collatz")
    inputs = [Input((5,), origin="doctest"), Input((-1,)), Input((0,)), Input((12,)), Input((-40,))]
    assert run_last(spec, inputs) == [1, 2, 4]
    assert Domain(spec, doctest_seeds(spec, module), infer_types).describe() == [
        "n is positive (your docstring says so)"
    ]


def test_the_docstring_or_the_examples_decide_for_other_names():
    positive, _ = spec_of(
        '''
        def f(x, y):
            """Given positive integers x and y.
            >>> f(2, 3)
            5
            """
        ''',
        "f",
    )
    # (the evidence is what generation passes on: the examples, with their origin)
    assert run_last(positive, [Input((2, 3), origin="doctest"), Input((-1, 2)), Input((1, -2))]) == [1, 2]
    anything, _ = spec_of(
        '''
        def g(x):
            """Add one.
            >>> g(2)
            3
            """
        ''',
        "g",
    )
    assert run_last(anything, [Input((2,), origin="doctest"), Input((-1,))]) == []
    # an example with a negative value says negatives are meant, whatever the name
    signed, _ = spec_of(
        '''
        def h(n):
            """>>> h(-3)
            -2
            """
        ''',
        "h",
    )
    assert run_last(signed, [Input((-3,), origin="doctest"), Input((1,)), Input((-1,))]) == []


def test_examples_rules_run_their_violations_last_too():
    spec, _ = spec_of(
        '''
        def f(arr):
            """>>> f([1, 2, 3])
            6
            >>> f([4, 5])
            9
            """
        ''',
        "f",
    )
    examples = [Input(([1, 2, 3],), origin="doctest"), Input(([4, 5],), origin="doctest")]
    assert run_last(spec, examples + [Input(([1, 2],)), Input(([2, 1],)), Input(([-1, 0],))]) == [3, 4]


def test_generated_inputs_for_a_count_mostly_run_first():
    spec, module = spec_of(COLLATZ, "get_odd_collatz")
    inputs = generate_inputs(spec, 300, module_source=module, seed=0)
    late = set(run_last(spec, inputs))
    # "a positive integer n": zero and the negatives go last, and they are few (generation keeps
    # most mutants positive)
    assert late and all(inputs[x].args[0] <= 0 for x in late) and len(late) < 0.2 * len(inputs)
    assert all(inputs[x].args[0] > 0 for x in range(len(inputs)) if x not in late)


@pytest.mark.corpus
async def test_hangs_on_inputs_the_function_is_not_meant_for_leave_the_others_in(corpus_dir):
    """Every recorded sample of HumanEval/123 loops forever on n <= 0.  Among the small inputs,
    those hangs used to end every program after 22 of 1000 inputs."""
    t, checker = corpus_check(corpus_dir, "HumanEval/123", samples=4, inputs=300)
    result = await checker.check(t)
    assert result.status == "coherent"
    late = len(run_last(t.spec, generate_inputs(t.spec, 300, module_source=t.module_source, seed=checker.config.seed)))
    assert result.inputs >= 300 - late


async def test_a_check_goes_on_in_the_plain_order_when_ordering_fails(monkeypatch):
    import coherence.engine.check as check_module
    from coherence.engine.config import load_project_config
    from coherence.engine.markers import find_targets

    def broken(spec, inputs):
        raise RecursionError("deep")

    monkeypatch.setattr(check_module, "run_last", broken)
    source = (EXAMPLES / "textutils.py").read_text()
    t = next(t for t in find_targets(source, str(EXAMPLES / "textutils.py")) if t.name == "count_vowels")
    result = await Checker(load_project_config(EXAMPLES).merged(inputs=300)).check(t)
    assert result.status == "incoherent" and result.inputs == 300
