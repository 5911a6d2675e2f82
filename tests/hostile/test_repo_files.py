"""Everything a cloned repository ships is hostile (issue 50, findings 4, 5, 6b and 7).

The repository plants files and settings; the user runs ``coherence check`` in it (a real CLI in a
subprocess, the LLM a loopback server reached through litellm's HTTP path) or opens it in an
editor (a real ``coherence serve``):

* ``coherence.sarif`` and ``.coherence-baseline.json`` as symbolic links to the user's
  ``~/.bashrc``: ``--output`` and ``--write-baseline`` would write through them;
* ``samples = 1000``, ``mode = "docstring"``, ``max_cost_usd = 1000`` and budgets of 100,000
  seconds in an untrusted ``[tool.coherence]``: hundreds of requests with the user's key, and a
  check that never ends;
* a 200 KB ``.coherence-baseline.json`` nested 100,000 levels deep (json's RecursionError blinded
  the editor);
* a ``.jsonl.gz`` replay file that decompresses to hundreds of megabytes; a test file whose coding
  line names a codec that is no text encoding (the seeder's LookupError ended the check); a
  document with 10,000 marked functions (its results keys took minutes on the event loop).
"""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path

import pytest
from lsprotocol import types

from coherence.engine.resolve import ConfigResolver
from coherence.engine.trust import TrustStore
from tests.faults.subject import GOOD, MODULE
from tests.hostile.test_repo_config import SECRET, clone, coherence, refusal_lines
from tests.lsp.conftest import TIMEOUT, copy_examples, start  # noqa: F401 - fixtures
from tests.support.openai_loopback import LoopbackServer
from tests.support.sarif import valid_sarif

RIGHT = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))"
LOOPS = "def clamp(x, lo, hi):\n    while True:\n        pass"


def replay(repo: Path, *candidates: str, name: str = "samples.jsonl") -> Path:
    path = repo / name
    path.write_text(json.dumps({"entry_point": "clamp", "candidates": list(candidates)}) + "\n")
    return path


def fake_home(tmp_path: Path) -> tuple[Path, bytes]:
    home = tmp_path / "home"
    home.mkdir()
    bashrc = home / ".bashrc"
    body = b"# the user's shell startup\nexport PATH=$HOME/bin:$PATH\n"
    bashrc.write_bytes(body)
    return bashrc, body


# -- finding 4: files written through planted links ------------------------------------------


@pytest.mark.parametrize(
    "flags, name",
    [
        (["--format", "sarif", "--output", "coherence.sarif"], "coherence.sarif"),
        (["--write-baseline"], ".coherence-baseline.json"),
    ],
)
def test_a_planted_link_is_not_written_through(tmp_path, flags, name):
    bashrc, body = fake_home(tmp_path)
    repo = clone(tmp_path, 'replay = "samples.jsonl"\nsamples = 3\ninputs = 40\n')
    replay(repo, RIGHT, RIGHT)
    (repo / name).symlink_to(bashrc)
    proc = coherence("check", ".", *flags, cwd=repo, env={"HOME": str(bashrc.parent)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is a symbolic link" in proc.stderr and str(bashrc) in proc.stderr, proc.stderr
    assert bashrc.read_bytes() == body and (repo / name).is_symlink()
    # control: the same command writes the file when it is the repository's own
    (repo / name).unlink()
    proc = coherence("check", ".", *flags, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / name).is_file() and not (repo / name).is_symlink()
    text = (repo / name).read_text()
    assert valid_sarif(text) if name.endswith(".sarif") else json.loads(text)  # a SARIF log or a baseline
    assert bashrc.read_bytes() == body


def test_a_report_replaces_a_link_planted_after_the_check_instead_of_following_it(tmp_path):
    """The rename inside the folder: a link that appears between the check and the write (a
    race) is replaced, not followed."""
    from coherence.engine import safe_write

    bashrc, body = fake_home(tmp_path)
    out = tmp_path / "coherence.sarif"
    out.symlink_to(bashrc)
    with pytest.raises(safe_write.UnsafeTarget):
        safe_write.write_text(out, "{}", "--output")
    original = safe_write.refusal
    try:
        safe_write.refusal = lambda path, what: None  # type: ignore[assignment] # the link is planted after the check
        safe_write.write_text(out, "{}\n", "--output")
    finally:
        safe_write.refusal = original  # type: ignore[assignment]
    assert bashrc.read_bytes() == body
    assert not out.is_symlink() and out.read_text() == "{}\n"


# -- finding 5: the user's key and time ------------------------------------------------------

DOCUMENTED = (
    MODULE
    + '''

def double(x: int) -> int:
    """Return twice x."""
    return 2 * x


def negate(x: int) -> int:
    """Return minus x."""
    return -x
'''
)
SPENDING = 'samples = 1000\nmode = "docstring"\nmax_cost_usd = 1000\nmax-concurrency = 64\n'


def completions(server: LoopbackServer) -> int:
    return sum(r.n for r in server.chat_requests)


@pytest.mark.slow  # lowering: the next test, by default
def test_an_untrusted_repository_cannot_raise_what_a_check_buys(tmp_path):
    """9 completions, not 3,996: samples, mode and the cost cap stay the user's (or the defaults),
    and each ignored value is named with its limit."""
    repo = clone(tmp_path, SPENDING)
    (repo / "clampmod.py").write_text(DOCUMENTED)
    with LoopbackServer([GOOD], cycle=True) as users:
        env = {"OPENAI_BASE_URL": users.url, "XDG_CACHE_HOME": str(tmp_path / "cache")}
        dry = coherence(
            "check", ".", "--model", "openai/users-model", "--dry-run", "--format", "json", cwd=repo, env=env
        )
        assert dry.returncode == 0, dry.stderr
        plan = json.loads(dry.stdout)
        assert [(f["qualname"], f["requested"]) for f in plan["functions"]] == [("clamp", 9)]
        assert plan["models"][0]["max_cost_usd"] == 5.0  # the default cap, not the repository's
        (line,) = refusal_lines(dry.stderr)
        for named in ("samples = 1000 (above 10", "mode = 'docstring' (above 'marked'", "max_cost_usd = 1000 (above 5"):
            assert named in line, line
        assert "may lower what a check spends" in line and f"coherence trust {repo}" in line

        proc = coherence("check", ".", "--model", "openai/users-model", cwd=repo, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "clamp: coherent" in proc.stdout and "double" not in proc.stdout
        assert completions(users) == 9, [r.n for r in users.chat_requests]
        assert SECRET not in proc.stdout + proc.stderr

        # control: trusted, the same table is taken as written
        trusted = coherence(
            "check",
            ".",
            "--model",
            "openai/users-model",
            "--dry-run",
            "--format",
            "json",
            "--trust-workspace",
            cwd=repo,
            env=env,
        )
        plan = json.loads(trusted.stdout)
        assert sorted((f["qualname"], f["requested"] + f["cached"]) for f in plan["functions"]) == [
            ("clamp", 999),
            ("double", 999),
            ("negate", 999),
        ]


def test_an_untrusted_repository_may_lower_what_a_check_spends(tmp_path):
    repo = clone(
        tmp_path, 'samples = 3\ninputs = 40\ncall-timeout = 0.2\nmax_cost_usd = 0.5\nreplay = "samples.jsonl"\n'
    )
    replay(repo, RIGHT, RIGHT)
    resolved = ConfigResolver(store=TrustStore(tmp_path / "t.json"), user_dir=tmp_path / "u", env={}).for_path(repo)
    cfg = resolved.config
    assert (cfg.samples, cfg.inputs, cfg.call_timeout, cfg.max_cost_usd) == (3, 40, 0.2, 0.5)
    assert resolved.notice is None


def test_untrusted_budgets_do_not_lift_the_time_limits(tmp_path, mode):
    """An alternative that never returns: with the repository's 100,000-second budgets the check
    would wait for it for days; it ends within the default limits, and the budgets are named.
    In each sandbox: the limits are its leader's watchdog."""
    budgets = "call-timeout = 100000\nprogram-budget = 100000\nrun-budget = 100000\n"
    repo = clone(tmp_path, budgets + 'replay = "samples.jsonl"\nsamples = 3\ninputs = 40\n')
    replay(repo, RIGHT, LOOPS)
    # (the harness's 300 s timeout)
    proc = coherence("check", ".", "--format", "json", "--sandbox", mode, cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    (line,) = refusal_lines(proc.stderr)
    for named in (
        "call_timeout = 100000 (above 0.5",
        "program_budget = 100000 (above 5",
        "run_budget = 100000 (above 10",
    ):
        assert named in line, line
    (result,) = json.loads(proc.stdout)["functions"]
    assert result["qualname"] == "clamp" and result["sandbox"].startswith(mode + "+"), result
    # control: trusted, the budgets are the repository's (the hang the defaults prevent)
    cfg = ConfigResolver(trust=True, user_dir=tmp_path / "u", env={}).for_path(repo).config
    assert (cfg.call_timeout, cfg.program_budget, cfg.run_budget) == (100000, 100000, 100000)


# -- finding 6b: a baseline that blinds ------------------------------------------------------

NESTED = "[" * 100_000 + "]" * 100_000  # 200 KB


def test_a_deeply_nested_baseline_is_refused_with_a_message(tmp_path):
    repo = clone(tmp_path, 'replay = "samples.jsonl"\nsamples = 3\ninputs = 40\n')
    replay(repo, RIGHT, RIGHT)
    (repo / ".coherence-baseline.json").write_text(NESTED)
    proc = coherence("check", ".", cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert "nests 100000 levels deep" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    (repo / ".coherence-baseline.json").write_text(" " * (9 * 1024 * 1024))
    proc = coherence("check", ".", cwd=repo)
    assert proc.returncode == 2 and "larger than 8 MB" in proc.stderr, proc.stderr


@pytest.fixture
def workspace(tmp_path):
    return copy_examples(tmp_path / "ws")


async def test_the_editor_shows_a_broken_baseline_and_still_sees_its_functions(start, workspace):
    (workspace / ".coherence-baseline.json").write_text(NESTED)
    lsp = await start()
    uri = lsp.open("textutils.py")
    await lsp.wait_for(
        lambda: [m for m in lsp.client.messages if "ignoring the baseline" in m.message], "the baseline's problem shown"
    )
    (shown,) = [m.message for m in lsp.client.messages if "ignoring the baseline" in m.message]
    assert "nests 100000 levels deep" in shown
    lenses = await lsp.code_lens(uri)
    assert len(lenses) >= 2  # the marked functions are still there


# -- finding 7: crashes and hangs on repository content --------------------------------------


def gzip_bomb(path: Path, line: bytes, total: int) -> None:
    """``total`` bytes of ``line`` repeated, gzip-compressed a chunk at a time."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header
    chunk = line * max(1, (1 << 20) // len(line))
    with open(path, "wb") as fh:
        for _ in range(total // len(chunk)):
            fh.write(comp.compress(chunk))
        fh.write(comp.flush())


@pytest.mark.parametrize("shape", ["one endless line", "many lines"])
def test_a_replay_decompression_bomb_is_refused(tmp_path, shape):
    repo = clone(tmp_path, 'replay = "samples.jsonl.gz"\nsamples = 3\ninputs = 40\n')
    bomb = repo / "samples.jsonl.gz"
    if shape == "one endless line":
        gzip_bomb(bomb, b" ", 16 << 20)
        expected = "is longer than 8 MB"
    else:
        gzip_bomb(bomb, b" " * 1023 + b"\n", 160 << 20)
        expected = "holds more than 128 MB once decompressed"
    assert bomb.stat().st_size < 2 << 20
    proc = coherence("check", ".", cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    # control: the real corpus's largest files are read (about a tenth of the bounds)
    corpus = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "mbpp-llama_4_maverick_17b.jsonl.gz"
    if corpus.is_file():
        from coherence.engine.sampling.replay import ReplayProvider

        assert len(ReplayProvider(corpus).entry_points()) > 100


@pytest.mark.parametrize("coding", ["zlib", "hex", "utf-16"])
def test_a_test_file_the_seeder_cannot_read_is_skipped(tmp_path, coding, mode):
    """The seeds a test file gives are inputs the sandbox evaluates: in each sandbox."""
    repo = clone(tmp_path, 'replay = "samples.jsonl"\nsamples = 3\ninputs = 40\n')
    replay(repo, RIGHT, RIGHT)
    tests = repo / "tests"
    tests.mkdir()
    (tests / "test_clamp.py").write_bytes(
        f"# -*- coding: {coding} -*-\nfrom clampmod import clamp\n\nassert clamp(5, 0, 3) == 3\n".encode()
    )
    (tests / "test_more.py").write_text("from clampmod import clamp\n\nassert clamp(-7, -2, 9) == -2\n")
    # the seeder reads every test file of the workspace
    proc = coherence("check", "clampmod.py", "--sandbox", mode, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "clamp: coherent" in proc.stdout and "internal error" not in proc.stdout + proc.stderr
    assert f"{mode}+" in proc.stdout, proc.stdout  # the sandbox that ran it, on the function's last line


def many_functions(count: int) -> str:
    return "".join(
        f'# coherence\ndef f{i}(x: int) -> int:\n    """Return x plus {i}."""\n    return x + {i}\n\n\n'
        for i in range(count)
    )


@pytest.mark.slow  # large input
async def test_ten_thousand_marked_functions_do_not_stall_the_server(start, workspace):
    """The document is analysed on a thread: a request about another document is answered while
    it is, and then the big document's functions are all there."""
    big = many_functions(10_000)
    (workspace / "many.py").write_text(big)
    lsp = await start(capture_stderr=True)
    small = lsp.open("textutils.py")
    await asyncio.wait_for(lsp.code_lens(small), TIMEOUT)
    many = lsp.open("many.py", big)
    lenses = await asyncio.wait_for(lsp.code_lens(small), 30)  # the loop is free
    assert len(lenses) >= 2
    hover = await asyncio.wait_for(lsp.hover(small, 0, 0), 30)
    assert hover is None or isinstance(hover, types.Hover)

    async def all_lenses() -> int:
        try:
            return len(await asyncio.wait_for(lsp.code_lens(many), TIMEOUT))
        except asyncio.TimeoutError:
            raise AssertionError(f"no code lenses for the big document\n{lsp.stderr()[-3000:]}") from None

    deadline = asyncio.get_running_loop().time() + 10 * TIMEOUT
    while (found := await all_lenses()) < 10_000:
        assert asyncio.get_running_loop().time() < deadline, (
            f"{found} of 10,000 functions after {10 * TIMEOUT}s\n{lsp.stderr()[-3000:]}"
        )
        await asyncio.sleep(0.5)
