"""``coherence eval --panel``: recorded corpora composed into a panel (candidate 0 from the first,
the alternatives from the others), a real run of two tasks, and the gain against a same-model run."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from dataclasses import replace

import pytest

from coherence.eval.corpus import CorpusError, load_samples
from coherence.eval.panel import compose, gain
from coherence.eval.runner import read_records


def _small(src, dst, n):
    with gzip.open(src, "rt") as fh, gzip.open(dst, "wt") as out:
        for i, line in enumerate(fh):
            if i >= n:
                break
            out.write(line)
    return dst


def test_compose_takes_candidate_0_from_the_author_and_spreads_the_rest(corpus_path):
    author = load_samples(corpus_path("humaneval-llama_3_1_8b_instruct.jsonl.gz"))[:20]
    names = ["claude_sonnet_4", "gemini_2_5_pro", "deepseek_v3_0324", "gpt_4o"]
    others = [load_samples(corpus_path(f"humaneval-{m}.jsonl.gz")) for m in names]
    composed = compose(author, others, 9, seed=0)
    assert len(composed) == 20
    by_model = {o[0].model: {s.key: s for s in o} for o in others}
    extra: Counter[str] = Counter()
    for task, original in zip(composed, author):
        assert task.candidates[0] == original.candidates[0] and task.origins[0] == "llama_3_1_8b_instruct"
        counts = Counter(task.origins[1:])
        assert sum(counts.values()) == 9 and set(counts) == set(names)
        assert sorted(counts.values()) == [2, 2, 2, 3]  # as even as 9 over 4 allows
        extra.update(m for m, k in counts.items() if k == 3)
        for cand, model in zip(task.candidates[1:], task.origins[1:]):
            assert cand in by_model[model][task.key].candidates  # each from the model it is said to be
        assert task.panel == "+".join(names)
    assert len(extra) > 1  # which member gives one more is drawn per task, not always the first
    again = compose(author, others, 9, seed=0)
    assert [t.candidates for t in again] == [t.candidates for t in composed]  # a fixed seed: the same panel
    assert [t.candidates for t in compose(author, others, 9, seed=1)] != [t.candidates for t in composed]
    with pytest.raises(CorpusError):
        compose(author, [], 9)
    with pytest.raises(CorpusError):
        compose(author, [load_samples(corpus_path("mbpp-gpt_4o.jsonl.gz"))], 9)


def test_compose_with_the_authors_own_model_in_the_panel(corpus_path):
    """A panel may keep the author's model beside others: its alternatives are the author's other
    candidates, never candidate 0 (yours, compared with itself)."""
    author = [
        replace(t, candidates=[f"def mine_{i}(): pass"] + t.candidates[1:])
        for i, t in enumerate(load_samples(corpus_path("humaneval-claude_sonnet_4.jsonl.gz"))[:30])
    ]
    others = [author, load_samples(corpus_path("humaneval-gemini_2_5_pro.jsonl.gz"))]
    composed = compose(author, others, 9, seed=0)
    assert len(composed) == 30
    for task in composed:
        assert task.candidates.count(task.candidates[0]) == 1  # yours is not among the alternatives
        assert sorted(Counter(task.origins[1:]).values()) == [4, 5]
        assert task.panel == "claude_sonnet_4+gemini_2_5_pro"


def test_panel_run_through_cli_with_the_gain(tmp_path, corpus_path):
    from coherence.cli import main

    tasks = str(corpus_path("humaneval-tasks.jsonl.gz"))
    author = _small(
        corpus_path("humaneval-llama_3_1_8b_instruct.jsonl.gz"),
        tmp_path / "humaneval-llama_3_1_8b_instruct.jsonl.gz",
        2,
    )
    same = tmp_path / "same"
    common = ["--tasks", tasks, "--samples", "5", "--inputs", "60", "--quiet", "--no-plots"]
    assert main(["eval", "--corpus", str(author), "--out", str(same), *common]) == 0
    panel = tmp_path / "panel"
    argv = [
        "eval",
        "--panel",
        str(author),
        str(corpus_path("humaneval-claude_sonnet_4.jsonl.gz")),
        str(corpus_path("humaneval-gemini_2_5_pro.jsonl.gz")),
        "--out",
        str(panel),
        "--baseline",
        str(same),
        *common,
    ]
    assert main(argv) == 0
    recs = read_records(panel / "tasks.jsonl")
    assert len(recs) == 2
    for r in recs:
        assert r["panel"] == "claude_sonnet_4+gemini_2_5_pro" and r["alternative_models"] == {
            "claude_sonnet_4": 2,
            "gemini_2_5_pro": 2,
        }
        assert sum(sum(c.values()) for c in r["cluster_models"]) == r["samples"] - 1
        assert set().union(*r["cluster_models"]) <= {"claude_sonnet_4", "gemini_2_5_pro"}
    g = json.loads((panel / "gain.json").read_text())
    assert g["tasks"] == 2 and g["panel"]["checked"] == 2
    assert g == gain(recs, read_records(same / "tasks.jsonl"))
    # a panel run refuses to resume into a folder of another panel
    other = [
        "eval",
        "--panel",
        str(author),
        str(corpus_path("humaneval-gpt_4o.jsonl.gz")),
        "--out",
        str(panel),
        *common,
    ]
    assert main(other) == 2
