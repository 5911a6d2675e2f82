"""Inject every LLM fault and cache fault of issue 5 once and print what was handled.

    python benchmarks/fault_tally.py

For each LLM fault: a loopback OpenAI-compatible server misbehaves on purpose, the engine asks it
for 9 alternatives through litellm's real HTTP path with a real SQLite cache, and the tally shows
the HTTP requests made (bounded?), what the user is told, and whether the cache file holds
anything but usable samples.  For each cache fault: the damage is done to a real file and the
cache is opened again.  "handled" means: bounded requests, one message, clean cache, no crash.
The assertions live in tests/faults/; this prints the figures.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from contextlib import closing
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "server")]

from coherence.engine.errors import SamplingError  # noqa: E402
from coherence.engine.sampling import (  # noqa: E402
    LiteLLMProvider,
    RetryPolicy,
    Sample,
    SampleCache,
    sample_alternatives,
)
from tests.faults.subject import GOOD, SPEC  # noqa: E402
from tests.support.openai_loopback import (  # noqa: E402
    Fault,
    LoopbackServer,
    code_reply,
    rate_limited,
    server_error,
    slow,
    truncated_json,
)

POLICY = RetryPolicy(max_attempts=3, base_delay=0.05, max_delay=0.2, max_total_wait=3.0)
MAX_REQUESTS = 1 + 8 * POLICY.max_attempts  # the most one sampling may make for 9 alternatives


def garbage_rows(path: Path) -> int:
    if not path.exists():
        return 0
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT COUNT(*) FROM samples WHERE status != 'ok' OR code IS NULL OR code NOT LIKE '%def clamp(%'"
        ).fetchone()[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LLM_FAULTS = [
    ("timeout (delay 3 s > timeout 0.5 s)", dict(replies=[GOOD], then=slow(3.0)), dict(timeout=0.5)),
    ("429, Retry-After 0.5 s, then fine", dict(replies=[GOOD], faults=[rate_limited(0.5)]), {}),
    (
        "429 after 6 replies, Retry-After 1 h",
        dict(replies=[GOOD], ignore_n=True, faults=[None] * 6, then=rate_limited(3600)),
        {},
    ),
    ("500 always", dict(replies=[GOOD], then=server_error(500)), {}),
    ("connection refused", None, {}),
    ("truncated JSON always", dict(replies=[GOOD], then=truncated_json()), {}),
    ("empty choices always", dict(replies=[GOOD], then=Fault(empty=True)), {}),
    ("reply without a code block", dict(replies=["Compare x with both bounds."]), {}),
    ("reply defining g, not clamp", dict(replies=[code_reply("def g(x, lo, hi):\n    return x")]), {}),
    ("reply in JavaScript", dict(replies=["```javascript\nfunction clamp(x, lo, hi) { return x; }\n```"]), {}),
    ("provider ignores n", dict(replies=[GOOD], ignore_n=True), {}),
    ("bad API key (401)", dict(replies=[GOOD], then=Fault(status=401, message="Incorrect API key")), {}),
]


async def llm_fault(name: str, server_kw: dict | None, provider_kw: dict, tmp: Path) -> dict:
    cache_path = tmp / f"llm-{abs(hash(name))}" / "samples.sqlite3"
    server = LoopbackServer(**server_kw).start() if server_kw is not None else None
    url = server.url if server else f"http://127.0.0.1:{closed_port()}/v1"
    provider = LiteLLMProvider(
        "openai/tally", api_base=url, api_key="sk-tally", retry=POLICY, timeout=provider_kw.get("timeout", 10.0)
    )
    cache = SampleCache(cache_path)
    t0 = time.monotonic()
    try:
        got = await sample_alternatives(SPEC, 9, provider, cache)
        told = got.report()
        messages = 1
    except SamplingError as err:
        told = str(err)
        messages = 1 if "\n" not in told else told.count("\n") + 1
    finally:
        cache.close()
        if server:
            server.stop()
    requests = server.request_count if server else 1 + len(provider.waits)
    row = {
        "fault": name,
        "requests": requests,
        "waits": len(provider.waits),
        "seconds": time.monotonic() - t0,
        "garbage": garbage_rows(cache_path),
        "told": told,
    }
    row["handled"] = requests <= MAX_REQUESTS and messages == 1 and row["garbage"] == 0
    return row


WRITER = textwrap.dedent(
    """\
    import sys
    from coherence.engine.sampling import SampleCache, Sample
    from coherence.engine.sampling.cache import CacheKey
    c = SampleCache(sys.argv[1]); k = CacheKey("kill", "m", 0.6, "1")
    for b in range(10**6):
        c.put(k, [Sample(f"def clamp():\\n    return {b}  # {j}\\n" + "#" * 3000, "r", "ok") for j in range(40)])
        print(b, flush=True)
    """
)


def cache_faults(tmp: Path) -> list[dict]:
    from coherence.engine.sampling.cache import CacheKey

    rows = []
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    # killed mid-write
    path = tmp / "kill" / "samples.sqlite3"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    proc.stdout.readline()
    proc.stdout.readline()
    time.sleep(random.uniform(0, 0.05))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    cache = SampleCache(path)
    got = cache.get(CacheKey("kill", "m", 0.6, "1"))
    whole = len(got) % 40 == 0
    cache.put(CacheKey("kill", "m", 0.6, "1"), [Sample("def clamp():\n    return -1\n", "r", "ok")])
    rows.append(
        {
            "fault": "writer SIGKILLed mid-write",
            "handled": whole and cache.count(CacheKey("kill", "m", 0.6, "1")) == len(got) + 1,
            "told": f"{len(got)} samples in whole batches of 40; top-up appended after them",
        }
    )
    cache.close()
    # damaged files
    for how in ("truncated to half", "garbage over the header", "garbage over page 5"):
        path = tmp / how.replace(" ", "-") / "samples.sqlite3"
        c = SampleCache(path)
        for k in range(20):
            c.put(
                CacheKey(f"s{k}", "m", 0.6, "1"),
                [Sample(f"def f{k}():\n    return {i}\n" + "#" * 500, "r", "ok") for i in range(10)],
            )
        c.close()
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            if how.startswith("truncated"):
                fh.truncate(size // 2)
            elif "header" in how:
                fh.write(os.urandom(100))
            else:
                fh.seek(4 * 4096)
                fh.write(os.urandom(4096))
        c = SampleCache(path)
        try:
            c.get(CacheKey("s1", "m", 0.6, "1"))
            notices = c.take_notices()
            ok = (
                len(notices) == 1
                and c.put(CacheKey("s1", "m", 0.6, "1"), [Sample("def f1():\n    return 0\n", "r", "ok")]) == 1
            )
            told = notices[0] if notices else "(nothing said)"
        except Exception as exc:  # a crash is what is counted
            ok, told = False, f"crashed: {exc!r}"
        c.close()
        rows.append({"fault": f"file {how}", "handled": ok, "told": told})
    # a busy database shared with another process
    path = tmp / "busy" / "samples.sqlite3"
    SampleCache(path).put(CacheKey("b", "m", 0.6, "1"), [Sample("def clamp():\n    return 1\n", "r", "ok")])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    c = SampleCache(path, busy_timeout=0.2)
    c.put(CacheKey("b", "m", 0.6, "1"), [Sample("def clamp():\n    return 2\n", "r", "ok")])
    holder.execute("ROLLBACK")
    holder.close()
    ok = c.rebuilt == 0 and not list(path.parent.glob("*.corrupt-*")) and c.count(CacheKey("b", "m", 0.6, "1")) == 1
    rows.append(
        {
            "fault": "database locked by another process",
            "handled": ok,
            "told": "operation skipped (logged), file kept: not mistaken for damage",
        }
    )
    c.close()
    return rows


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="fault-tally-") as d:
        tmp = Path(d)
        llm = [await llm_fault(name, s, p, tmp) for name, s, p in LLM_FAULTS]
        cache = cache_faults(tmp)
    print(
        f"LLM faults (9 alternatives asked for; at most {MAX_REQUESTS} requests allowed; retries: {POLICY.max_attempts} attempts)"
    )
    print(f"{'fault':40} {'req':>4} {'waits':>5} {'secs':>5} {'junk':>4}  handled  what the user is told")
    for r in llm:
        print(
            f"{r['fault']:40} {r['requests']:>4} {r['waits']:>5} {r['seconds']:>5.1f} {r['garbage']:>4}  {'yes' if r['handled'] else 'NO ':7}  {r['told'][:110]}"
        )
    print("\nCache faults")
    for r in cache:
        print(f"{r['fault']:40} {'yes' if r['handled'] else 'NO ':7}  {r['told'][:130]}")
    rows = llm + cache
    handled = sum(r["handled"] for r in rows)
    print(
        f"\nfaults injected: {len(rows)} ({len(llm)} LLM, {len(cache)} cache) · handled: {handled} · not handled: {len(rows) - handled}"
    )
    return 0 if handled == len(rows) else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
