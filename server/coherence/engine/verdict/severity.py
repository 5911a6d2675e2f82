"""The verdict: how strongly the outcome matrix speaks against the user's function.

One rule, used by every front end (the CLI's exit code and summary, SARIF ``level``, the JSON
``severity``, the editor's diagnostics, code lens and status bar):

- **warning**: evidence that yours is wrong.  On some input inside the stated domain, a bloc of
  alternatives that agree with each other, and return normally, outvotes yours: at least half of
  all alternatives (and two), more than agree with yours, and at most a third side with yours.
- **information**: worth a look.  On some input inside the domain, a bloc of at least a third of
  the alternatives (and two) returns a value other than yours, without outvoting it.
- **hint**: the programs differ, but that says little against yours: the alternatives that
  disagree with yours do so alone, or only outside the stated domain, or only by raising where
  yours returns (an input outside the function's contract, most often), or only in which
  exception they raise.  Code lens only, no Problems entry.
- **none**: every program behaves alike (coherent), or the function was not compared.

The thresholds were chosen on the recorded corpus (``coherence eval``, leave-one-model-out);
``docs/results.md#severity-rule`` gives the figures.  The rule works per input, not on the
mean over inputs that DSDE takes: a bug that shows on 1% of inputs is still a bug that 8 of 9
alternatives contradict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from coherence.engine.verdict import rules

SEVERITIES = ("warning", "information", "hint", "none")
_RANK = {s: i for i, s in enumerate(SEVERITIES)}

BLOC_MIN = 2  # alternatives in a bloc: one alone is noise
WARN_SHARE = 0.5  # a warning's bloc holds at least this share of the alternatives ...
WARN_AGREE = 1 / 3  # ... and at most this share agrees with yours
INFO_SHARE = 1 / 3  # an information's bloc holds at least this share
# A panel of models (``CheckConfig.models``): on an input where every alternative of one model (two
# or more) agrees with yours, no diagnostic (a whole model reads the spec as you do).  Chosen on
# the recorded HumanEval panels, validated on MBPP (``docs/results.md#panel-terms``; replayed
# by benchmarks/eval_panel_rules.py).  A check of one model never meets it.
PANEL_MODEL_BACKS = "hint"
# ... and a bloc is evidence only when the models its alternatives come from hold at least this
# share of the panel's alternatives: agreement across models, not one or two models outvoting
# yours by their number of samples while the others read the spec another way.  With 3 models of
# 3 samples each, every model must be in the bloc; with 7 models (2, 2, 1, 1, 1, 1, 1), two of
# the single ones may be missing.  Chosen on the HumanEval panels (8 authors, the 3 strongest
# others and the 7 others), validated on MBPP's: ``docs/results.md#panel-terms``.
PANEL_HELD_SHARE = 3 / 4
# ... unless the bloc holds every alternative of this many of the panel's models, each whole: models
# that are each unanimous against yours outweigh one model that backs yours or splits (0: off).
# Chosen leave-one-model-out on the MBPP panels (``docs/results.md#panel-terms``).
PANEL_WHOLE_MODELS = 2
PANEL_WHOLE_MIN_INPUTS = 10  # ... on this many inputs or more: one or two such inputs are often a corner
# the panel's terms as a check passes them to ``judge``
PANEL_TERMS: dict[str, Any] = {
    "model_backs": PANEL_MODEL_BACKS,
    "held_share": PANEL_HELD_SHARE,
    "whole_models": PANEL_WHOLE_MODELS,
    "whole_min_inputs": PANEL_WHOLE_MIN_INPUTS,
}


def is_panel(models: list[str] | None) -> bool:
    """Whether the alternatives come from two models or more (``models``: the model of each
    program, yours first): the panel's terms apply."""
    return models is not None and len(set(models[1:])) >= 2


def at_least(severity: str, floor: str) -> bool:
    """Whether ``severity`` is ``floor`` or stronger ("warning" > "information" > "hint" > "none")."""
    return _RANK.get(severity, len(SEVERITIES)) <= _RANK.get(floor, len(SEVERITIES))


@dataclass
class Evidence:
    """What the verdict rests on: one input and the bloc of alternatives against yours there."""

    severity: str
    input: int | None = None  # index of the input
    rival: int | None = None  # a program of the bloc (row of the matrix)
    bloc: int = 0  # alternatives in the bloc (they agree with each other, not with yours)
    against: int = 0  # alternatives that disagree with yours on that input
    agree: int = 0  # alternatives that agree with yours on that input
    alternatives: int = 0  # alternatives compared (m - 1)
    kind: str = ""  # value | yours-raises | theirs-raise | exception-type
    why: str = ""  # a hint's or an information's: why no more; a warning's: why, on a panel alone
    special_cased: bool = False  # a docstring example its backers special-case (``from_examples``)

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("severity", "bloc", "against", "agree", "alternatives", "kind", "why")}
        if self.special_cased:
            out["special_cased"] = True
        return out


def _kind(yours_raised: bool, rival_raised: bool) -> str:
    if yours_raised and rival_raised:
        return "exception-type"
    if yours_raised:
        return "yours-raises"
    if rival_raised:
        return "theirs-raise"
    return "value"


def judge(
    labels: np.ndarray,
    raised: np.ndarray,
    *,
    inside: np.ndarray | None = None,
    incoherent: bool | None = None,
    typical: np.ndarray | None = None,
    yours_slow: np.ndarray | None = None,
    degenerate: np.ndarray | None = None,
    empty_strings: np.ndarray | None = None,
    models: list[str] | None = None,
    cross_share: float | None = None,
    bloc_models: int = 1,
    model_backs: str = "",
    held_share: float = 0.0,
    whole_models: int = 0,
    whole_min_inputs: int = 1,
    masks: Mapping[str, np.ndarray] | None = None,
) -> Evidence:
    """The verdict on program 0 from the m x n outcome labels (equal labels: equal outcomes) and
    which calls raised.  The per-input rules are the table of ``rules`` (``docs/results.md#severity-rule``
    has their figures); each rule's mask comes by its name, as a keyword or in ``masks``:
    ``inside``: the inputs inside the stated domain (None: all are; no evidence outside);
    ``yours_slow``: inputs where your function ran out of time, evidence of slowness (or of a busy
    machine), not of a wrong result (at most an information there); ``empty_strings``: inputs with
    an empty string argument, a convention the spec rarely states (at most an information there);
    ``degenerate``: inputs whose every argument is empty, blank or zero, and ``typical``: inputs
    like the examples' magnitudes: among inputs of one severity, the evidence's input is one
    that is not degenerate, then a typical one.

    A panel (``models``: the model of each row): with ``cross_share``, a bloc whose alternatives
    come from two models or more is a warning from that share of the alternatives on (instead of
    half), the other conditions unchanged; with ``bloc_models`` 2, a bloc whose alternatives all
    come from one model, when the alternatives come from several, is no bloc (one model's shared
    reading, not evidence).  Rows of one model never meet either, so a same-model check is judged
    as without them.  ``model_backs``: on an input where every alternative of one model (two or
    more of them) agrees with yours (a whole model reads the spec as you do), "information" allows
    no warning there, and "hint" no diagnostic at all.  ``held_share``: a bloc is no bloc unless
    the models its alternatives come from hold at least this share of the alternatives; a model
    whose every alternative raised on every input is left out of the count (a broken member
    does not silence the others).  ``whole_models``: a bloc that holds every alternative of at least
    this many models (two or more alternatives each) is evidence whatever ``held_share`` asks, and
    even where a whole model backs yours: models that are each unanimous against yours outvote one
    that backs it.  Only where both sides return a value, on
    an input that is not degenerate, and only when that holds on ``whole_min_inputs`` inputs or
    more."""
    m, n = labels.shape
    alts = m - 1
    if incoherent is None:
        incoherent = bool((labels != labels[:1]).any()) if m > 1 else False
    if not incoherent or alts < 1 or n == 0:
        return Evidence("none", alternatives=max(0, alts))
    mine = labels[0]
    panel = is_panel(models)
    backers: list[np.ndarray] = []  # per model with 2+ alternatives: its rows (into labels[1:])
    if panel and (model_backs or whole_models) and models is not None:
        rows_of: dict[str, list[int]] = {}
        for r, name in enumerate(models[1:]):
            rows_of.setdefault(name, []).append(r)
        backers = [np.array(rows) for rows in rows_of.values() if len(rows) >= 2]
    with_vote = voters(models, raised) if panel and models is not None else None
    differs = labels[1:] != mine  # alternatives x inputs
    against = differs.sum(axis=0)
    given: dict[str, np.ndarray | None] = {
        "inside": inside,
        "yours_slow": yours_slow,
        "empty_strings": empty_strings,
        "degenerate": degenerate,
        "typical": typical,
    }
    if masks:
        given.update(masks)
    flagged = {
        rule.name: rule.flagged(mask)
        for rule in rules.JUDGED
        if rule.applies(panel) and (mask := given.get(rule.name)) is not None
    }
    # the table's rules in order: those that drop inputs, then those that cap what remains, then
    # those that make an input the last choice as the evidence's
    judged = np.flatnonzero(against > 0)
    dropped_by = ""  # the reason of the rule that left no input
    for rule in rules.JUDGED:
        if rule.effect == "drop" and rule.name in flagged:
            kept = judged[~flagged[rule.name][judged]]
            if judged.size and not kept.size and not dropped_by:
                dropped_by = rule.reason
            judged = kept
    caps = [(flagged[rule.name], rule.reason) for rule in rules.JUDGED if rule.effect == "cap" and rule.name in flagged]
    lasts = [flagged[rule.name] for rule in rules.JUDGED if rule.effect == "last" and rule.name in flagged]
    best: tuple[Any, ...] | None = None
    best_info: tuple[Any, ...] | None = None
    seen = {"normal": False, "bloc": False, "yours-returns": False}
    # a warning's bloc on an input capped at information (``yours_slow``, ``empty_strings``),
    # and why it is no warning
    best_capped: tuple[Any, ...] | None = None
    capped_why = ""
    blocs, rivals = _largest_blocs(labels[1:, judged], differs[:, judged])
    unanimous_at = _unanimous(labels, raised, judged, rivals, backers, whole_models, flagged.get("degenerate"))
    if len(unanimous_at) < whole_min_inputs:
        unanimous_at = set()
    by_whole_models: dict[int, str] = {}  # inputs the whole-models term lets through, and why
    for x, bloc, rival in zip(judged.tolist(), blocs.tolist(), rivals.tolist()):
        kind = _kind(bool(raised[0, x]), bool(raised[rival, x]))
        agree = alts - int(against[x])
        if kind == "theirs-raise":
            seen["yours-returns"] = True
        if kind in ("exception-type", "theirs-raise"):
            continue  # the bloc raises: no value to set against yours
        seen["normal"] = True
        if bloc < BLOC_MIN:
            continue
        spans, held = 1, 1.0
        if panel and models is not None:  # the models the bloc's alternatives come from
            col = labels[1:, x]
            inbloc = {models[r] for r in (1 + np.flatnonzero(col == col[rival - 1])).tolist()}
            spans = len(inbloc)
            held = held_by(models, inbloc, with_vote)
        if spans < bloc_models:
            seen["one-model"] = True
            continue
        backed = any(not differs[rows, x].any() for rows in backers)
        unanimous = x in unanimous_at
        if backed and model_backs == "hint" and not unanimous:
            seen["backed"] = True
            continue
        if unanimous and (backed or held < held_share - 1e-9):  # a warning by the whole-models term alone
            by_whole_models[x] = WHOLE_MODELS_BACKED if backed else WHOLE_MODELS_SPLIT
        if held < held_share - 1e-9 and not unanimous:
            seen["few-models"] = True
            continue
        seen["bloc"] = True
        # among the inputs of one severity: both sides returned, like the examples, the larger
        # bloc, then the input's order (the docstring's examples come first)
        key = (kind != "value", *(bool(mask[x]) for mask in lasts), -bloc, x)
        ev = (key, x, rival, bloc, int(against[x]), agree, kind)
        share = min(WARN_SHARE, cross_share) if cross_share is not None and spans >= 2 else WARN_SHARE
        cap = next((why for mask, why in caps if mask[x]), "")
        if bloc >= share * alts and bloc > agree and agree <= WARN_AGREE * alts and (unanimous or not backed):
            if not cap:
                if best is None or key < best[0]:
                    best = ev
            elif best_capped is None or key < best_capped[0]:
                best_capped, capped_why = ev, cap
        elif bloc >= INFO_SHARE * alts and (best_info is None or key < best_info[0]):
            best_info = ev
    why = ""
    if best is not None:
        chosen, severity = best, "warning"
    elif best_capped is not None:  # the strongest evidence there is, and why it is no warning
        chosen, severity, why = best_capped, "information", capped_why
    elif best_info is not None:
        chosen, severity = best_info, "information"
    else:
        if dropped_by:
            why = dropped_by
        elif not judged.size:
            why = "alternatives differ among themselves, and agree with yours"
        elif not seen["normal"] and not seen["yours-returns"]:
            why = "the programs differ only in which exception they raise"
        elif not seen["normal"]:
            why = "the alternatives that differ from yours raise an exception there (an input outside the function's contract, most often)"
        elif not seen["bloc"] and seen.get("backed"):
            why = "every alternative of one model of the panel agrees with yours where the others differ"
        elif not seen["bloc"] and seen.get("few-models"):
            why = "the alternatives that agree with each other against yours come from too few of the panel's models: the others read the spec another way"
        elif not seen["bloc"] and seen.get("one-model"):
            why = "the alternatives that agree with each other against yours all come from one model of the panel"
        elif not seen["bloc"]:
            why = "no two alternatives agree with each other against yours"
        else:
            why = "fewer than a third of the alternatives agree with each other against yours"
        return Evidence("hint", alternatives=alts, why=why)
    _, x, rival, bloc, against_x, agree, kind = chosen
    if severity == "warning":
        why = by_whole_models.get(x, "")
    return Evidence(
        severity, input=x, rival=rival, bloc=bloc, against=against_x, agree=agree, alternatives=alts, kind=kind, why=why
    )


WHOLE_MODELS_BACKED = "every alternative of two or more of the panel's models returns the same value against yours, where another model agrees with yours"
WHOLE_MODELS_SPLIT = "every alternative of two or more of the panel's models returns the same value against yours, and the rest of the panel splits"


def _unanimous(
    labels: np.ndarray,
    raised: np.ndarray,
    judged: np.ndarray,
    rivals: np.ndarray,
    backers: list[np.ndarray],
    whole_models: int,
    degenerate: np.ndarray | None,
) -> set[int]:
    """The inputs among ``judged`` where the largest bloc against yours holds every alternative
    of ``whole_models`` models or more (``backers``: each model's rows), and both yours and the
    bloc return a value there, on an input that is not degenerate."""
    if not whole_models or len(backers) < whole_models:
        return set()
    out = set()
    for x, rival in zip(judged.tolist(), rivals.tolist()):
        if raised[0, x] or raised[rival, x] or (degenerate is not None and degenerate[x]):
            continue
        col = labels[1:, x]
        inbloc = col == col[rival - 1]
        if sum(bool(inbloc[rows].all()) for rows in backers) >= whole_models:
            out.add(x)
    return out


_PAIRS_AT_ONCE = 1 << 21  # booleans per (row, row, input) array in _largest_blocs


def _largest_blocs(alts: np.ndarray, differs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per input (column): the size of the largest group of alternatives that share one outcome
    unlike yours, and its first row (1-based: a row of ``labels``).  Among groups of one size, the
    smallest label wins, as ``np.unique``'s order would have it.

    All columns at once: ``judge`` ran ``np.unique`` per disagreeing input, half of the verdict
    stage's time (``benchmarks/check_speed.py``)."""
    a, n = alts.shape
    if a == 0 or n == 0:
        return np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    step = max(1, _PAIRS_AT_ONCE // (a * a))
    if n > step:  # a wide panel on many inputs: a few MB of pairs at a time
        parts = [_largest_blocs(alts[:, i : i + step], differs[:, i : i + step]) for i in range(0, n, step)]
        return np.concatenate([b for b, _ in parts]), np.concatenate([r for _, r in parts])
    # same[i, j, x]: rows i and j both differ from yours on x, with the same outcome
    same = (alts[:, None, :] == alts[None, :, :]) & differs[:, None, :] & differs[None, :, :]
    size = same.sum(axis=1)  # rows x inputs: the size of the group each differing row is in (0 if none)
    blocs = size.max(axis=0)
    # the group a row is in, when it is of the largest size: its label; the smallest such label
    big = (size == blocs) & differs
    wide = alts.astype(np.int64)  # the scorer's labels are int32: the sentinel must not wrap
    ranked = np.where(big, wide, np.iinfo(np.int64).max)
    label = ranked.min(axis=0)
    rivals = 1 + np.argmax(big & (wide == label), axis=0)  # the first row with that label
    return blocs, rivals


def stronger(a: Evidence, b: Evidence) -> Evidence:
    """The evidence that speaks more strongly against yours; ``a`` on a tie."""
    return a if _RANK[a.severity] <= _RANK[b.severity] else b


def voters(models: list[str], raised: np.ndarray) -> set[str]:
    """The models of a panel that have a vote: those with an alternative that returned a value on
    some input (``models``: the model of each row of ``raised``, yours first).  A member whose
    every sample raised on every input is broken, and must not silence the others."""
    return {models[r] for r in range(1, len(models)) if not raised[r].all()}


def held_by(models: list[str], among: set[str], with_vote: set[str] | None = None) -> float:
    """The share of the alternatives (``models[1:]``) whose model is ``among`` these, counting the
    alternatives of ``with_vote``'s models alone (None: every model's)."""
    counted = [name for name in models[1:] if with_vote is None or name in with_vote]
    return sum(name in among for name in counted) / max(1, len(counted))


def panel_backs(
    support: list[bool], models: list[str] | None, held_share: float, with_vote: set[str] | None = None
) -> bool:
    """Whether the alternatives in ``support`` (one flag per alternative) come from models that hold
    ``held_share`` of a panel's alternatives, as a bloc must in ``judge`` (``with_vote``:
    ``voters``); always, when the programs come from one model (``models``: the model of each
    program, yours first)."""
    if models is None or len(models) != len(support) + 1 or not is_panel(models):
        return True
    backers = {models[1 + j] for j, gives in enumerate(support) if gives}
    return held_by(models, backers, with_vote) >= held_share - 1e-9


def from_examples(
    checked: list[tuple[int, bool, list[bool], list[bool]]],
    alts: int,
    *,
    models: list[str] | None = None,
    held_share: float = 0.0,
    with_vote: set[str] | None = None,
    special_cased: set[int] | frozenset[int] = frozenset(),
) -> Evidence | None:
    """The verdict of the docstring's worked examples: ``checked`` holds, per example, (its
    index, whether yours gives the stated result, which alternatives give it, which alternatives
    agree with yours).

    - **warning**: yours contradicts an example that at least one alternative reproduces
      (``docs/results.md#docstring-examples``).
    - **information**: yours contradicts an example that no alternative reproduces either: the
      example may be what is wrong (``bf(...) ==> ("Venus")`` for a tuple), or a bug every
      sample shares; either way, the function and its docstring disagree.
    - None: yours gives every stated result.

    A panel (``models``: the model of each program, yours first; ``with_vote``: ``voters``): the
    warning needs the models of the alternatives that reproduce the example to hold ``held_share``
    of the alternatives, as a bloc does in ``judge``.  An example only one model of three
    reproduces is more often wrong itself, as HumanEval's ``median`` example is
    (docs/results.md#special-cased-examples).  It is information then, as when nobody reproduces
    it.  So is an example in ``special_cased``, which some alternative reproduces only by
    recognising its input in its code (``special_cases``)."""
    contradicted = [(i, support, agree) for i, mine_ok, support, agree in checked if not mine_ok]
    if not contradicted:
        return None
    # an example no alternative special-cases, the one most alternatives reproduce, the first written
    i, support, agree = max(contradicted, key=lambda c: (c[0] not in special_cased, sum(c[1]), -c[0]))
    backing = sum(support)
    rival = 1 + support.index(True) if backing else None
    why = ""
    if backing and i in special_cased:
        why = "your function contradicts the docstring's example, and alternatives reproduce it only by special-casing its input in their code: the example may be what is wrong"
    elif backing and held_share and not panel_backs(support, models, held_share, with_vote):
        why = "your function contradicts the docstring's example, and only some of the panel's models reproduce it: the example may be what is wrong"
    if backing:
        return Evidence(
            "information" if why else "warning",
            input=i,
            rival=rival,
            bloc=backing,
            against=alts - sum(agree),
            agree=sum(agree),
            alternatives=alts,
            kind="example",
            why=why,
            special_cased=i in special_cased,
        )
    return Evidence(
        "information",
        input=i,
        bloc=0,
        against=alts - sum(agree),
        agree=sum(agree),
        alternatives=alts,
        kind="example",
        why="your function and every alternative contradict the docstring's example: the example may be wrong, or every sample shares a bug",
    )
