"""What a raising function's exception said reaches the user beside the counterexample, without
changing what counts as the same outcome: only a builtin exception's own string is read (a class of
the checked code could hang or lie in its ``__str__``)."""

from __future__ import annotations

import json
import textwrap

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.markers import find_targets
from coherence.engine.outcomes import Outcome, shown_message
from coherence.formats import describe


def test_two_raises_of_one_type_are_one_outcome_whatever_they_say():
    a = Outcome.from_record(["raise", None, None, "TypeError", 'can only concatenate str (not "int") to str'])
    b = Outcome.from_record(["raise", None, None, "TypeError", "unsupported operand"])
    assert a == b and hash(a) == hash(b) and a.key == Outcome.raised("TypeError").key
    assert a.message.startswith("can only concatenate") and b.message == "unsupported operand"


def test_a_message_is_cut_and_made_printable():
    assert shown_message("x" * 1000) == "x" * 160
    assert shown_message("bad \udcff byte") == "bad ? byte"
    assert shown_message(["not", "a", "string"]) is None and shown_message("") is None


MODULE = textwrap.dedent(
    '''
    # coherence
    def label(n: int) -> str:
        """The label of item n: 'item-<n>'."""
        return "item-" + n

    class Loud(ValueError):
        def __str__(self):
            while True:
                pass

    # coherence
    def parse(n: int) -> int:
        """n itself."""
        raise Loud("never read")
    '''
)


async def _check(tmp_path, name, alternatives):
    (tmp_path / "m.py").write_text(MODULE)
    replay = tmp_path / f"{name}.jsonl"
    replay.write_text(json.dumps({"entry_point": name, "candidates": alternatives}) + "\n")
    target = next(t for t in find_targets(MODULE, str(tmp_path / "m.py")) if t.name == name)
    config = CheckConfig(replay=str(replay), samples=4, inputs=50, workspace=str(tmp_path))
    return await Checker(config).check(target)


async def test_yours_builtin_exception_is_shown_with_its_message(tmp_path):
    result = await _check(tmp_path, "label", ["def label(n):\n    return 'item-' + str(n)\n"] * 3)
    assert result.severity == "warning", (result.status, result.reason)
    ce = result.counterexample
    assert ce.yours == "raises TypeError"  # what a regression test and a baseline read: unchanged
    assert ce.yours_message == 'can only concatenate str (not "int") to str'
    text = "\n".join(describe(result))
    assert 'yours: raises TypeError: can only concatenate str (not "int") to str' in text


async def test_a_class_of_the_checked_code_is_never_asked_what_it_says(tmp_path):
    # its __str__ never returns: reading it would hang the call loop
    result = await _check(tmp_path, "parse", ["def parse(n):\n    return n\n"] * 3)
    assert result.status == "incoherent", (result.status, result.reason)
    ce = result.counterexample
    assert ce.yours == "raises Loud" and ce.yours_message is None


def test_the_hover_and_the_report_show_the_message_after_the_exception():
    from coherence.engine.result import ClusterOutput, Counterexample

    ce = Counterexample(
        call="label(0)",
        yours="raises TypeError",
        theirs="'item-0'",
        alternatives=[ClusterOutput("'item-0'", 3)],
        disagreeing=3,
        total=3,
        yours_message="can only concatenate str",
    )
    assert ce.rows(lambda s: f"`{s}`")[0] == "yours: `raises TypeError: can only concatenate str`"
    assert ce.rows()[1] == "3 of 3 alternatives: 'item-0'"
