"""The panel's whole-models term and its empty-collection cap (``verdict.PANEL_WHOLE_MODELS``,
the ``empty_collections`` rule): the judge on small matrices, then real checks of recorded MBPP
functions against a recorded panel of three models, each served by its own OpenAI-compatible
loopback server through litellm's real HTTP path."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from coherence.engine import verdict
from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig, PanelMember
from coherence.engine.inputs import Input
from coherence.engine.markers import target_for
from coherence.engine.sampling import extract_program
from coherence.engine.verdict import PANEL_TERMS, PANEL_WHOLE_MIN_INPUTS, judge, rules
from coherence.engine.verdict.severity import WHOLE_MODELS_BACKED, WHOLE_MODELS_SPLIT
from coherence.formats import describe
from coherence.lsp.render import hover_markdown
from tests.support import CORPUS_DIR
from tests.support.openai_loopback import LoopbackServer, corpus_responder

PANEL = ["yours"] + ["claude"] * 3 + ["gemini"] * 3 + ["deepseek"] * 3
SHIPPED = PANEL_TERMS  # what a check passes


def _panel_matrix(rows: list[int], inputs: int) -> tuple[np.ndarray, np.ndarray]:
    """Yours returns 0 on every input; alternative i returns ``rows[i]`` there."""
    labels = np.array([[0] * inputs] + [[v] * inputs for v in rows])
    return labels, np.zeros_like(labels, dtype=bool)


def test_two_whole_models_against_yours_outweigh_the_one_that_backs_it():
    # claude's 3 agree with yours; gemini's and deepseek's 6 all return 1
    labels, raised = _panel_matrix([0, 0, 0, 1, 1, 1, 1, 1, 1], PANEL_WHOLE_MIN_INPUTS)
    ev = judge(labels, raised, models=PANEL, **SHIPPED)
    assert ev.severity == "warning" and ev.why == WHOLE_MODELS_BACKED
    assert ev.bloc == 6 and ev.agree == 3
    # without the term, a whole model backing yours makes it a hint, as before
    before = judge(labels, raised, models=PANEL, **{**SHIPPED, "whole_models": 0})
    assert before.severity == "hint" and "one model of the panel agrees with yours" in before.why
    # on fewer inputs than the term asks, it stays a hint
    few, few_raised = _panel_matrix([0, 0, 0, 1, 1, 1, 1, 1, 1], PANEL_WHOLE_MIN_INPUTS - 1)
    assert judge(few, few_raised, models=PANEL, **SHIPPED).severity == "hint"
    # one of deepseek's three returns 2: deepseek is no longer whole, one whole model is not enough
    labels, raised = _panel_matrix([0, 0, 0, 1, 1, 1, 1, 1, 2], PANEL_WHOLE_MIN_INPUTS)
    assert judge(labels, raised, models=PANEL, **SHIPPED).severity == "hint"


def test_two_whole_models_against_yours_warn_where_the_third_splits():
    # claude's 3 return 2, 2 and 0; the other two models all return 1: a bloc of two models (6
    # of 9, short of the share the panel asks) and no model backing yours
    labels, raised = _panel_matrix([2, 2, 0, 1, 1, 1, 1, 1, 1], PANEL_WHOLE_MIN_INPUTS)
    ev = judge(labels, raised, models=PANEL, **SHIPPED)
    assert ev.severity == "warning" and ev.why == WHOLE_MODELS_SPLIT
    # where the bloc holds all three models, it was a warning already and says nothing more
    labels, raised = _panel_matrix([1] * 9, PANEL_WHOLE_MIN_INPUTS)
    ev = judge(labels, raised, models=PANEL, **SHIPPED)
    assert ev.severity == "warning" and ev.why == ""


def test_the_whole_models_term_needs_values_on_both_sides():
    labels, raised = _panel_matrix([0, 0, 0, 1, 1, 1, 1, 1, 1], PANEL_WHOLE_MIN_INPUTS)
    raised[0] = True  # yours raises where the two models return: no whole-models warning
    assert judge(labels, raised, models=PANEL, **SHIPPED).severity == "hint"


def test_a_same_model_check_never_meets_the_panel_terms():
    labels, raised = _panel_matrix([0, 0, 0, 1, 1, 1, 1, 1, 1], PANEL_WHOLE_MIN_INPUTS)
    one = ["yours"] + ["gpt"] * 9
    assert judge(labels, raised, models=one, **SHIPPED) == judge(labels, raised)
    empty = np.ones(labels.shape[1], dtype=bool)
    capped = judge(labels, raised, models=one, masks={"empty_collections": empty}, **SHIPPED)
    assert capped == judge(labels, raised)
    # ... and its shrinker may still shrink into an empty list
    keep = rules.shrink_keeper(Input(([3, 1], 2)), None)
    assert keep is not None and keep(Input(([], 2)))
    on_panel = rules.shrink_keeper(Input(([3, 1], 2)), None, panel=True)
    assert on_panel is not None and not on_panel(Input(([], 2))) and on_panel(Input(([3], 2)))


def test_a_panel_outvoting_yours_only_on_empty_collections_is_information():
    labels, raised = _panel_matrix([1] * 9, 3)
    empty = np.array([True, True, True])
    ev = judge(labels, raised, models=PANEL, masks={"empty_collections": empty}, **SHIPPED)
    assert ev.severity == "information" and ev.why == rules.rule("empty_collections").reason
    # one input without an empty collection is enough for the warning
    empty[1] = False
    ev = judge(labels, raised, models=PANEL, masks={"empty_collections": empty}, **SHIPPED)
    assert ev.severity == "warning" and ev.input == 1
    masks = rules.input_masks([Input(([],)), Input(([1],)), Input(((), 2)), Input(({},)), Input(("",))])
    assert masks["empty_collections"].tolist() == [True, False, True, True, False]


# ---------------------------------------------------------------------------------------------
# real checks of recorded MBPP functions against a recorded panel
# ---------------------------------------------------------------------------------------------

MEMBERS = ("deepseek_v3_0324", "gpt_4o", "claude_sonnet_4")


def _entry(model: str, task: str) -> dict:
    path = CORPUS_DIR / f"mbpp-{model}.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"recorded corpus not found: {path}")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return next(e for e in map(json.loads, fh) if str(e["task_id"]) == task)


async def _check_against_panel(tmp_path, monkeypatch, author: str, task: str):
    """``author``'s first recorded candidate of MBPP ``task``, checked against 3 samples from
    each of MEMBERS, each model's recorded candidates served by its own loopback server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    tmp_path.mkdir(parents=True, exist_ok=True)
    e = _entry(author, task)
    code = extract_program(e["candidates"][0], e["entry_point"]).code
    target = target_for(code, e["entry_point"], "f.py", docstring=e["description"])
    servers = []
    for model in MEMBERS:
        recorded = tmp_path / f"{model}.jsonl"
        recorded.write_text(json.dumps(_entry(model, task)) + "\n")
        servers.append(LoopbackServer(responder=corpus_responder(recorded)).start())
    try:
        members = tuple(PanelMember(f"openai/{m}", 1, s.url) for m, s in zip(MEMBERS, servers))
        config = CheckConfig(
            models=members, samples=10, inputs=300, cache_dir=str(tmp_path / "cache"), call_timeout=1.0
        )
        return await Checker(config).check(target)
    finally:
        for s in servers:
            s.stop()


async def test_a_recorded_bug_two_whole_models_contradict_is_a_warning(tmp_path, monkeypatch):
    """llama 3.1 8B's ``find_length`` (MBPP 125) fails the benchmark's tests.  Without the term it
    was a hint: no bloc held all three models.  Every sample of two models returns one value
    against it, on many inputs; the evidence's input is one where the third model splits."""
    result = await _check_against_panel(tmp_path / "with", monkeypatch, "llama_3_1_8b_instruct", "125")
    assert result.status == "incoherent"
    assert result.severity == "warning" and result.evidence["why"] == WHOLE_MODELS_SPLIT, result.evidence
    assert result.evidence["bloc"] == 6
    # the reader is told why, after the evidence, in the hover and in the text report
    assert f"_From the panel: {WHOLE_MODELS_SPLIT}._" in hover_markdown(result).replace("\\", "")
    assert f"    from the panel: {WHOLE_MODELS_SPLIT}" in describe(result)
    monkeypatch.setitem(verdict.PANEL_TERMS, "whole_models", 0)  # the panel's verdict without the term
    without = await _check_against_panel(tmp_path / "without", monkeypatch, "llama_3_1_8b_instruct", "125")
    assert without.severity == "hint" and without.clusters == result.clusters


async def test_a_recorded_function_one_model_backs_without_two_whole_models_stays_a_hint(tmp_path, monkeypatch):
    """GPT-3.5's ``find_length`` (MBPP 125): a model backs it and the others are not each whole
    against it."""
    result = await _check_against_panel(tmp_path, monkeypatch, "gpt_3_5", "125")
    assert result.status == "incoherent"
    assert result.severity == "hint" and "one model of the panel agrees with yours" in result.evidence["why"]


async def test_a_recorded_function_the_panel_outvotes_only_on_an_empty_list_is_information(tmp_path, monkeypatch):
    """GPT-3.5's ``zero_count`` (MBPP 137) passes the benchmark's tests; the panel returns 0.0 on
    ``[]`` where it raises, and the reference rejects ``[]`` too."""
    result = await _check_against_panel(tmp_path, monkeypatch, "gpt_3_5", "137")
    assert result.status == "incoherent" and result.counterexample is not None
    assert result.severity == "information"
    assert result.evidence["why"] == rules.rule("empty_collections").reason
    assert "[]" in result.counterexample.call
