"""Edit storm (a script, not a test): the storm of tests/lsp/test_storm.py, with its figures.

Starts ``python -m coherence serve`` as VS Code would (recorded VS Code capabilities) on a file
with 20 marked functions (samples replayed from a generated JSONL), sends 100 didChange/s with a
hover every 10 changes and a save every 50, then a final edit and save, and prints hover
p50/p95/p99/max (as measured, and net of the time the hypervisor stole meanwhile), whether the
issue's target (p99 < 100 ms) was met, the didChange rate achieved, diagnostics published, server
RSS before/after, checks queued/started/cancelled/completed and pygls bookkeeping.

    python benchmarks/edit_storm.py [--seconds 60] [--rate 100] [--save-every 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig  # noqa: E402

import lsp.test_storm as storm  # noqa: E402
from lsp.conftest import Session, client_params, make_client, server_env  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    storm.SAVE_EVERY = args.save_every
    tmp = Path(tempfile.mkdtemp(prefix="coherence-storm-"))
    try:
        ws = storm.make_workspace(tmp / "ws")
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "coherence", "serve"],
            client_factory=make_client,
            server_env=server_env(tmp),
        )
        client = await config.start()
        caps, info = client_params("vscode")
        await client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                client_info=info,
                root_uri=ws.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
                initialization_options={
                    "settings": {**storm.SETTINGS, "runOn": "open", "cacheDir": str(tmp / "cache")}
                },
            )
        )
        session = Session(client, ws, "vscode")
        fig, _, _ = await storm.run_storm(session, args.seconds, rate=args.rate, log=print)
        print("\n".join(fig.lines()))
        raw, net = storm.percentile(fig.hovers_ms, 0.99), storm.percentile(fig.net_hovers_ms, 0.99)
        met = ["not met", "met"]
        print(
            f"target hover p99 < {storm.HOVER_P99_MS:.0f} ms: {met[raw < storm.HOVER_P99_MS]} ({raw:.1f} ms); "
            f"net of hypervisor steal: {met[net < storm.HOVER_P99_MS]} ({net:.1f} ms)"
        )
        code = await session.shutdown()
        print(f"server exit code after shutdown: {code}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--rate", type=float, default=100.0, help="didChange per second")
    p.add_argument("--save-every", type=int, default=50, help="a save every this many changes")
    asyncio.run(main(p.parse_args()))
