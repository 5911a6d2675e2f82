"""The vscode-jsonrpc smoke test (tests/lsp/smoke/smoke.mjs), run with Node.

It reads the server's stdout the way VS Code does and fails on any byte that is not framed
JSON-RPC.  The "noisy" variant makes the server process print to sys.stdout and write to fd 1
from a thread after start-up: ``coherence serve`` must have moved both to stderr.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import copy_examples

SMOKE = Path(__file__).resolve().parent / "smoke"
REPO = Path(__file__).resolve().parents[2]

NOISE = textwrap.dedent(
    """
    import os, sys, threading

    def _noise():
        print("stray print from the server process")
        sys.stdout.flush()
        os.write(1, b"stray bytes on fd 1\\n")

    for delay in (0.5, 1.5):
        t = threading.Timer(delay, _noise)
        t.daemon = True
        t.start()
    """
)


def _node_modules() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm not installed")
    # One install at a time: under pytest-xdist both variants found no node_modules, and the
    # second `npm ci` (which first deletes node_modules) pulled vscode-jsonrpc away from under the
    # first one's node process (CI on a8425ce: ERR_MODULE_NOT_FOUND .../vscode-jsonrpc/node.js).
    with open(SMOKE / "package-lock.json") as lock:  # flock needs no write access
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (SMOKE / "node_modules" / "vscode-jsonrpc").is_dir():
            run = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"], cwd=SMOKE, capture_output=True, text=True, timeout=300
            )
            if run.returncode != 0:
                pytest.skip(f"npm ci failed (offline?): {run.stderr[-500:]}")
    return SMOKE / "node_modules"


# the noisy variant checks the same framing with stray output besides: the default run takes it
@pytest.mark.parametrize("noisy", [pytest.param(False, marks=pytest.mark.slow), True], ids=["quiet", "noisy"])
def test_vscode_jsonrpc_smoke(tmp_path, noisy):
    _node_modules()
    ws = copy_examples(tmp_path / "ws")
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    paths = [str(REPO / "server")]
    if noisy:
        hook = tmp_path / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(NOISE)
        paths.insert(0, str(hook))
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    run = subprocess.run(
        ["node", str(SMOKE / "smoke.mjs"), sys.executable, str(ws)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    assert "PASS:" in run.stderr
    if noisy:
        # The noise went to stderr, where the editor shows it in the output channel.
        assert "stray print from the server process" in run.stderr
