"""``--show-alternatives``: each cluster's representative alternative, its output on the
counterexample, and a unified diff against the user's function (examples/cart.py, replayed)."""

from __future__ import annotations

import json
import shutil

from tests.cli.test_cli_newcomer import run_cli
from tests.conftest import EXAMPLES


def cart(tmp_path):
    shutil.copy(EXAMPLES / "cart.py", tmp_path / "cart.py")
    shutil.copy(EXAMPLES / "recorded_samples.jsonl", tmp_path / "samples.jsonl")
    (tmp_path / "pyproject.toml").write_text('[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 200\n')


def test_each_cluster_shows_its_program_its_output_and_a_diff(tmp_path):
    cart(tmp_path)
    proc = run_cli("check", "cart.py", "--show-alternatives", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = proc.stdout
    clusters = json.loads(run_cli("check", "cart.py", "--format", "json", cwd=tmp_path).stdout)["functions"][0][
        "clusters"
    ]
    assert f"alternatives, by behaviour ({len(clusters)} cluster(s), largest first):" in report
    call = report.split("counterexample: ")[1].splitlines()[0]
    for i, c in enumerate(clusters, start=1):
        head = next(ln for ln in report.splitlines() if ln.strip().startswith(f"cluster {i}"))
        assert head.endswith(f"{call} -> {c['output']}")
        if c["representative_source"] is None:
            assert c["yours"] and "(only your function behaves this way)" in report
        else:  # the diff against yours: dedented, without the docstring the alternatives leave out
            assert f"+++ alternative (cluster {i})" in report
    first = report.split("+++ alternative (cluster 1)")[1].split("cluster 2")[0]
    assert "+    if qty > 0:" in first and "-    self.items[item] = self.items.get(item, 0) + qty" in first
    assert '"""' not in report and "--- yours" in report


def test_without_the_flag_the_report_is_unchanged(tmp_path):
    cart(tmp_path)
    assert "alternatives, by behaviour" not in run_cli("check", "cart.py", cwd=tmp_path).stdout


def test_only_the_text_report_shows_alternatives(tmp_path):
    cart(tmp_path)
    for fmt, says in (("json", "clusters[].representative_source"), ("sarif", "out of code scanning")):
        proc = run_cli("check", "cart.py", "--show-alternatives", "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 2 and says in proc.stderr and not proc.stdout
