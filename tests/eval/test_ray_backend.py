"""``coherence eval --ray``: the tasks as Ray tasks on a real local cluster (``--ray local``, a
private one that ends with the command), against the same tasks run with local ``--jobs``.
Skipped when Ray (the ``cluster`` extra) is not installed."""

import json
import os
import subprocess
import sys

import pytest

from coherence.eval.runner import read_records
from coherence.eval.same_records import compare, load

pytest.importorskip("ray", reason="Ray is not installed (pip install 'coherence[cluster]')")

IDS = ["HumanEval/0", "HumanEval/2", "HumanEval/4"]


def _corpus_args(corpus_path) -> list[str]:
    return [
        "--corpus",
        str(corpus_path("humaneval-gpt_4o.jsonl.gz")),
        "--tasks",
        str(corpus_path("humaneval-tasks.jsonl.gz")),
    ]


def _eval(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "coherence", "eval", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


@pytest.mark.corpus
@pytest.mark.slow
def test_ray_run_resumes_and_equals_a_local_run(tmp_path, corpus_path):
    """Two tasks on Ray, then the same command over three resumes on a new cluster and runs only
    the third; a local --jobs 2 run of the three gives the same records apart from timings, and
    every record names the node and the sandbox that ran it."""
    base = [*_corpus_args(corpus_path), "--inputs", "200", "--no-plots", "--quiet"]
    on_ray, here = tmp_path / "ray", tmp_path / "local"
    done = _eval(*base, "--task-id", *IDS[:2], "--ray", "local", "--out", str(on_ray))
    assert done.returncode == 0, done.stderr[-2000:]
    first = (on_ray / "tasks.jsonl").read_text()
    assert len(first.splitlines()) == 2

    done = _eval(*base, "--task-id", *IDS, "--ray", "local", "--out", str(on_ray))
    assert done.returncode == 0, done.stderr[-2000:]
    after = (on_ray / "tasks.jsonl").read_text()
    assert after.startswith(first) and len(after.splitlines()) == 3  # resumed: the two kept as they were

    done = _eval(*base, "--task-id", *IDS, "--jobs", "2", "--out", str(here))
    assert done.returncode == 0, done.stderr[-2000:]
    bad, _expected = compare(load(str(on_ray / "tasks.jsonl")), load(str(here / "tasks.jsonl")))
    assert bad == []
    for rec in read_records(on_ray / "tasks.jsonl"):
        assert rec["host"] and rec["sandbox"]
        assert rec["status"] in ("coherent", "incoherent", "nondeterministic")
    summary = json.loads((on_ray / "summary.json").read_text())
    assert summary["tasks"] == 3


def test_ray_to_a_cluster_that_is_not_there_says_so(tmp_path, corpus_path):
    """An ADDRESS with no cluster behind it is a usage error with a way out, not a traceback."""
    done = _eval(*_corpus_args(corpus_path), "--limit", "1", "--ray", "127.0.0.1:9", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "ray start --head" in done.stderr
    assert not (tmp_path / "out" / "tasks.jsonl").exists()
