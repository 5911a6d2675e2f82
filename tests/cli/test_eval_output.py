"""Issue 49, item 8: what ``coherence eval`` writes says one thing per name, shows no empty
benchmark, and its plots carry their legends and a small-sample warning.  The run folder holds
ten HumanEval records written here; ``coherence eval --rebuild`` makes its outputs for real."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.support.zygote import coherence_argv

pytest.importorskip("matplotlib")


def _record(i: int) -> dict:
    failing = i % 3 == 0
    incoherence = 0.0 if i < 5 else 0.1 * (i - 4)
    return {
        "task_id": f"HumanEval/{i}",
        "complete": True,
        "model": "gpt_4o",
        "benchmark": "HumanEval",
        "seeds": "signature",
        "samples_requested": 10,
        "inputs_requested": 1000,
        "status": "incoherent" if incoherence else "coherent",
        "incoherence": incoherence,
        "error": 0.2 if failing else 0.0,
        "error_value": 0.2 if failing else 0.0,
        "error_mean_candidates": 0.1 if failing else 0.0,
        "dsde": incoherence,
        "sde": incoherence / 2,
        "candidate0_pass": not failing,
        "all_used_pass": not failing and not incoherence,
        "seconds": 1.0,
        "samples": 10,
        "inputs": 1000,
    }


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eval") / "he" / "gpt_4o"
    folder.mkdir(parents=True)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(_record(i)) + "\n" for i in range(10)))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [*coherence_argv(env), "eval", "--rebuild", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return folder


def test_one_name_one_definition(run_dir):
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "warning_precision" not in summary  # P(fails | Î > 0) was shown beside the warnings' own precision
    assert summary["incoherent_precision_tests"] == pytest.approx(2 / 5)  # Î > 0: tasks 5-9; failing: 6, 9
    table = (run_dir / "table.md").read_text()
    assert "| warning_precision |" not in table and "incoherent_precision_tests" in table
    assert "W prec. (tests) = warnings on functions that fail the tests, over warnings" in table


def test_a_humaneval_only_run_has_no_mbpp_columns(run_dir):
    table = (run_dir / "table.md").read_text()
    header = next(line for line in table.splitlines() if line.startswith("| model | HumanEval"))
    assert "MBPP" not in header and header.count("HumanEval") == 10


def _svg_text(draw, records, tmp_path) -> str:
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text in the SVG
        draw(records, tmp_path / "plot.svg")
    return (tmp_path / "plot.svg").read_text()


def test_the_bubble_size_has_a_legend(tmp_path):
    from coherence.eval import plots

    records = [_record(i) for i in range(10)]
    text = _svg_text(plots.error_vs_incoherence, records, tmp_path)
    assert "1 task at a point" in text and "3 tasks at a point" in text  # three tasks sit at (0, 0)


def test_an_roc_of_few_tasks_says_so_and_one_of_many_does_not(tmp_path):
    from coherence.eval import plots

    few = _svg_text(plots.roc, [_record(i) for i in range(10)], tmp_path)
    assert "small sample: 10 tasks, 4 failing, 6 passing" in few
    many = [dict(_record(i % 10), task_id=f"HumanEval/{i}") for i in range(60)]
    assert "small sample" not in _svg_text(plots.roc, many, tmp_path)
