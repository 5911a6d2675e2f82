"""Trust as a calibrated probability: of functions checked like this one, the share that pass their tests.

Raw trust is ``1 - DSDE`` (top-anchored on the user's function, DESIGN.md).  Its ranking is good
(AUROC about 0.8 within a model) but its scale is not a probability: a bug that shows on 1% of the
inputs scores 0.99.  ``calibration.json`` holds monotone (isotonic) maps from DSDE to the share of
functions that passed their benchmark's tests, fit by ``coherence eval --calibrate`` on recorded
corpora; the file names its corpus and the engine that measured it.  The raw DSDE stays in every
result (``dsde``, and ``trust_raw`` = 1 - DSDE).

"Checked like this one" has two strata: a spec that shows worked examples (docstring examples or
the workspace's tests calling the function) and one that does not.  At the same DSDE they are not
equally likely to be right: examples pin down what a bare sentence leaves open, so when every
sample agrees, they less often share one misreading.  On the recorded corpus, one map for both
left HumanEval (examples) at an expected calibration error of 0.08 and MBPP (a sentence) at 0.03;
a map per stratum brings both under 0.04 for models the map has not seen (README, "Trust").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from coherence.engine.inputs.domain import EVIDENCE_ORIGINS

__all__ = [
    "EXAMPLES",
    "NO_EXAMPLES",
    "calibrated_trust",
    "calibration_info",
    "calibration_map",
    "shows_examples",
    "stratum",
]

EXAMPLES = "spec with examples"
NO_EXAMPLES = "spec without examples"


def stratum(examples: bool) -> str:
    return EXAMPLES if examples else NO_EXAMPLES


def shows_examples(origins: Iterable[str]) -> bool:
    """Whether a spec shows worked examples, from where its check's inputs came from: some from
    its docstring's examples or the workspace's tests."""
    return any(o in EVIDENCE_ORIGINS for o in origins)


def _points(points: list[list[float]]) -> tuple[np.ndarray, np.ndarray] | None:
    if len(points) < 2:
        return None
    return np.array([p[0] for p in points], dtype=float), np.array([p[1] for p in points], dtype=float)


@lru_cache(maxsize=1)
def _load() -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(
            resources.files("coherence.engine").joinpath("calibration.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return None
    pooled = _points(data.get("points") or [])
    if pooled is None:
        return None
    data["_maps"] = {"": pooled}
    for name, s in (data.get("strata") or {}).items():
        xy = _points((s or {}).get("points") or [])
        if xy is not None:
            data["_maps"][name] = xy
    return data


def calibrated_trust(dsde: float, examples: bool | None = None) -> float:
    """The calibrated trust for a raw DSDE.  ``examples``: whether the spec shows worked examples
    (None: unknown, the pooled map).  ``1 - DSDE`` when no map is shipped."""
    data = _load()
    if data is None:
        return 1.0 - dsde
    x, y = data["_maps"].get(_name(examples)) or data["_maps"][""]
    return float(np.interp(dsde, x, y))


def calibration_map(examples: bool | None = None) -> str:
    """Which map ``calibrated_trust`` reads for such a spec, as a result names it."""
    data = _load()
    if data is None:
        return "none (trust is 1 - DSDE)"
    name = _name(examples)
    return name if name and name in data["_maps"] else "pooled"


def _name(examples: bool | None) -> str:
    return "" if examples is None else stratum(examples)


def calibration_info() -> dict[str, Any]:
    """What the shipped map was fit on (corpus, engine, expected calibration error)."""
    data = _load() or {}
    info = {k: v for k, v in data.items() if not k.startswith("_") and k not in ("points", "strata")}
    info["strata"] = {
        k: {kk: vv for kk, vv in v.items() if kk != "points"} for k, v in (data.get("strata") or {}).items()
    }
    return info
