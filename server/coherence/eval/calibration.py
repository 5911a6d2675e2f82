"""Fitting trust (``coherence eval --calibrate DIR...``): the probability that a function is right
given its DSDE, its severity, its spec stratum and whether a panel checked it.

"Right" is ``eval.labels.right``: candidate 0 passes the benchmark's tests and the reference does
not side with the alternatives on the counterexample shown.

The maps form the tree of ``engine.calibration.cell_path``: every function, per severity, per
severity and stratum, per severity, stratum and panel.  Each cell's map is isotonic in DSDE
(pool-adjacent-violators, ties pooled first), and the engine blends it with its parent's by
``n / (n + shrinkage)``.  Two choices are made from the data, both leave-one-model-out: the
shrinkage, and how deep the tree goes.  The figures reported are nested: for each held-out model
the choice is made again on the other models alone, so no held-out figure saw its model.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coherence.engine.calibration import blend, cell_path, shows_examples
from coherence.engine.result import SEVERITIES
from coherence.eval.labels import right
from coherence.eval.stats import auroc
from coherence.eval.verdicts import ece

CHECKED = ("coherent", "incoherent", "nondeterministic")
# The candidates for the choices made leave-one-model-out; a coarser tree and more shrinkage
# come first, so a tie keeps the simpler map.
DEPTHS = (0, 1, 2, 3)  # 0: one map for every function; 1: per severity; 2: and stratum; 3: and panel
SHRINKAGES = (1000.0, 300.0, 100.0, 30.0, 10.0, 0.0)
MIN_BLOCKS = (300, 100, 30, 10, 1)  # never one step per cell: trust stays a map of DSDE within each
MIN_MODELS = 3  # a leave-one-model-out choice needs at least this many models to train on


@dataclass(frozen=True)
class Row:
    """One checked function as the fit sees it."""

    model: str
    benchmark: str
    severity: str
    examples: bool
    panel: bool
    dsde: float
    right: bool
    trust: float | None  # the trust the run recorded (the engine's map at the time)

    def path(self, depth: int) -> list[str]:
        return cell_path(self.severity, self.examples, self.panel)[: depth + 1]


def spec_examples(record: dict) -> bool:
    """Whether the checked spec showed worked examples: some input came from its docstring's
    examples or the workspace's tests (as the engine decides it)."""
    return shows_examples(record.get("input_origins") or {})


def rows_of(records: list[dict]) -> list[Row]:
    return [
        Row(
            model=str(r.get("model")),
            benchmark=str(r.get("benchmark") or ""),
            severity=str(r.get("severity") or "none"),
            examples=spec_examples(r),
            panel=bool(r.get("panel")),
            dsde=float(r["dsde"]),
            right=right(r),
            trust=r.get("trust"),
        )
        for r in records
        if r.get("status") in CHECKED and r.get("dsde") is not None
    ]


def isotonic_decreasing(x: list[float], y: list[bool], min_block: int = 1) -> list[tuple[float, float, int]]:
    """(dsde, share right, count) per block of a non-increasing step fit of ``y`` on ``x``; a block
    of fewer than ``min_block`` functions is pooled with its neighbour (a step resting on a few
    functions is noise that a held-out model does not repeat)."""
    agg: dict[float, list[float]] = {}
    for xi, yi in zip(x, y):
        a = agg.setdefault(round(float(xi), 6), [0.0, 0])
        a[0] += float(yi)
        a[1] += 1
    blocks: list[list[float]] = []  # [right, count, x lo, x hi]
    for xi in sorted(agg):
        s, c = agg[xi]
        blocks.append([s, c, xi, xi])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            s2, c2, _, hi = blocks.pop()
            blocks[-1][0] += s2
            blocks[-1][1] += c2
            blocks[-1][3] = hi
    while len(blocks) > 1 and (i := next((j for j, b in enumerate(blocks) if b[1] < min_block), -1)) >= 0:
        j = i + 1 if i + 1 < len(blocks) else i - 1  # adjacent blocks pool into a non-increasing fit
        lo, hi = min(i, j), max(i, j)
        blocks[lo] = [blocks[lo][0] + blocks[hi][0], blocks[lo][1] + blocks[hi][1], blocks[lo][2], blocks[hi][3]]
        del blocks[hi]
    return [((b[2] + b[3]) / 2 if b[2] > 0 else 0.0, b[0] / b[1], int(b[1])) for b in blocks]


Maps = dict[str, tuple[np.ndarray, np.ndarray, int]]


def fit_cells(rows: list[Row], depth: int = 3, min_block: int = 1) -> dict[str, list[tuple[float, float, int]]]:
    """The isotonic map of every cell down to ``depth`` that holds any row."""
    by_cell: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        for name in r.path(depth):
            by_cell[name].append(r)
    return {
        name: isotonic_decreasing([r.dsde for r in rs], [r.right for r in rs], min_block)
        for name, rs in by_cell.items()
    }


def as_maps(cells: dict[str, list[tuple[float, float, int]]]) -> Maps:
    """The cells as ``engine.calibration.blend`` reads them."""
    return {
        name: (np.array([p[0] for p in pts]), np.array([p[1] for p in pts]), sum(p[2] for p in pts))
        for name, pts in cells.items()
    }


def predict(maps: Maps, rows: list[Row], choice: Choice) -> list[float]:
    """Trust of each row as the engine computes it (``blend``), the tree cut at the choice's depth."""
    return [blend(maps, r.path(choice.depth), r.dsde, choice.shrinkage)[0] for r in rows]


def brier(probs: list[float], rows: list[Row]) -> float:
    return sum((p - r.right) ** 2 for p, r in zip(probs, rows)) / max(1, len(rows))


@dataclass(frozen=True)
class Choice:
    """What is chosen leave-one-model-out: how deep the tree goes, how much a cell leans on its
    parent, and the fewest functions a step of a map rests on."""

    depth: int
    shrinkage: float
    min_block: int

    def to_dict(self) -> dict:
        return {"depth": self.depth, "shrinkage": self.shrinkage, "min_block": self.min_block}


def candidates() -> list[Choice]:
    """Coarsest first, so that a tie keeps the simpler map."""
    out = []
    for block in MIN_BLOCKS:
        out.append(Choice(0, SHRINKAGES[0], block))
        out += [Choice(d, k, block) for d in DEPTHS[1:] for k in SHRINKAGES]
    return out


def group_gap(probs: list[float], rows: list[Row]) -> float:
    """The mean over functions of |mean trust - share right| of their cell (severity, stratum,
    panel): calibration where the user reads it, per kind of verdict."""
    sums: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for p, r in zip(probs, rows):
        s = sums[(r.severity, r.examples, r.panel)]
        s[0] += p
        s[1] += r.right
    return sum(abs(a - b) for a, b in sums.values()) / max(1, len(rows))


def choose(rows: list[Row]) -> tuple[Choice, float]:
    """The choice with the lowest held-out score leave-one-model-out over ``rows``' models: the
    Brier score plus ``group_gap``, so a choice is both sharp and calibrated per severity."""
    models = sorted({r.model for r in rows})
    folds = [([r for r in rows if r.model != m], [r for r in rows if r.model == m]) for m in models]
    held = [r for _, test in folds for r in test]
    fitted = {b: [as_maps(fit_cells(train, DEPTHS[-1], b)) for train, _ in folds] for b in MIN_BLOCKS}
    best: tuple[Choice, float] | None = None
    for c in candidates():
        probs = [p for maps, (_, test) in zip(fitted[c.min_block], folds) for p in predict(maps, test, c)]
        score = brier(probs, held) + group_gap(probs, held)
        if best is None or score < best[1] - 1e-12:
            best = (c, score)
    assert best is not None
    return best


def held_out(rows: list[Row]) -> tuple[list[float | None], dict[str, dict]]:
    """Trust of each row from maps fit without its model, with the choice made again
    leave-one-model-out on the other models alone (nested), and the choice of each fold."""
    out: list[float | None] = [None] * len(rows)
    chosen: dict[str, dict] = {}
    models = sorted({r.model for r in rows})
    for m in models:
        train = [r for r in rows if r.model != m]
        if len({r.model for r in train}) < MIN_MODELS:
            continue
        c, _ = choose(train)
        maps = as_maps(fit_cells(train, c.depth, c.min_block))
        idx = [i for i, r in enumerate(rows) if r.model == m]
        for i, p in zip(idx, predict(maps, [rows[i] for i in idx], c)):
            out[i] = p
        chosen[m] = c.to_dict()
    return out, chosen


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def by_severity(rows: list[Row], probs: list[float | None]) -> dict[str, dict[str, dict]]:
    """Per benchmark and severity: functions, mean trust, share right (and the recorded trust's
    mean beside it)."""
    out: dict[str, dict[str, dict]] = {}
    for bench in sorted({r.benchmark for r in rows}):
        out[bench] = {}
        for sev in SEVERITIES:
            held = [p for r, p in zip(rows, probs) if r.benchmark == bench and r.severity == sev and p is not None]
            idx = [i for i, r in enumerate(rows) if r.benchmark == bench and r.severity == sev and probs[i] is not None]
            if not idx:
                continue
            recorded = [t for i in idx if (t := rows[i].trust) is not None]
            out[bench][sev] = {
                "n": len(idx),
                "trust": _r(sum(held) / len(held)),
                "right": _r(sum(rows[i].right for i in idx) / len(idx)),
                "trust_recorded": _r(sum(recorded) / len(recorded)) if recorded else None,
            }
    return out


def by_model(rows: list[Row], probs: list[float | None]) -> dict[str, dict[str, dict]]:
    """Per model and benchmark: the per-severity table, ECE, and AUROC for predicting a wrong
    function, of DSDE, the recorded trust and the held-out trust."""
    out: dict[str, dict[str, dict]] = {}
    for m in sorted({r.model for r in rows}):
        out[m] = {}
        for bench in sorted({r.benchmark for r in rows if r.model == m}):
            idx = [i for i, r in enumerate(rows) if r.model == m and r.benchmark == bench and probs[i] is not None]
            if not idx:
                continue
            sub = [rows[i] for i in idx]
            p = [float(probs[i]) for i in idx]  # type: ignore[arg-type]
            wrong = [not r.right for r in sub]
            rec = [r for r in sub if r.trust is not None]
            out[m][bench] = {
                "n": len(sub),
                "severity": by_severity(sub, p)[bench],  # type: ignore[arg-type]
                "ece": ece(p, [r.right for r in sub]),
                "ece_recorded": ece([float(r.trust) for r in rec], [r.right for r in rec]) if rec else None,  # type: ignore[arg-type]
                "auroc_dsde": _r(auroc([r.dsde for r in sub], wrong)),
                "auroc_trust": _r(auroc([-x for x in p], wrong)),
                "auroc_trust_recorded": _r(auroc([-float(r.trust) for r in rec], [not r.right for r in rec]))  # type: ignore[arg-type]
                if rec
                else None,
            }
    return out


def reliability_rows(rows: list[Row], probs: list[float | None]) -> list[dict]:
    """What the reliability plot draws: per row, its benchmark, severity, held-out and recorded
    trust and label."""
    return [
        {"benchmark": r.benchmark, "severity": r.severity, "trust": p, "recorded": r.trust, "right": r.right}
        for r, p in zip(rows, probs)
        if p is not None
    ]


def fit(records: list[dict], corpus: str, engine: str) -> tuple[dict, list[dict]]:
    """The shipped maps (shrinkage and depth chosen leave-one-model-out on every model) with the
    nested held-out figures, and the held-out trust of every function (``reliability_rows``)."""
    rows = rows_of(records)
    if len(rows) < 20:
        raise ValueError(f"too few checked tasks to fit a calibration map ({len(rows)})")
    models = sorted({r.model for r in rows})
    if len(models) > MIN_MODELS:
        choice, score = choose(rows)
    else:  # too few models to choose out of sample: the coarsest map
        choice, score = Choice(DEPTHS[0], SHRINKAGES[0], MIN_BLOCKS[-1]), float("nan")
    cells = fit_cells(rows, choice.depth, choice.min_block)
    maps = as_maps(cells)
    in_sample = predict(maps, rows, choice)
    probs, chosen = held_out(rows)
    known = [(r, p) for r, p in zip(rows, probs) if p is not None]
    lomo_ece = {
        b: ece([p for r, p in known if r.benchmark == b], [r.right for r, _ in known if r.benchmark == b])
        for b in sorted({r.benchmark for r, _ in known})
    }
    data = {
        "what": "isotonic maps from top-anchored DSDE to the share of functions that were right, one per cell "
        "(every function; per severity; and spec stratum; and panel), each blended with its parent's by "
        "n / (n + shrinkage)",
        "label": "right: passes its benchmark's tests, and the reference does not side with the alternatives "
        "on the counterexample shown",
        "corpus": corpus,
        "engine": engine,
        "tasks": len(rows),
        "models": models,
        "shrinkage": choice.shrinkage,
        "depth": choice.depth,
        "min_block": choice.min_block,
        "score_leave_one_model_out": _r(score) if not math.isnan(score) else None,
        "ece_in_sample": ece(in_sample, [r.right for r in rows]),
        "ece_leave_one_model_out": lomo_ece,
        "held_out_choices": chosen,
        "held_out_by_severity": by_severity(rows, probs),
        "held_out_by_model": by_model(rows, probs),
        "cells": {
            name: {
                "tasks": sum(p[2] for p in pts),
                "points": [[round(x, 6), round(q, 6), n] for x, q, n in pts],
            }
            for name, pts in sorted(cells.items())
        },
    }
    return data, reliability_rows(rows, probs)


def read_dirs(dirs: list[str | Path]) -> tuple[list[dict], list[str], set[str]]:
    """Every record of every run under ``dirs``, the runs' names, and the engines that measured
    them (their ``run.json``)."""
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
    return records, runs, engines


def fit_dirs(dirs: list[str | Path], engine: str) -> tuple[dict, list[dict]]:
    """``fit`` on every run under ``dirs``; ``engine`` names this engine, and the engines that
    measured the runs are named instead when they differ."""
    records, runs, engines = read_dirs(dirs)
    measured = "+".join(sorted(engines))
    return fit(records, corpus=", ".join(runs), engine=measured if measured and measured != engine else engine)
