"""``coherence eval --replicate``: a corpus folder's every model, both benchmarks, both seed modes,
one engine, and the papers' tables; and the two comparisons it rests on."""

import gzip
import json
import shutil

import pytest

from coherence.eval.report import compare
from coherence.eval.same_records import compare as compare_records

MODELS = ("gpt_4o", "gpt_3_5")


def _small_corpus(corpus_path, folder, tasks_per_file: int = 2):
    folder.mkdir()
    for bench, task_file in (("humaneval", "humaneval-tasks.jsonl.gz"), ("mbpp", "mbpp-sanitized-tasks.jsonl.gz")):
        shutil.copy(corpus_path(task_file), folder / task_file)
        for model in MODELS:
            with (
                gzip.open(corpus_path(f"{bench}-{model}.jsonl.gz"), "rt") as fh,
                gzip.open(folder / f"{bench}-{model}.jsonl.gz", "wt") as out,
            ):
                for i, line in enumerate(fh):
                    if i >= tasks_per_file:
                        break
                    out.write(line)
    (folder / "README.md").write_text("not a corpus file\n")


@pytest.mark.corpus
@pytest.mark.slow
def test_replicate_runs_every_model_both_benchmarks_both_seed_modes(tmp_path, corpus_path):
    from coherence.cli import main

    corpus = tmp_path / "corpus"
    _small_corpus(corpus_path, corpus)
    out = tmp_path / "out"
    argv = [
        "eval",
        "--replicate",
        str(corpus),
        "--out",
        str(out),
        "--samples",
        "3",
        "--inputs",
        "40",
        "-q",
        "--jobs",
        "2",
    ]
    assert main(argv) == 0
    runs = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert runs == sorted(f"{b}-{m}-{s}" for b in ("HumanEval", "MBPP") for m in MODELS for s in ("tests", "signature"))
    engines = {json.loads((out / r / "run.json").read_text())["engine"] for r in runs}
    assert len(engines) == 1

    for bench in ("HumanEval", "MBPP"):
        table = (out / f"replication-{bench}.md").read_text()
        assert all(f"| {m} |" in table for m in MODELS)
        assert "tests: det." in table and "signature: det." in table
        assert table.count("over 2 models") == 2  # the Spearman line of each seed mode
    data = json.loads((out / "replication.json").read_text())
    assert len(data["runs"]) == 8
    assert {(g["benchmark"], g["seeds"]) for g in data["rankings"]} == {
        (b, s) for b in ("HumanEval", "MBPP") for s in ("tests", "signature")
    }
    assert all(len(g["models"]) == 2 for g in data["rankings"])
    assert (out / "figure1-rankings.png").stat().st_size > 0
    assert (out / "figure2-error-vs-incoherence-HumanEval-tests.png").stat().st_size > 0

    before = {r: (out / r / "tasks.jsonl").read_text() for r in runs}
    assert main(argv) == 0  # resumes: nothing left to run
    assert {r: (out / r / "tasks.jsonl").read_text() for r in runs} == before

    # a run another engine wrote to: the replication refuses to mix them, the report still works
    run_json = out / runs[0] / "run.json"
    run = json.loads(run_json.read_text())
    run["engines"], run["engine"] = ["0123456789ab"], "0123456789ab"
    run_json.write_text(json.dumps(run))
    assert main(argv) == 2
    assert main([*argv, "--report-only"]) == 0


def test_replicate_needs_a_folder_with_tasks_and_samples(tmp_path, capsys):
    from coherence.cli import main

    (tmp_path / "humaneval-gpt_4o.jsonl.gz").write_bytes(b"")
    assert main(["eval", "--replicate", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "task file" in capsys.readouterr().err


def _summary(model, pass1, zero_inc, zero_err):
    return {
        "model": model,
        "benchmark": "HumanEval",
        "seeds": "tests",
        "pass_at_1": pass1,
        "share_zero_incoherence": zero_inc,
        "share_zero_error": zero_err,
    }


def test_figure_one_ranks_by_pass_at_1_and_by_zero_error():
    """Four models: the zero-incoherence ranking matches the zero-error ranking exactly and the
    pass@1 ranking with the last two swapped (rho = 1 - 6*2/(4*15) = 0.8)."""
    (group,) = compare(
        [
            _summary("a", 0.9, 0.8, 0.7),
            _summary("b", 0.8, 0.7, 0.6),
            _summary("c", 0.6, 0.5, 0.4),
            _summary("d", 0.7, 0.4, 0.3),
        ]
    )
    assert group["spearman"] == pytest.approx(0.8)
    assert group["spearman_zero_error"] == pytest.approx(1.0)
    older = compare([{**_summary("a", 0.9, 0.8, 0.1), "share_zero_error": None}, _summary("b", 0.8, 0.7, 0.6)])
    assert older[0]["spearman_zero_error"] is None  # a summary written before the key existed


def test_same_records_tells_timings_and_time_budgets_from_real_differences():
    rec = {"task_id": "T/1", "status": "incoherent", "incoherence": 0.2, "timeouts": 0, "seconds": 1.0}
    assert compare_records({"T/1": rec}, {"T/1": {**rec, "seconds": 9.0}}) == ([], [])
    bad, _ = compare_records({"T/1": rec}, {"T/1": {**rec, "incoherence": 0.3}})
    assert bad == ["task T/1: incoherence: 0.2 != 0.3"]
    # a program ran out of time in one run: the numbers may differ, the verdict may not
    bound = {**rec, "timeouts": 4, "incoherence": 0.3}
    bad, expected = compare_records({"T/1": rec}, {"T/1": bound})
    assert bad == [] and len(expected) == 2
    bad, _ = compare_records({"T/1": rec}, {"T/1": {**bound, "status": "coherent"}})
    assert bad == ["task T/1: status: 'incoherent' != 'coherent'"]
    # the reference solution ran out of time on an input: the pointwise error may differ too
    slow_reference = {**rec, "reference_timeouts": 1, "error": 0.1}
    assert compare_records({"T/1": {**rec, "error": 0.2}}, {"T/1": slow_reference})[0] == []
    bad, _ = compare_records({"T/1": rec}, {})
    assert bad == ["task T/1: only in the first run"]
    # a program dropped as too slow in one run: which ran may differ, the verdict may not
    slow = {
        **bound,
        "samples": 9,
        "too_slow": 1,
        "sampling": "9 of 9 alternatives; 1 dropped: too slow (reached 333 of 1000 inputs in time)",
    }
    full = {**rec, "samples": 10, "too_slow": 0, "sampling": "9 of 9 alternatives"}
    bad, expected = compare_records({"T/1": full}, {"T/1": slow})
    assert bad == [] and any("samples" in e for e in expected)
    bad, _ = compare_records({"T/1": full}, {"T/1": {**slow, "status": "coherent"}})
    assert bad == ["task T/1: status: 'incoherent' != 'coherent'"]
    # without a slow drop, a different number of programs is a real difference
    bad, _ = compare_records({"T/1": full}, {"T/1": {**full, "timeouts": 3, "samples": 9}})
    assert bad == ["task T/1: samples: 10 != 9"]
