"""Edit storm (issue 5): 100 didChange/s for ``COHERENCE_STORM_SECONDS`` (default 60; the default
test run storms 6 s, the full one is marked slow) on a file
with 20 marked functions, through the real server, with hovers interleaved and a save every half
second (so checks start and are superseded all the time).

Asserted: every hover is answered, on the right function; no publishDiagnostics for a version older than one already
published, and none for an old version once the last edit is in; the final diagnostics sit on the
final text's function names; resident memory and pygls bookkeeping (request futures, progress
tokens, tasks) come back to near their baseline.

Hover latency (issue 5's target is p99 < 100 ms) is a figure: ``benchmarks/edit_storm.py`` runs
the same storm and prints p50/p90/p99, net of the time the hypervisor stole
(``StormFigures.hovers_stolen_ms``); this test prints them too but asserts none, since a loaded
2-core machine moves them whatever the server does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

N_FUNCTIONS = 20
STORM_SECONDS = float(os.environ.get("COHERENCE_STORM_SECONDS", "60"))
# The default run's storm: long enough for dozens of saves to start and supersede checks.
SHORT_STORM_SECONDS = 6.0
CHANGE_RATE = 100.0  # didChange per second
HOVER_EVERY = 10  # one hover per this many changes (10 hovers/s)
SAVE_EVERY = 50  # one save per this many changes (2 saves/s): checks start, then are superseded
HOVER_P99_MS = 100.0  # the target, printed by benchmarks/edit_storm.py
RSS_GROWTH_MB = 150.0
SETTINGS = {"inputs": 100, "samples": 4, "maxConcurrentChecks": 2}


def disagrees(i: int) -> bool:
    """Functions whose replayed alternatives include one that disagrees (so they are incoherent)."""
    return i % 2 == 0


def fname(i: int) -> str:
    return f"plus_{i:02d}"


def replay_lines() -> list[str]:
    """A replay file in the corpus schema: per function three alternatives; for half of them two
    differ (alike) on negative inputs, for the other half all three agree."""
    out = []
    for i in range(N_FUNCTIONS):
        name = fname(i)
        cands = [f"def {name}(x: int) -> int:\n    return x + {i}\n# End of python code"]
        if disagrees(i):
            # two that agree with each other against yours: a warning (one alone would be a hint,
            # which has no diagnostic)
            cands.append(f"def {name}(x: int) -> int:\n    return abs(x) + {i}\n# End of python code")
            cands.append(f"def {name}(x: int) -> int:\n    return {i} + abs(x)\n# End of python code")
        else:
            cands.append(f"def {name}(x: int) -> int:\n    return {i} + x\n# End of python code")
            cands.append(f"def {name}(x: int) -> int:\n    y = x\n    return y + {i}\n# End of python code")
        out.append(
            json.dumps(
                {
                    "benchmark": "storm",
                    "model": "hand-written",
                    "temperature": 0.6,
                    "task_id": f"storm/{name}",
                    "entry_point": name,
                    "signature": "(x: int) -> int",
                    "description": f"Return x plus {i}.",
                    "candidates": cands,
                }
            )
        )
    return out


@dataclass
class StormText:
    """The document: each function has a body variant (k) and maybe an extra line, so edits both
    change bodies and move the functions below."""

    seed: int = 0
    variant: list[int] = field(default_factory=lambda: [0] * N_FUNCTIONS)
    extra: list[bool] = field(default_factory=lambda: [False] * N_FUNCTIONS)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def mutate(self) -> None:
        i = self.rng.randrange(N_FUNCTIONS)
        if self.rng.random() < 0.3:
            self.extra[i] = not self.extra[i]
        else:
            self.variant[i] = self.rng.randrange(5)

    def text(self) -> str:
        parts = ['"""Twenty marked functions for the edit storm."""\n']
        for i in range(N_FUNCTIONS):
            body = ["    y = 0\n"] if self.extra[i] else []
            parts.append(
                f"\n\n# coherence\ndef {fname(i)}(x: int) -> int:\n"
                f'    """Return x plus {i}."""\n' + "".join(body) + f"    return x + {i} + 0 * {self.variant[i]}\n"
            )
        return "".join(parts)

    def def_line(self, text: str, i: int) -> int:
        return text.splitlines().index(f"def {fname(i)}(x: int) -> int:")


def make_workspace(ws: Path) -> Path:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "samples.jsonl").write_text("\n".join(replay_lines()) + "\n")
    (ws / "pyproject.toml").write_text(
        '[tool.coherence]\nreplay = "samples.jsonl"\nsamples = 4\ninputs = 100\ninput-budget = 60\n'
    )
    (ws / "storm.py").write_text(StormText().text())
    return ws


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default); NaN when empty."""
    return float(np.percentile(values, 100 * q)) if len(values) else float("nan")


_TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def stolen_ms() -> list[float]:
    """Per CPU, the time the hypervisor ran something else while this machine wanted the CPU
    ("steal" in /proc/stat), in ms since boot; zeros where the kernel does not count it."""
    out = []
    with open("/proc/stat") as fh:
        for line in fh:
            if line.startswith("cpu") and line[3:4].isdigit():
                fields = line.split()
                out.append(int(fields[8]) * _TICK_MS if len(fields) > 8 else 0.0)
    return out


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


@dataclass
class StormFigures:
    seconds: float = 0.0
    changes: int = 0
    saves: int = 0
    hovers_ms: list[float] = field(default_factory=list)
    # Per hover, the most CPU time the hypervisor stole from one CPU while it was in flight:
    # on a shared VM host a stolen vCPU stalls the client and the server alike, for 100 ms and
    # more (a 1 ms sleep loop on an idle machine here saw 3 such gaps in 30 s), which no server
    # code can prevent.
    hovers_stolen_ms: list[float] = field(default_factory=list)
    hover_results: int = 0
    published_during: int = 0
    published_total: int = 0
    final_version: int = 0
    rss_before_kb: int = 0
    rss_after_kb: int = 0
    stats_before: dict = field(default_factory=dict)
    stats_after: dict = field(default_factory=dict)

    @property
    def net_hovers_ms(self) -> list[float]:
        """Hover latencies less the time stolen while each was in flight: what the client and
        the server themselves took."""
        return [max(0.0, t - s) for t, s in zip(self.hovers_ms, self.hovers_stolen_ms)]

    def lines(self) -> list[str]:
        ms, net = self.hovers_ms, self.net_hovers_ms
        a, b = self.stats_before, self.stats_after
        return [
            f"storm: {self.seconds:.1f} s, {self.changes} didChange ({self.changes / max(self.seconds, 1e-9):.1f}/s), {self.saves} saves",
            f"hover: n={len(ms)} p50 {percentile(ms, 0.5):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
            f"max {max(ms) if ms else float('nan'):.1f} ms, mean {statistics.fmean(ms) if ms else float('nan'):.1f} ms ({self.hover_results} with a result)",
            (
                f"hover net of hypervisor steal: p50 {percentile(net, 0.5):.1f} ms, p90 {percentile(net, 0.9):.1f} ms, "
                f"p99 {percentile(net, 0.99):.1f} ms, max {max(net) if net else float('nan'):.1f} ms; "
                f"{sum(1 for x in self.hovers_stolen_ms if x > 0)} hovers overlapped steal, {sum(self.hovers_stolen_ms):.0f} ms stolen during them"
            ),
            f"diagnostics published: {self.published_during} during the storm, {self.published_total} in all; final version {self.final_version}",
            f"server RSS: before {self.rss_before_kb / 1024:.1f} MB, after {self.rss_after_kb / 1024:.1f} MB, growth {(self.rss_after_kb - self.rss_before_kb) / 1024:+.1f} MB",
            "checks: "
            + ", ".join(
                f"{k.removeprefix('checks').lower()} {b.get(k, 0) - a.get(k, 0)}"
                for k in ("checksQueued", "checksStarted", "checksCancelled", "checksCompleted")
            ),
            f"server-side hover handler: {b.get('hoverHandlerMs')}",
            "bookkeeping after: "
            + ", ".join(
                f"{k} {b.get(k)}"
                for k in ("requestFutures", "progressTokens", "tasks", "jobs", "documents", "cachedResults")
            ),
        ]


async def run_storm(
    lsp, seconds: float, *, rate: float = CHANGE_RATE, seed: int = 0, log=None
) -> tuple[StormFigures, str, StormText]:
    """Open storm.py, let its first check finish, then storm it; returns the figures once the
    server is quiet again after a final save."""
    fig = StormFigures()
    doc = StormText(seed=seed)
    uri = lsp.open("storm.py", doc.text())
    expected = {fname(i) for i in range(N_FUNCTIONS) if disagrees(i)}
    await lsp.wait_for(
        lambda: {d.data["name"] for d in lsp.coherence_diagnostics(uri, "incoherent")} == expected,
        "the first check of all 20 functions",
        timeout=240,
    )
    await lsp.wait_idle(timeout=120)
    fig.stats_before = await lsp.command("coherence.serverStats")
    pid = fig.stats_before["pid"]
    fig.rss_before_kb = rss_kb(pid)
    n_published_before = len(lsp.client.diagnostic_log)

    hovers: list[asyncio.Task] = []
    loop = asyncio.get_running_loop()

    async def hover(text: str) -> None:
        i = doc.rng.randrange(N_FUNCTIONS)
        line = doc.def_line(text, i)
        s0 = stolen_ms()
        t0 = loop.time()
        h = await lsp.hover(uri, line, 6)
        fig.hovers_ms.append((loop.time() - t0) * 1000)
        fig.hovers_stolen_ms.append(max((b - a for a, b in zip(s0, stolen_ms())), default=0.0))
        if h is not None:
            fig.hover_results += 1
            assert h.range is None or h.range.start.line == line, (h.range, line)

    start = loop.time()
    tick = 0
    while loop.time() - start < seconds:
        doc.mutate()
        text = doc.text()
        lsp.change(uri, text)
        tick += 1
        if tick % SAVE_EVERY == 0:
            lsp.save(uri)
            fig.saves += 1
        if tick % HOVER_EVERY == 0:
            hovers.append(asyncio.ensure_future(hover(text)))
        if log is not None and tick % int(rate * 10) == 0:
            log(f"  {loop.time() - start:5.1f} s: {tick} changes, {len(fig.hovers_ms)} hovers")
        delay = start + tick / rate - loop.time()
        await asyncio.sleep(max(0.0, delay))
    fig.seconds = loop.time() - start
    fig.changes = tick
    await asyncio.gather(*hovers)
    fig.published_during = len(lsp.client.diagnostic_log) - n_published_before

    # The last edit, saved; a request after it marks the point from which every publication
    # must be for the final version (the server handles messages in order).
    doc.mutate()
    final = doc.text()
    fig.final_version = lsp.change(uri, final)
    lsp.save(uri)
    await lsp.hover(uri, 0, 0)
    mark = len(lsp.client.diagnostic_log)
    await lsp.wait_for(
        lambda: (
            lsp.client.diagnostic_log[mark:]
            and {d.data["name"] for d in lsp.coherence_diagnostics(uri, "incoherent")} == expected
            and lsp.client.statuses[-1]["checking"] == 0
        ),
        "the final text's results",
        timeout=240,
    )
    await asyncio.sleep(1.0)
    await lsp.wait_idle(timeout=120)
    fig.stats_after = await lsp.command("coherence.serverStats")
    fig.rss_after_kb = rss_kb(pid)
    fig.published_total = len(lsp.client.diagnostic_log)
    lsp.storm_mark = mark  # type: ignore[attr-defined]
    return fig, uri, doc


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def client_name() -> str:
    return "vscode"


@pytest.mark.parametrize(
    "seconds",
    [
        pytest.param(SHORT_STORM_SECONDS, id="short"),
        pytest.param(STORM_SECONDS, id="full", marks=pytest.mark.slow),
    ],
)
async def test_edit_storm(start, seconds):
    lsp = await start(SETTINGS, capture_stderr=True)
    fig, uri, doc = await run_storm(lsp, seconds)
    report = "\n".join(fig.lines())
    print(report)

    # The storm was a storm.
    assert fig.changes >= 0.8 * CHANGE_RATE * seconds, report
    assert len(fig.hovers_ms) >= fig.changes // HOVER_EVERY - 1, report
    # Every hover got an answer (its latency is in the printed report, not asserted).
    assert fig.hover_results == len(fig.hovers_ms), report

    # No stale diagnostics: versions never go back, none for a version not yet sent, and
    # nothing for an old version once the final edit was in.
    log = [p for p in lsp.client.diagnostic_log if p.uri == uri]
    versions = [p.version for p in log]
    assert all(v is not None for v in versions), versions[:20]
    assert all(a <= b for a, b in itertools.pairwise(versions)), [
        (a, b) for a, b in itertools.pairwise(versions) if a > b
    ][:5]
    assert max(versions) == fig.final_version
    after = [p.version for p in lsp.client.diagnostic_log[lsp.storm_mark :] if p.uri == uri]
    assert after and set(after) == {fig.final_version}, after

    # The final diagnostics sit on the final text's function names.
    final = doc.text()
    lines = final.splitlines()
    diags = lsp.coherence_diagnostics(uri)
    assert {d.data["name"] for d in diags} == {fname(i) for i in range(N_FUNCTIONS) if i % 2 == 0}
    for d in diags:
        name = d.data["name"]
        line = doc.def_line(final, int(name[-2:]))
        assert d.range.start.line == line and lines[line][d.range.start.character : d.range.end.character] == name, (
            d.range,
            name,
        )
        assert d.data["status"] == "incoherent"
    # And hover on the final text shows a fresh result.
    h = await lsp.hover(uri, doc.def_line(final, 3), 6)
    assert h is not None and "plus_03" in h.contents.value and "coherent" in h.contents.value

    # Memory and bookkeeping.
    growth_mb = (fig.rss_after_kb - fig.rss_before_kb) / 1024
    assert growth_mb < RSS_GROWTH_MB, report
    after_stats = fig.stats_after
    assert after_stats["requestFutures"] <= 2, after_stats
    assert after_stats["progressTokens"] == 0, after_stats
    assert after_stats["jobs"] == 0 and after_stats["tasks"] <= 1, after_stats
    assert after_stats["checksCancelled"] > fig.stats_before["checksCancelled"], report
    assert "Traceback" not in lsp.stderr(), lsp.stderr()[-3000:]
    code = await lsp.shutdown()
    assert code == 0
