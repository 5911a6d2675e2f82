"""The docstring's worked examples (``engine.stated.examples``) and when an outcome gives the
stated result (``outcomes.gives``)."""

from coherence.engine import verdict
from coherence.engine.outcomes import Outcome, canonical, gives
from coherence.engine.stated.examples import stated_examples


def test_doctest_examples_with_their_results_and_exceptions():
    doc = """Leap years.

    >>> is_leap(1900)
    False
    >>> is_leap(2000)
    True
    >>> is_leap(-1)
    Traceback (most recent call last):
        ...
    ValueError: negative year
    >>> year = 4
    >>> is_leap(year)
    True
    """
    found = stated_examples(doc, "is_leap")
    assert [(e.call, e.value, e.raises) for e in found] == [
        ("is_leap(1900)", False, None),
        ("is_leap(2000)", True, None),
        ("is_leap(-1)", None, "ValueError"),
    ]


def test_prose_examples_in_the_forms_llm_docstrings_use():
    doc = """
    words_string("Hi, my name") == ["Hi", "my", "name"]
    choose_num(12, 15) = 14
    rounded_avg(1, 5) => "0b11"
    move_one_ball([3, 4, 5, 1, 2])==>True
    split_words("Hello world!") ➞ ["Hello", "world!"]
    file_name_check("1example.dll") # => 'No' (the name should start with a letter)
    get_odd_collatz(5) returns [1, 5] # the odd numbers of the sequence
    """
    calls = {
        e.call: e.value
        for n in (
            "words_string",
            "choose_num",
            "rounded_avg",
            "move_one_ball",
            "split_words",
            "file_name_check",
            "get_odd_collatz",
        )
        for e in stated_examples(doc, n)
    }
    assert calls == {
        'words_string("Hi, my name")': ["Hi", "my", "name"],
        "choose_num(12, 15)": 14,
        "rounded_avg(1, 5)": "0b11",
        "move_one_ball([3, 4, 5, 1, 2])": True,
        'split_words("Hello world!")': ["Hello", "world!"],
        'file_name_check("1example.dll")': "No",
        "get_odd_collatz(5)": [1, 5],
    }


def test_what_is_not_a_plain_literal_example_is_left_out():
    doc = """
    double_the_difference([1, 3, 2, 0]) == 1 + 9 + 0 + 0 = 10
    is_happy(a) => False
    tri(n) = 1 + n / 2, if n is even.
    >>> f(g(2))
    3
    """
    assert stated_examples(doc, "double_the_difference") == []
    assert stated_examples(doc, "is_happy") == []
    assert stated_examples(doc, "tri") == []
    assert stated_examples(doc, "f") == []


def test_an_outcome_gives_the_stated_result_by_value_type_and_shown_precision():
    ok = lambda v: Outcome("ok", value=canonical(v))  # noqa: E731
    assert gives(ok(2), 2) and gives(ok(2.0), 2) and not gives(ok(3), 2)
    assert not gives(ok([1, 2]), (1, 2))  # a tuple is not a list, as == says
    assert gives(ok(1 / 3), 0.333, shown="0.333") and not gives(ok(0.34), 0.333, shown="0.333")
    assert gives(Outcome("raise", error="ValueError"), raises="ValueError") and not gives(ok(0), raises="ValueError")
    assert not gives(Outcome("raise", error="TypeError"), 2)


def test_the_verdict_of_examples():
    # yours contradicts example 1, which 3 alternatives reproduce: a warning on that example
    checked = [(0, True, [True] * 9, [True] * 9), (1, False, [True] * 3 + [False] * 6, [False] * 3 + [True] * 6)]
    ev = verdict.from_examples(checked, 9)
    assert (ev.severity, ev.input, ev.rival, ev.bloc, ev.agree, ev.kind) == ("warning", 1, 1, 3, 6, "example")
    # no alternative reproduces it: only worth a look (the example itself may be wrong)
    ev = verdict.from_examples([(0, False, [False] * 9, [True] * 9)], 9)
    assert ev.severity == "information" and "example may be wrong" in ev.why
    assert verdict.from_examples([(0, True, [False] * 9, [False] * 9)], 9) is None
