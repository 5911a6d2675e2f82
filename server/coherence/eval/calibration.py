"""Fitting the trust calibration map (``coherence eval --calibrate DIR...``).

The map is isotonic: the share of functions that pass their tests can only fall as DSDE grows.
Pool-adjacent-violators over the (DSDE, passed) pairs of every checked task, ties pooled first.
The leave-one-model-out expected calibration error is reported beside the in-sample one: it is
the figure to believe for models the map has not seen.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from coherence.eval.verdicts import ece

CHECKED = ("coherent", "incoherent")


def isotonic_decreasing(x: list[float], y: list[bool]) -> list[tuple[float, float, int]]:
    """(dsde, pass share, count) per block of a non-increasing step fit of ``y`` on ``x``."""
    agg: dict[float, list[float]] = {}
    for xi, yi in zip(x, y):
        a = agg.setdefault(round(float(xi), 6), [0.0, 0])
        a[0] += float(yi)
        a[1] += 1
    blocks: list[list[float]] = []  # [passed, count, x lo, x hi]
    for xi in sorted(agg):
        s, c = agg[xi]
        blocks.append([s, c, xi, xi])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            s2, c2, _, hi = blocks.pop()
            blocks[-1][0] += s2
            blocks[-1][1] += c2
            blocks[-1][3] = hi
    return [((b[2] + b[3]) / 2 if b[2] > 0 else 0.0, b[0] / b[1], int(b[1])) for b in blocks]


def _apply(points: list[tuple[float, float, int]], x: float) -> float:
    return float(np.interp(x, [p[0] for p in points], [p[1] for p in points]))


def _pairs(records: list[dict]) -> list[tuple[str, float, bool]]:
    return [
        (str(r.get("model")), float(r["dsde"]), bool(r.get("candidate0_pass")))
        for r in records
        if r.get("status") in CHECKED and r.get("dsde") is not None
    ]


def fit(records: list[dict], corpus: str, engine: str) -> dict:
    pairs = _pairs(records)
    if len(pairs) < 20:
        raise ValueError(f"too few checked tasks to fit a calibration map ({len(pairs)})")
    points = isotonic_decreasing([p[1] for p in pairs], [p[2] for p in pairs])
    in_sample = ece([_apply(points, p[1]) for p in pairs], [p[2] for p in pairs])
    probs: list[float] = []
    outcomes: list[bool] = []
    models = sorted({p[0] for p in pairs})
    for held in models:
        train = [p for p in pairs if p[0] != held]
        test = [p for p in pairs if p[0] == held]
        if not train or not test:
            continue
        m = isotonic_decreasing([p[1] for p in train], [p[2] for p in train])
        probs += [_apply(m, p[1]) for p in test]
        outcomes += [p[2] for p in test]
    return {
        "what": "isotonic map from top-anchored DSDE to the share of functions passing their benchmark's tests",
        "corpus": corpus,
        "engine": engine,
        "tasks": len(pairs),
        "models": models,
        "ece_in_sample": in_sample,
        "ece_leave_one_model_out": ece(probs, outcomes) if probs else None,
        "ece_raw": ece([1.0 - p[1] for p in pairs], [p[2] for p in pairs]),
        "points": [[round(x, 6), round(p, 6), n] for x, p, n in points],
    }


def fit_dirs(dirs: list[str | Path], engine: str) -> dict:
    """The map fit on every run under ``dirs``; ``engine`` names this engine, and the engines that
    measured the runs (their ``run.json``) are named beside it when they differ."""
    records: list[dict] = []
    runs = []
    engines: set[str] = set()
    for d in dirs:
        for tasks in sorted(Path(d).rglob("tasks.jsonl")):
            runs.append(tasks.parent.name)
            try:
                run = json.loads((tasks.parent / "run.json").read_text(encoding="utf-8"))
                engines.update(run.get("engines") or ([run["engine"]] if run.get("engine") else []))
            except (OSError, ValueError):
                pass
            for line in tasks.read_text(encoding="utf-8").splitlines():
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
    measured = "+".join(sorted(engines))
    return fit(records, corpus=", ".join(runs), engine=measured if measured and measured != engine else engine)
