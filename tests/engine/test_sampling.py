"""Sampling: prompt, reply extraction, the litellm provider over real HTTP, the cache, replay.

The LLM is replaced only by: the recorded corpus (../shared/corpus, skipped when absent), the
loopback OpenAI-compatible server through litellm's real HTTP path, or litellm's
``mock_response``.
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from contextlib import closing, redirect_stdout
from pathlib import Path

import pytest

from coherence.engine.errors import ConfigurationError, SamplingError
from coherence.engine.sampling import (
    PROMPT_VERSION,
    LiteLLMProvider,
    ReplayProvider,
    RetryPolicy,
    Sample,
    SampleCache,
    SampleSet,
    build_messages,
    cache_key,
    extract_program,
    make_provider,
    sample_alternatives,
)
from coherence.engine.spec import Param, Spec
from tests.support import CORPUS_DIR, SERVER_DIR
from tests.support.openai_loopback import (
    Fault,
    LoopbackServer,
    code_reply,
    corpus_responder,
    rate_limited,
    server_error,
    slow,
    truncated_json,
)

HUMANEVAL_GPT4O = CORPUS_DIR / "humaneval-gpt_4o.jsonl.gz"
FAST = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05, max_total_wait=2.0)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

USER_MODULE = '''\
import math
from typing import List

SCALE = 10


def helper(x: int) -> int:
    """Twice x."""
    return 2 * x


def dedupe_desc(xs: List[int], limit: int = SCALE) -> List[int]:
    """Return the distinct values of xs, largest first, at most `limit` of them.

    >>> dedupe_desc([3, 1, 3, 2])
    [3, 2, 1]
    """
    chosen = sorted(set(xs))[::-1]  # BODY-MARKER-7f3a
    return chosen[:limit]
'''


def spec_from_source(source: str, name: str) -> Spec:
    """A Spec the way the engine builds one: signature, docstring and module context, no body."""
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    args = ast.unparse(fn.args)
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    params = tuple(
        Param(a.arg, "positional_or_keyword", ast.unparse(a.annotation) if a.annotation else None) for a in fn.args.args
    )
    context_parts = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)):
            context_parts.append(ast.unparse(node))
        elif isinstance(node, ast.FunctionDef) and node.name != name:
            doc = ast.get_docstring(node)
            context_parts.append(
                f"def {node.name}({ast.unparse(node.args)})"
                + (f" -> {ast.unparse(node.returns)}" if node.returns else "")
                + f':\n    """{doc}"""\n    ...'
            )
    return Spec(
        name=name,
        signature=f"({args}){ret}",
        params=params,
        returns=ast.unparse(fn.returns) if fn.returns else None,
        docstring=ast.get_docstring(fn),
        context="\n".join(context_parts),
    )


SPEC = spec_from_source(USER_MODULE, "dedupe_desc")

IMPL_A = """\
from typing import List

def dedupe_desc(xs: List[int], limit: int = 10) -> List[int]:
    return sorted(set(xs), reverse=True)[:limit]
"""
IMPL_B = """\
def dedupe_desc(xs, limit=10):
    out = []
    for x in sorted(xs, reverse=True):
        if x not in out:
            out.append(x)
    return out[:limit]
"""
IMPL_C = """\
def dedupe_desc(xs, limit=10):
    return list(dict.fromkeys(sorted(xs)[::-1]))[:limit]
"""
REPLIES = [code_reply(IMPL_A), code_reply(IMPL_B), code_reply(IMPL_C)]


def run_program(code: str, name: str, *args):
    ns: dict = {}
    exec(compile(code, "<sample>", "exec"), ns)  # test-only, trusted strings
    return ns[name](*args)


def loopback_provider(server: LoopbackServer, **kw) -> LiteLLMProvider:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout", 10.0)
    return LiteLLMProvider("openai/loopback-coder", api_base=server.url, api_key="sk-dummy", **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# prompt
# ---------------------------------------------------------------------------------------------


def test_build_messages_shows_spec_and_context_but_no_body():
    messages = build_messages(SPEC)
    assert [m["role"] for m in messages] == ["system", "user"]
    text = "\n".join(m["content"] for m in messages)
    assert SPEC.header() in text
    assert f"def dedupe_desc{SPEC.signature}:" in text and "limit: int" in text
    assert "from typing import List" in text and "SCALE = 10" in text  # module context
    assert "def helper(x: int) -> int" in text
    assert "```python" in text and "if __name__" in text  # asks for one block, no demo
    assert "BODY-MARKER" not in text and "sorted(set(xs))" not in text
    assert PROMPT_VERSION == "1"


def test_build_messages_without_context_and_async():
    spec = Spec(
        "fetch",
        "(url: str) -> bytes",
        (Param("url", "positional_or_keyword", "str"),),
        "bytes",
        "Download url.",
        is_async=True,
    )
    user = build_messages(spec)[1]["content"]
    assert "async def fetch(url: str) -> bytes:" in user
    assert "already contains" not in user


# ---------------------------------------------------------------------------------------------
# extract_program
# ---------------------------------------------------------------------------------------------


def test_extract_prose_and_fenced_block():
    reply = (
        "Sure! Here's an efficient implementation using a set:\n\n"
        "```python\n" + IMPL_A + "```\n\n"
        "This runs in O(n log n) time because of the sort."
    )
    s = extract_program(reply, "dedupe_desc")
    assert s.status == "ok", s.detail
    assert s.raw == reply
    assert "Sure!" not in s.code and "O(n log n)" not in s.code
    assert run_program(s.code, "dedupe_desc", [3, 1, 3, 2]) == [3, 2, 1]


def test_extract_helper_block_plus_main_block_and_usage_block():
    reply = textwrap.dedent(
        """\
        First a helper:

        ```python
        import math

        def is_prime(n):
            if n < 2:
                return False
            return all(n % d for d in range(2, math.isqrt(n) + 1))
        ```

        Then the function itself:

        ```py
        def count_primes(xs):
            return sum(1 for x in xs if is_prime(x))
        ```

        Example usage:

        ```python
        print(count_primes([2, 3, 4, 5]))  # 3
        ```
        """
    )
    s = extract_program(reply, "count_primes")
    assert s.status == "ok", s.detail
    assert "def is_prime" in s.code and "import math" in s.code
    assert "print(" not in s.code
    assert run_program(s.code, "count_primes", [2, 3, 4, 5, 9, 11]) == 4


def test_extract_no_block():
    s = extract_program("I'm sorry, but I can't help with that request.", "f")
    assert s.status == "no_code" and s.code is None
    assert extract_program("", "f").status == "no_code"
    assert extract_program("Sorry", "f").status == "no_code"  # parses as a Name, still prose


def test_extract_wrong_function():
    reply = "```python\ndef dedupe(xs):\n    return list(set(xs))\n```"
    s = extract_program(reply, "dedupe_desc")
    assert s.status == "missing_function" and s.code is None
    assert "dedupe" in s.detail
    # a method of a class does not count either
    reply = "```python\nclass S:\n    def dedupe_desc(self, xs):\n        return xs\n```"
    assert extract_program(reply, "dedupe_desc").status == "missing_function"


def test_extract_syntax_error():
    reply = "```python\ndef dedupe_desc(xs, limit=10)\n    return sorted(set(xs))[:limit]\n```"
    s = extract_program(reply, "dedupe_desc")
    assert s.status == "syntax_error" and s.code is None
    assert "line 1" in s.detail


def test_extract_truncated_reply_unclosed_fence():
    ok = "Here:\n```python\ndef f(x):\n    return x + 1\n"
    assert extract_program(ok, "f").status == "ok"
    cut = "Here:\n```python\ndef f(x):\n    return (x +\n"
    assert extract_program(cut, "f").status == "syntax_error"


def test_extract_windows_line_endings():
    reply = "Here:\r\n```python\r\ndef f(x):\r\n    return x + 1\r\n```\r\nIt adds one.\r\n"
    s = extract_program(reply, "f")
    assert s.status == "ok" and s.code == "def f(x):\n    return x + 1\n"
    assert s.raw == reply  # the record keeps the reply as received


def test_extract_sets_a_reasoning_models_thinking_aside():
    # a draft in the thinking is not the answer, fenced or not
    draft = "```python\ndef f(x):\n    return x + 2\n```"
    reply = f"<think>\nFirst try:\n{draft}\nNo: one, not two.\n</think>\n\ndef f(x):\n    return x + 1\n"
    s = extract_program(reply, "f")
    assert s.status == "ok" and "x + 1" in s.code
    # cut short while thinking: no answer, said so
    s = extract_program(f"<think>\nFirst try:\n{draft}\n", "f")
    assert s.status == "no_code" and "thinking" in s.detail
    # a "<think>" that is not at the head is the code's own business
    code = 'def f(x):\n    return "<think>" + x\n'
    assert extract_program(f"```python\n{code}```", "f").code == code


def test_extract_corpus_style_candidate_with_end_marker_and_demo(capsys):
    cand = textwrap.dedent(
        '''\
        from typing import List

        def min_k(test_list, K):
            """Smallest K by first element."""
            test_list = sorted(test_list, key=lambda x: x[0])
            return test_list[:K]

        # Example usage
        print(min_k([(3, 4), (1, 2)], 1))
        assert min_k([(3, 4), (1, 2)], 1) == [(1, 2)]
        result = min_k([(5, 6)], 1)

        if __name__ == "__main__":
            test_list1 = [(3, 4), (78, 76), (2, 3)]
            print(min_k(test_list1, 2))
        # End of python code
        '''
    )
    s = extract_program(cand, "min_k")
    assert s.status == "ok", s.detail
    assert "__main__" not in s.code and "End of python code" not in s.code
    assert "print(" not in s.code and "assert" not in s.code and "result =" not in s.code
    assert "from typing import List" in s.code and '"""Smallest K' in s.code  # kept
    assert "stripped" in s.detail
    assert run_program(s.code, "min_k", [(3, 4), (1, 2), (0, 9)], 2) == [(0, 9), (1, 2)]
    assert capsys.readouterr().out == ""  # loading the program printed nothing


def test_extract_keeps_legit_top_level_code():
    code = textwrap.dedent(
        """\
        import sys
        sys.setrecursionlimit(10000)
        TABLE = [i * i for i in range(10)]

        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)
        """
    )
    s = extract_program(code, "fib")  # no fence: the whole reply parses
    assert s.status == "ok"
    assert "sys.setrecursionlimit(10000)" in s.code and "TABLE = " in s.code
    assert run_program(s.code, "fib", 10) == 55


def test_extract_prefers_the_last_definition():
    reply = (
        "First attempt:\n```python\ndef f(x):\n    return x\n```\n"
        "Wait, that is wrong. Corrected:\n```python\ndef f(x):\n    return -x\n```\n"
    )
    s = extract_program(reply, "f")
    assert s.status == "ok" and run_program(s.code, "f", 3) == -3


# ---------------------------------------------------------------------------------------------
# LiteLLMProvider through litellm's real HTTP path
# ---------------------------------------------------------------------------------------------


async def test_provider_returns_served_candidates_with_n():
    with LoopbackServer(REPLIES) as server:
        provider = loopback_provider(server)
        assert provider.supports_n()  # litellm says openai/* supports n
        reply = await provider.generate(SPEC, 3)
        reqs = server.chat_requests
    assert len(reqs) == 1 and reqs[0].n == 3  # one request, n honoured
    assert [s.status for s in reply.samples] == ["ok", "ok", "ok"]
    assert [s.code for s in reply.samples] == [IMPL_A.strip() + "\n", IMPL_B.strip() + "\n", IMPL_C.strip() + "\n"]
    assert reply.failures == []
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.cost_usd == 0.0  # an unpriced model costs nothing, and does not crash
    body = reqs[0].body
    assert body["model"] == "loopback-coder" and body["temperature"] == 0.6
    assert reqs[0].headers.get("authorization") == "Bearer sk-dummy"


async def test_provider_makes_up_when_server_ignores_n():
    with LoopbackServer(REPLIES, ignore_n=True) as server:
        reply = await loopback_provider(server).generate(SPEC, 4)
        reqs = server.chat_requests
    assert len(reply.samples) == 4 and all(s.status == "ok" for s in reply.samples)
    assert reply.failures == []
    # the first request asked for 4 and got 1; the other 3 were asked for one by one
    assert len(reqs) == 4
    assert reqs[0].n == 4 and all(r.n == 1 and "n" not in r.body for r in reqs[1:])


async def test_provider_without_n_uses_separate_concurrent_calls():
    with LoopbackServer(REPLIES, delay=0.15) as server:
        provider = loopback_provider(server, use_n=False, max_concurrency=2)
        reply = await provider.generate(SPEC, 5)
        assert server.request_count == 5
        assert server.max_in_flight == 2  # concurrent, but bounded by the semaphore
    assert len(reply.samples) == 5


async def test_provider_retries_429_and_honours_retry_after():
    # The backoff would be 5 s; the server's Retry-After says 0.2 s.
    policy = RetryPolicy(max_attempts=3, base_delay=5.0, max_delay=5.0, max_total_wait=10.0)
    with LoopbackServer(REPLIES, faults=[rate_limited(retry_after=0.2)]) as server:
        t0 = time.monotonic()
        reply = await loopback_provider(server, retry=policy).generate(SPEC, 2)
        elapsed = time.monotonic() - t0
        assert server.request_count == 2
    assert len(reply.samples) == 2 and reply.failures == []
    assert 0.2 <= elapsed < 3.0


async def test_provider_gives_up_when_retry_after_exceeds_budget():
    policy = RetryPolicy(max_attempts=4, base_delay=0.01, max_total_wait=1.0)
    with LoopbackServer(REPLIES, then=rate_limited(retry_after=3600)) as server:
        t0 = time.monotonic()
        with pytest.raises(SamplingError) as info:
            await sample_alternatives(SPEC, 2, loopback_provider(server, retry=policy))
        assert time.monotonic() - t0 < 2.0
        assert server.request_count == 1  # no point in retrying within the budget
    assert info.value.kind == "rate_limit"
    assert "rate limited" in str(info.value)


async def test_provider_persistent_500_gives_partial_results():
    with LoopbackServer(REPLIES, faults=[None, None], then=server_error(500)) as server:
        provider = loopback_provider(server, use_n=False, max_concurrency=1)
        result = await sample_alternatives(SPEC, 4, provider)  # no exception
        # 2 served; each of the other 2 was tried max_attempts (3) times
        assert server.request_count == 2 + 2 * FAST.max_attempts
    assert len(result.valid) == 2
    assert result.failures == ["server error (500)", "server error (500)"]
    assert result.summary() == "2 of 4 alternatives; 2 failed: server error (500)"


async def test_provider_retries_timeouts_and_truncated_json():
    with LoopbackServer(REPLIES, faults=[slow(2.0), truncated_json()]) as server:
        provider = loopback_provider(server, use_n=False, max_concurrency=1, timeout=0.4)
        reply = await provider.generate(SPEC, 1)
        assert server.request_count == 3  # timeout, truncated, success
    assert [s.status for s in reply.samples] == ["ok"] and reply.failures == []


async def test_provider_401_fails_fast_with_auth_error():
    fault = Fault(status=401, message="Incorrect API key provided: sk-dummy")
    with LoopbackServer(REPLIES, then=fault) as server:
        with pytest.raises(SamplingError) as info:
            await sample_alternatives(SPEC, 3, loopback_provider(server))
        assert server.request_count == 1  # not retried
    assert info.value.kind == "auth"
    assert "API key" in str(info.value)


async def test_provider_404_model_not_found_is_config_error():
    with (
        LoopbackServer(REPLIES, then=Fault(status=404, message="model 'x' not found")) as server,
        pytest.raises(SamplingError) as info,
    ):
        await loopback_provider(server, use_n=False).generate(SPEC, 2)
    assert info.value.kind == "config" and "not found" in str(info.value)


async def test_provider_down_raises_connection_error():
    provider = LiteLLMProvider(
        "openai/x", api_base=f"http://127.0.0.1:{free_port()}/v1", api_key="k", retry=FAST, use_n=False
    )
    with pytest.raises(SamplingError) as info:
        await sample_alternatives(SPEC, 2, provider)
    assert info.value.kind == "connection"


async def test_server_rejecting_n_falls_back_to_single_calls():
    def responder(req):
        if req.n > 1:
            return Fault(status=400, message="'n' is not supported")
        return REPLIES[0]

    with LoopbackServer(responder=responder) as server:
        reply = await loopback_provider(server).generate(SPEC, 3)
        assert server.request_count == 4
    assert len(reply.samples) == 3 and reply.failures == []


async def test_requests_contain_the_spec_header_never_the_body():
    with LoopbackServer(REPLIES) as server:
        await loopback_provider(server, use_n=False).generate(SPEC, 2)
        reqs = server.chat_requests
    assert len(reqs) == 2
    for r in reqs:
        assert SPEC.header() in r.text
        assert "SCALE = 10" in r.text  # module context is shown
        assert "BODY-MARKER-7f3a" not in r.raw
        assert "sorted(set(xs))[::-1]" not in r.raw
        assert "chosen[:limit]" not in r.raw


async def test_reply_without_code_block_is_a_sample_not_a_failure():
    replies = ["I cannot do that.", code_reply("def other(x):\n    return x"), REPLIES[0]]
    with LoopbackServer(replies) as server:
        result = await sample_alternatives(SPEC, 3, loopback_provider(server))
    assert [s.status for s in result.samples] == ["no_code", "missing_function", "ok"]
    assert result.failures == []
    assert result.summary() == "1 of 3 alternatives; 1 without the function, 1 without code"


async def test_litellm_is_quiet_on_stdout(capfd):
    with (
        LoopbackServer(REPLIES, faults=[server_error(503)], then=Fault(status=401)) as server,
        pytest.raises(SamplingError),
    ):
        await loopback_provider(server, use_n=False, max_concurrency=1).generate(SPEC, 2)
    assert capfd.readouterr().out == ""


def test_fresh_process_prints_nothing_on_stdout():
    """Importing litellm and failing requests must leave stdout (the LSP channel) untouched."""
    script = textwrap.dedent(
        """\
        import asyncio
        import tests.support
        from tests.support.openai_loopback import LoopbackServer, Fault, server_error
        from coherence.engine.sampling import LiteLLMProvider, RetryPolicy
        from coherence.engine.spec import Spec
        from coherence.engine.errors import SamplingError
        spec = Spec("f", "(x)", (), None, "Return x.")
        async def main():
            with LoopbackServer(["no code"], faults=[server_error(500)], then=Fault(status=401)) as s:
                p = LiteLLMProvider("openai/t", api_base=s.url, api_key="k", use_n=False,
                                    retry=RetryPolicy(base_delay=0.01), max_concurrency=1)
                try:
                    await p.generate(spec, 2)
                except SamplingError:
                    pass
        asyncio.run(main())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=str(SERVER_DIR.parent),
        timeout=60,
        env={**os.environ, "PYTHONPATH": f"{SERVER_DIR}{os.pathsep}{SERVER_DIR.parent}"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


def _fresh_python(code: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter that imports coherence from this tree (what a module
    imports, or leaves behind, differs in one that ran other tests)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SERVER_DIR)},
        timeout=timeout,
    )


def test_litellm_not_imported_by_the_package():
    code = (
        "import sys, coherence.engine.sampling as s; s.make_provider(model='openai/x'); print('litellm' in sys.modules)"
    )
    out = _fresh_python(code, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_what_importing_litellm_leaves_is_out_of_every_collection():
    # A full collection walks every object it tracks with the interpreter lock held: litellm's
    # hundreds of thousands would stall the language server (benchmarks/gc_pauses.py).
    pytest.importorskip("litellm")
    code = (
        "import gc, json, coherence.engine.sampling.quiet_litellm as q\n"
        "before = len(gc.get_objects())\n"
        "q.import_litellm()\n"
        "print(json.dumps([before, len(gc.get_objects()), gc.get_freeze_count()]))\n"
    )
    out = _fresh_python(code, timeout=120)
    before, tracked, frozen = json.loads(out.stdout.strip().splitlines()[-1])
    assert frozen > 10 * before  # the import's objects, frozen
    assert tracked < frozen / 10  # and what collections still walk is a small remainder


# ---------------------------------------------------------------------------------------------
# litellm mock_response: cost and token accounting
# ---------------------------------------------------------------------------------------------


async def test_cost_and_tokens_accounting_with_mock_response():
    from coherence.engine.sampling.quiet_litellm import import_litellm

    litellm = import_litellm()
    provider = LiteLLMProvider(
        "gpt-4o-mini", api_key="sk-dummy", retry=FAST, completion_kwargs={"mock_response": REPLIES[1]}
    )
    result = await sample_alternatives(SPEC, 3, provider)
    assert [s.status for s in result.samples] == ["ok"] * 3
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    price = litellm.model_cost["gpt-4o-mini"]
    expected = (
        result.prompt_tokens * price["input_cost_per_token"] + result.completion_tokens * price["output_cost_per_token"]
    )
    assert result.cost_usd == pytest.approx(expected, rel=1e-6)
    assert result.cost_usd > 0


async def test_cost_is_zero_for_local_models_with_mock_response():
    provider = LiteLLMProvider(
        "ollama/no-such-local-model", retry=FAST, use_n=False, completion_kwargs={"mock_response": REPLIES[0]}
    )
    result = await sample_alternatives(SPEC, 2, provider)
    assert len(result.valid) == 2 and result.cost_usd == 0.0


# ---------------------------------------------------------------------------------------------
# cache
# ---------------------------------------------------------------------------------------------


async def test_cache_top_up_asks_only_for_the_shortfall(tmp_path):
    cache = SampleCache(tmp_path)
    with LoopbackServer(REPLIES) as server:
        provider = loopback_provider(server, use_n=False)
        first = await sample_alternatives(SPEC, 3, provider, cache)
        assert server.request_count == 3 and first.from_cache == 0
        assert cache.count(cache_key(SPEC, provider)) == 3

        second = await sample_alternatives(SPEC, 5, provider, cache)
        assert server.request_count == 5  # only the 2 missing ones were asked for
        assert second.from_cache == 3 and len(second.samples) == 5
        assert [s.code for s in second.samples[:3]] == [s.code for s in first.samples]
        assert cache.count(cache_key(SPEC, provider)) == 5

        # with n: one request for the shortfall, n=2
        server.reset_requests()
        provider_n = loopback_provider(server)
        await sample_alternatives(SPEC, 5, provider_n, SampleCache(tmp_path))
        assert server.request_count == 0  # same key: the model name, not the provider object
        await sample_alternatives(SPEC, 7, provider_n, SampleCache(tmp_path))
        assert [r.n for r in server.chat_requests] == [2]


async def test_cache_body_only_edit_costs_zero_requests(tmp_path):
    edited_module = USER_MODULE.replace(
        "chosen = sorted(set(xs))[::-1]  # BODY-MARKER-7f3a", "chosen = sorted(set(xs), reverse=True)"
    )
    edited = spec_from_source(edited_module, "dedupe_desc")
    assert edited.spec_hash == SPEC.spec_hash
    cache = SampleCache(tmp_path / "c.sqlite3")
    with LoopbackServer(REPLIES) as server:
        provider = loopback_provider(server, use_n=False)
        await sample_alternatives(SPEC, 3, provider, cache)
        n = server.request_count
        again = await sample_alternatives(edited, 3, provider, cache)
        assert server.request_count == n  # zero requests
        assert again.from_cache == 3 and again.summary() == "3 of 3 alternatives"

        # a docstring edit changes the Spec: new samples are asked for
        doc_edit = spec_from_source(USER_MODULE.replace("largest first", "biggest first"), "dedupe_desc")
        assert doc_edit.spec_hash != SPEC.spec_hash
        await sample_alternatives(doc_edit, 3, provider, cache)
        assert server.request_count == n + 3
        # and so does another temperature
        hot = loopback_provider(server, use_n=False, temperature=1.0)
        await sample_alternatives(SPEC, 1, hot, cache)
        assert server.request_count == n + 4


async def test_cache_stores_invalid_replies_but_never_failures(tmp_path):
    # (Name kept; the behaviour changed: a reply without usable code is reported but never
    # cached, so it cannot take a good sample's place on later checks.)
    cache = SampleCache(tmp_path)
    replies = ["no code here, sorry", REPLIES[0], REPLIES[1], REPLIES[2]]
    with LoopbackServer(replies, faults=[None, None], then=server_error(500)) as server:
        provider = loopback_provider(server, use_n=False, max_concurrency=1)
        result = await sample_alternatives(SPEC, 4, provider, cache)
        assert [s.status for s in result.samples] == ["no_code", "ok"]
        assert len(result.failures) == 2
        key = cache_key(SPEC, provider)
        assert cache.count(key) == 1  # only the usable sample; not the bad reply, not failures
        assert [s.status for s in cache.get(key, 10)] == ["ok"]

        server.then = None  # the provider recovers
        server.reset_requests()
        again = await sample_alternatives(SPEC, 4, provider, cache)
        assert server.request_count == 3 and again.from_cache == 1
        assert again.failures == [] and len(again.samples) == 4
        assert cache.count(key) == len(again.valid)


async def test_cached_samples_survive_a_failing_provider(tmp_path):
    cache = SampleCache(tmp_path)
    with LoopbackServer(REPLIES) as server:
        provider = loopback_provider(server, use_n=False)
        await sample_alternatives(SPEC, 2, provider, cache)
        server.then = Fault(status=401)
        result = await sample_alternatives(SPEC, 4, provider, cache)  # auth fails: keep cached
    assert len(result.valid) == 2 and result.from_cache == 2
    assert result.failures == ["authentication failed"] * 2
    assert result.summary() == "2 of 4 alternatives; 2 failed: authentication failed"


def test_cache_recovers_from_a_corrupt_file(tmp_path, caplog):
    path = tmp_path / "samples.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    key = cache_key(SPEC, LiteLLMProvider("openai/x"))
    with caplog.at_level(logging.WARNING):
        cache = SampleCache(path)
        assert cache.get(key, 5) == []
        cache.put(key, [Sample("def f(): pass\n", "raw", "ok")])
        assert cache.count(key) == 1
    assert any("rebuild" in r.getMessage() for r in caplog.records)
    assert list(tmp_path.glob("samples.sqlite3.corrupt-*"))
    assert not cache.in_memory
    with closing(sqlite3.connect(path)) as conn:  # a real database again
        assert conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 1
    cache.close()
    assert not Path(f"{path}-wal").exists()  # checkpointed on close

    # corrupted while in use by another process' instance: the next one rebuilds it
    path.write_bytes(b"\x00garbage" * 512)
    fresh = SampleCache(path)
    assert fresh.count(key) == 0
    fresh.put(key, [Sample("def g(): pass\n", "x", "ok", "")])
    assert fresh.count(key) == 1


def test_cache_threads_and_processes(tmp_path):
    cache = SampleCache(tmp_path)
    key = cache_key(SPEC, LiteLLMProvider("openai/x"))

    def writer(i):
        for j in range(5):
            cache.put(key, [Sample(f"# {i}-{j}\n", "raw", "ok")])

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.count(key) == 30

    script = textwrap.dedent(
        f"""\
        from coherence.engine.sampling import SampleCache, Sample
        from coherence.engine.sampling.cache import CacheKey
        c = SampleCache({str(tmp_path)!r})
        k = CacheKey({key.spec_hash!r}, {key.model!r}, {key.temperature!r}, {key.prompt_version!r})
        for j in range(10):
            c.put(k, [Sample("# p\\n", "raw", "ok")])
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SERVER_DIR)}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env) for _ in range(3)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    assert cache.count(key) == 60
    with closing(sqlite3.connect(tmp_path / "samples.sqlite3")) as conn:
        idx = [r[0] for r in conn.execute("SELECT idx FROM samples ORDER BY idx")]
    assert idx == list(range(60))


def test_cache_default_location_respects_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = SampleCache()
    assert cache.path == tmp_path / "xdg" / "coherence" / "samples.sqlite3"
    key = cache_key(SPEC, LiteLLMProvider("openai/x"))
    cache.put(key, [Sample("x = 1\n", "raw", "ok", "no f")])  # only usable samples are cached
    assert cache.get(key, 1)[0] == Sample("x = 1\n", "raw", "ok", "no f")
    cache.clear()
    assert cache.count(key) == 0


# ---------------------------------------------------------------------------------------------
# replay
# ---------------------------------------------------------------------------------------------


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in rows)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(data)
    else:
        path.write_text(data)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
async def test_replay_from_a_written_file(tmp_path, suffix):
    demo = IMPL_B + '\nif __name__ == "__main__":\n    print(dedupe_desc([1, 1]))\n# End of python code'
    rows = [
        {"entry_point": "other", "candidates": ["def other(): pass"]},
        {
            "benchmark": "MBPP",
            "task_id": 7,
            "entry_point": "dedupe_desc",
            "temperature": 0.6,
            "candidates": [IMPL_A + "# End of python code", demo, "def dedupe_desc(xs:\n", IMPL_C],
        },
        {"entry_point": "dedupe_desc", "candidates": ["def dedupe_desc(): return 'second line'"]},
    ]
    path = _write_jsonl(tmp_path / f"rec{suffix}", rows)
    provider = make_provider(model="openai/ignored", replay=path)  # replay wins
    assert isinstance(provider, ReplayProvider) and provider.cacheable is False
    assert len(provider.candidates_for("dedupe_desc")) == 4  # the first matching line
    reply = await provider.generate(SPEC, 3)
    assert [s.status for s in reply.samples] == ["ok", "ok", "syntax_error"]
    assert "__main__" not in reply.samples[1].code

    skipped = ReplayProvider(path, skip=1)
    result = await sample_alternatives(SPEC, 5, skipped, SampleCache(tmp_path / "cache"))
    assert len(result.samples) == 3 and result.failures == []  # only 3 after skipping 1
    assert result.summary() == "2 of 5 alternatives; 1 with a syntax error"
    assert result.from_cache == 0
    assert SampleCache(tmp_path / "cache").count(cache_key(SPEC, skipped)) == 0  # not cached

    with pytest.raises(SamplingError) as info:
        await provider.generate(Spec("missing_fn", "()", (), None, None), 1)
    assert "missing_fn" in str(info.value)


async def test_replay_reads_each_candidate_once_however_often_it_is_served(tmp_path, monkeypatch):
    from coherence.engine.sampling import replay

    path = _write_jsonl(
        tmp_path / "rec.jsonl", [{"entry_point": "dedupe_desc", "candidates": [IMPL_A, IMPL_B, IMPL_C]}]
    )
    reads = []

    def counting(reply, name, owner=None):
        reads.append(reply)
        return extract_program(reply, name, owner)

    monkeypatch.setattr(replay, "extract_program", counting)
    provider = ReplayProvider(path)
    first = await provider.generate(SPEC, 3)
    again = await provider.generate(SPEC, 3)
    assert [s.code for s in again.samples] == [s.code for s in first.samples] and all(s.ok for s in again.samples)
    assert len(reads) == 3  # re-checks re-read nothing


def test_replay_missing_file_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError) as info:
        make_provider(model=None, replay=tmp_path / "nope.jsonl.gz")
    assert "nope.jsonl.gz" in str(info.value)


def test_make_provider_without_model_explains_how_to_configure():
    with pytest.raises(ConfigurationError) as info:
        make_provider(model=None)
    msg = str(info.value)
    for needle in (
        "--model openai/gpt-4o-mini",
        "OPENAI_API_KEY",
        "anthropic/",
        "gemini/",
        "ollama/qwen2.5-coder",
        "http://localhost:11434",
        "--replay",
    ):
        assert needle in msg
    p = make_provider(model="openai/x", api_base="http://h/v1", temperature=0.2, max_concurrency=2)
    assert isinstance(p, LiteLLMProvider) and p.model == "openai/x" and p.temperature == 0.2


needs_corpus = pytest.mark.skipif(not HUMANEVAL_GPT4O.exists(), reason="../shared/corpus absent")


def _humaneval_spec(name: str) -> Spec:
    with gzip.open(HUMANEVAL_GPT4O, "rt") as fh:
        row = next(r for r in map(json.loads, fh) if r["entry_point"] == name)
    doc = textwrap.dedent(row["description"]).strip().strip('"').strip()
    return Spec(name, row["signature"], (), None, doc, context="from typing import List")


@pytest.mark.corpus
@needs_corpus
async def test_replay_on_the_recorded_corpus():
    spec = _humaneval_spec("has_close_elements")
    provider = ReplayProvider(HUMANEVAL_GPT4O, skip=1)
    assert len(provider.candidates_for("has_close_elements")) == 50
    result = await sample_alternatives(spec, 9, provider)
    assert len(result.samples) == 9 and len(result.valid) == 9
    assert result.summary() == "9 of 9 alternatives" and result.model.startswith("replay:")
    for s in result.valid:
        assert "End of python code" not in s.code
        assert run_program(s.code, "has_close_elements", [1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)
        assert not run_program(s.code, "has_close_elements", [1.0, 2.0, 3.0], 0.5)
    # candidate 0 is skipped
    first = ReplayProvider(HUMANEVAL_GPT4O)
    assert (await first.generate(spec, 1)).samples[0].raw == provider.candidates_for(spec.name)[0]
    assert (await provider.generate(spec, 1)).samples[0].raw == provider.candidates_for(spec.name)[1]


@pytest.mark.corpus
@needs_corpus
async def test_every_gpt4o_humaneval_candidate_extracts():
    provider = ReplayProvider(HUMANEVAL_GPT4O)
    statuses: dict[str, int] = {}
    for name in provider.entry_points():
        for cand in provider.candidates_for(name)[:10]:
            s = extract_program(cand, name)
            statuses[s.status] = statuses.get(s.status, 0) + 1
            if s.status == "ok":
                compile(s.code, "<c>", "exec")
                assert "__main__" not in s.code
    total = sum(statuses.values())
    assert statuses.get("ok", 0) / total > 0.97, statuses


@pytest.mark.corpus
@needs_corpus
async def test_loopback_serving_corpus_through_litellm():
    spec = _humaneval_spec("has_close_elements")
    with LoopbackServer(responder=corpus_responder(HUMANEVAL_GPT4O, skip=1)) as server:
        result = await sample_alternatives(spec, 4, loopback_provider(server))
        assert server.request_count == 1
    assert result.summary() == "4 of 4 alternatives"
    replay = ReplayProvider(HUMANEVAL_GPT4O, skip=1).candidates_for(spec.name)[1:5]
    assert [s.code for s in result.valid] == [extract_program(c, spec.name).code for c in replay]


def test_sampleset_summary_formats():
    ok = Sample("def f(): pass\n", "r", "ok")
    s = SampleSet([ok] * 7 + [Sample(None, "r", "missing_function")], 9, ["rate limited (429)"], "m")
    assert s.summary() == "7 of 9 alternatives; 1 without the function, 1 failed: rate limited (429)"
    assert SampleSet([ok] * 9, 9, [], "m").summary() == "9 of 9 alternatives"
    mixed = SampleSet([ok], 4, ["timeout", "timeout", "server error (500)"], "m")
    assert mixed.summary() == "1 of 4 alternatives; 3 failed: 2 timeout, 1 server error (500)"


def test_loopback_records_and_serves_without_litellm():
    import urllib.error
    import urllib.request

    with LoopbackServer(["plain reply"], faults=[rate_limited(retry_after=1)]) as server:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "n": 2}).encode()
        req = urllib.request.Request(
            server.base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 429 and info.value.headers["Retry-After"] == "1"
        with urllib.request.urlopen(req, timeout=5) as resp:
            data = json.load(resp)
        assert [c["message"]["content"] for c in data["choices"]] == ["plain reply"] * 2
        assert [r.n for r in server.requests] == [2, 2]
        assert server.requests[0].text == "hi"
    # keep the redirect import used: the loopback never prints
    buf = io.StringIO()
    with redirect_stdout(buf):
        LoopbackServer().start().stop()
    assert buf.getvalue() == ""
