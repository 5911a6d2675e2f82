"""The runner: resume after an interruption, a truncated last line, settings mismatch, and one
small real run end to end through the CLI (both seed modes)."""

import gzip
import json

import pytest

from coherence.eval import runner
from coherence.eval.corpus import BenchmarkTask, SampleTask
from coherence.eval.runner import EvalOptions, SettingsMismatch, read_records, run_samples_file


def _samples(n):
    return [
        SampleTask("MBPP", "fake", 0.6, i, f"f{i}", "(x)", "", [f"def f{i}(x):\n    return x\n"] * 3) for i in range(n)
    ]


def _tasks(n):
    return {
        str(i): BenchmarkTask("MBPP", i, "", code=f"def f{i}(x):\n    return x\n", test_list=[f"assert f{i}(1) == 1"])
        for i in range(n)
    }


def _fake_evaluate(calls, interrupt_at=None):
    def fake(st, bt, opts, *, cancel=None, paper=None, workers=0):
        calls.append(st.task_id)
        if interrupt_at is not None and len(calls) == interrupt_at:
            raise KeyboardInterrupt
        return {
            "task_id": st.task_id,
            "model": st.model,
            "benchmark": st.benchmark,
            "status": "coherent",
            "incoherence": 0.0,
            "complete": True,
            "seconds": 0.01,
        }

    return fake


def test_resume_skips_done_tasks(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "evaluate_task", _fake_evaluate(calls))
    opts = EvalOptions(samples=3, inputs=10)
    records, interrupted = run_samples_file(_samples(2), _tasks(5), tmp_path, opts, progress=False)
    assert not interrupted and sorted(calls) == [0, 1] and len(records) == 2
    calls.clear()
    records, _ = run_samples_file(_samples(5), _tasks(5), tmp_path, opts, progress=False)
    assert sorted(calls) == [2, 3, 4]
    assert sorted(r["task_id"] for r in read_records(tmp_path / "tasks.jsonl")) == [0, 1, 2, 3, 4]
    calls.clear()
    run_samples_file(_samples(5), _tasks(5), tmp_path, opts, progress=False, restart=True)
    assert sorted(calls) == [0, 1, 2, 3, 4]


def test_interrupt_keeps_finished_tasks_and_resumes(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "evaluate_task", _fake_evaluate(calls, interrupt_at=3))
    opts = EvalOptions(samples=3, inputs=10, jobs=1)
    _, interrupted = run_samples_file(_samples(6), _tasks(6), tmp_path, opts, progress=False)
    assert interrupted
    kept = {r["task_id"] for r in read_records(tmp_path / "tasks.jsonl")}
    assert {0, 1} <= kept and 2 not in kept  # finished tasks are kept; the interrupted one is not
    calls.clear()
    monkeypatch.setattr(runner, "evaluate_task", _fake_evaluate(calls))
    _, interrupted = run_samples_file(_samples(6), _tasks(6), tmp_path, opts, progress=False)
    assert not interrupted and sorted(calls) == sorted({0, 1, 2, 3, 4, 5} - kept)
    assert len(read_records(tmp_path / "tasks.jsonl")) == 6


def test_truncated_last_line_is_ignored_and_repaired(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "evaluate_task", _fake_evaluate(calls))
    opts = EvalOptions(samples=3, inputs=10)
    run_samples_file(_samples(2), _tasks(3), tmp_path, opts, progress=False)
    with open(tmp_path / "tasks.jsonl", "a") as fh:
        fh.write('{"task_id": 2, "compl')  # a write cut short by a kill
    calls.clear()
    run_samples_file(_samples(3), _tasks(3), tmp_path, opts, progress=False)
    assert calls == [2]
    assert sorted(r["task_id"] for r in read_records(tmp_path / "tasks.jsonl")) == [0, 1, 2]


def test_other_settings_refuse_to_resume(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "evaluate_task", _fake_evaluate([]))
    run_samples_file(_samples(1), _tasks(1), tmp_path, EvalOptions(samples=3, inputs=10), progress=False)
    with pytest.raises(SettingsMismatch):
        run_samples_file(_samples(1), _tasks(1), tmp_path, EvalOptions(samples=4, inputs=10), progress=False)


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("seeds", ["signature", "tests"])
def test_small_real_run_through_cli(tmp_path, corpus_path, seeds, caplog):
    """Three HumanEval tasks of gpt_4o, m=3, n=60 (more than the 50 inputs the nondeterminism
    re-run takes), through ``coherence eval``: labels, metrics, pointwise error, outputs; then a
    re-run resumes without redoing anything.  The engine logs no warning on the way (the eval's
    executor wraps the checker's run, and must keep its API)."""
    import logging

    from coherence.cli import main

    caplog.set_level(logging.WARNING, logger="coherence")

    src = corpus_path("humaneval-gpt_4o.jsonl.gz")
    small = tmp_path / "humaneval-gpt_4o.jsonl.gz"
    with gzip.open(src, "rt") as fh, gzip.open(small, "wt") as out:
        for i, line in enumerate(fh):
            if i >= 3:
                break
            out.write(line)
    out_dir = tmp_path / "out"
    argv = [
        "eval",
        "--corpus",
        str(small),
        "--tasks",
        str(corpus_path("humaneval-tasks.jsonl.gz")),
        "--samples",
        "3",
        "--inputs",
        "60",
        "--seeds",
        seeds,
        "--out",
        str(out_dir),
        "--quiet",
        "--keep-matrices",
    ]
    assert main(argv) == 0
    recs = read_records(out_dir / "tasks.jsonl")
    assert len(recs) == 3
    assert [r.getMessage() for r in caplog.records if r.name.startswith("coherence.engine")] == []
    for r in recs:
        assert r["status"] in ("coherent", "incoherent", "nondeterministic")
        assert len(r["passed"]) == 3 and r["reference_passed"] is True
        assert r["samples"] == 3 and r["inputs"] == 60
        assert r["error"] is not None and 0 <= r["error"] <= 1
        assert r["used"][0] == 0
        if seeds == "tests":
            assert r["input_origins"].get("test", 0) > 0
        else:
            assert "test" not in r["input_origins"]
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["tasks"] == 3 and summary["seeds"] == seeds and summary["samples"] == 3
    assert (out_dir / "table.md").is_file()
    assert (out_dir / "error_vs_incoherence.png").stat().st_size > 0
    assert (out_dir / "roc_dsde.png").stat().st_size > 0
    mats = {m["task_id"]: m for m in map(json.loads, (out_dir / "matrices.jsonl").read_text().splitlines())}
    for r in recs:
        m = mats[r["task_id"]]
        assert m["candidates"] == r["used"] and len(m["labels"]) == len(r["used"]) + 1  # + the reference
        assert all(len(row) == 60 for row in m["labels"]) and len(m["origins"]) == 60
    before = (out_dir / "tasks.jsonl").read_text()
    assert main(argv) == 0  # resumes: nothing left to do
    assert (out_dir / "tasks.jsonl").read_text() == before


def test_redo_failures_reruns_tasks_spoiled_by_the_worker(tmp_path, monkeypatch):
    calls = []
    spoiled = {1}

    def fake(st, bt, opts, *, cancel=None, paper=None, workers=0):
        calls.append(st.task_id)
        details = (
            ["load error: the worker exited (status 0) while loading the module"] if st.task_id in spoiled else ["ok"]
        )
        spoiled.discard(st.task_id)
        return {
            "task_id": st.task_id,
            "status": "coherent",
            "incoherence": 0.0,
            "label_details": details,
            "complete": True,
        }

    monkeypatch.setattr(runner, "evaluate_task", fake)
    opts = EvalOptions(samples=3, inputs=10)
    run_samples_file(_samples(2), _tasks(2), tmp_path, opts, progress=False)
    calls.clear()
    run_samples_file(_samples(2), _tasks(2), tmp_path, opts, progress=False, redo_infra=True)
    assert calls == [1]
    recs = {r["task_id"]: r for r in read_records(tmp_path / "tasks.jsonl")}
    assert sorted(recs) == [0, 1] and recs[1]["label_details"] == ["ok"]


def test_run_json_lists_every_engine_that_wrote_tasks(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "evaluate_task", _fake_evaluate([]))
    opts = EvalOptions(samples=3, inputs=10)

    def engines():
        return json.loads((tmp_path / "run.json").read_text())["engines"]

    monkeypatch.setattr(runner, "engine_fingerprint", lambda: "aaaa")
    run_samples_file(_samples(2), _tasks(4), tmp_path, opts, progress=False)
    assert engines() == ["aaaa"]
    monkeypatch.setattr(runner, "engine_fingerprint", lambda: "bbbb")
    run_samples_file(_samples(4), _tasks(4), tmp_path, opts, progress=False)  # two tasks left: bbbb runs them
    assert engines() == ["aaaa", "bbbb"]
    assert json.loads((tmp_path / "run.json").read_text())["engine"] == "aaaa+bbbb"
    monkeypatch.setattr(runner, "engine_fingerprint", lambda: "cccc")
    run_samples_file(_samples(4), _tasks(4), tmp_path, opts, progress=False)  # nothing left to run
    assert engines() == ["aaaa", "bbbb"]
    run_samples_file(_samples(4), _tasks(4), tmp_path, opts, progress=False, restart=True)
    assert engines() == ["cccc"]
