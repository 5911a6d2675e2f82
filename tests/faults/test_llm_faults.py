"""LLM faults (issue 5, "Hardening"): a loopback OpenAI-compatible server misbehaving on purpose,
reached through litellm's real HTTP path (``openai/<name>`` + ``api_base``), with the real SQLite
sample cache on disk.

For every fault: the number of HTTP requests is bounded (nothing is retried forever), backoff
and ``Retry-After`` are honoured, partial samples are kept and reported as
"7 of 10 samples; 3 failed: rate limited (429)", the user gets one clear message, and the cache
file never holds a failed or unusable reply (opened with sqlite3 and looked at).
"""

from __future__ import annotations

import ast
import itertools
import logging
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.errors import SamplingError
from coherence.engine.sampling import (
    LiteLLMProvider,
    RetryPolicy,
    SampleCache,
    cache_key,
    sample_alternatives,
)
from tests.faults.subject import GOOD, MODULE, SPEC, TARGET
from tests.support import SERVER_DIR
from tests.support.openai_loopback import (
    Fault,
    LoopbackServer,
    code_reply,
    rate_limited,
    server_error,
    slow,
    truncated_json,
)

GOOD_2 = code_reply("def clamp(x, lo, hi):\n    return max(min(hi, x), lo)")
# Quick retries: the bound is what is tested, not the default delays.
FAST = RetryPolicy(max_attempts=3, base_delay=0.05, max_delay=0.2, max_total_wait=3.0)
ALTERNATIVES = 9  # m = 10 programs, yours included


def provider_for(url: str, **kw) -> LiteLLMProvider:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 10.0)
    return LiteLLMProvider("openai/faulty", api_base=url, api_key="sk-loopback", **kw)


def cache_rows(cache_dir: Path) -> list[tuple[str, str | None, str]]:
    """(status, code, raw) of every row in the cache file, read with sqlite3 directly."""
    path = cache_dir / "samples.sqlite3"
    if not path.exists():
        return []
    with closing(sqlite3.connect(path)) as conn:
        return list(conn.execute("SELECT status, code, raw FROM samples ORDER BY idx"))


def assert_cache_clean(cache_dir: Path, expected: int | None = None) -> None:
    """Nothing but usable samples of ``clamp`` in the file."""
    rows = cache_rows(cache_dir)
    for status, code, _raw in rows:
        assert status == "ok" and code
        defined = {n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)}
        assert "clamp" in defined
    if expected is not None:
        assert len(rows) == expected, rows


def one_sentence(message: str) -> None:
    """A message a person reads once: one paragraph, no traceback, no repeated error class."""
    assert message and "\n" not in message and "Traceback" not in message
    assert "Error: " not in message.split("(", 1)[-1][:40] or message.count("Error") <= 1


async def sample(server_url: str, cache_dir: Path, **kw):
    cache = SampleCache(cache_dir)
    try:
        return await sample_alternatives(SPEC, ALTERNATIVES, provider_for(server_url, **kw), cache)
    finally:
        cache.close()


# ---------------------------------------------------------------------------------------------
# transport faults
# ---------------------------------------------------------------------------------------------


async def test_timeout_is_retried_a_bounded_number_of_times(cache_dir):
    with LoopbackServer([GOOD], then=slow(3.0)) as server:
        provider = provider_for(server.url, timeout=0.5)
        t0 = time.monotonic()
        with pytest.raises(SamplingError) as info:
            await sample_alternatives(SPEC, ALTERNATIVES, provider, SampleCache(cache_dir))
        elapsed = time.monotonic() - t0
        assert server.request_count == FAST.max_attempts  # one request (n=9), 3 attempts
        assert len(provider.waits) == FAST.max_attempts - 1
    assert info.value.kind == "timeout"
    one_sentence(str(info.value))
    assert "did not answer in time" in str(info.value) and "9× timeout" in str(info.value)
    assert elapsed < 30  # three 0.5 s timeouts plus backoff (and litellm's first import)
    assert_cache_clean(cache_dir, 0)


async def test_timeout_then_success_keeps_the_samples(cache_dir):
    with LoopbackServer([GOOD], faults=[slow(3.0)]) as server:
        result = await sample(server.url, cache_dir, timeout=0.5)
        assert server.request_count == 2
    assert len(result.valid) == ALTERNATIVES and result.failures == []
    assert_cache_clean(cache_dir, ALTERNATIVES)


async def test_429_honours_retry_after(cache_dir):
    # The backoff would be 5 s; the server says 0.6 s.
    policy = RetryPolicy(max_attempts=3, base_delay=5.0, max_delay=5.0, max_total_wait=10.0)
    with LoopbackServer([GOOD], faults=[rate_limited(retry_after=0.6)]) as server:
        provider = provider_for(server.url, retry=policy)
        result = await sample_alternatives(SPEC, ALTERNATIVES, provider, SampleCache(cache_dir))
        first, second = server.chat_requests
    assert second.received_at - first.received_at >= 0.6
    assert len(provider.waits) == 1 and 0.6 <= provider.waits[0] < 1.0
    assert len(result.valid) == ALTERNATIVES and result.report() == "9 of 9 alternatives"
    assert_cache_clean(cache_dir, ALTERNATIVES)


async def test_429_partial_samples_are_kept_and_reported(cache_dir, caplog):
    # The server ignores n (one choice per response), serves 6 replies, then answers 429 with a
    # Retry-After far beyond the retry budget: those requests give up at once.
    with LoopbackServer(
        [GOOD, GOOD_2], ignore_n=True, faults=[None] * 6, then=rate_limited(retry_after=3600)
    ) as server:
        with caplog.at_level(logging.WARNING, logger="coherence"):
            result = await sample(server.url, cache_dir)
        assert server.request_count == 9  # 1 (n=9, got 1) + 8 single requests, none retried
        assert [r.n for r in server.chat_requests].count(9) == 1
    assert len(result.valid) == 6
    assert result.programs_summary() == "7 of 10 samples; 3 failed: rate limited (429)"
    assert result.report() == result.programs_summary()
    message = result.problem("clamp")
    one_sentence(message)
    assert "7 of 10 samples; 3 failed: rate limited (429)" in message and "rate-limiting" in message
    # The message is the result's; nothing else is printed along the way.
    assert not [r for r in caplog.records if r.name.startswith("coherence")]
    assert_cache_clean(cache_dir, 6)

    # The next check asks only for the 3 missing ones.
    with LoopbackServer([GOOD]) as server:
        again = await sample(server.url, cache_dir)
        assert [r.n for r in server.chat_requests] == [3]
    assert again.from_cache == 6 and again.report() == "9 of 9 alternatives"
    assert_cache_clean(cache_dir, 9)


async def test_500_is_retried_with_backoff_and_bounded(cache_dir):
    with LoopbackServer([GOOD], then=server_error(500)) as server:
        provider = provider_for(server.url)
        with pytest.raises(SamplingError) as info:
            await sample_alternatives(SPEC, ALTERNATIVES, provider, SampleCache(cache_dir))
        reqs = server.chat_requests
    assert len(reqs) == FAST.max_attempts
    # exponential backoff between attempts (0.05 s, then 0.1 s, plus jitter)
    assert len(provider.waits) == 2 and provider.waits[1] > provider.waits[0]
    gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(reqs)]
    assert all(g >= w for g, w in zip(gaps, provider.waits))
    assert info.value.kind == "provider" and "server error (500)" in str(info.value)
    one_sentence(str(info.value))
    assert_cache_clean(cache_dir, 0)


async def test_500_partial_with_single_requests(cache_dir):
    with LoopbackServer([GOOD], faults=[None] * 7, then=server_error(503)) as server:
        result = await sample(server.url, cache_dir, use_n=False, max_concurrency=1)
        # 7 served, each of the other 2 tried max_attempts times
        assert server.request_count == 7 + 2 * FAST.max_attempts
    assert result.programs_summary() == "8 of 10 samples; 2 failed: server error (503)"
    assert_cache_clean(cache_dir, 7)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the with block ends: connections are refused


async def test_connection_refused(cache_dir):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    provider = provider_for(url)
    t0 = time.monotonic()
    with pytest.raises(SamplingError) as info:
        await sample_alternatives(SPEC, ALTERNATIVES, provider, SampleCache(cache_dir))
    assert time.monotonic() - t0 < 30
    assert len(provider.waits) == FAST.max_attempts - 1  # tried 3 times, then gave up
    assert info.value.kind == "connection"
    assert "check the api_base" in str(info.value)
    one_sentence(str(info.value))
    assert_cache_clean(cache_dir, 0)


async def test_truncated_json_is_an_invalid_response_not_a_server_error(cache_dir):
    with LoopbackServer([GOOD], then=truncated_json()) as server:
        with pytest.raises(SamplingError) as info:
            await sample(server.url, cache_dir)
        assert server.request_count == FAST.max_attempts
    assert info.value.kind == "invalid" and "invalid response" in str(info.value)
    assert "server error" not in str(info.value)
    one_sentence(str(info.value))
    assert_cache_clean(cache_dir, 0)

    # once, then fine: retried and kept; the cut-off body is never cached
    with LoopbackServer([GOOD], faults=[truncated_json()]) as server:
        result = await sample(server.url, cache_dir)
        assert server.request_count == 2
    assert len(result.valid) == ALTERNATIVES
    assert_cache_clean(cache_dir, ALTERNATIVES)
    assert all("pass" not in code for _, code, _ in cache_rows(cache_dir))


async def test_empty_choices_are_retried_and_bounded(cache_dir):
    with LoopbackServer([GOOD], then=Fault(empty=True)) as server:
        with pytest.raises(SamplingError) as info:
            await sample(server.url, cache_dir)
        assert server.request_count == FAST.max_attempts
    assert "empty response" in str(info.value)
    assert_cache_clean(cache_dir, 0)


async def test_bad_api_key_fails_fast_with_one_message(cache_dir):
    fault = Fault(status=401, message="Incorrect API key provided: sk-loop****back")
    with LoopbackServer([GOOD], then=fault) as server:
        with pytest.raises(SamplingError) as info:
            await sample(server.url, cache_dir)
        assert server.request_count == 1  # never retried
        # one request per sample, concurrently: the first 401 stops the rest
        with pytest.raises(SamplingError):
            await sample(server.url, cache_dir, use_n=False, max_concurrency=2)
        assert server.request_count <= 1 + 2  # at most the ones already in flight
    msg = str(info.value)
    assert info.value.kind == "auth" and "API key" in msg and "Incorrect API key provided" in msg
    assert "AuthenticationError" not in msg
    one_sentence(msg)
    assert_cache_clean(cache_dir, 0)


async def test_a_model_name_without_a_provider_says_how_to_name_it(cache_dir):
    """litellm refuses a name it cannot route ("gpt4o", "my-model") before any request, as a
    BadRequestError whose text links its providers page.  The user reads what to change, once,
    and the link survives (the class prefix "litellm." was stripped everywhere, which turned
    docs.litellm.ai into docs.ai)."""
    cache = SampleCache(cache_dir)
    try:
        with pytest.raises(SamplingError) as info:
            await sample_alternatives(
                SPEC, ALTERNATIVES, LiteLLMProvider("my-model", api_key="sk-x", retry=FAST, timeout=10.0), cache
            )
    finally:
        cache.close()
    msg = str(info.value)
    assert info.value.kind == "config"
    assert "'my-model'" in msg and "provider/model" in msg and "openai/gpt-4o-mini" in msg
    assert "https://docs.litellm.ai/docs/providers" in msg
    one_sentence(msg)
    assert_cache_clean(cache_dir, 0)


# ---------------------------------------------------------------------------------------------
# replies that arrive but are not usable
# ---------------------------------------------------------------------------------------------


async def test_reply_without_code_block_is_reported_and_not_cached(cache_dir):
    prose = "To clamp a value, compare it with both bounds and return the nearest one."
    with LoopbackServer([prose]) as server:
        result = await sample(server.url, cache_dir)
        assert server.request_count == 1
        assert result.report() == "1 of 10 samples; 9 without code"
        assert_cache_clean(cache_dir, 0)  # the replies are not in the file...
        with closing(sqlite3.connect(cache_dir / "samples.sqlite3")) as conn:  # ...only a count
            assert list(conn.execute("SELECT count FROM misses")) == [(9,)]
        # A whole batch without code: the next check does not pay for the same again.
        server.set_replies([GOOD])
        again = await sample(server.url, cache_dir)
        assert server.request_count == 1
        assert again.report() == ("1 of 10 samples; 9 failed: no usable code in earlier replies (not asked again)")
        assert "clear the sample cache" in again.problem("clamp")
        # Clearing the cache asks again, and the good replies are kept.
        SampleCache(cache_dir).clear()
        fresh = await sample(server.url, cache_dir)
        assert server.request_count == 2
    assert len(fresh.valid) == ALTERNATIVES
    assert_cache_clean(cache_dir, ALTERNATIVES)


async def test_a_few_bad_replies_are_asked_for_again_a_bounded_number_of_times(cache_dir):
    prose = "Sorry, I can only describe it."
    with LoopbackServer([prose, prose, prose, GOOD, GOOD, GOOD, GOOD, GOOD, GOOD]) as server:
        first = await sample(server.url, cache_dir)
        assert first.report() == "7 of 10 samples; 3 without code"
        server.set_replies([prose])  # the model keeps failing on the rest
        for _ in range(5):
            await sample(server.url, cache_dir)
        # 3 + 3 + 3 unusable replies make a batch: asked twice more, then no more
        assert [r.n for r in server.chat_requests] == [9, 3, 3]
    assert_cache_clean(cache_dir, 6)


async def test_reply_defining_the_wrong_function(cache_dir):
    wrong = code_reply("def g(x, lo, hi):\n    return max(lo, min(x, hi))")
    with LoopbackServer([wrong, GOOD, GOOD_2]) as server:  # cycles: 3 wrong of 9
        result = await sample(server.url, cache_dir)
        assert server.request_count == 1
    assert result.report() == "7 of 10 samples; 3 without the function"
    assert {s.detail for s in result.invalid} == {"the code does not define clamp (defines g)"}
    assert_cache_clean(cache_dir, 6)


async def test_reply_in_another_language(cache_dir):
    js = "```javascript\nfunction clamp(x, lo, hi) { return Math.max(lo, Math.min(x, hi)); }\n```"
    with LoopbackServer([js, GOOD, GOOD]) as server:
        result = await sample(server.url, cache_dir)
        assert server.request_count == 1
    assert result.report() == "7 of 10 samples; 3 in another language"
    assert {s.detail for s in result.invalid} == {"a javascript block, not Python"}
    assert_cache_clean(cache_dir, 6)


async def test_provider_ignoring_n_is_made_up_with_single_requests(cache_dir):
    with LoopbackServer([GOOD, GOOD_2], ignore_n=True) as server:
        result = await sample(server.url, cache_dir)
        ns = [r.n for r in server.chat_requests]
    assert ns == [9] + [1] * 8  # asked for 9, got 1, then exactly the 8 missing, once each
    assert result.report() == "9 of 9 alternatives"
    assert_cache_clean(cache_dir, ALTERNATIVES)


async def test_a_server_that_never_sends_enough_is_not_asked_forever(cache_dir):
    # Every response is empty of choices once n is dropped: bounded rounds, then reported.
    def responder(req):
        return [GOOD] if req.n > 1 else Fault(empty=True)

    with LoopbackServer(responder=responder, ignore_n=True) as server:
        result = await sample(server.url, cache_dir)
        assert server.request_count == 1 + 8 * FAST.max_attempts
    assert result.programs_summary() == "2 of 10 samples; 8 failed: empty response"
    assert_cache_clean(cache_dir, 1)


# ---------------------------------------------------------------------------------------------
# what the check reports
# ---------------------------------------------------------------------------------------------


async def test_check_result_carries_the_partial_sample_message(cache_dir, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    with LoopbackServer(
        [GOOD, GOOD_2], ignore_n=True, faults=[None] * 6, then=rate_limited(retry_after=3600)
    ) as server:
        config = CheckConfig(
            model="openai/faulty", api_base=server.url, samples=10, inputs=60, cache_dir=str(cache_dir)
        )
        result = await Checker(config).check(TARGET)
        assert server.request_count == 9
    assert result.status == "coherent" and result.samples == 7
    assert result.sampling == "7 of 10 samples; 3 failed: rate limited (429)"
    assert result.sampling_problem.startswith(
        "coherence: clamp: 7 of 10 samples; 3 failed: rate limited (429) from openai/faulty."
    )
    assert result.sampling_problem_kind == "rate_limit"
    key = cache_key(SPEC, LiteLLMProvider("openai/faulty"))
    assert SampleCache(cache_dir).count(key) == 6
    assert_cache_clean(cache_dir, 6)


# ---------------------------------------------------------------------------------------------
# through the command line
# ---------------------------------------------------------------------------------------------


def run_cli(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    mod = tmp_path / "clampmod.py"
    mod.write_text(MODULE)
    env = {**os.environ, "OPENAI_API_KEY": "sk-loopback", "PYTHONPATH": str(SERVER_DIR)}
    env.pop("COHERENCE_MODEL", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "coherence",
            "check",
            str(mod),
            "--model",
            "openai/faulty",
            "--api-base",
            url,
            "--inputs",
            "60",
            "--cache-dir",
            str(tmp_path / "cache"),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )


@pytest.mark.slow  # the CLI's rejected key: test_promises.py
def test_cli_partial_samples_and_bad_key(tmp_path):
    with LoopbackServer(
        [GOOD, GOOD_2], ignore_n=True, faults=[None] * 6, then=rate_limited(retry_after=3600)
    ) as server:
        proc = run_cli(tmp_path, server.url)
        assert server.request_count == 9
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("7 of 10 samples; 3 failed: rate limited (429)") == 1, proc.stdout
    assert messages(proc.stderr) == [], proc.stderr  # the report says it; nothing else is printed
    assert_cache_clean(tmp_path / "cache", 6)

    bad_key = Fault(status=401, message="Incorrect API key provided")
    with LoopbackServer([GOOD], then=bad_key) as server:
        proc = run_cli(tmp_path, server.url, "--samples", "20")  # 13 more than cached: asks
        assert server.request_count <= 2  # n=10 and n=3 at once; neither retried
    # 6 cached samples are kept and used; the failed ones are reported once, in the report
    assert proc.returncode == 0, proc.stderr
    assert "7 of 20 samples; 13 failed: authentication failed" in proc.stdout
    assert messages(proc.stderr) == [], proc.stderr

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with LoopbackServer([GOOD], then=bad_key) as server:
        proc = run_cli(fresh, server.url)  # an empty cache: nothing to fall back on
        assert server.request_count == 1
    assert proc.returncode == 2  # a rejected key is the run's configuration
    lines = messages(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("coherence: The provider of openai/faulty rejected the credentials")
    assert "API key" in lines[0] and "Traceback" not in proc.stderr
    # the function it stopped is in the report, as an error with the reason
    assert "clamp: error — The provider of openai/faulty rejected the credentials" in proc.stdout


def messages(stderr: str) -> list[str]:
    """What stderr says besides the one progress line per finished function."""
    return [ln for ln in stderr.splitlines() if ln.strip() and not re.match(r"\[\d+/\d+\] ", ln)]
