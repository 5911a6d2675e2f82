"""A SQLite cache of LLM samples, keyed by what the LLM saw.

Samples are stored under ``(spec_hash, model, temperature, prompt_version)`` with an index
``idx`` giving their order.  A body-only edit keeps the Spec (and so the key): it costs no LLM
call.  Invalid replies are cached too (they are real samples of the model); transport failures
are never cached.

The cache is safe to share between threads (one connection per process, guarded by a lock) and
between processes (WAL journal, busy timeout, appends in ``BEGIN IMMEDIATE`` transactions).  A
corrupt or unreadable file is moved aside and rebuilt with a logged warning; if even that fails
the cache falls back to memory.  It never raises to its caller.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from coherence.engine.sampling.prompt import Sample

log = logging.getLogger(__name__)

DEFAULT_FILENAME = "samples.sqlite3"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    spec_hash      TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    temperature    TEXT    NOT NULL,
    prompt_version TEXT    NOT NULL,
    idx            INTEGER NOT NULL,
    status         TEXT    NOT NULL,
    code           TEXT,
    raw            TEXT    NOT NULL,
    detail         TEXT    NOT NULL DEFAULT '',
    created        REAL    NOT NULL,
    PRIMARY KEY (spec_hash, model, temperature, prompt_version, idx)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class CacheKey:
    spec_hash: str
    model: str
    temperature: float
    prompt_version: str

    def params(self) -> tuple[str, str, str, str]:
        return (self.spec_hash, self.model, _temp(self.temperature), self.prompt_version)


def _temp(t: float) -> str:
    return f"{float(t):.4g}"


def default_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coherence" / DEFAULT_FILENAME


class SampleCache:
    """``SampleCache(path=None)``: ``path`` may be a file, a directory (the file is
    ``samples.sqlite3`` inside it) or ``":memory:"``; None means the default location
    (``$XDG_CACHE_HOME/coherence/samples.sqlite3`` or ``~/.cache/coherence/...``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, busy_timeout: float = 10.0):
        if path is None:
            p = default_cache_path()
        elif str(path) == ":memory:":
            p = None
        else:
            p = Path(path).expanduser()
            if p.is_dir() or str(path).endswith(("/", os.sep)) or (not p.suffix and not p.exists()):
                p = p / DEFAULT_FILENAME
        self.path: Path | None = p
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self.in_memory = p is None

    # -- connection --------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        """The connection of this process (reopened after a fork), created and checked."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self._conn = None
        if self.path is None:
            self._conn = self._connect(":memory:")
        else:
            try:
                self._conn = self._connect(str(self.path))
            except sqlite3.DatabaseError as e:
                log.warning("sample cache %s is unreadable (%s); rebuilding it", self.path, e)
                self._move_aside()
                try:
                    self._conn = self._connect(str(self.path))
                except (sqlite3.Error, OSError) as e2:
                    self._fallback_to_memory(e2)
            except OSError as e:
                self._fallback_to_memory(e)
        self._pid = os.getpid()
        assert self._conn is not None
        return self._conn

    def _fallback_to_memory(self, err: BaseException) -> None:
        log.warning("sample cache %s cannot be used (%s); caching in memory only", self.path, err)
        self.in_memory = True
        self.path = None
        self._conn = self._connect(":memory:")

    def _connect(self, target: str) -> sqlite3.Connection:
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            target, timeout=self.busy_timeout, check_same_thread=False, isolation_level=None
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if target != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
            row = conn.execute("PRAGMA quick_check").fetchone()
            if not row or row[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else '?'}")
            conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self) -> None:
        assert self.path is not None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for suffix in ("", "-wal", "-shm", "-journal"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                dst = Path(f"{self.path}.corrupt-{stamp}-{os.getpid()}{suffix}")
                try:
                    src.replace(dst)
                    if not suffix:
                        log.warning("moved the corrupt sample cache to %s", dst)
                except OSError:
                    try:
                        src.unlink()
                    except OSError:
                        pass

    def _recover(self, err: BaseException) -> None:
        """A query failed with a database error: rebuild the file (once per error)."""
        log.warning("sample cache %s failed (%s); rebuilding it", self.path, err)
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        if self.path is not None:
            self._move_aside()

    def _run(self, fn, default):
        with self._lock:
            for attempt in (1, 2):
                try:
                    return fn(self._open())
                except sqlite3.OperationalError as e:
                    # locked/busy beyond the timeout, disk full, read-only: not corruption
                    log.warning("sample cache %s: %s", self.path, e)
                    return default
                except sqlite3.DatabaseError as e:
                    if attempt == 2:
                        log.warning("sample cache %s: %s", self.path, e)
                        return default
                    self._recover(e)
                except OSError as e:
                    log.warning("sample cache %s: %s", self.path, e)
                    return default
            return default

    # -- API ----------------------------------------------------------------------------------
    def get(self, key: CacheKey, limit: int | None = None) -> list[Sample]:
        """The first ``limit`` cached samples for ``key`` (all when None), in order."""
        if limit is not None and limit <= 0:
            return []

        def q(conn: sqlite3.Connection) -> list[Sample]:
            rows = conn.execute(
                "SELECT code, raw, status, detail FROM samples WHERE spec_hash=? AND model=? "
                "AND temperature=? AND prompt_version=? ORDER BY idx LIMIT ?",
                (*key.params(), -1 if limit is None else int(limit)),
            ).fetchall()
            return [Sample(code=r[0], raw=r[1], status=r[2], detail=r[3] or "") for r in rows]

        return self._run(q, [])

    def put(self, key: CacheKey, samples: list[Sample]) -> int:
        """Append ``samples`` after the ones already stored; returns how many were stored."""
        if not samples:
            return 0

        def q(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT COALESCE(MAX(idx), -1) FROM samples WHERE spec_hash=? AND model=? "
                    "AND temperature=? AND prompt_version=?",
                    key.params(),
                ).fetchone()
                nxt = int(row[0]) + 1
                now = time.time()
                conn.executemany(
                    "INSERT INTO samples(spec_hash, model, temperature, prompt_version, idx, "
                    "status, code, raw, detail, created) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    [
                        (*key.params(), nxt + i, s.status, s.code, s.raw, s.detail, now)
                        for i, s in enumerate(samples)
                    ],
                )
                conn.execute("COMMIT")
            except BaseException:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            return len(samples)

        return self._run(q, 0)

    def count(self, key: CacheKey) -> int:
        def q(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT COUNT(*) FROM samples WHERE spec_hash=? AND model=? AND temperature=? "
                "AND prompt_version=?",
                key.params(),
            ).fetchone()
            return int(row[0])

        return self._run(q, 0)

    def clear(self, key: CacheKey | None = None) -> None:
        """Forget everything (or only ``key``'s samples)."""

        def q(conn: sqlite3.Connection) -> None:
            if key is None:
                conn.execute("DELETE FROM samples")
            else:
                conn.execute(
                    "DELETE FROM samples WHERE spec_hash=? AND model=? AND temperature=? "
                    "AND prompt_version=?",
                    key.params(),
                )

        self._run(q, None)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                try:
                    self._conn.close()
                except sqlite3.Error:
                    pass
            self._conn = None

    def __enter__(self) -> SampleCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SampleCache({str(self.path) if self.path else ':memory:'!r})"
