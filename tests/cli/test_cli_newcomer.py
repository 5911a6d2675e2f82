"""The command line off the happy path, as a newcomer and a CI job meet it: the real CLI in a
subprocess, with recorded samples (examples/recorded_samples.jsonl) or a loopback
OpenAI-compatible server standing in for the LLM."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.support.openai_loopback import Fault, LoopbackServer, code_reply, rate_limited
from tests.support.sarif import valid_sarif
from tests.support.zygote import coherence_argv

# The newcomer suite starts the CLI once per case: the slow run (CI, and its Python 3.10 and 3.13
# runs) has it; the default run meets the CLI in tests/cli/test_promises.py and test_sarif.py.
pytestmark = pytest.mark.slow

REPLAY = EXAMPLES / "recorded_samples.jsonl"
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] ")

COUNT_VOWELS = '''\
# coherence
def count_vowels(s: str) -> int:
    """Count the vowels (a, e, i, o, u) in s, ignoring case.

    >>> count_vowels("hello")
    2
    """
    return sum(1 for ch in s if ch in "aeiou")
'''
UNRECORDED = '''

# coherence
def triple(x: int) -> int:
    """Three times x.

    >>> triple(2)
    6
    """
    return 3 * x
'''


def run_cli(*args, cwd: Path, env: dict | None = None, encoding: str = "utf-8") -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_") and not k.endswith("_API_KEY")}
    full.update(env or {})
    return subprocess.run(
        [*coherence_argv(full), *map(str, args)],
        capture_output=True,
        encoding=encoding,
        cwd=cwd,
        env=full,
        timeout=300,
    )


def messages(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and not PROGRESS.match(ln)]


def functions(proc) -> dict[str, dict]:
    return {f["qualname"] or f["name"]: f for f in json.loads(proc.stdout)["functions"]}


def test_a_missing_api_key_is_named_at_once_and_exits_2(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    with LoopbackServer([code_reply("def count_vowels(s):\n    return 0")]) as server:
        proc = run_cli(
            "check",
            "m.py",
            "--model",
            "openai/local",
            "--api-base",
            server.url,
            "--inputs",
            "50",
            "--cache-dir",
            tmp_path / "cache",
            cwd=tmp_path,
        )
        assert server.request_count == 0  # nothing was sent without a key, and nothing retried
    assert proc.returncode == 2, proc.stderr
    (line,) = messages(proc.stderr)
    assert line.startswith("coherence: No API key for openai/local: set OPENAI_API_KEY")
    assert "server error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "A local OpenAI-compatible server that needs no key accepts any value" in line
    assert proc.stdout == ""  # found before any work: nothing was checked


def test_a_function_the_replay_lacks_is_an_error_and_the_rest_complete(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)
    proc = run_cli("check", "m.py", "--replay", REPLAY, "--inputs", "60", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = functions(proc)
    assert found["count_vowels"]["status"] == "incoherent" and found["count_vowels"]["counterexample"]
    assert found["triple"]["status"] == "error"
    assert "no recorded samples for 'triple'" in found["triple"]["reason"]
    assert "Traceback" not in proc.stderr


def test_a_function_the_llm_fails_on_is_an_error_and_the_rest_complete(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)
    vowels = code_reply('def count_vowels(s: str) -> int:\n    return sum(ch in "aeiou" for ch in s.lower())')

    def respond(request):  # a quota that will not come back in time, for triple's prompts only
        prompt = json.dumps(request.body.get("messages"))
        return rate_limited(retry_after=3600) if "implementation of `triple`" in prompt else vowels

    with LoopbackServer(responder=respond) as server:
        proc = run_cli(
            "check",
            "m.py",
            "--model",
            "openai/local",
            "--api-base",
            server.url,
            "--inputs",
            "60",
            "--format",
            "json",
            "--cache-dir",
            tmp_path / "cache",
            cwd=tmp_path,
            env={"OPENAI_API_KEY": "none"},
        )
    assert proc.returncode == 1, proc.stderr
    found = functions(proc)
    assert found["count_vowels"]["status"] == "incoherent"
    assert found["triple"]["status"] == "error" and "rate limited (429)" in found["triple"]["reason"]


def test_a_model_the_provider_does_not_know_is_a_configuration_error(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)
    with LoopbackServer([], then=Fault(status=404, message="model 'nope' not found")) as server:
        proc = run_cli(
            "check",
            "m.py",
            "--model",
            "openai/nope",
            "--api-base",
            server.url,
            "--inputs",
            "50",
            "--cache-dir",
            tmp_path / "cache",
            cwd=tmp_path,
            env={"OPENAI_API_KEY": "none"},
        )
    assert proc.returncode == 2, proc.stderr
    (line,) = messages(proc.stderr)  # said once, though both functions stopped on it
    assert line.startswith("coherence: Model openai/nope was not found")
    assert proc.stdout.count(": error — Model openai/nope was not found") == 1  # the first function's
    assert proc.stdout.count(": error — not checked: the provider refused the model or its settings") == 1


def test_a_file_that_breaks_coherence_is_an_internal_error_exit_3_and_the_others_complete(tmp_path):
    # Python compiles this; coherence's own walk over the signature runs out of stack.
    deep = "-" * 600 + "1"
    (tmp_path / "a_deep.py").write_text(f"# coherence\ndef f(x: int = {deep}) -> int:\n    return x\n")
    (tmp_path / "b.py").write_text(COUNT_VOWELS)
    proc = run_cli("check", "a_deep.py", "b.py", "--replay", REPLAY, "--inputs", "60", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    results = json.loads(proc.stdout)["functions"]
    assert [(r["path"], r["status"]) for r in results] == [("a_deep.py", "error"), ("b.py", "incoherent")]
    assert results[0]["reason"].startswith("internal error in coherence: RecursionError")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "content, says",
    [
        (b"def broken(:\n", "bad.py:1  <module>: error — syntax error: "),
        (
            b"# coherence\ndef f(x):\n    return '\xff'\n",
            "bad.py:3  <module>: error — cannot read file: line 3 is not UTF-8; declare its encoding",
        ),
        (
            b"# caf\xe9\ndef f(x):\n    return x\n",
            "bad.py:1  <module>: error — cannot read file: it is not UTF-8; declare its encoding",
        ),
        (
            b"# -*- coding: klingon -*-\ndef f(x):\n    return x\n",
            "bad.py:1  <module>: error — cannot read file: its coding line names an unknown encoding, 'klingon'",
        ),
    ],
)
def test_a_file_that_does_not_parse_or_read_fails_ci_with_1(tmp_path, content, says):
    (tmp_path / "bad.py").write_bytes(content)
    proc = run_cli("check", "bad.py", "--replay", REPLAY, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert says in proc.stdout


def test_a_module_nested_past_every_parsers_limit_is_a_syntax_error_under_any_version(tmp_path):
    # 200,000 terms: Python 3.10's ast.parse ended the process with SIGSEGV (exit -11) on this,
    # where 3.11 and later raise RecursionError.  CI runs this file under 3.10 and 3.13.
    chain = "1" + " + 1" * 200_000
    (tmp_path / "bad.py").write_text(COUNT_VOWELS + f"\n\nX = {chain}\n")
    proc = run_cli("check", "bad.py", "--replay", REPLAY, cwd=tmp_path)
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "bad.py:1  <module>: error — syntax error: too deeply nested for Python's parser" in proc.stdout


@pytest.mark.parametrize(
    "option, says",
    [
        (["--timeout", "-1"], "--timeout: must be more than 0, got -1"),
        (["--timeout", "0"], "--timeout: must be more than 0, got 0"),
        (["--temperature", "5"], "--temperature: must be at most 2, got 5"),
        (["--samples", "1"], "--samples/-m: must be at least 2, got 1"),
        (["--inputs", "0"], "--inputs/-n: must be at least 1, got 0"),
        (["--inputs", "many"], "--inputs/-n: expected an integer, got 'many'"),
        (["-o", "taken/report.txt"], "--output taken/report.txt: taken is a file, not a folder"),
        (["--python", "/nowhere/python3"], "python: no interpreter '/nowhere/python3'"),
    ],
)
def test_a_bad_option_exits_2_before_any_work(tmp_path, option, says):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    (tmp_path / "taken").write_text("a file where a folder should be")
    with LoopbackServer([code_reply("def count_vowels(s):\n    return 0")]) as server:
        proc = run_cli(
            "check",
            "m.py",
            "--model",
            "openai/local",
            "--api-base",
            server.url,
            *option,
            cwd=tmp_path,
            env={"OPENAI_API_KEY": "none"},
        )
        assert server.request_count == 0
    assert proc.returncode == 2
    assert says in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_a_bad_setting_in_pyproject_exits_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.coherence]\nreplay = "r.jsonl"\ncall_timeout = 0\n')
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli("check", "m.py", cwd=tmp_path)
    assert proc.returncode == 2 and "call_timeout must be more than 0 seconds, got 0" in proc.stderr


def test_output_into_a_missing_folder_creates_it(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli(
        "check",
        "m.py",
        "--replay",
        REPLAY,
        "--inputs",
        "50",
        "--format",
        "sarif",
        "-o",
        "out/ci/report.sarif",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    valid_sarif((tmp_path / "out/ci/report.sarif").read_text())


def test_a_console_that_cannot_show_the_report_gets_escapes(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli(
        "check",
        "m.py",
        "--replay",
        REPLAY,
        "--inputs",
        "50",
        cwd=tmp_path,
        env={"PYTHONIOENCODING": "cp1252"},
        encoding="cp1252",
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "error \\u2265 " in proc.stdout  # "error ≥ 0.0xx": ≥ is not in cp1252


def test_a_latin_1_source_file_is_read_as_python_reads_it(tmp_path):
    source = "# -*- coding: latin-1 -*-\n" + COUNT_VOWELS.replace("ignoring case.", "ignoring case (caf\u00e9 has 2).")
    (tmp_path / "m.py").write_bytes(source.encode("latin-1"))
    proc = run_cli("check", "m.py", "--replay", REPLAY, "--inputs", "50", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert functions(proc)["count_vowels"]["status"] == "incoherent"


@pytest.mark.parametrize(
    "line, problem",
    [
        ({"entry_point": "count_vowels"}, "no 'candidates' key"),
        (
            {"entry_point": "count_vowels", "candidates": "def count_vowels(s): return 0"},
            "'candidates' is a string, expected a list",
        ),
        (
            {"entry_point": "count_vowels", "candidates": ["def count_vowels(s): return 0", None]},
            "'candidates[1]' is null, expected a string",
        ),
    ],
)
def test_a_malformed_replay_line_is_named_before_any_work(tmp_path, line, problem):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    good = {"entry_point": "other", "candidates": ["def other(): return 1"]}
    (tmp_path / "r.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n")
    proc = run_cli("check", "m.py", "--replay", "r.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"Replay file {tmp_path / 'r.jsonl'}, line 2: {problem}." in proc.stderr
    assert proc.stdout == ""


def test_a_ci_log_gets_one_line_per_finished_function(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)
    (tmp_path / "n.py").write_text("def broken(:\n")
    proc = run_cli("check", "m.py", "n.py", "--replay", REPLAY, "--inputs", "50", cwd=tmp_path)
    lines = [ln for ln in proc.stderr.splitlines() if PROGRESS.match(ln)]
    assert [PROGRESS.match(ln).groups() for ln in lines] == [("1", "3"), ("2", "3"), ("3", "3")]
    assert re.search(r"m\.py:2 count_vowels: warning, trust 0\.\d\d \(\d+\.\ds\)$", lines[0])
    assert "m.py:12 triple: error: The replay file" in lines[1]
    assert "n.py:1 <module>: error: syntax error" in lines[2]


def test_the_exit_statuses_are_in_the_help():
    proc = subprocess.run(
        [sys.executable, "-m", "coherence", "check", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    for status in (
        "0  no verdict as severe as --fail-on",
        "1  findings",
        "2  usage or configuration error",
        "3  internal error",
    ):
        assert status in proc.stdout


def test_include_and_exclude_in_pyproject_choose_functions_without_editing_them(tmp_path):
    # the replay file inside the repository: an untrusted config may not read one from outside it
    (tmp_path / "samples.jsonl").write_bytes(REPLAY.read_bytes())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 50\n'
        'include = ["lib/*.py::count_*"]\nexclude = ["lib/generated_*.py", "::is_*"]\n'
    )
    (tmp_path / "lib").mkdir()
    unmarked = COUNT_VOWELS.replace("# coherence\n", "")
    palindrome = (
        '\n\n# coherence\ndef is_palindrome(s: str) -> bool:\n    """Same both ways."""\n    return s == s[::-1]\n'
    )
    (tmp_path / "lib" / "text.py").write_text(unmarked + palindrome)
    (tmp_path / "lib" / "generated_parser.py").write_text("def broken(:\n")  # excluded: never read
    # include checks more functions than the markers do: the repository's own config needs trust
    proc = run_cli("check", "lib", "--format", "json", "--trust-workspace", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert list(functions(proc)) == ["count_vowels"]  # included unmarked; the marked one excluded

    proc = run_cli("check", "lib", "--format", "json", "--mode", "docstring", cwd=tmp_path)
    assert list(functions(proc)) == ["count_vowels"]  # exclude holds in docstring mode too
