"""The trust calibration maps: the isotonic fit, one map per stratum (a spec with worked examples,
one without), their held-out error per benchmark, the shipped file, and ``coherence eval --calibrate``."""

import json
import random
import subprocess
import sys
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from coherence.engine import calibration as shipped
from coherence.engine.calibration import EXAMPLES, NO_EXAMPLES, calibrated_trust, calibration_map
from coherence.eval.calibration import MIN_STRATUM, fit, isotonic_decreasing, spec_examples


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60))
def test_isotonic_fit_never_rises_and_keeps_every_point(points):
    fitted = isotonic_decreasing([x for x, _ in points], [y for _, y in points])
    shares = [s for _, s, _ in fitted]
    assert all(a >= b for a, b in pairwise(shares))
    assert sum(n for _, _, n in fitted) == len(points)
    # pooling keeps the overall pass share
    assert abs(sum(s * n for _, s, n in fitted) / len(points) - sum(y for _, y in points) / len(points)) < 1e-9


def _records(rng, model, benchmark, examples, n, pass_at_zero):
    """Tasks whose pass share falls with DSDE from ``pass_at_zero``."""
    out = []
    for _ in range(n):
        dsde = 0.0 if rng.random() < 0.6 else rng.random()
        out.append(
            {
                "model": model,
                "benchmark": benchmark,
                "status": "coherent" if dsde == 0 else "incoherent",
                "dsde": dsde,
                "candidate0_pass": rng.random() < pass_at_zero * (1 - dsde),
                "input_origins": {"doctest": 3, "mutation": 997} if examples else {"annotation": 5, "mutation": 995},
            }
        )
    return out


def test_each_stratum_gets_its_own_map_and_a_held_out_error_per_benchmark():
    rng = random.Random(7)
    records = []
    for model in ("a", "b", "c"):
        records += _records(rng, model, "HumanEval", True, 300, 0.97)
        records += _records(rng, model, "MBPP", False, 300, 0.8)
    data = fit(records, corpus="synthetic", engine="test")
    assert set(data["strata"]) == {EXAMPLES, NO_EXAMPLES}
    assert data["strata"][EXAMPLES]["benchmarks"] == ["HumanEval"] and data["strata"][EXAMPLES]["tasks"] == 900
    at_zero = {name: s["points"][0] for name, s in data["strata"].items()}
    assert at_zero[EXAMPLES][0] == 0.0 and at_zero[EXAMPLES][1] > 0.9
    assert at_zero[NO_EXAMPLES][1] < 0.86
    by = data["ece_by_benchmark"]
    assert set(by["in_sample"]) == set(by["leave_one_model_out"]) == {"HumanEval", "MBPP"}
    # one map for both would be off on each benchmark by about the gap in their base rates
    for bench in ("HumanEval", "MBPP"):
        assert by["in_sample"][bench] < by["pooled_map_in_sample"][bench]
        assert by["leave_one_model_out"][bench] < 0.05
    assert data["ece_leave_one_model_out"] is not None and data["ece_raw"] > data["ece_in_sample"]


def test_a_small_stratum_falls_back_to_the_pooled_map():
    rng = random.Random(3)
    records = _records(rng, "a", "MBPP", False, 200, 0.8) + _records(rng, "a", "HumanEval", True, MIN_STRATUM - 1, 0.97)
    data = fit(records, corpus="synthetic", engine="test")
    assert set(data["strata"]) == {NO_EXAMPLES}
    assert data["tasks"] == 200 + MIN_STRATUM - 1


def test_a_spec_shows_examples_when_an_input_came_from_its_examples_or_tests():
    assert spec_examples({"input_origins": {"doctest": 1, "mutation": 9}})
    assert spec_examples({"input_origins": {"test": 2}})
    assert not spec_examples({"input_origins": {"annotation": 3, "default": 1, "mutation": 9}})
    assert not spec_examples({})


def test_the_shipped_maps_name_their_corpus_and_differ_by_stratum():
    info = shipped.calibration_info()
    assert info["corpus"] and info["engine"] and len(info["models"]) == 8
    assert set(info["strata"]) == {EXAMPLES, NO_EXAMPLES}
    assert calibration_map(True) == EXAMPLES and calibration_map(False) == NO_EXAMPLES and calibration_map() == "pooled"
    # a function every sample agrees on is likelier right when its spec shows examples
    assert calibrated_trust(0.0, examples=True) > calibrated_trust(0.0) > calibrated_trust(0.0, examples=False)
    for examples in (True, False, None):  # trust falls as DSDE grows
        trusts = [calibrated_trust(d / 20, examples) for d in range(21)]
        assert all(a >= b for a, b in pairwise(trusts)) and trusts[0] > trusts[-1]
    for bench, e in info["ece_by_benchmark"]["leave_one_model_out"].items():
        assert e <= 0.05, (bench, e)


def test_the_cli_fits_and_writes_the_maps(tmp_path):
    rng = random.Random(11)
    run = tmp_path / "runs" / "HumanEval-x-signature"
    run.mkdir(parents=True)
    records = []
    for model in ("a", "b"):
        records += _records(rng, model, "HumanEval", True, 120, 0.95) + _records(rng, model, "MBPP", False, 120, 0.75)
    (run / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    out = tmp_path / "calibration.json"
    proc = subprocess.run(
        [sys.executable, "-m", "coherence", "eval", "--calibrate", str(tmp_path / "runs"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "HumanEval: " in proc.stderr and "leave-one-model-out" in proc.stderr and str(out) in proc.stderr
    data = json.loads(out.read_text())
    assert data["tasks"] == 480 and data["corpus"] == "HumanEval-x-signature"
    assert set(data["strata"]) == {EXAMPLES, NO_EXAMPLES}
