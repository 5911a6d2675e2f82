"""The results cache on disk (``lsp/result_store.py``): a result comes back equal after a reopen,
the file stays bounded, rows of another coherence version are not served, and a damaged file is
moved aside with a notice instead of raising.  Real SQLite files under tmp_path."""

from __future__ import annotations

import sqlite3

from coherence.engine.result import CheckResult
from coherence.lsp import result_store
from coherence.lsp.result_store import ResultStore
from coherence.lsp.state import ResultCache

from .test_edits import result as edits_result


def result(name: str = "count_vowels") -> CheckResult:
    # an incoherent result with clusters and a counterexample, as the editor's tests build it
    return edits_result(name, f"{name}('A')", "0", "1")


def edited(tmp_path, sql: str) -> ResultStore:
    """A store with one saved result under "k1", the file then changed by ``sql``, reopened."""
    store = ResultStore(tmp_path)
    store.save("k1", result())
    store.close()
    with sqlite3.connect(tmp_path / "results.sqlite3") as conn:
        conn.execute(sql)
    return ResultStore(tmp_path)


def test_a_result_comes_back_equal_after_reopening(tmp_path):
    store = ResultStore(tmp_path)
    store.save("k1", result())
    store.close()
    again = ResultStore(tmp_path).load("k1")
    assert again == result()
    assert (tmp_path / "results.sqlite3").is_file()


def test_the_store_keeps_the_newest_rows_only(tmp_path, monkeypatch):
    monkeypatch.setattr(result_store, "PRUNE_EVERY", 1)
    store = ResultStore(tmp_path, max_rows=5)
    for i in range(12):
        store.save(f"k{i}", result(f"f{i}"))
    assert len(store) == 5  # each save prunes back to max_rows
    assert store.load("k11") is not None and store.load("k0") is None


def test_rows_of_another_version_are_not_served(tmp_path):
    assert edited(tmp_path, "UPDATE results SET version = '0.0.0-old'").load("k1") is None


def test_an_unreadable_row_is_a_miss_and_is_dropped(tmp_path):
    store = edited(tmp_path, "UPDATE results SET data = '{\"no_such_field\": 1}'")
    assert store.load("k1") is None and len(store) == 0


def test_a_damaged_file_is_moved_aside_with_a_notice(tmp_path):
    (tmp_path / "results.sqlite3").write_bytes(b"not a database at all" * 200)
    notices: list[str] = []
    cache = ResultCache(store=ResultStore(tmp_path), on_notice=notices.append)
    assert cache.get("k1") is None
    cache.put("k1", result())
    assert len(notices) == 1 and "results cache" in notices[0] and "damaged" in notices[0]
    assert list(tmp_path.glob("results.sqlite3.corrupt-*"))
    cache._items.clear()  # only the file now
    assert cache.get("k1") == result()
