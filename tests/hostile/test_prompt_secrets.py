"""A module's secrets do not go to the LLM provider (issue 28, section 4): its constants are part of
the prompt's module context, so credential-looking values in them (and in the docstring) are
redacted before a request leaves the machine, and ``coherence prompt FILE::NAME`` prints exactly
the messages a check sends.  The CLI runs as a subprocess against a loopback OpenAI-compatible
server, through litellm's real HTTP path."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.hostile.test_reports import SECRETS
from tests.lsp.conftest import server_env
from tests.support.openai_loopback import LoopbackServer, code_reply

HIDDEN = ["q8Zr2xW9vYc4", SECRETS["openai key"], SECRETS["aws access key id"], "b3BlbnNzaC1rZXktdjEAAAAA"]
MODULE = f'''import os

OPENAI_API_KEY = {SECRETS["openai key"]!r}
AWS = {{"id": {SECRETS["aws access key id"]!r}, "region": "eu-west-1"}}
DB_URL = "postgres://app:q8Zr2xW9vYc4@db.internal/app"
DEPLOY_KEY = """{SECRETS["private key"]}"""
RATE = 0.25


# coherence
def price(amount: float) -> float:
    """Return amount plus RATE tax, rounded to cents (the rate service uses token=q8Zr2xW9vYc4)."""
    return round(amount * (1 + RATE), 2)
'''


def run_cli(args: list[str], tmp_path, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "coherence", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**server_env(tmp_path), **env},
        cwd=tmp_path,
    )


def test_module_secrets_never_reach_the_provider_and_prompt_shows_what_is_sent(tmp_path):
    target = tmp_path / "billing.py"
    target.write_text(MODULE)
    reply = code_reply("def price(amount):\n    return round(amount * 1.25, 2)")
    with LoopbackServer([reply]) as server:
        done = run_cli(
            [
                "check",
                str(target),
                "--model",
                "openai/loopback",
                "--api-base",
                server.url,
                "--samples",
                "3",
                "--inputs",
                "20",
                "--format",
                "json",
                "--cache-dir",
                str(tmp_path / "cache"),
            ],
            tmp_path,
            OPENAI_API_KEY="sk-loopback",
        )
        sent = server.chat_requests
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert json.loads(done.stdout)["functions"][0]["samples"] == 3
    assert sent, "no request reached the loopback server"
    for request in sent:
        body = json.dumps(request.body)
        assert [s for s in HIDDEN if s in body] == []
        assert "[redacted]" in request.text and "RATE = 0.25" in request.text and "eu-west-1" in request.text
    shown = run_cli(["prompt", f"{target}::price", "--json"], tmp_path)
    assert shown.returncode == 0 and "nothing was sent" in shown.stderr
    assert json.loads(shown.stdout) == sent[0].messages
    text = run_cli(["prompt", f"{target}::price"], tmp_path)
    assert (
        text.returncode == 0
        and "--- user ---" in text.stdout
        and "DB_URL = 'postgres://app:[redacted]@db.internal/app'" in text.stdout
    )


def test_prompt_names_what_it_cannot_show(tmp_path):
    target = tmp_path / "billing.py"
    target.write_text(MODULE)
    for arg, why in (
        (f"{target}::nothing", "no function nothing"),
        (str(target), "expected FILE::NAME"),
        (f"{tmp_path / 'missing.py'}::price", "cannot read"),
    ):
        done = run_cli(["prompt", arg], tmp_path)
        assert done.returncode == 2 and why in done.stderr and done.stdout == "", (arg, done.stderr)
