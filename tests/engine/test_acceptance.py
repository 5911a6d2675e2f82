"""What an ``accept`` covers (``verdict.acceptance.covers``): the finding whose evidence or shown
counterexample is the accepted call, or that shows the accepted disagreement's own outcomes, and
nothing else."""

from coherence.engine.inputs import Input
from coherence.engine.outcomes import Outcome
from coherence.engine.verdict.acceptance import Accepted, covers


def ok(v):
    return Outcome("ok", value=v)


# count_vowels('A'): yours 0, the nine alternatives 1
ACCEPTED = [Accepted("count_vowels('A')", Input(("A",)), [ok(0)] + [ok(1)] * 9)]


def test_the_accepted_call_itself_is_covered_as_the_evidence_or_the_shown_call():
    assert covers(ACCEPTED, "count_vowels", ["count_vowels('A')"], None, None) == "count_vowels('A')"
    # the call as the user wrote it with other quotes is the same call
    written = [Accepted('count_vowels("A")', Input(("A",)), ACCEPTED[0].outcomes)]
    assert covers(written, "count_vowels", ["count_vowels('xy')", "count_vowels('A')"], None, None)


def test_the_same_disagreement_on_another_input_is_covered():
    shown = [ok(0)] + [ok(1)] * 9  # count_vowels('E')
    assert covers(ACCEPTED, "count_vowels", ["count_vowels('E')"], shown, 1) == "count_vowels('A')"


def test_a_new_disagreement_is_not_covered():
    # a new bug in the body: count_vowels('bbbbbb') gives 1 where every alternative gives 0
    shown = [ok(1)] + [ok(0)] * 9
    assert covers(ACCEPTED, "count_vowels", ["count_vowels('bbbbbb')"], shown, 1) == ""
    # nor is a call where yours and the shown alternative agree
    assert covers(ACCEPTED, "count_vowels", ["count_vowels('b')"], [ok(0)] * 10, 1) == ""


def test_the_same_split_of_the_alternatives_on_another_input_is_covered():
    # clamp(0, 0, -1) with lo > hi: yours and three alternatives give lo, six give hi
    accepted = [Accepted("clamp(0, 0, -1)", Input((0, 0, -1)), [ok(0)] * 4 + [ok(-1)] * 6)]
    split = [ok(3)] * 4 + [ok(2)] * 6  # clamp(3, 3, 2): the same alternatives on each side
    assert covers(accepted, "clamp", ["clamp(3, 3, 2)"], split, 4) == "clamp(0, 0, -1)"
    # a new bug: the alternatives that sided with yours now disagree with it too
    bug = [ok(7)] + [ok(3)] * 3 + [ok(2)] * 6
    assert covers(accepted, "clamp", ["clamp(3, 3, 2)"], bug, 1) == ""
