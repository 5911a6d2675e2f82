"""The results cache on disk: a check's result by its ``results_key``, in ``results.sqlite3`` beside
the sample cache, so a file reopened after the editor (and the server) restarted shows its last
results at no cost and without a check.

It is a ``SampleCache`` with its own table: the same WAL journal, busy timeout, and handling of a
damaged file (moved aside and rebuilt empty, with a notice the server shows once; memory only when
even that fails).  It never raises to its caller.  Rows written by another version of coherence are
not served (the engine's verdict may have changed), and the oldest rows go beyond ``MAX_ROWS``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time

from coherence import __version__
from coherence.engine.result import CheckResult
from coherence.engine.sampling.cache import SampleCache

log = logging.getLogger(__name__)

MAX_ROWS = 20_000
PRUNE_EVERY = 100  # saves between two prunes: counting the rows on every save is wasted work

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key     TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    data    TEXT NOT NULL,
    saved   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS results_saved ON results(saved);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class ResultStore(SampleCache):
    """``ResultStore(path)``: ``path`` a file, a directory (``results.sqlite3`` inside it),
    ``":memory:"``, or None for the sample cache's default directory."""

    SCHEMA = _SCHEMA
    FILENAME = "results.sqlite3"
    WHAT = "results cache"
    LOST = "Results are shown again once their functions are checked."

    def __init__(self, *args, max_rows: int = MAX_ROWS, **kw) -> None:
        super().__init__(*args, **kw)
        self.max_rows = max_rows
        self._saves = 0

    def load(self, key: str) -> CheckResult | None:
        """The result saved under ``key`` by this version of coherence, or None."""

        def q(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT data FROM results WHERE key=? AND version=?", (key, __version__)).fetchone()
            return row[0] if row else None

        data = self._run(q, None)
        if data is None:
            return None
        try:
            return CheckResult.from_dict(json.loads(data))
        except Exception as exc:  # noqa: BLE001 - a row this code cannot read is a miss, and goes
            log.info("dropping the unreadable saved result %s: %s", key, exc)
            self.clear(key)
            return None

    def load_newest(self, prefix: str, other_than: str) -> tuple[str, CheckResult] | None:
        """The newest result saved by this version under a key that starts with ``prefix``
        (keys are ``<function>-<tests>``: give ``<function>-``), other than ``other_than``."""

        def q(conn: sqlite3.Connection) -> tuple[str, str] | None:
            # a range over the primary key, not LIKE (whose case rules keep it off the index)
            row = conn.execute(
                "SELECT key, data FROM results WHERE key >= ? AND key < ? AND key != ? AND version=?"
                " ORDER BY saved DESC LIMIT 1",
                (prefix, prefix + "\U0010ffff", other_than, __version__),
            ).fetchone()
            return (row[0], row[1]) if row else None

        found = self._run(q, None)
        if found is None:
            return None
        try:
            return found[0], CheckResult.from_dict(json.loads(found[1]))
        except Exception as exc:  # noqa: BLE001 - unreadable: no stale result to show
            log.info("dropping the unreadable saved result %s: %s", found[0], exc)
            self.clear(found[0])
            return None

    def save(self, key: str, result: CheckResult) -> None:
        try:
            data = json.dumps(result.to_dict(), default=repr)
        except (TypeError, ValueError) as exc:  # a value json cannot hold even as its repr
            log.info("not saving the result of %s: %s", result.qualname, exc)
            return
        self._saves += 1
        prune = (self._saves - 1) % PRUNE_EVERY == 0  # the first save, then every PRUNE_EVERY-th

        def q(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO results(key, version, data, saved) VALUES (?, ?, ?, ?)",
                (key, __version__, data, time.time()),
            )
            if prune:
                (n,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
                if n > self.max_rows:
                    conn.execute(
                        "DELETE FROM results WHERE key IN (SELECT key FROM results ORDER BY saved LIMIT ?)",
                        (n - self.max_rows,),
                    )

        self._run(q, None)

    def clear(self, key=None) -> None:  # a results key, not a samples key
        """Forget every saved result (or the one under ``key``)."""

        def q(conn: sqlite3.Connection) -> None:
            if key is None:
                conn.execute("DELETE FROM results")
            else:
                conn.execute("DELETE FROM results WHERE key=?", (key,))

        self._run(q, None)

    def __len__(self) -> int:
        return int(self._run(lambda conn: conn.execute("SELECT COUNT(*) FROM results").fetchone()[0], 0))

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path) if self.path else ':memory:'!r})"
