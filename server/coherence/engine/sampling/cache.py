"""A SQLite cache of LLM samples, keyed by what the LLM saw.

Samples are stored under ``(spec_hash, model, temperature, prompt_version)`` with an index
``idx`` giving their order.  A body-only edit keeps the Spec (and so the key): it costs no LLM
call.  Only usable samples (``status == "ok"`` with code) are stored and served: a reply without
code, in another language or defining the wrong function, and every transport failure, is never
cached, so it cannot stand in for a good sample on later checks (the next check asks again).
Only how many such replies a key got is counted (``misses``): once a model has given a whole
batch of unusable replies for a spec it is not asked again for it until the cache is cleared.

The cache is safe to share between threads (one connection per process, guarded by a lock) and
between processes (WAL journal, busy timeout, appends in ``BEGIN IMMEDIATE`` transactions).  Only
real corruption (SQLITE_CORRUPT / SQLITE_NOTADB, a failed quick check) moves the file aside and
rebuilds it, under a lock file and after checking again, so a busy or locked database shared with
another process is never mistaken for a corrupt one, and a file another process has just rebuilt
is not moved aside a second time.  If even rebuilding fails the cache falls back to memory.  What
happened is logged and kept as a user-facing notice (``take_notices()``).  It never raises to its
caller.

The cache lives in a folder coherence owns, marked by a ``CACHEDIR.TAG`` (the convention backup
tools skip): moving a damaged file aside is only safe in such a folder, so a location that exists
and is not one (a user's file, a folder of theirs) is refused before anything is touched
(``folder_problem``), and the cache then stays in memory.  ``readonly=True`` (``--dry-run``) reads
what is there and writes nothing: no folder, no marker, no journal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from coherence.engine.sampling.prompt import Sample

_T = TypeVar("_T")

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
CREATE TABLE IF NOT EXISTS misses (
    spec_hash      TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    temperature    TEXT    NOT NULL,
    prompt_version TEXT    NOT NULL,
    count          INTEGER NOT NULL,
    PRIMARY KEY (spec_hash, model, temperature, prompt_version)
);
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


def _is_corruption(err: BaseException) -> bool:
    """Whether a database error means the file is damaged (as opposed to busy, locked, full,
    read-only or misused)."""
    if not isinstance(err, sqlite3.DatabaseError):
        return False
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int) and (code & 0xFF) in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return True
    if type(err) is sqlite3.DatabaseError:  # no finer class: malformed image, failed quick check
        return True
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


def _is_busy(err: BaseException) -> bool:
    """Whether a database error means another connection holds the lock (SQLITE_BUSY/LOCKED)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (5, 6)
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _file_id(path: Path | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """An advisory lock between processes (no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fh = open(lock_path, "a+")  # noqa: SIM115
    except OSError:
        yield
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        fh.close()


def default_cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coherence" / DEFAULT_FILENAME


MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This folder is coherence's cache of LLM samples; it may be deleted at any time.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
# What coherence writes in its folder (the marker came later: a folder that older versions
# filled holds these names alone, and is adopted).
_OWN_NAMES = ("samples.sqlite3", "results.sqlite3", MARKER)


def _ours(name: str) -> bool:
    return any(name == own or name.startswith(own + "-") or name.startswith(own + ".") for own in _OWN_NAMES)


def folder_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why ``folder`` cannot be the cache's folder (None when it can), found without touching
    anything: it may not exist yet, or be a folder with coherence's marker, or one that is empty or
    holds only files coherence writes; anything else (a file, someone's folder) is not coherence's
    to fill or to move aside."""
    p = Path(folder).expanduser()  # (a symbolic link is judged by what it points at)
    if not p.exists():
        return None
    if not p.is_dir():
        return f"the cache folder {p} exists and is not a folder; give a new or empty folder (coherence marks it with {MARKER})"
    try:
        names = [e.name for e in os.scandir(p)]
    except OSError as exc:
        return f"the cache folder {p} cannot be read: {exc.strerror or exc}"
    if MARKER in names or all(_ours(n) for n in names):
        return None
    return (
        f"the cache folder {p} holds files that are not coherence's; give a new or empty folder "
        f"(coherence marks it with {MARKER})"
    )


def claim_folder(folder: Path) -> None:
    """Create ``folder`` (if needed) and mark it as coherence's."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER
    if not marker.exists():
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            return
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(MARKER_TEXT)


class SampleCache:
    """``SampleCache(path=None)``: ``path`` is a folder (the file is ``samples.sqlite3`` inside
    it, the folder coherence's: see the module docstring), a database file named ``*.sqlite3``
    (``folder=True`` makes it a folder too), or ``":memory:"``; None means the default folder
    (``$XDG_CACHE_HOME/coherence`` or ``~/.cache/coherence``).  ``readonly``: read what is
    there, write nothing (an absent file is an empty cache)."""

    # What a subclass keeping other rows in its own file beside this one (the language server's
    # results) changes: its tables, its file name, and how the notices name it.
    SCHEMA = _SCHEMA
    FILENAME = DEFAULT_FILENAME
    WHAT = "sample cache"
    LOST = "Samples will be asked for again."

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        busy_timeout: float = 10.0,
        folder: bool | None = None,
        readonly: bool = False,
    ):
        self.folder: Path | None = None  # the folder this cache owns (None: a file given by its name)
        if path is None:
            p: Path | None = default_cache_path().with_name(self.FILENAME)
            self.folder = default_cache_path().parent
        elif str(path) == ":memory:":
            p = None
        else:
            p = Path(path).expanduser()
            if folder or (folder is None and p.suffix != ".sqlite3"):
                self.folder = p
                p = p / self.FILENAME
        self.path = p
        self.readonly = readonly
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._file: tuple[int, int] | None = None  # identity of the file the connection opened
        self._notices: list[str] = []
        self.in_memory = p is None
        self.rebuilt = 0  # times a corrupt file was moved aside and rebuilt

    # -- notices ------------------------------------------------------------------------------
    def _notice(self, message: str) -> None:
        log.warning("%s", message)
        with self._lock:
            self._notices.append(message)

    def _notice_rebuilt(self, err: BaseException, aside: Path | None) -> None:
        kept = f" (the damaged file is kept as {aside})" if aside else ""
        why = " ".join(str(err).split())  # quick_check reports span lines
        why = why if len(why) <= 160 else why[:159] + "…"
        self._notice(f"The {self.WHAT} {self.path} was damaged ({why}); rebuilding it empty{kept}. {self.LOST}")

    def take_notices(self) -> list[str]:
        """User-facing sentences about what happened to the cache since the last call (a corrupt
        file rebuilt, a fallback to memory), for the front end to show once."""
        with self._lock:
            out, self._notices = self._notices, []
        return out

    # -- connection --------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        """The connection of this process (reopened after a fork), created and checked."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self._conn = None
        problem = folder_problem(self.folder) if self.folder is not None and self.path is not None else None
        if problem:  # never fill, nor move aside, what is not coherence's
            self._fallback_to_memory(ValueError(problem))
        elif self.path is None:
            self._conn = self._connect(":memory:")
        elif self.readonly:
            self._conn = self._connect_readonly(self.path)
        else:
            try:
                self._conn = self._connect(str(self.path))
            except sqlite3.DatabaseError as e:
                if not _is_corruption(e):
                    raise  # busy, locked, read-only: _run reports it; nothing is moved or lost
                self._rebuild(e)
            except OSError as e:
                self._fallback_to_memory(e)
        self._pid = os.getpid()
        self._file = _file_id(self.path)
        assert self._conn is not None
        return self._conn

    def _rebuild(self, err: BaseException) -> None:
        """The file at ``self.path`` failed to open as a healthy database: under a lock file,
        check again (another process may have rebuilt it meanwhile), else move it aside and
        start an empty one."""
        assert self.path is not None
        lock = Path(f"{self.path}.lock")
        with _exclusive(lock):
            try:
                self._conn = self._connect(str(self.path))
                return  # rebuilt by someone else in the meantime
            except sqlite3.DatabaseError as again:
                if not _is_corruption(again):
                    raise
            except OSError as again:
                self._fallback_to_memory(again)
                return
            aside = self._move_aside()
            self.rebuilt += 1
            try:
                self._conn = self._connect(str(self.path))
            except (sqlite3.Error, OSError) as e2:
                self._fallback_to_memory(e2)
                return
        self._notice_rebuilt(err, aside)

    def _fallback_to_memory(self, err: BaseException) -> None:
        self._notice(
            f"The {self.WHAT} {self.path} cannot be used ({err}); it is kept in memory "
            "only until the server or command exits."
        )
        self.in_memory = True
        self.path = None
        self._conn = self._connect(":memory:")

    def _connect_readonly(self, path: Path) -> sqlite3.Connection:
        """The file as it is, read without a lock, a journal or a marker; an empty cache in
        memory when it is absent or unreadable."""
        if path.is_file():
            try:
                return sqlite3.connect(
                    f"{path.resolve().as_uri()}?immutable=1", uri=True, check_same_thread=False, isolation_level=None
                )
            except sqlite3.Error as exc:
                log.info("%s %s cannot be read (%s): counted as empty", self.WHAT, path, exc)
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.executescript(self.SCHEMA)
        return conn

    def _connect(self, target: str) -> sqlite3.Connection:
        if target != ":memory:":
            if self.folder is not None:
                claim_folder(self.folder)
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(target, timeout=self.busy_timeout, check_same_thread=False, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if target != ":memory:":
                self._enable_wal(conn)
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(self.SCHEMA)
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

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to the WAL journal (it stays so).  The switch needs the file to itself
        and SQLite does not wait for it on the busy timeout: processes opening a new cache at the
        same moment got "database is locked" at once (docs/results.md#cache-wal).  So it waits
        here, up to the same timeout."""
        deadline = time.monotonic() + self.busy_timeout
        pause = 0.005
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, 0.1)

    def _move_aside(self) -> Path | None:
        """Move the database and its WAL/SHM files aside; returns where the database went."""
        assert self.path is not None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        moved: Path | None = None
        for suffix in ("", "-wal", "-shm", "-journal"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                dst = Path(f"{self.path}.corrupt-{stamp}-{os.getpid()}{suffix}")
                try:
                    src.replace(dst)
                    if not suffix:
                        moved = dst
                except OSError:
                    try:
                        src.unlink()
                    except OSError:
                        pass
        return moved

    def _recover(self, err: BaseException) -> None:
        """A query failed because the file is damaged: drop the connection and open the path
        again.  ``_open`` checks the file and rebuilds it only if it is still damaged; when
        another process has already replaced it (a different file now), it is simply used."""
        log.info("%s %s failed (%s); reopening it", self.WHAT, self.path, err)
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        if self.path is None or _file_id(self.path) != self._file:
            return
        # Same file: quick_check may not see every kind of damage the query hit, so rebuild.
        lock = Path(f"{self.path}.lock")
        with _exclusive(lock):
            if _file_id(self.path) != self._file:
                return  # replaced while we waited for the lock
            aside = self._move_aside()
            self.rebuilt += 1
        self._notice_rebuilt(err, aside)

    def _run(self, fn: Callable[[sqlite3.Connection], _T], default: _T) -> _T:
        with self._lock:
            for attempt in (1, 2):
                try:
                    return fn(self._open())
                except sqlite3.DatabaseError as e:
                    if not _is_corruption(e):
                        # locked/busy beyond the timeout, disk full, read-only: not corruption.
                        # The caller goes on without the cache (asks the LLM / keeps samples).
                        log.warning("%s %s: %s", self.WHAT, self.path, e)
                        return default
                    if attempt == 2:
                        log.warning("%s %s: %s", self.WHAT, self.path, e)
                        return default
                    self._recover(e)
                except (OSError, sqlite3.Error) as e:
                    log.warning("%s %s: %s", self.WHAT, self.path, e)
                    return default
            return default

    # -- API ----------------------------------------------------------------------------------
    def get(self, key: CacheKey, limit: int | None = None) -> list[Sample]:
        """The first ``limit`` cached usable samples for ``key`` (all when None), in order.
        Rows that are not usable (written by older versions, which cached invalid replies) are
        never served."""
        if limit is not None and limit <= 0:
            return []

        def q(conn: sqlite3.Connection) -> list[Sample]:
            rows = conn.execute(
                "SELECT code, raw, status, detail FROM samples WHERE spec_hash=? AND model=? "
                "AND temperature=? AND prompt_version=? AND status='ok' AND code IS NOT NULL "
                "ORDER BY idx LIMIT ?",
                (*key.params(), -1 if limit is None else int(limit)),
            ).fetchall()
            return [Sample(code=r[0], raw=r[1], status=r[2], detail=r[3] or "") for r in rows]

        return self._run(q, [])

    def put(self, key: CacheKey, samples: list[Sample]) -> int:
        """Append the usable ``samples`` after the ones already stored; returns how many were
        stored.  Replies without usable code are not stored (see the module docstring)."""
        samples = [s for s in samples if s.status == "ok" and s.code is not None]
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
                    [(*key.params(), nxt + i, s.status, s.code, s.raw, s.detail, now) for i, s in enumerate(samples)],
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

    def add_misses(self, key: CacheKey, n: int) -> None:
        """Count ``n`` more replies without usable code for ``key`` (the replies themselves are
        not kept): it bounds how often a model that cannot write a function is asked again."""
        if n <= 0:
            return

        def q(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO misses(spec_hash, model, temperature, prompt_version, count) "
                "VALUES (?,?,?,?,?) ON CONFLICT(spec_hash, model, temperature, prompt_version) "
                "DO UPDATE SET count = count + excluded.count",
                (*key.params(), int(n)),
            )

        self._run(q, None)

    def misses(self, key: CacheKey) -> int:
        def q(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT count FROM misses WHERE spec_hash=? AND model=? AND temperature=? AND prompt_version=?",
                key.params(),
            ).fetchone()
            return int(row[0]) if row else 0

        return self._run(q, 0)

    def count(self, key: CacheKey) -> int:
        def q(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT COUNT(*) FROM samples WHERE spec_hash=? AND model=? AND temperature=? "
                "AND prompt_version=? AND status='ok' AND code IS NOT NULL",
                key.params(),
            ).fetchone()
            return int(row[0])

        return self._run(q, 0)

    def clear(self, key: CacheKey | None = None) -> None:
        """Forget everything (or only ``key``'s samples)."""

        def q(conn: sqlite3.Connection) -> None:
            for table in ("samples", "misses"):
                if key is None:
                    conn.execute(f"DELETE FROM {table}")
                else:
                    conn.execute(
                        f"DELETE FROM {table} WHERE spec_hash=? AND model=? AND temperature=? AND prompt_version=?",
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
