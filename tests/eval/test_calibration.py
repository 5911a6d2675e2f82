"""Trust calibrated on what the user is told: the isotonic fit, the tree of cells (severity, spec
stratum, panel) with its leave-one-model-out choices, the label it is fit on, the engine reading
the maps exactly as the fit scored them, the shipped file, and ``coherence eval --calibrate``."""

import json
import random
import subprocess
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence.engine import calibration as shipped
from coherence.engine.calibration import EXAMPLES, NO_EXAMPLES, blend, calibrated_trust, calibration_map, maps_of
from coherence.engine.result import SEVERITIES
from coherence.eval.calibration import fit, isotonic_decreasing, rows_of, spec_examples
from coherence.eval.labels import right
from tests.support.zygote import coherence_argv

# the share right per severity the synthetic corpus draws from (falling with DSDE within each)
BASE = {"warning": 0.15, "information": 0.55, "hint": 0.8, "none": 0.97}


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_isotonic_fit_never_rises_and_keeps_every_point(points):
    fitted = isotonic_decreasing([x for x, _ in points], [y for _, y in points])
    shares = [s for _, s, _ in fitted]
    assert all(a >= b for a, b in pairwise(shares))
    assert sum(n for _, _, n in fitted) == len(points)
    # pooling keeps the overall share right
    assert abs(sum(s * n for _, s, n in fitted) / len(points) - sum(y for _, y in points) / len(points)) < 1e-9


def _records(rng, model, benchmark, n, *, examples=True, base=BASE, trust=0.6):
    """Checked tasks whose severity, not their DSDE, says most about whether they are right."""
    out = []
    for _ in range(n):
        sev = rng.choices(SEVERITIES, weights=(1, 1, 2, 6))[0]
        dsde = 0.0 if sev == "none" else rng.uniform(0.02, 0.6)
        ok = rng.random() < base[sev] * (1 - dsde / 2)
        rec = {
            "model": model,
            "benchmark": benchmark,
            "status": "coherent" if sev == "none" else "incoherent",
            "severity": sev,
            "dsde": dsde,
            "trust": trust if sev != "none" else 0.97,
            "candidate0_pass": ok,
            "input_origins": {"doctest": 3, "mutation": 997} if examples else {"annotation": 5, "mutation": 995},
        }
        if sev != "none":
            rec["counterexample"] = {"call": "f(1)", "reference": "yours" if ok else "theirs"}
        out.append(rec)
    return out


def test_right_means_passing_and_the_reference_not_siding_with_the_alternatives():
    assert right({"candidate0_pass": True})
    assert right({"candidate0_pass": True, "counterexample": {"reference": "yours"}})
    assert right({"candidate0_pass": True, "counterexample": {"reference": "rejects"}})
    # passes the tests, but the reference gives what the alternatives give on the input shown
    assert not right({"candidate0_pass": True, "counterexample": {"reference": "theirs"}})
    assert not right({"candidate0_pass": False, "counterexample": {"reference": "yours"}})


@pytest.mark.slow  # a research fit and a plot; the CLI fit runs by default
def test_trust_follows_the_severity_held_out_where_dsde_alone_cannot():
    rng = random.Random(7)
    records = []
    for model in "abcde":
        records += _records(rng, model, "HumanEval", 400)
    data, rows = fit(records, corpus="synthetic", engine="test")
    assert data["depth"] >= 1 and set(data["held_out_choices"]) == set("abcde")
    for sev, c in data["held_out_by_severity"]["HumanEval"].items():
        assert abs(c["trust"] - c["right"]) <= 0.05, (sev, c)
        assert c["trust_recorded"] == pytest.approx(0.97 if sev == "none" else 0.6)
    table = data["held_out_by_severity"]["HumanEval"]
    assert table["warning"]["trust"] < table["information"]["trust"] < table["hint"]["trust"] < table["none"]["trust"]
    # every function has a held-out trust, from maps that never saw its model
    assert len(rows) == len(records) and all(0 <= r["trust"] <= 1 for r in rows)
    per_model = data["held_out_by_model"]["a"]["HumanEval"]
    assert per_model["n"] == 400 and per_model["ece"] is not None and per_model["auroc_dsde"] is not None


def test_the_engine_reads_the_maps_as_the_fit_scored_them():
    rng = random.Random(5)
    records = []
    for i, model in enumerate("abcd"):
        # 120 a model and benchmark: the same depth, shrinkage and 21 cells as 250, in half the time
        records += _records(rng, model, "HumanEval", 120) + _records(
            rng, model, "MBPP", 120, examples=False, base={k: v * (0.7 + 0.05 * i) for k, v in BASE.items()}
        )
    data, _ = fit(records, corpus="synthetic", engine="test")
    maps = maps_of(json.loads(json.dumps(data)))  # through JSON, as the engine loads it
    for row in rows_of(records)[:200]:
        path = shipped.cell_path(row.severity, row.examples, row.panel)[: data["depth"] + 1]
        trust, cell = blend(maps, path, row.dsde, data["shrinkage"])
        assert 0 <= trust <= 1 and cell in data["cells"]
        if data["shrinkage"] == 0 and data["depth"] >= 1:  # the finest cell's own map
            x, y, _ = maps[cell]
            assert trust == pytest.approx(float(np.interp(row.dsde, x, y)))


def test_a_small_cell_leans_on_its_parent():
    maps = {
        "": (np.array([0.0, 1.0]), np.array([0.9, 0.1]), 1000),
        "warning": (np.array([0.0, 1.0]), np.array([0.2, 0.0]), 10),
    }
    alone, _ = blend(maps, ["", "warning"], 0.0, 0.0)
    shrunk, cell = blend(maps, ["", "warning"], 0.0, 90.0)
    assert alone == pytest.approx(0.2) and cell == "warning"
    assert shrunk == pytest.approx(0.1 * 0.2 + 0.9 * 0.9)  # 10 / (10 + 90) of its own map
    # a cell the file lacks ends the path: its parent's map
    assert blend(maps, ["", "information", "information · spec with examples"], 0.0, 90.0) == (pytest.approx(0.9), "")


def test_too_few_models_keep_one_map():
    rng = random.Random(3)
    data, _ = fit(_records(rng, "a", "MBPP", 300) + _records(rng, "b", "MBPP", 300), corpus="s", engine="t")
    assert data["depth"] == 0 and list(data["cells"]) == [""] and data["held_out_choices"] == {}


def test_a_spec_shows_examples_when_an_input_came_from_its_examples_or_tests():
    assert spec_examples({"input_origins": {"doctest": 1, "mutation": 9}})
    assert spec_examples({"input_origins": {"test": 2}})
    assert not spec_examples({"input_origins": {"annotation": 3, "default": 1, "mutation": 9}})
    assert not spec_examples({})


def test_the_shipped_maps_name_their_corpus_and_meet_the_held_out_target():
    info = shipped.calibration_info()
    assert info["corpus"] and info["engine"] and len(info["models"]) == 8 and "reference" in info["label"]
    # the target: each severity with at least 20 functions on a benchmark is calibrated held out
    for bench, table in info["held_out_by_severity"].items():
        for sev, c in table.items():
            if c["n"] >= 20:
                assert abs(c["trust"] - c["right"]) <= 0.05, (bench, sev, c)
    # what the user is told moves trust: at one DSDE a warning is trusted less than a hint
    for examples in (True, False):
        assert calibrated_trust(0.2, examples, "warning", False) < calibrated_trust(0.2, examples, "hint", False)
        assert calibrated_trust(0.0, examples, "none", False) > 0.5
        for sev in SEVERITIES:  # within a cell trust can only fall as DSDE grows
            trusts = [calibrated_trust(d / 20, examples, sev, False) for d in range(21)]
            assert all(a >= b - 1e-12 for a, b in pairwise(trusts)), (sev, examples)
    assert calibration_map() == "every function"
    assert calibration_map(True, "warning", False).startswith("warning")


def test_the_cli_fits_and_writes_the_maps_and_the_report(tmp_path):
    rng = random.Random(11)
    run = tmp_path / "runs" / "HumanEval-x-signature"
    run.mkdir(parents=True)
    records = []
    for model in ("a", "b", "c", "d"):
        records += _records(rng, model, "HumanEval", 75) + _records(rng, model, "MBPP", 75, examples=False)
    (run / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    out = tmp_path / "cal"
    proc = subprocess.run(
        [*coherence_argv(), "eval", "--calibrate", str(tmp_path / "runs"), "--out", str(out)] + ["--no-plots"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "leave-one-model-out" in proc.stderr and str(out / "calibration.json") in proc.stderr
    data = json.loads((out / "calibration.json").read_text())
    assert data["tasks"] == 600 and data["corpus"] == "HumanEval-x-signature"
    report = (out / "calibration.md").read_text()
    assert "| HumanEval | warning | " in report and "| MBPP | none | " in report
    assert all(f"| {m} | MBPP | 75 |" in report for m in "abcd")


@pytest.mark.slow  # a research fit and a plot; the CLI fit runs by default
def test_the_reliability_plot_draws_one_panel_per_severity(tmp_path):
    pytest.importorskip("matplotlib")
    from coherence.eval.plots import reliability_by_severity

    rng = random.Random(2)
    records = []
    for model in "abcd":
        records += _records(rng, model, "HumanEval", 120)
    _, rows = fit(records, corpus="s", engine="t")
    reliability_by_severity(rows, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cells_are_named_by_severity_then_stratum_then_panel():
    assert shipped.cell_path("hint", True, False) == [
        "",
        "hint",
        f"hint · {EXAMPLES}",
        f"hint · {EXAMPLES} · one model",
    ]
    assert shipped.cell_path("warning", False, True)[-1] == f"warning · {NO_EXAMPLES} · panel of models"
    assert shipped.cell_path("warning", None, True) == ["", "warning"]  # an unknown part ends the path
    assert shipped.cell_path(None, True, True) == [""]
