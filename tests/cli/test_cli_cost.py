"""Cost before spending: ``check --dry-run`` and ``max_cost_usd``, through the real command line
and litellm's real HTTP path to a loopback OpenAI-compatible server (priced as gpt-4o-mini by
litellm's local price map)."""

from __future__ import annotations

import json

import pytest

from coherence.engine.markers import find_targets
from coherence.engine.sampling.cost import estimate, estimate_models
from tests.cli.test_cli_newcomer import COUNT_VOWELS, messages, run_cli
from tests.support.openai_loopback import LoopbackServer, code_reply

MODEL = "openai/gpt-4o-mini"
TRIPLE = '''

# coherence
def triple(x: int) -> int:
    """Three times x.

    >>> triple(2)
    6
    """
    return 3 * x
'''
KEY = {"OPENAI_API_KEY": "sk-loopback"}


def targets_of(path):
    return find_targets(path.read_text(), str(path))


def test_the_estimate_counts_the_real_prompt_and_prices_it(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + TRIPLE)
    targets = targets_of(tmp_path / "m.py")
    one, nine = (estimate(targets, MODEL, count=c) for c in (1, 9))
    assert [f.qualname for f in nine.functions] == ["count_vowels", "triple"]
    assert all(f.requested == 9 and f.cached == 0 for f in nine.functions)
    assert nine.usd is not None and nine.usd > one.usd > 0
    # gpt-4o-mini takes n: one request carries the prompt for all nine samples
    assert nine.prompt_tokens == one.prompt_tokens and nine.completion_tokens == 9 * one.completion_tokens
    unpriced, local = estimate_models(targets, ["openai/no-such-model", "ollama/qwen2.5-coder"], count=9)
    assert unpriced.usd is None and "no price for openai/no-such-model" in unpriced.note
    assert local.usd == 0.0  # litellm's map prices a local model at nothing


# the second function's prompt and reply are several times the first's: whatever the first
# really cost, the second's estimate does not fit in the room left
LONG_VOWELS = COUNT_VOWELS.replace(
    "ignoring case.", "ignoring case.\n\n    " + "A vowel is one of a, e, i, o and u. " * 40
)
TRIPLE_REPLY = code_reply("def triple(x: int) -> int:\n    return x * 3")


def test_max_cost_stops_sampling_and_dry_run_deducts_the_cache(tmp_path):
    (tmp_path / "m.py").write_text(TRIPLE.lstrip() + "\n\n" + LONG_VOWELS)
    first, second = (estimate([t], MODEL, count=9).usd for t in targets_of(tmp_path / "m.py"))
    assert second > 2 * first
    limit = f"{first * 1.2:.8f}"  # room for the first function's samples, not for the second's
    cache = tmp_path / "cache"
    with LoopbackServer([TRIPLE_REPLY]) as server:
        proc = run_cli(
            "check",
            "m.py",
            "--model",
            MODEL,
            "--api-base",
            server.url,
            "--inputs",
            "50",
            "--cache-dir",
            cache,
            "--max-cost-usd",
            limit,
            "--format",
            "json",
            cwd=tmp_path,
            env=KEY,
        )
        asked = [r.text for r in server.chat_requests]
        found = {f["qualname"]: f for f in json.loads(proc.stdout)["functions"]}
        assert found["triple"]["status"] == "coherent" and found["triple"]["cost_usd"] > 0
        assert found["count_vowels"]["status"] == "skipped"
        reason = found["count_vowels"]["reason"]
        assert reason.startswith("not sampled:") and f"max_cost_usd ${float(limit):g}" in reason, reason
        # one request (the model takes n) for triple's nine samples; none for count_vowels
        assert len(asked) == 1 and "def triple(x: int) -> int:" in asked[0]
        assert "coherence: max_cost_usd reached: 1 function(s) not sampled" in proc.stderr
        assert proc.returncode == 0, proc.stderr  # a function over the budget is skipped, with its reason

        server.reset_requests()
        dry = run_cli(
            "check",
            "m.py",
            "--model",
            MODEL,
            "--api-base",
            server.url,
            "--cache-dir",
            cache,
            "--dry-run",
            cwd=tmp_path,
            env=KEY,
        )
        assert server.request_count == 0  # nothing was sent
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert "  triple: 0 sample(s) to request, 9 cached" in lines[0]
    assert "  count_vowels: 9 sample(s) to request, 0 cached" in lines[1]
    total = lines[2]
    assert total.startswith(f"{MODEL}: 2 function(s), 9 sample(s) to request, 9 cached"), total
    price = float(total.split("about $")[1].split()[0])
    assert price == pytest.approx(second, abs=1e-4)  # the cached function costs nothing
    assert messages(dry.stderr) == ["coherence: dry run, nothing was sent and nothing ran"]


@pytest.mark.slow  # the max-cost test covers a dry run by default
def test_dry_run_needs_no_key_and_says_when_there_is_no_price(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli(
        "check",
        "m.py",
        "--model",
        "openai/local",
        "--api-base",
        "http://127.0.0.1:9",
        "--cache-dir",
        tmp_path / "cache",
        "--dry-run",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "price unknown: litellm has no price for openai/local" in proc.stdout.splitlines()[-1]
    as_json = run_cli(
        "check",
        "m.py",
        "--model",
        "openai/local",
        "--cache-dir",
        tmp_path / "cache",
        "--dry-run",
        "--format",
        "json",
        cwd=tmp_path,
    )
    doc = json.loads(as_json.stdout)
    (function,) = doc["functions"]
    assert function["qualname"] == "count_vowels" and function["requested"] == 9 and function["cached"] == 0
    assert function["spec_hash"] == targets_of(tmp_path / "m.py")[0].spec.spec_hash  # the action's cache key
    assert doc["models"] == [{**doc["models"][0], "model": "openai/local", "requested": 9, "usd": None}]


@pytest.mark.parametrize("bad", ["0", "-1", "nan"])
def test_a_bad_max_cost_is_a_usage_error(tmp_path, bad):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli("check", "m.py", "--max-cost-usd", bad, cwd=tmp_path)
    assert proc.returncode == 2 and "--max-cost-usd" in proc.stderr


def test_max_cost_from_pyproject_is_checked(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.coherence]\nmax_cost_usd = -2\n")
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli("check", "m.py", "--model", MODEL, cwd=tmp_path)
    assert proc.returncode == 2 and "max_cost_usd must be more than 0 dollars, got -2" in proc.stderr
