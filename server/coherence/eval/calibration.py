"""Fitting the trust calibration maps (``coherence eval --calibrate DIR...``).

Each map is isotonic: the share of functions that pass their tests can only fall as DSDE grows.
Pool-adjacent-violators over the (DSDE, passed) pairs of every checked task, ties pooled first.
One map per stratum of ``engine.calibration`` (a spec with worked examples, one without), and a
pooled map for a result whose stratum is unknown.

The leave-one-model-out expected calibration error is reported beside the in-sample one, pooled
and per benchmark: it is the figure to believe for models the maps have not seen.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from coherence.engine.calibration import shows_examples, stratum
from coherence.eval.verdicts import ece

CHECKED = ("coherent", "incoherent")
MIN_STRATUM = 50  # tasks a stratum needs for a map of its own; fewer use the pooled map


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


def spec_examples(record: dict) -> bool:
    """Whether the checked spec showed worked examples: some input came from its docstring's
    examples or the workspace's tests (as ``engine.scoring`` decides it)."""
    return shows_examples(record.get("input_origins") or {})


def _pairs(records: list[dict]) -> list[tuple[str, str, str, float, bool]]:
    """(model, benchmark, stratum, dsde, passed) of every checked task."""
    return [
        (
            str(r.get("model")),
            str(r.get("benchmark") or ""),
            stratum(spec_examples(r)),
            float(r["dsde"]),
            bool(r.get("candidate0_pass")),
        )
        for r in records
        if r.get("status") in CHECKED and r.get("dsde") is not None
    ]


def _maps(pairs: list[tuple[str, str, str, float, bool]]) -> dict[str, list[tuple[float, float, int]]]:
    """The pooled map (key "") and one per stratum with enough tasks."""
    maps = {"": isotonic_decreasing([p[3] for p in pairs], [p[4] for p in pairs])}
    for s in sorted({p[2] for p in pairs}):
        sub = [p for p in pairs if p[2] == s]
        if len(sub) >= MIN_STRATUM:
            maps[s] = isotonic_decreasing([p[3] for p in sub], [p[4] for p in sub])
    return maps


def _predict(maps: dict, pair: tuple[str, str, str, float, bool]) -> float:
    return _apply(maps.get(pair[2]) or maps[""], pair[3])


def _ece_by_benchmark(pairs: list, probs: list[float]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for bench in sorted({p[1] for p in pairs}):
        idx = [i for i, p in enumerate(pairs) if p[1] == bench]
        out[bench] = ece([probs[i] for i in idx], [pairs[i][4] for i in idx])
    return out


def fit(records: list[dict], corpus: str, engine: str) -> dict:
    pairs = _pairs(records)
    if len(pairs) < 20:
        raise ValueError(f"too few checked tasks to fit a calibration map ({len(pairs)})")
    maps = _maps(pairs)
    in_sample = [_predict(maps, p) for p in pairs]
    held_out: list[float | None] = [None] * len(pairs)
    models = sorted({p[0] for p in pairs})
    for held in models:
        train = [p for p in pairs if p[0] != held]
        if len(train) < 20:
            continue
        m = _maps(train)
        for i, p in enumerate(pairs):
            if p[0] == held:
                held_out[i] = _predict(m, p)
    lomo = [i for i, v in enumerate(held_out) if v is not None]
    lomo_pairs = [pairs[i] for i in lomo]
    lomo_probs = [float(held_out[i]) for i in lomo]  # type: ignore[arg-type]
    outcomes = [p[4] for p in pairs]

    return {
        "what": "isotonic maps from top-anchored DSDE to the share of functions passing their benchmark's tests, "
        "one per stratum (a spec with worked examples, one without) and one pooled",
        "corpus": corpus,
        "engine": engine,
        "tasks": len(pairs),
        "models": models,
        "ece_in_sample": ece(in_sample, outcomes),
        "ece_leave_one_model_out": ece(lomo_probs, [p[4] for p in lomo_pairs]) if lomo else None,
        "ece_raw": ece([1.0 - p[3] for p in pairs], outcomes),
        "ece_by_benchmark": {
            "in_sample": _ece_by_benchmark(pairs, in_sample),
            "leave_one_model_out": _ece_by_benchmark(lomo_pairs, lomo_probs) if lomo else {},
            "pooled_map_in_sample": _ece_by_benchmark(pairs, [_apply(maps[""], p[3]) for p in pairs]),
        },
        "strata": {
            s: {
                "tasks": sum(1 for p in pairs if p[2] == s),
                "benchmarks": sorted({p[1] for p in pairs if p[2] == s}),
                "points": [[round(x, 6), round(q, 6), n] for x, q, n in pts],
            }
            for s, pts in maps.items()
            if s
        },
        "points": [[round(x, 6), round(q, 6), n] for x, q, n in maps[""]],
    }


def fit_dirs(dirs: list[str | Path], engine: str) -> dict:
    """The maps fit on every run under ``dirs``; ``engine`` names this engine, and the engines that
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
