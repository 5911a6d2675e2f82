"""Issue 49: the command line keeps every promise it prints.  Each reproduction of the issue, run
through the real CLI in a subprocess; the LLM is the recorded demo samples or a loopback
OpenAI-compatible server reached through litellm's real HTTP path."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli.test_cli_newcomer import COUNT_VOWELS, REPLAY, UNRECORDED, messages, run_cli
from tests.conftest import EXAMPLES
from tests.support.openai_loopback import Fault, LoopbackServer, code_reply
from tests.support.sarif import valid_sarif

ROOT = Path(__file__).resolve().parents[2]
PYTHON27 = Path.home() / ".pyenv/versions/2.7.18/bin/python"
VOWELS = code_reply('def count_vowels(s: str) -> int:\n    return sum(ch in "aeiou" for ch in s.lower())')
TRIPLE = code_reply("def triple(x: int) -> int:\n    return x + x + x")


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder)."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
        if "__pycache__" not in p.parts
    }


# -- 1. the cache folder -------------------------------------------------------------------------


@pytest.mark.parametrize("dry_run", [True, False])
@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_cache_dir_that_is_a_users_file_is_refused_and_left_as_it_was(tmp_path, dry_run, how):
    (tmp_path / "marked.py").write_text(COUNT_VOWELS)
    (tmp_path / "notes.txt").write_text("notes\n")
    before = tree(tmp_path)
    where = ["--cache-dir", "notes.txt"] if how == "option" else []
    env = {"OPENAI_API_KEY": "sk-test", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    if how == "environment":
        env["COHERENCE_CACHE_DIR"] = str(tmp_path / "notes.txt")
    proc = run_cli(
        "check", "marked.py", "--model", "openai/gpt-4o-mini", *(["--dry-run"] if dry_run else []), *where,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "notes.txt exists and is not a folder" in proc.stderr
    assert tree(tmp_path) == before  # not renamed, not replaced, nothing beside it


def test_a_cache_dir_holding_someone_elses_files_is_refused(tmp_path):
    (tmp_path / "marked.py").write_text(COUNT_VOWELS)
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    before = tree(tmp_path)
    proc = run_cli(
        "check", "marked.py", "--model", "openai/gpt-4o-mini", "--cache-dir", "photos",
        cwd=tmp_path, env={"OPENAI_API_KEY": "sk-test"},
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "holds files that are not coherence's" in proc.stderr
    assert tree(tmp_path) == before


@pytest.mark.slow  # test_cli_cost.py's max-cost test covers a dry run by default
def test_a_dry_run_writes_nothing_anywhere(tmp_path):
    (tmp_path / "marked.py").write_text(COUNT_VOWELS)
    before = tree(tmp_path)
    for extra in ([], ["--cache-dir", "new-cache"], ["--output", "reports/r.json", "--format", "json"]):
        proc = run_cli(
            "check", "marked.py", "--model", "openai/gpt-4o-mini", "--dry-run", *extra,
            cwd=tmp_path, env={"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "count_vowels: 9 sample(s) to request, 0 cached" in proc.stdout or '"requested": 9' in proc.stdout
    assert tree(tmp_path) == before


@pytest.mark.slow  # test_cli_cost.py's max-cost test covers a dry run by default
def test_the_cache_folder_is_created_marked_and_counted_by_a_later_dry_run(tmp_path):
    (tmp_path / "marked.py").write_text(COUNT_VOWELS)
    with LoopbackServer([VOWELS]) as server:
        proc = run_cli(
            "check", "marked.py", "--model", "openai/local", "--api-base", server.url, "--inputs", "40",
            "--cache-dir", "cache", cwd=tmp_path, env={"OPENAI_API_KEY": "none"},
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # count_vowels is incoherent
    marker = (tmp_path / "cache" / "CACHEDIR.TAG").read_text()
    assert marker.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (tmp_path / "cache" / "samples.sqlite3").is_file()
    before = tree(tmp_path)
    dry = run_cli(
        "check", "marked.py", "--model", "openai/local", "--api-base", "http://127.0.0.1:9", "--dry-run",
        "--cache-dir", "cache", cwd=tmp_path,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "count_vowels: 0 sample(s) to request, 9 cached" in dry.stdout
    assert tree(tmp_path) == before  # the dry run read the cache, and wrote no journal beside it


# -- 3. LLM failures: fast, and said once --------------------------------------------------------


def test_a_missing_key_of_a_known_provider_is_said_once_before_litellm_is_imported(tmp_path):
    probe = (
        "import sys\nfrom coherence.cli import main\n"
        f"code = main(['check', {str(EXAMPLES)!r}, '--model', 'gpt-4o-mini'])\n"
        "print(code, 'litellm' in sys.modules, 'coherence.engine.check' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("COHERENCE_")}
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert proc.stdout.split() == ["2", "False", "False"], proc.stderr
    assert proc.stderr.splitlines() == ["coherence: No API key for gpt-4o-mini: set OPENAI_API_KEY in the environment."]


def test_a_rejected_key_is_said_once_and_the_other_functions_are_not_asked(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)
    rejected = Fault(status=401, message="Incorrect API key provided: sk-bad. You can pass an api_key to the client.")
    with LoopbackServer([], then=rejected) as server:
        proc = run_cli(
            "check", "m.py", "--model", "openai/local", "--api-base", server.url, "--inputs", "40",
            "--cache-dir", tmp_path / "cache", "--format", "json", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-bad"},
        )  # fmt: skip
        asked = {"implementation of `triple`" in json.dumps(r.body.get("messages")) for r in server.requests}
    assert proc.returncode == 2, proc.stderr
    (line,) = messages(proc.stderr)
    assert line.startswith("coherence: The provider of openai/local rejected the credentials")
    assert line.endswith("Check the key in OPENAI_API_KEY.")
    assert "api_key" not in proc.stderr + proc.stdout
    assert asked == {False}  # triple was never sent
    found = {f["qualname"]: f for f in json.loads(proc.stdout)["functions"]}
    assert found["triple"]["reason"] == "not checked: the provider rejected the API key (said above)"
    assert json.loads(proc.stdout)["notifications"] == [{"level": "error", "message": line.removeprefix("coherence: ")}]


class SilentServer:
    """Accepts every connection and never answers (a hung model server)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.accepted: list[socket.socket] = []
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


@pytest.mark.slow  # waits out the LLM deadline; the faults suite covers timeouts
def test_a_server_that_never_answers_meets_the_llm_deadline_once(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)
    server = SilentServer()
    try:
        proc = run_cli(
            "check", "m.py", "--model", "openai/local", "--api-base", server.url, "--llm-timeout", "2",
            "--inputs", "40", "--cache-dir", tmp_path / "cache", "--format", "json",
            cwd=tmp_path, env={"OPENAI_API_KEY": "none"},
        )  # fmt: skip
    finally:
        server.close()
    assert proc.returncode == 1, proc.stderr
    (line,) = messages(proc.stderr)
    assert "did not answer within llm_timeout = 2 s" in line and "--llm-timeout SECONDS" in line
    assert "raise the timeout" not in proc.stderr + proc.stdout
    found = {f["qualname"]: f for f in json.loads(proc.stdout)["functions"]}
    assert found["count_vowels"]["status"] == "error" and "llm_timeout = 2 s" in found["count_vowels"]["reason"]
    assert found["triple"]["reason"] == "not checked: the LLM did not answer within llm_timeout (said above)"


# -- 4. signals ------------------------------------------------------------------------------


# the default run interrupts the text report with SIGINT; the other five pairs run in the slow run
@pytest.mark.parametrize(
    "sig, status", [(signal.SIGINT, 130), pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow)]
)
@pytest.mark.parametrize(
    "fmt", ["text", pytest.param("json", marks=pytest.mark.slow), pytest.param("sarif", marks=pytest.mark.slow)]
)
def test_a_signal_writes_the_finished_functions_and_says_it_was_interrupted(tmp_path, sig, status, fmt):
    (tmp_path / "m.py").write_text(COUNT_VOWELS + UNRECORDED)

    def respond(request):  # count_vowels answers, triple hangs until the signal
        return Fault(delay=120) if "implementation of `triple`" in json.dumps(request.body) else VOWELS

    env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_")}
    env["OPENAI_API_KEY"] = "none"
    with LoopbackServer(responder=respond) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "coherence", "check", "m.py", "--model", "openai/local", "--api-base", server.url,
             "--inputs", "40", "--cache-dir", str(tmp_path / "cache"), "--format", fmt, "--output", "report"],
            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:  # a log (not a TTY): one line per finished function
            lines.append(line)
            if line.startswith("[1/2]"):
                break
        while not any("implementation of `triple`" in json.dumps(r.body) for r in server.requests):
            time.sleep(0.05)  # triple's request is in flight
        proc.send_signal(sig)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == status, "".join(lines) + rest
    name = signal.Signals(sig).name
    said = f"interrupted by {name} after 1 of 2 item(s); the report holds the 1 finished"
    assert f"coherence: {said}" in rest
    report = (tmp_path / "report").read_text()
    if fmt == "text":
        assert "m.py:2  count_vowels: warning" in report and "triple" not in report
        assert f"coherence: {said}" in report and report.rstrip().endswith("1 function(s): 1 warning")
    elif fmt == "json":
        doc = json.loads(report)
        assert [f["qualname"] for f in doc["functions"]] == ["count_vowels"]
        assert doc["notifications"] == [{"level": "error", "message": said}]
    else:
        run = valid_sarif(report)["runs"][0]
        assert [r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in run["results"]] == [
            "count_vowels"
        ]
        (invocation,) = run["invocations"]
        assert invocation["executionSuccessful"] is False and invocation["exitCode"] == status
        assert invocation["toolExecutionNotifications"] == [{"level": "error", "message": {"text": said}}]


# -- 5. a closed stdout ---------------------------------------------------------------------------


def test_a_closed_stdout_ends_quietly_with_the_findings_exit_status(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    read, write = os.pipe()
    os.close(read)  # `| true`: the reader is gone before the report is written
    env = {k: v for k, v in os.environ.items() if not k.startswith("COHERENCE_")}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "coherence", "check", "m.py", "--replay", str(REPLAY), "--inputs", "40"],
            stdout=write, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env, timeout=300,
        )  # fmt: skip
    finally:
        os.close(write)
    assert proc.returncode == 1  # count_vowels' warning, not a usage error
    assert "Broken pipe" not in proc.stderr and "cannot write" not in proc.stderr and "Exception" not in proc.stderr


# -- 6. SARIF levels agree with the exit status ---------------------------------------------------


def test_sarif_levels_follow_the_exit_status(tmp_path):
    (tmp_path / "bad.py").write_text("def broken(:\n")
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli("check", ".", "--replay", REPLAY, "--inputs", "40", "--format", "sarif", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    run = valid_sarif(proc.stdout)["runs"][0]
    levels = {r["message"]["text"].split(":")[0]: r["level"] for r in run["results"]}
    assert levels == {"<module>": "error", "count_vowels": "warning"}  # both fail the run
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    never = run_cli("check", "m.py", "--replay", REPLAY, "--inputs", "40", "--format", "sarif", "--fail-on", "never",
                    cwd=tmp_path)  # fmt: skip
    assert never.returncode == 0 and valid_sarif(never.stdout)["runs"][0]["invocations"][0]["exitCode"] == 0


# -- 10. the smaller promises ---------------------------------------------------------------------


def test_a_usage_error_says_the_reason_first_in_two_lines(tmp_path):
    proc = run_cli("check", "x.py", "--samples", "1", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "coherence check: argument --samples/-m: must be at least 2, got 1",
        "Run 'coherence check --help' for the options.",
    ]


@pytest.mark.skipif(not PYTHON27.exists(), reason="needs pyenv's Python 2.7.18")
def test_python_2_7_is_named_as_too_old(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    proc = run_cli("check", "m.py", "--replay", REPLAY, "--python", PYTHON27, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"coherence: The Python interpreter {str(PYTHON27)!r} is cpython 2.7.18; "
        "coherence needs CPython 3.8 or newer to run code."
    ]


def test_results_come_in_source_line_order(tmp_path):
    method_first = COUNT_VOWELS.replace("def count_vowels(s: str)", "def count_vowels(self, s: str)")
    source = "class Text:\n" + "".join(f"    {ln}\n" if ln else "\n" for ln in method_first.splitlines()) + UNRECORDED
    (tmp_path / "m.py").write_text(source)
    proc = run_cli("check", "m.py", "--replay", REPLAY, "--inputs", "40", "--format", "json", cwd=tmp_path)
    lines = [(f["line"], f["qualname"]) for f in json.loads(proc.stdout)["functions"]]
    assert [q for _, q in lines] == ["Text.count_vowels", "triple"] and lines == sorted(lines), proc.stderr


def test_no_baseline_reports_what_the_baseline_accepts(tmp_path):
    (tmp_path / "m.py").write_text(COUNT_VOWELS)
    common = ("check", "m.py", "--replay", REPLAY, "--inputs", "40")
    assert run_cli(*common, "--write-baseline", cwd=tmp_path).returncode == 0
    assert run_cli(*common, cwd=tmp_path).returncode == 0  # accepted by .coherence-baseline.json
    again = run_cli(*common, "--no-baseline", cwd=tmp_path)
    assert again.returncode == 1 and "count_vowels: warning" in again.stdout
    both = run_cli(*common, "--no-baseline", "--baseline", "x.json", cwd=tmp_path)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_the_help_lists_the_interrupted_exit_statuses_and_the_llm_deadline(tmp_path):
    text = run_cli("check", "--help", cwd=tmp_path).stdout
    assert re.search(r"130, 143 +interrupted by SIGINT \(Ctrl-C\) or SIGTERM", text)
    assert "--llm-timeout SECONDS" in text and "--no-baseline" in text


def test_the_eval_output_folder_is_ignored_by_git():
    proc = subprocess.run(
        ["git", "check-ignore", "-q", "coherence-eval/summary.json"], cwd=ROOT, capture_output=True, timeout=30
    )
    assert proc.returncode == 0


def test_the_hook_snippet_pins_no_tag_the_repository_lacks():
    tags = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.split()
    pins = re.findall(r"rev:\s*(\S+)", (ROOT / ".pre-commit-hooks.yaml").read_text())
    assert pins
    for pin in pins:
        is_commit = subprocess.run(["git", "cat-file", "-e", f"{pin}^{{commit}}"], cwd=ROOT, timeout=30).returncode == 0
        assert pin in tags or (re.fullmatch(r"[0-9a-f]{40}", pin) and is_commit), pin
