"""Trust as a calibrated probability: of functions checked like this one, the share that pass their tests.

Raw trust is ``1 - DSDE`` (top-anchored on the user's function, DESIGN.md).  Its ranking is good
(AUROC about 0.8 within a model) but its scale is not a probability: a bug that shows on 1% of the
inputs scores 0.99.  ``calibration.json`` holds a monotone (isotonic) map from DSDE to the share of
functions that passed their benchmark's tests, fit by ``coherence eval --calibrate`` on recorded
corpora; the file names its corpus and the engine that measured it.  The raw DSDE stays in every
result (``dsde``, and ``trust_raw`` = 1 - DSDE).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["calibrated_trust", "calibration_info"]


@lru_cache(maxsize=1)
def _load() -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(
            resources.files("coherence.engine").joinpath("calibration.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return None
    points = data.get("points") or []
    if len(points) < 2:
        return None
    data["_x"] = np.array([p[0] for p in points], dtype=float)
    data["_y"] = np.array([p[1] for p in points], dtype=float)
    return data


def calibrated_trust(dsde: float) -> float:
    """The calibrated trust for a raw DSDE (1 - DSDE when no map is shipped)."""
    data = _load()
    if data is None:
        return 1.0 - dsde
    return float(np.interp(dsde, data["_x"], data["_y"]))


def calibration_info() -> dict[str, Any]:
    """What the shipped map was fit on (corpus, engine, expected calibration error)."""
    data = _load() or {}
    return {k: v for k, v in data.items() if not k.startswith("_") and k != "points"}
