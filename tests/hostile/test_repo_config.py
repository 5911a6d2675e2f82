"""Attacks from a cloned repository's own ``[tool.coherence]`` (issue 28, section 1).

The repository is the attacker: its pyproject.toml tries to send the user's API key to its own
server (``api_base``, ``model``), to run its own program as the user outside the sandbox
(``python``), to weaken the sandbox (``sandbox``), to make coherence read and write where it
chooses (``cache_dir``, a replay file outside the repository) and to show the sandbox the user's
home (``workspace``).  Each is refused until the user trusts the repository (``coherence trust``,
``--trust-workspace`` in CI), named in one line on stderr, and the rest of its settings still
apply.  Everything is real: the CLI in a subprocess, litellm's HTTP path to loopback servers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.subject import GOOD, MODULE
from tests.support import SERVER_DIR
from tests.support.openai_loopback import LoopbackServer

SECRET = "sk-user-secret-0123456789"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def coherence(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("COHERENCE_", "OPENAI_"))}
    full.update({"PYTHONPATH": str(SERVER_DIR), "OPENAI_API_KEY": SECRET, **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "coherence", *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=300
    )


def clone(tmp_path: Path, table: str) -> Path:
    """A repository as cloned: a marked function and the attacker's [tool.coherence]."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "clampmod.py").write_text(MODULE)
    (repo / "pyproject.toml").write_text("[project]\nname = 'innocent'\n\n[tool.coherence]\n" + table)
    return repo


def refusal_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("coherence: not using ")]


def bearer_keys(server: LoopbackServer) -> list[str]:
    return [r.headers.get("Authorization", r.headers.get("authorization", "")) for r in server.requests]


@pytest.mark.slow  # the next test: an untrusted api_base gets nothing
def test_the_key_never_goes_to_the_repositorys_api_base(tmp_path):
    """Even when the user names the model on the command line (the attack worked then too)."""
    with LoopbackServer([GOOD], cycle=True) as attacker, LoopbackServer([GOOD], cycle=True) as users:
        repo = clone(tmp_path, f'model = "openai/gpt-4o-mini"\napi_base = "{attacker.url}"\nsamples = 3\ninputs = 40\n')
        user_env = {"OPENAI_BASE_URL": users.url, "XDG_CACHE_HOME": str(tmp_path / "cache")}
        for flags in (["--model", "openai/users-model"], []):
            env = dict(user_env) if flags else {**user_env, "COHERENCE_MODEL": "openai/users-model"}
            proc = coherence(
                "check", "clampmod.py", *flags, "--cache-dir", str(tmp_path / f"c{len(flags)}"), cwd=repo, env=env
            )
            assert proc.returncode == 0, proc.stderr
            assert "clamp: coherent" in proc.stdout
        assert attacker.request_count == 0
        assert users.request_count >= 2 and set(bearer_keys(users)) == {f"Bearer {SECRET}"}
        assert {r.model for r in users.chat_requests} == {"users-model"}


def test_an_untrusted_model_and_api_base_are_named_and_nothing_is_sent(tmp_path):
    with LoopbackServer([GOOD], cycle=True) as attacker:
        repo = clone(tmp_path, f'model = "openai/x"\napi_base = "{attacker.url}"\n')
        proc = coherence("check", ".", cwd=repo)
        assert attacker.request_count == 0
    assert proc.returncode == 2  # no model of the user's: the usual advice
    (line,) = refusal_lines(proc.stderr)
    assert "model, api_base" in line and str(repo / "pyproject.toml") in line
    assert f"coherence trust {repo}" in line
    assert "--model" in proc.stderr  # how to configure one
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.slow  # trust: tests/lsp/test_trust.py by default
def test_trust_workspace_and_coherence_trust_let_the_repository_choose(tmp_path):
    """CI passes --trust-workspace; a user trusts once, until the table changes."""
    with LoopbackServer([GOOD], cycle=True) as repos_server:
        repo = clone(tmp_path, f'model = "openai/theirs"\napi_base = "{repos_server.url}"\nsamples = 3\ninputs = 40\n')
        env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
        proc = coherence("check", ".", "--trust-workspace", cwd=repo, env=env)
        assert proc.returncode == 0 and refusal_lines(proc.stderr) == [], proc.stderr
        assert repos_server.request_count >= 1

        trust = coherence("trust", cwd=repo)
        assert trust.returncode == 0, trust.stderr
        assert f"trusted {repo / 'pyproject.toml'}" in trust.stdout and "model = 'openai/theirs'" in trust.stdout
        assert "trusted " in coherence("trust", "--list", cwd=tmp_path).stdout
        repos_server.reset_requests()
        proc = coherence("check", ".", "--cache-dir", str(tmp_path / "fresh"), cwd=repo, env=env)
        assert proc.returncode == 0 and refusal_lines(proc.stderr) == [], proc.stderr
        assert repos_server.request_count >= 1

        # a pull changes the table: the grant lapses, and --list says so
        pyproject = repo / "pyproject.toml"
        pyproject.write_text(pyproject.read_text().replace("samples = 3", "samples = 4"))
        assert coherence("trust", "--list", cwd=tmp_path).stdout.startswith("changed ")
        repos_server.reset_requests()
        proc = coherence("check", ".", "--cache-dir", str(tmp_path / "fresh2"), cwd=repo, env=env)
        assert repos_server.request_count == 0
        (line,) = refusal_lines(proc.stderr)
        assert "changed since you trusted it" in line

        revoke = coherence("trust", "--revoke", str(repo), cwd=tmp_path)
        assert f"no longer trusted: {pyproject}" in revoke.stdout
        assert "no repository" in coherence("trust", "--list", cwd=tmp_path).stdout


def test_the_repositorys_python_does_not_run(tmp_path):
    """``python = "tools/py"`` ran as the user with no sandbox, where it could read the key from
    /proc/<coherence>/environ."""
    stolen = tmp_path / "stolen"
    repo = clone(tmp_path, 'python = "tools/py"\nreplay = "samples.jsonl"\nsamples = 3\ninputs = 40\n')
    (repo / "samples.jsonl").write_text(
        '{"entry_point": "clamp", "candidates": ["def clamp(x, lo, hi):\\n    return max(lo, min(x, hi))", "def clamp(x, lo, hi):\\n    return max(lo, min(x, hi))"]}\n'
    )
    tools = repo / "tools"
    tools.mkdir()
    (tools / "py").write_text(f'#!/bin/sh\ncat /proc/$PPID/environ > {stolen}\nexec {sys.executable} "$@"\n')
    (tools / "py").chmod(0o755)
    proc = coherence("check", ".", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert not stolen.exists()
    (line,) = refusal_lines(proc.stderr)
    assert "not using python from" in line
    # trusted, it is the user's choice, and it runs
    assert coherence("check", ".", "--trust-workspace", cwd=repo).returncode == 0
    assert stolen.exists()


@pytest.mark.parametrize(
    "setting",
    ['sandbox = "guard"', 'cache-dir = "cache"', 'workspace = "~"', 'workspace = "/"'],
)
def test_the_repository_cannot_weaken_the_sandbox_or_choose_where_coherence_writes(tmp_path, setting):
    repo = clone(tmp_path, setting + '\nreplay = "samples.jsonl"\nsamples = 3\ninputs = 40\n')
    (repo / "samples.jsonl").write_text(
        '{"entry_point": "clamp", "candidates": ["def clamp(x, lo, hi):\\n    return max(lo, min(x, hi))", "def clamp(x, lo, hi):\\n    return max(lo, min(x, hi))"]}\n'
    )
    proc = coherence("check", ".", "--format", "json", cwd=repo, env={"XDG_CACHE_HOME": str(tmp_path / "xdg-cache")})
    assert proc.returncode == 0, proc.stderr
    name = setting.split(" ")[0].replace("-", "_")
    (line,) = refusal_lines(proc.stderr)
    assert f"not using {name} from" in line
    assert not (repo / "cache").exists()


def test_a_replay_file_outside_the_repository_is_not_read(tmp_path):
    """A replay path is data and works untrusted, but only inside the repository: a symlink or
    ../ out of it reaches files of the user's that the repository has no business reading."""
    secret = tmp_path / "home-secret.jsonl"
    secret.write_text('{"entry_point": "clamp", "candidates": ["def clamp(x, lo, hi):\\n    return 1"]}\n')
    repo = clone(tmp_path, 'replay = "data/r.jsonl"\nsamples = 3\ninputs = 40\n')
    (repo / "data").mkdir()
    (repo / "data" / "r.jsonl").symlink_to(secret)
    proc = coherence("check", ".", cwd=repo)
    assert proc.returncode == 2 and "clamp" not in proc.stdout
    (line,) = refusal_lines(proc.stderr)
    assert f"replay (outside {repo})" in line


def test_the_demo_still_runs_untrusted(tmp_path):
    """examples/pyproject.toml's replay file is inside it: the quick start needs no trust."""
    proc = coherence("check", "examples/", cwd=EXAMPLES.parent, env={"XDG_CACHE_HOME": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    assert "5 function(s): 3 warning, 2 coherent" in proc.stdout
    assert refusal_lines(proc.stderr) == []


def test_a_dotenv_file_in_the_repository_is_not_loaded(tmp_path):
    """litellm loads a .env on import (found from the working directory here, and from its own
    install folder upwards in a venv inside the repository): an OPENAI_BASE_URL in a cloned
    repository's .env would send the user's key to the repository's server."""
    repo = clone(tmp_path, "samples = 3\n")
    (repo / ".env").write_text("OPENAI_BASE_URL=http://203.0.113.9/v1\nOPENAI_API_KEY=theirs\n")
    probe = (
        "import os\n"
        "from coherence.engine.sampling.quiet_litellm import import_litellm\n"
        "import_litellm()\n"
        "print(os.environ.get('OPENAI_BASE_URL'), os.environ.get('OPENAI_API_KEY'))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LITELLM_MODE"))}
    env.update({"PYTHONPATH": str(SERVER_DIR), "OPENAI_API_KEY": SECRET})
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=repo, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["None", SECRET]


def test_a_symlink_to_a_trusted_config_borrows_no_trust(tmp_path):
    """The user trusted their own project's config, whose python is relative; a repository whose
    pyproject.toml is a symlink to it would run its own tools/py under that grant."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "pyproject.toml").write_text('[tool.coherence]\npython = "tools/py"\n')
    assert coherence("trust", str(mine), cwd=tmp_path).returncode == 0
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "clampmod.py").write_text(MODULE)
    (repo / "pyproject.toml").symlink_to(mine / "pyproject.toml")
    proc = coherence("check", ".", "--replay", str(EXAMPLES / "recorded_samples.jsonl"), cwd=repo)
    (line,) = refusal_lines(proc.stderr)
    assert f"not using python from {repo / 'pyproject.toml'}" in line
