"""The verdict's per-input rules: one table.

Each rule names a set of inputs (its mask: ``judge``'s keyword of the same name), what evidence
on those inputs may weigh (its effect and severity cap) and why.  The judge applies the table;
the masks are built from it (``input_masks``: by the check, and by the benchmark scripts that
replay the verdict on recorded matrices); the shrinker keeps a counterexample on the side of each
mask its input started on (``shrink_keeper``).  A new rule is one entry here, its test, and a
line in the docs.

Effects, applied in the table's order:

- ``drop``: a disagreement on these inputs is no evidence at all (the verdict is a hint, with
  the rule's reason, when nothing else is left);
- ``cap``: evidence on these inputs is at most ``cap`` (the first capping rule gives the reason);
- ``last``: among inputs of one severity, the last choice as the evidence's input;
- ``shrink``: no effect on the verdict; the shrinker alone keeps out of the mask.

Most masks list the inputs a rule flags; ``spares`` marks the two whose keyword lists the inputs
it spares instead (``inside`` the stated domain, ``typical`` of the examples' magnitudes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from coherence.engine.inputs import Input
from coherence.engine.stated.degenerate import degenerate, empty_collection_argument, empty_string_argument
from coherence.engine.stated.domain import Domain

Test = Callable[[Input, Domain | None], bool]


@dataclass(frozen=True)
class InputRule:
    name: str  # ``judge``'s keyword for its mask
    effect: str  # drop | cap | last | shrink
    reason: str = ""  # why evidence there is no more than the rule lets it be
    cap: str = "warning"  # the strongest severity evidence on a flagged input may carry
    spares: bool = False  # the mask lists the inputs the rule spares, not those it flags
    # whether an input is flagged, from the input and the stated domain alone (None: the mask
    # comes from the run itself: the outcomes)
    flags: Test | None = None
    active: Callable[[Domain | None], bool] = lambda domain: True  # whether the mask exists at all
    shrink: bool = False  # a counterexample that starts unflagged stays unflagged while it shrinks
    panel_only: bool = False  # applies only to a panel of models: a same-model check never meets it

    def applies(self, panel: bool) -> bool:
        """Whether the rule applies to a check whose alternatives are (``panel``) or are not from
        a panel of models."""
        return panel or not self.panel_only

    def flagged(self, mask: np.ndarray) -> np.ndarray:
        """The inputs this rule flags, from its keyword's mask."""
        return ~mask if self.spares else mask


def _has_domain(domain: Domain | None) -> bool:
    return domain is not None and not domain.empty


def _has_bands(domain: Domain | None) -> bool:
    return domain is not None and bool(domain.bands)


def _has_pairs(domain: Domain | None) -> bool:
    return domain is not None and bool(domain.ordered_pairs)


RULES: tuple[InputRule, ...] = (
    InputRule(
        "inside",
        "drop",
        reason="the programs differ only on inputs outside the stated domain",
        cap="none",
        spares=True,
        flags=lambda inp, domain: domain is not None and not domain.contains(inp),
        active=_has_domain,
        shrink=True,
    ),
    InputRule(
        "yours_slow",
        "cap",
        reason="yours ran out of time where the alternatives outvote it: evidence of slowness (or of a busy machine), not of a wrong result",
        cap="information",
    ),
    InputRule(
        "empty_strings",
        "cap",
        reason="the alternatives outvote yours only on calls with an empty string argument, where the spec rarely says what is right",
        cap="information",
        flags=lambda inp, domain: empty_string_argument(inp),
        shrink=True,
    ),
    InputRule(
        "empty_collections",
        "cap",
        reason="the panel outvotes yours only on calls with an empty list, tuple, set or dict argument, where a short spec rarely says what is right",
        cap="information",
        flags=lambda inp, domain: empty_collection_argument(inp),
        shrink=True,
        panel_only=True,
    ),
    InputRule(
        "degenerate",
        "last",
        flags=lambda inp, domain: degenerate(inp),
        shrink=True,
    ),
    InputRule(
        "typical",
        "last",
        spares=True,
        flags=lambda inp, domain: domain is not None and not domain.typical(inp),
        active=_has_bands,
        shrink=True,
    ),
    InputRule(
        "crossed",
        "shrink",
        flags=lambda inp, domain: domain is not None and bool(domain.crossed(inp)),
        active=_has_pairs,
        shrink=True,
    ),
)

BY_NAME = {rule.name: rule for rule in RULES}
# the rules with a mask of their own among ``judge``'s keywords
JUDGED = tuple(rule for rule in RULES if rule.effect != "shrink")


def rule(name: str) -> InputRule:
    return BY_NAME[name]


def input_masks(
    inputs: Sequence[Input],
    where: Sequence[int] | None = None,
    domain: Domain | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """``judge``'s masks of the rules that read the inputs alone (``flags``), for those the
    domain allows (``active``): each asked only at ``where`` (None: every input), False
    elsewhere (the rest are never a counterexample).  ``names``: these rules alone."""
    at = range(len(inputs)) if where is None else where
    out = {}
    for r in JUDGED:
        if r.flags is None or not r.active(domain) or (names is not None and r.name not in names):
            continue
        mask = np.zeros(len(inputs), dtype=bool)
        for x in at:
            mask[x] = r.flags(inputs[x], domain) != r.spares
        out[r.name] = mask
    return out


def shrink_keeper(start: Input, domain: Domain | None, panel: bool = False) -> Callable[[Input], bool] | None:
    """What a shrunk counterexample keeps of its start: out of every rule's mask it started out
    of (inside the domain, near the examples' magnitudes, not all-empty, no empty string argument,
    ordered intervals; on a ``panel`` of models, no empty collection argument either), so the
    shrunk input carries the verdict its start did."""
    tests = [r.flags for r in RULES if r.shrink and r.flags is not None and r.active(domain) and r.applies(panel)]
    kept = [t for t in tests if not t(start, domain)]
    if not kept:
        return None
    return lambda c: not any(t(c, domain) for t in kept)
