"""The whole check through litellm's real HTTP path, against a loopback OpenAI-compatible server
serving the recorded candidates of examples/recorded_samples.jsonl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.markers import find_targets
from tests.conftest import EXAMPLES
from tests.support.openai_loopback import LoopbackServer, code_reply


def recorded(name: str) -> list[str]:
    for line in (EXAMPLES / "recorded_samples.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["entry_point"] == name:
            return [code_reply(c.replace("# End of python code", "")) for c in row["candidates"]]
    raise LookupError(name)


def count_vowels_target(body: str | None = None):
    source = (EXAMPLES / "textutils.py").read_text()
    if body is not None:
        source = source.replace('return sum(1 for ch in s if ch in "aeiou")', body)
    return next(t for t in find_targets(source, str(EXAMPLES / "textutils.py")) if t.name == "count_vowels")


async def test_check_through_litellm_http_and_cache(tmp_path):
    with LoopbackServer(replies=recorded("count_vowels"), cycle=True) as server:
        config = CheckConfig(
            model="openai/recorded", api_base=server.url, samples=10, inputs=200, cache_dir=str(tmp_path)
        )
        os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")
        checker = Checker(config)
        result = await checker.check(count_vowels_target())
        assert result.status == "incoherent"
        assert result.samples == 10 and result.model == "openai/recorded"
        assert result.counterexample is not None and result.counterexample.yours == "0"
        asked = sum(r.n for r in server.chat_requests)
        assert asked == 9
        # The LLM saw the spec, never the body.
        assert all('return sum(1 for ch in s if ch in "aeiou")' not in r.text for r in server.chat_requests)
        assert all("def count_vowels(s: str) -> int:" in r.text for r in server.chat_requests)

        # Editing only the body costs no LLM call: the samples come from the SQLite cache,
        # and the fixed function is now coherent.
        before = server.request_count
        fixed = await Checker(config).check(count_vowels_target('return sum(1 for ch in s.lower() if ch in "aeiou")'))
        assert server.request_count == before
        assert fixed.status in ("coherent", "incoherent")
        assert fixed.trust > result.trust
        assert fixed.cluster_sizes[fixed.user_cluster] == max(fixed.cluster_sizes)


@pytest.mark.slow  # tests/cli/test_cli_cost.py's max-cost check runs the CLI through litellm's HTTP by default
def test_cli_through_litellm_http(tmp_path):
    with LoopbackServer(replies=recorded("is_palindrome"), cycle=True) as server:
        mod = tmp_path / "pal.py"
        source = (EXAMPLES / "textutils.py").read_text()
        mod.write_text(source[source.index("# coherence\ndef is_palindrome") :])
        env = dict(os.environ, OPENAI_API_KEY="sk-loopback")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "coherence",
                "check",
                str(mod),
                "--model",
                "openai/recorded",
                "--api-base",
                server.url,
                "--inputs",
                "200",
                "--cache-dir",
                str(tmp_path / "cache"),
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        (entry,) = json.loads(proc.stdout)["functions"]
        assert entry["status"] == "coherent" and entry["samples"] == 10
        assert entry["pac_bound"] is not None
        assert server.request_count >= 1


def test_the_stand_alone_loopback_serves_the_corpus_and_counts_its_requests():
    """tests/e2e drives the loopback server as a separate process: it prints its URL, serves the
    recorded candidates, and says on ``GET /loopback/stats`` how many chat requests it answered."""
    repo = EXAMPLES.parent
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_loopback", "--corpus", str(EXAMPLES / "recorded_samples.jsonl")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=repo,
    )
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        base = url.removesuffix("/v1")

        def stats() -> dict:
            with urllib.request.urlopen(f"{base}/loopback/stats", timeout=10) as r:
                return json.loads(r.read())

        assert stats() == {"chatRequests": 0}
        body = json.dumps(
            {
                "model": "x",
                "n": 2,
                "messages": [{"role": "user", "content": "Write the function `count_vowels`: def count_vowels(s):"}],
            }
        ).encode()
        req = urllib.request.Request(f"{url}/chat/completions", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            reply = json.loads(r.read())
        assert len(reply["choices"]) == 2 and "def count_vowels" in reply["choices"][0]["message"]["content"]
        assert stats() == {"chatRequests": 1}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
