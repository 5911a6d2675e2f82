"""Differences in argument mutation: one program changes an argument the other leaves alone.

An alternative that returns yours' value and differs only by changing an argument yours leaves
unchanged (``numbers.sort()`` where yours sorts a copy) is no evidence against yours: the
verdict counts it as agreeing with yours there (``agreeing_labels``).  Where yours is the one
that changes its argument, the counterexample says so in words (``in_words``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coherence.engine.inputs import Input
from coherence.engine.outcomes import Outcome, canonical, outcomes_equal


def _value(o: Outcome) -> Outcome:
    return Outcome("ok", value=o.value)


def only_mutation(mine: Outcome, theirs: Outcome) -> bool:
    """Whether ``theirs`` returns ``mine``'s value and differs only by changing its arguments,
    which ``mine`` leaves alone."""
    return (
        mine.kind == "ok"
        and theirs.kind == "ok"
        and mine.mutated is None
        and theirs.mutated is not None
        and outcomes_equal(_value(mine), _value(theirs))
    )


def agreeing_labels(labels: np.ndarray, outcomes: Sequence[Sequence[Outcome]], columns: Sequence[int]) -> np.ndarray:
    """``labels`` with every alternative that differs from yours only by changing an argument
    yours leaves alone (``only_mutation``) labelled as yours, at ``columns``; ``labels`` itself
    when there is none (``outcomes[program][input]``, aligned with the labels' rows)."""
    out = labels
    for x in columns:
        mine = outcomes[0][x]
        if mine.kind != "ok" or mine.mutated is not None:
            continue
        for j in range(1, len(outcomes)):
            if labels[j, x] != labels[0, x] and only_mutation(mine, outcomes[j][x]):
                if out is labels:
                    out = labels.copy()
                out[j, x] = labels[0, x]
    return out


def _items(mutated: Any) -> list[Any]:
    return mutated[1] if isinstance(mutated, list) and mutated[:1] == ["T"] else [mutated]


def changed(inp: Input, outcome: Outcome) -> list[tuple[int, str]]:
    """The positional arguments ``outcome`` changed, each with how: "sorts" (in place) or "changes"."""
    if outcome.kind != "ok" or outcome.mutated is None:
        return []
    out = []
    for k, (before, after) in enumerate(zip(inp.args, _items(outcome.mutated))):
        if canonical(before) == after:
            continue
        try:
            ordered = isinstance(before, list) and canonical(sorted(before)) == after
        except TypeError:
            ordered = False
        out.append((k, "sorts" if ordered else "changes"))
    return out


def in_words(inp: Input, outcomes: Sequence[Outcome], params: Sequence[str]) -> str | None:
    """ "yours sorts its argument `numbers` in place; 8 of 9 alternatives leave it unchanged", when
    yours changes an argument that alternatives returning yours' value leave alone; else None."""
    mine = outcomes[0]
    alone = [o for o in outcomes[1:] if only_mutation(o, mine)]
    found = changed(inp, mine)
    if not alone or not found:
        return None
    k, how = found[0]
    name = f"`{params[k]}`" if k < len(params) else f"number {k + 1}"
    what = "sorts its argument {} in place" if how == "sorts" else "changes its argument {}"
    leave = "leaves" if len(alone) == 1 else "leave"
    return f"yours {what.format(name)}; {len(alone)} of {len(outcomes) - 1} alternatives {leave} it unchanged"
