"""Sample-cache integrity (issue 5, "Hardening"): a writer SIGKILLed mid-write, a damaged file
(truncated, garbage over the header, over a page), and two processes sharing one cache.  The
cache recovers or rebuilds, says so, never crashes, loses nothing that was committed and never
serves another function's samples.  Real SQLite files, real processes; the LLM is the loopback
server (litellm's HTTP path) or litellm's ``mock_response``."""

from __future__ import annotations

import ast
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from pathlib import Path

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.markers import find_targets
from coherence.engine.sampling import (
    LiteLLMProvider,
    RetryPolicy,
    Sample,
    SampleCache,
    cache_key,
    sample_alternatives,
)
from coherence.engine.sampling.cache import CacheKey
from tests.faults.subject import GOOD, SPEC, TARGET
from tests.support import SERVER_DIR
from tests.support.openai_loopback import LoopbackServer

FAST = RetryPolicy(max_attempts=2, base_delay=0.05, max_total_wait=1.0)
MODEL = "openai/cache-test"
ENV = {**os.environ, "PYTHONPATH": str(SERVER_DIR), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}


def provider_for(url: str) -> LiteLLMProvider:
    return LiteLLMProvider(MODEL, api_base=url, api_key="sk-loopback", retry=FAST, timeout=10.0)


def defines(code: str, name: str) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.parse(code).body)


def integrity_ok(path: Path) -> bool:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# ---------------------------------------------------------------------------------------------
# killed mid-write
# ---------------------------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """\
    import sys
    from coherence.engine.sampling import SampleCache, Sample
    from coherence.engine.sampling.cache import CacheKey
    cache = SampleCache(sys.argv[1])
    key = CacheKey(*sys.argv[2:5], sys.argv[5])
    start = int(sys.argv[6])
    pad = "#" * 3000  # big batches: each transaction spans many pages, so kills land inside one
    for b in range(start, start + 100000):
        batch = [Sample(f"def clamp(x, lo, hi):\\n    return {b}  # batch {b} item {j}\\n{pad}\\n",
                        "raw", "ok") for j in range(40)]
        cache.put(key, batch)
        print(b, flush=True)
    """
)


def test_writer_killed_mid_write_leaves_only_complete_batches_and_topping_up_works(tmp_path):
    path = tmp_path / "samples.sqlite3"
    key = cache_key(SPEC, provider_for("http://127.0.0.1:9/v1"))
    rng = random.Random(7)
    written = 0  # batches the writers reported as committed
    start = 0
    for _kill in range(4):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER,
                str(path),
                key.spec_hash,
                key.model,
                str(key.temperature),
                key.prompt_version,
                str(start),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        try:
            lines = [proc.stdout.readline() for _ in range(2 + rng.randrange(3))]
            assert all(ln.strip() for ln in lines), "the writer died on its own"
            time.sleep(rng.uniform(0.0, 0.05))  # somewhere inside the next put
            proc.send_signal(signal.SIGKILL)
            rest = proc.stdout.read()
        finally:
            proc.kill()
            proc.wait(timeout=30)
            proc.stdout.close()
        done = [int(x) for x in (*lines, *rest.split()) if str(x).strip()]
        written += len(done)
        # (the batch after the last one printed may have committed before the kill: a new
        # writer starts its numbers far away)
        start = max(done) + 1000

    cache = SampleCache(path)
    samples = cache.get(key)
    assert not cache.take_notices()  # a killed writer is not damage: nothing to rebuild
    assert integrity_ok(path)
    # Only whole batches, each exactly as written; every batch the writers saw committed is there.
    batches: dict[int, list[int]] = {}
    for s in samples:
        b, j = (int(t) for t in s.code.split("# batch ", 1)[1].split("\n", 1)[0].split(" item "))
        batches.setdefault(b, []).append(j)
    assert all(items == list(range(40)) for items in batches.values())
    assert len(batches) >= written and len(samples) == 40 * len(batches)
    assert all(defines(s.code, "clamp") for s in samples)

    # Topping up after the crash asks only for the shortfall and appends after the survivors.
    have = len(samples)
    with LoopbackServer([GOOD]) as server:
        result = await_(sample_alternatives(SPEC, have + 3, provider_for(server.url), cache))
        assert [r.n for r in server.chat_requests] == [3]
    assert result.from_cache == have and len(result.valid) == have + 3
    assert cache.count(key) == have + 3
    with closing(sqlite3.connect(path)) as conn:
        idx = [r[0] for r in conn.execute("SELECT idx FROM samples ORDER BY idx")]
    assert idx == sorted(set(idx)) and len(idx) == have + 3
    cache.close()


def await_(coro):
    import asyncio

    return asyncio.run(coro)


# ---------------------------------------------------------------------------------------------
# damaged files
# ---------------------------------------------------------------------------------------------


def _fill(path: Path) -> CacheKey:
    """Many functions' samples, checkpointed into the main file."""
    cache = SampleCache(path)
    for k in range(20):
        other = CacheKey(f"other{k:02d}", MODEL, 0.6, "1")
        cache.put(other, [Sample(f"def other{k}(x):\n    return {i}\n" + "#" * 500, "raw", "ok") for i in range(10)])
    key = cache_key(SPEC, provider_for("http://127.0.0.1:9/v1"))
    cache.put(key, [Sample(f"def clamp(x, lo, hi):\n    return {i}\n", "raw", "ok") for i in range(5)])
    cache.close()
    assert not Path(f"{path}-wal").exists()
    return key


def _damage(path: Path, how: str) -> None:
    rng = random.Random(how)
    size = path.stat().st_size
    page = 4096
    with open(path, "r+b") as fh:
        if how == "truncated":
            fh.truncate(size // 2)
        elif how == "header":
            fh.write(bytes(rng.randrange(256) for _ in range(100)))
        elif how == "page":
            fh.seek(4 * page)
            fh.write(bytes(rng.randrange(256) for _ in range(page)))
        elif how == "last-page":
            fh.seek(size - page)
            fh.write(bytes(rng.randrange(256) for _ in range(page)))


@pytest.mark.parametrize("how", ["truncated", "header", "page", "last-page"])
async def test_damaged_file_is_rebuilt_and_says_so(tmp_path, how):
    path = tmp_path / "samples.sqlite3"
    _fill(path)
    _damage(path, how)
    with LoopbackServer([GOOD]) as server:
        result = await sample_alternatives(SPEC, 9, provider_for(server.url), SampleCache(path))
        assert server.request_count == 1  # asked again (the old samples were in the bad file)
    assert len(result.valid) == 9 and all(defines(s.code, "clamp") for s in result.valid)
    assert len(result.notices) == 1
    notice = result.notices[0]
    assert notice.startswith(f"The sample cache {path} was damaged (") and "rebuilding it" in notice
    assert "\n" not in notice
    (aside,) = tmp_path.glob("samples.sqlite3.corrupt-*[0-9]")  # kept for a post-mortem
    assert str(aside) in notice
    assert integrity_ok(path)
    again = SampleCache(path)
    assert again.count(cache_key(SPEC, provider_for("http://127.0.0.1:9/v1"))) == 9
    assert not again.take_notices()  # rebuilt once, fine since
    again.close()


async def test_damage_is_recovered_and_reported_through_the_check(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    cache_dir = tmp_path / "cache"
    path = cache_dir / "samples.sqlite3"
    with LoopbackServer([GOOD]) as server:
        config = CheckConfig(model=MODEL, api_base=server.url, samples=4, inputs=40, cache_dir=str(cache_dir))
        checker = Checker(config)
        first = await checker.check(TARGET)
        assert first.status == "coherent" and not first.notices
        assert server.request_count == 1
        checker.cache.close()  # the process exits
        with open(path, "r+b") as fh:  # the file is damaged meanwhile
            fh.write(os.urandom(8192))
        second = await Checker(config).check(TARGET)  # the next run
        assert server.request_count == 2  # its samples were lost with the file: asked again
    assert second.status == "coherent" and second.sampling == "3 of 3 alternatives"
    (notice,) = second.notices
    assert "was damaged" in notice and "rebuilding it" in notice
    assert integrity_ok(path)


def test_busy_database_is_not_mistaken_for_damage(tmp_path):
    """Another process holding the write lock past the busy timeout: the cache gives up on this
    operation (the caller asks the LLM instead) but never moves the shared file aside."""
    path = tmp_path / "samples.sqlite3"
    key = _fill(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        cache = SampleCache(path, busy_timeout=0.2)
        assert cache.put(key, [Sample("def clamp(x, lo, hi):\n    return 0\n", "raw", "ok")]) == 0
        assert not cache.take_notices() and cache.rebuilt == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not list(tmp_path.glob("samples.sqlite3.corrupt-*"))
    assert cache.count(key) == 5  # nothing was lost
    cache.close()


# ---------------------------------------------------------------------------------------------
# two processes, one cache
# ---------------------------------------------------------------------------------------------

OPENER = textwrap.dedent(
    """\
    import json, logging, sys, time
    from coherence.engine.sampling import Sample, SampleCache
    from coherence.engine.sampling.cache import CacheKey

    warnings = []
    logging.getLogger("coherence.engine.sampling.cache").addHandler(
        type("H", (logging.Handler,), {"emit": lambda self, r: warnings.append(r.getMessage())})())
    me = sys.argv[1]
    for path, go in json.loads(sys.argv[2]):
        while time.time() < go:  # every opener starts at the same instant
            pass
        cache = SampleCache(path)
        cache.put(CacheKey(me, "m", 0.6, "1"), [Sample("def f(): return 1", "raw", "ok")])
        cache.close()
    print(json.dumps(warnings))
    """
)


def test_processes_opening_a_new_cache_at_once_all_get_it(tmp_path):
    """Switching a new file to the WAL journal needs it to itself, and SQLite does not wait for
    that on the busy timeout: openers racing on a new cache got "database is locked" (about one
    round in six with three openers) and went on without it."""
    rounds, openers = 15, 4
    start = time.time() + 2.0
    plan = [(str(tmp_path / f"r{r}" / "samples.sqlite3"), start + 0.2 * r) for r in range(rounds)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, f"p{k}", json.dumps(plan)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for k in range(openers)
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert json.loads(out) == []  # no "database is locked", no fallback
    for path, _ in plan:
        with closing(sqlite3.connect(path)) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == openers


SHARER = textwrap.dedent(
    """\
    import asyncio, json, logging, sys
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    from coherence.engine.markers import find_targets
    from coherence.engine.sampling import LiteLLMProvider, SampleCache, sample_alternatives

    path, me, other, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

    def spec(name):
        src = f"# coherence\\ndef {name}(x: int) -> int:\\n    \\"\\"\\"Twice x.\\"\\"\\"\\n    return 2 * x\\n"
        return find_targets(src, "m.py")[0].spec

    def provider(name, tag):
        reply = f"```python\\ndef {name}(x):\\n    return x + x  # {tag}\\n```"
        return LiteLLMProvider("openai/mock", use_n=False, completion_kwargs={"mock_response": reply})

    async def main():
        cache = SampleCache(path)
        out = {"asked": {}, "wrong": [], "shared_asked": 0}
        for r in range(rounds):
            for k in range(6):
                mine, theirs = f"{me}_{k}", f"{other}_{k}"
                got = await sample_alternatives(spec(mine), 2 + r, provider(mine, me), cache)
                out["asked"][mine] = out["asked"].get(mine, 0) + len(got.samples) - got.from_cache
                out["wrong"] += [s.code for s in got.valid if f"def {mine}(" not in s.code]
                # read the other process' functions (never asking: count 0 beyond what exists)
                seen = await asyncio.to_thread(cache.get, _key(theirs))
                out["wrong"] += [s.code for s in seen if f"def {theirs}(" not in s.code]
            # both processes top up one shared function at once
            got = await sample_alternatives(spec("shared"), 3 * (r + 1), provider("shared", me), cache)
            out["shared_asked"] += len(got.samples) - got.from_cache
            out["wrong"] += [s.code for s in got.valid if "def shared(" not in s.code]
        print(json.dumps(out))

    def _key(name):
        from coherence.engine.sampling import cache_key
        return cache_key(spec(name), provider(name, ""))

    asyncio.run(main())
    """
)


# Slow because each of its two processes imports litellm (for mock_response): the default run writes
# one cache from several processes in test_processes_opening_a_new_cache_at_once_all_get_it.
@pytest.mark.slow
def test_two_processes_share_one_cache(tmp_path):
    path = tmp_path / "shared" / "samples.sqlite3"
    rounds = 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SHARER, str(path), me, other, str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for me, other in (("alpha", "beta"), ("beta", "alpha"))
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        assert "locked" not in err.lower() and "sample cache" not in err, err
        outs.append(json.loads(out))
    assert all(o["wrong"] == [] for o in outs)

    cache = SampleCache(path)

    def count(name: str) -> int:
        src = f'# coherence\ndef {name}(x: int) -> int:\n    """Twice x."""\n    return 2 * x\n'
        spec = find_targets(src, "m.py")[0].spec
        key = cache_key(spec, LiteLLMProvider("openai/mock"))
        rows = cache.get(key)
        assert all(f"def {name}(" in s.code for s in rows)  # never another function's samples
        return len(rows)

    for o in outs:
        for name, asked in o["asked"].items():
            # every sample a process got from the LLM is in the file, and only those
            assert count(name) == asked == 2 + rounds - 1
    # the shared function: both processes' samples, none lost (appends never collide)
    assert count("shared") == sum(o["shared_asked"] for o in outs) >= 3 * rounds
    assert integrity_ok(path) and not list(path.parent.glob("*.corrupt-*"))
    cache.close()
