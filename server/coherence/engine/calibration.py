"""Trust as a calibrated probability: of functions with evidence like this one's, the share that
were right.

Raw trust is ``1 - DSDE`` (top-anchored on the user's function, DESIGN.md).  Its ranking is good
but its scale is not a probability, and it ignores what the user is told: a warning at DSDE 0.2
is far less often right than a hint at the same DSDE.  So trust is the probability that the
function is right given its DSDE, its severity, its spec stratum (a spec that shows worked
examples or not) and whether a panel of models checked it.  "Right" is the eval's label: the
function passes its benchmark's tests, and the reference solution does not side with the
alternatives on the counterexample shown (``coherence.eval.labels.right``).

``calibration.json`` holds monotone (isotonic) maps from DSDE to that share, one per cell of a
tree: every function, then per severity, then per severity and stratum, then per severity,
stratum and panel.  A cell's map is blended with its parent's, weighted ``n / (n + shrinkage)``
by the cell's task count, so a small cell leans on the coarser one above it; ``coherence eval
--calibrate`` fits the maps and picks the shrinkage leave-one-model-out.  Trust stays a
re-mapping of DSDE: within a cell it can only fall as DSDE grows.  The raw DSDE stays in every
result (``dsde``, and ``trust_raw`` = 1 - DSDE).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from coherence.engine.stated.domain import EVIDENCE_ORIGINS

if TYPE_CHECKING:
    from coherence.engine.result import CheckResult

__all__ = [
    "EXAMPLES",
    "NO_EXAMPLES",
    "calibrate",
    "calibrated_trust",
    "calibration_info",
    "calibration_map",
    "cell_path",
    "maps_of",
    "shows_examples",
    "stratum",
]

EXAMPLES = "spec with examples"
NO_EXAMPLES = "spec without examples"
PANEL = "panel of models"
ONE_MODEL = "one model"
SEP = " · "


def stratum(examples: bool) -> str:
    return EXAMPLES if examples else NO_EXAMPLES


def panel_name(panel: bool) -> str:
    return PANEL if panel else ONE_MODEL


def shows_examples(origins: Iterable[str]) -> bool:
    """Whether a spec shows worked examples, from where its check's inputs came from: some from
    its docstring's examples or the workspace's tests."""
    return any(o in EVIDENCE_ORIGINS for o in origins)


def cell_path(severity: str | None, examples: bool | None, panel: bool | None) -> list[str]:
    """The cells a function falls in, coarsest first (the root "" holds every function): its
    severity, then its stratum, then whether a panel checked it.  A part not known (None) ends
    the path there."""
    path = [""]
    if severity is None:
        return path
    path.append(severity)
    if examples is None:
        return path
    path.append(path[-1] + SEP + stratum(examples))
    if panel is None:
        return path
    path.append(path[-1] + SEP + panel_name(panel))
    return path


def _points(points: list[list[float]]) -> tuple[np.ndarray, np.ndarray] | None:
    if not points:
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
    maps = maps_of(data)
    if "" not in maps:
        return None
    data["_maps"] = maps
    return data


def maps_of(data: dict[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    """The cells of a calibration file as ``blend`` reads them: name -> (DSDE, trust, tasks)."""
    maps = {}
    for name, cell in (data.get("cells") or {}).items():
        xy = _points((cell or {}).get("points") or [])
        if xy is not None:
            maps[name] = (xy[0], xy[1], int(cell.get("tasks") or 0))
    return maps


def blend(maps: dict[str, tuple[Any, Any, int]], path: list[str], dsde: float, shrinkage: float) -> tuple[float, str]:
    """The trust of a DSDE along ``path`` (``cell_path``), and the finest cell that has a map:
    each cell's map blended with its parent's blend, weighted by ``n / (n + shrinkage)``."""
    x, y, _ = maps[""]
    p = float(np.interp(dsde, x, y))
    finest = ""
    for name in path[1:]:
        if name not in maps:
            break
        x, y, n = maps[name]
        w = n / (n + shrinkage) if shrinkage > 0 else 1.0
        p = w * float(np.interp(dsde, x, y)) + (1.0 - w) * p
        finest = name
    return min(1.0, max(0.0, p)), finest


def calibrated_trust(
    dsde: float, examples: bool | None = None, severity: str | None = None, panel: bool | None = None
) -> float:
    """The calibrated trust for a raw DSDE, given what is known of the check: whether its spec
    shows worked examples, its severity, whether a panel checked it (None: unknown, a coarser
    map).  ``1 - DSDE`` when no map is shipped."""
    data = _load()
    if data is None:
        return 1.0 - dsde
    return blend(data["_maps"], cell_path(severity, examples, panel), dsde, float(data.get("shrinkage") or 0.0))[0]


def calibration_map(examples: bool | None = None, severity: str | None = None, panel: bool | None = None) -> str:
    """The finest cell whose map ``calibrated_trust`` reads for such a check, as a result names
    it ("warning · spec with examples · one model"; "every function" for the root)."""
    data = _load()
    if data is None:
        return "none (trust is 1 - DSDE)"
    _, finest = blend(data["_maps"], cell_path(severity, examples, panel), 0.0, float(data.get("shrinkage") or 0.0))
    return finest or "every function"


def calibrate(result: CheckResult, examples: bool, panel: bool) -> None:
    """Trust of a judged result, once its severity is final: ``trust`` and the cell it comes
    from (``trust_map``); ``dsde`` and ``trust_raw`` are left as they are."""
    if result.dsde is None:
        return
    result.trust = calibrated_trust(result.dsde, examples, result.severity, panel)
    # A contradicted worked example bounds trust whatever the map says (verdict.decide.contradicted).
    if isinstance(result.evidence, dict) and result.evidence.get("trust_at_most") is not None:
        result.trust = min(result.trust, float(result.evidence["trust_at_most"]))
    result.trust_map = calibration_map(examples, result.severity, panel)


def calibration_info() -> dict[str, Any]:
    """What the shipped maps were fit on (corpus, engine, label, held-out figures), without the
    maps themselves."""
    data = _load() or {}
    info = {k: v for k, v in data.items() if not k.startswith("_") and k != "cells"}
    info["cells"] = {
        k: {kk: vv for kk, vv in v.items() if kk != "points"} for k, v in (data.get("cells") or {}).items()
    }
    return info
