"""``benchmarks/warnings_per_model.py``: recall and verified precision of warnings per model, and
the bloc-share threshold chosen with each model held out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from warnings_per_model import bloc_at_least, counts, load, shipped


def record(model, task, severity, passes, bloc=0, agree=0, reference="unknown"):
    return {
        "model": model,
        "task_id": task,
        "status": "incoherent" if severity != "none" else "coherent",
        "incoherence": 0.1 if severity != "none" else 0.0,
        "severity": severity,
        "candidate0_pass": passes,
        "evidence": {"bloc": bloc, "agree": agree, "alternatives": 9},
        "counterexample": {"reference": reference},
    }


def test_recall_counts_failing_functions_and_precision_counts_verified_warnings(tmp_path):
    rows = [
        record("a", 1, "warning", False, bloc=9),  # failing, warned: verified
        record("a", 2, "warning", True, bloc=8, reference="theirs"),  # passes, but the reference sides with theirs
        record("a", 3, "warning", True, bloc=6, reference="yours"),  # a false alarm
        record("a", 4, "none", False),  # a failing function with no warning
        record("a", 5, "information", False, bloc=3, agree=2),
    ]
    run = tmp_path / "run-a"
    run.mkdir()
    (run / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    data = load(tmp_path)
    assert counts(data["a"], shipped) == (3, 2, 1, 3)  # 3 warnings, 2 verified, 1 of 3 failing
    # a bloc of a third (3 of 9) that outvotes yours counts at s = 0.3, not at s = 0.5
    assert counts(data["a"], bloc_at_least(0.3)) == (4, 3, 2, 3)
    assert counts(data["a"], bloc_at_least(0.5)) == (3, 2, 1, 3)
