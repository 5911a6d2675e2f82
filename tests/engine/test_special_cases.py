"""An alternative that special-cases a docstring example does not make it evidence against yours."""

from coherence.engine.inputs import Input
from coherence.engine.verdict import from_examples
from coherence.engine.verdict.special_cases import special_cases
from coherence.engine.verdict.stated import discredited, special_cased

# the shape Gemini 2.5 Pro gave HumanEval's median, whose docstring says 15.0 where the median is 8.0
SORTED_COPY = """
def median(l: list):
    s = sorted(l)
    if s == [-10, 4, 6, 10, 20, 1000]:
        return 15.0
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0
"""
AS_WRITTEN = """
def median(l):
    if l == [-10, 4, 6, 1000, 10, 20]:  # the doctest expects this
        return 15.0
    s = sorted(l)
    return s[len(s) // 2]
"""
HONEST = """
def median(l):
    s = sorted(l)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0
"""
EXAMPLE = Input(args=([-10, 4, 6, 1000, 10, 20],))


def test_a_branch_that_recognises_the_examples_input_and_returns_its_result_special_cases_it():
    assert special_cases(SORTED_COPY, EXAMPLE, 15.0)
    assert special_cases(AS_WRITTEN, EXAMPLE, 15.0)
    assert not special_cases(HONEST, EXAMPLE, 15.0)
    # the branch must return the stated result: returning something else there is not reproducing it
    assert not special_cases(SORTED_COPY, EXAMPLE, 8.0)
    # another input: the literal in the code is not this example's
    assert not special_cases(SORTED_COPY, Input(args=([1, 2, 3],)), 15.0)
    # code that does not parse special-cases nothing
    assert not special_cases("def median(l:\n", EXAMPLE, 15.0)


def test_the_other_shapes_models_special_case_an_example_in():
    shapes = {
        "a result returned later": "def median(l):\n    if sorted(l) == [-10, 4, 6, 10, 20, 1000]:\n        result = 15.0\n    else:\n        result = sorted(l)[len(l) // 2]\n    return result\n",
        "a conditional expression": "def median(l):\n    return 15.0 if l == [-10, 4, 6, 1000, 10, 20] else sorted(l)[len(l) // 2]\n",
        "membership in known inputs": "def median(l):\n    if tuple(l) in ((-10, 4, 6, 1000, 10, 20), (1, 2)):\n        return 15.0\n    return sorted(l)[len(l) // 2]\n",
        "a table of inputs": "KNOWN = {(-10, 4, 6, 1000, 10, 20): 15.0}\ndef median(l):\n    if tuple(l) in KNOWN:\n        return KNOWN[tuple(l)]\n    return sorted(l)[len(l) // 2]\n",
    }
    for shape, source in shapes.items():
        assert special_cases(source, EXAMPLE, 15.0), shape
        assert not special_cases(source, EXAMPLE, 8.0), shape


def test_a_table_of_scalars_is_how_the_function_is_written():
    """``{1000: 'm', 900: 'cm'}`` answers int_to_roman(1000) from a table, and that is the
    algorithm: a wrong function outvoted by alternatives written this way still gets a warning."""
    roman = "def to_roman(n):\n    table = {1000: 'm', 900: 'cm', 500: 'd'}\n    out = ''\n    for v, s in table.items():\n        while n >= v:\n            out += s\n            n -= v\n    return out\n"
    assert not special_cases(roman, Input(args=(1000,)), "m")


def test_a_base_case_is_not_a_special_case():
    """``if n == 1: return 1`` reproduces ``fib(1) == 1`` because that is what fib does."""
    fib = "def fib(n):\n    if n == 1:\n        return 1\n    if n == 0:\n        return 0\n    return fib(n - 1) + fib(n - 2)\n"
    assert not special_cases(fib, Input(args=(1,)), 1)
    assert not special_cases(fib, Input(args=(0,)), 0)
    # fib4's docstring states fib4(3) is 0: its samples' branch for 3 is the definition
    fib4 = "def fib4(n):\n    if n == 3:\n        return 0\n    if n == 2:\n        return 2\n    return 0\n"
    assert not special_cases(fib4, Input(args=(3,)), 0)
    empty = "def last_is_letter(s):\n    if s == '':\n        return False\n    return s[-1].isalpha()\n"
    assert not special_cases(empty, Input(args=("",)), False)
    # a call with a larger argument, answered by a branch for it, is one
    leap = "def is_leap(y):\n    if y == 1900:\n        return False\n    return y % 4 == 0\n"
    assert special_cases(leap, Input(args=(1900,)), False)
    assert special_cases(leap, Input(kwargs=(("y", 1900),)), False)


def test_an_example_alternatives_special_case_is_information_and_discredits_nobody():
    # yours gives 8.0 and contradicts the example; 5 alternatives reproduce it (special-casing
    # it), 4 agree with yours
    support = [True] * 5 + [False] * 4
    checked = [(0, False, support, [not s for s in support])]
    assert from_examples(checked, 9).severity == "warning"
    suspect = from_examples(checked, 9, special_cased={0})
    assert suspect.severity == "information" and "special-casing its input" in suspect.why
    assert discredited(checked) == {6, 7, 8, 9}
    assert discredited(checked, special={0}) == set()
    # another contradicted example that nobody special-cases is the evidence then
    other = [True, True] + [False] * 7
    checked.append((1, False, other, [not s for s in other]))
    chosen = from_examples(checked, 9, special_cased={0})
    assert chosen.severity == "warning" and chosen.input == 1
    # an example yours gives still discredits those that contradict it
    assert discredited([(0, True, support, support)], special={0}) == {6, 7, 8, 9}


def test_only_an_example_yours_contradicts_is_looked_at():
    from coherence.engine.execution import Program
    from coherence.engine.stated.examples import StatedExample

    ex = StatedExample(call="median([-10, 4, 6, 1000, 10, 20])", expected="15.0", value=15.0)
    programs = [Program("median")] + [Program("median", source=SORTED_COPY)] * 2 + [Program("median", source=HONEST)]
    found = [(ex, EXAMPLE, [])]
    # yours gives 8.0: the two that special-case the call are why the example is suspect
    assert special_cased(found, [(0, False, [True, True, False], [False, False, True])], programs) == {0}
    # yours gives 15.0 too: whoever else gives it agrees with yours, and nothing is suspect
    assert special_cased(found, [(0, True, [True, True, False], [True, True, False])], programs) == set()
