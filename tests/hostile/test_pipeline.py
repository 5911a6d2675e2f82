"""Hostile alternatives through the whole engine (``Checker``: inputs, sandboxed runs, the
nondeterminism re-run, clusters, the counterexample and its shrinking) and through the language
server.  Samples are replayed from a JSONL file in the corpus schema, written in the test."""

from __future__ import annotations

import json
import time

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution import sandbox as sb
from coherence.engine.markers import find_targets
from tests.hostile.corpus import CORPUS, render
from tests.hostile.harness import HONEST_ALTERNATIVES, LIMITS, ProcessWatch, wait_no_survivors
from tests.lsp.conftest import line_of

NASTIEST = ["fork_bomb", "memory_bomb", "stdout_flood", "kill_parent", "ctypes_kill_everything"]
PIPELINE = NASTIEST + [
    "forge_results",
    "forge_own_malformed",
    "result_pipe_flood",
    "ctypes_fork_bomb",
    "hostile_dunders",
]

SOURCE = '''
# coherence
def f(x: int) -> int:
    """Return three times x plus one."""
    return 3 * x + 1
'''


def replay_file(path, machine, names):
    by_name = {h.name: h for h in CORPUS}
    hostile = [render(by_name[n], machine.values) for n in names]
    candidates = HONEST_ALTERNATIVES + hostile
    path.write_text(json.dumps({"entry_point": "f", "candidates": candidates}) + "\n")
    return len(candidates)


async def test_checker_with_hostile_alternatives(mode, machine, tmp_path):
    replay = tmp_path / "hostile_samples.jsonl"
    k = replay_file(replay, machine, PIPELINE)
    module = machine.ws / "target.py"
    module.write_text(SOURCE)
    machine.snapshots = machine._take()  # the target file is part of the workspace now
    (target,) = find_targets(SOURCE, str(module))
    config = CheckConfig(
        replay=str(replay),
        samples=k + 1,
        inputs=40,
        workspace=str(machine.ws),
        sandbox=mode,
        call_timeout=LIMITS.call_timeout,
        program_budget=LIMITS.program_budget,
        input_budget=60,
    )
    start = time.monotonic()
    with ProcessWatch() as watch:
        result = await Checker(config).check(target)
    seconds = time.monotonic() - start
    # all hostile programs run in parallel waves of 2: a generous bound from the limits
    assert seconds < 30 + k * (LIMITS.program_budget + LIMITS.call_timeout + 1.0), seconds
    assert result.status == "incoherent", (result.status, result.reason)
    # a hostile program that only ever times out ends its run after three timeouts, and is
    # dropped as too slow rather than taking the other inputs away from everyone
    dropped = result.too_slow
    assert (
        dropped <= 2
        and result.samples == k + 1 - dropped
        and result.sandbox == sb.sandbox_name(mode, sb.planned_layers(mode))
    )
    # Most inputs stay.  How many is partly the host's to say: some hostile calls take a good share
    # of the 0.5 s call timeout (memory_bomb fills the 512 MB limit on every call: 0.2-0.3 s here),
    # and three timeouts in a row end a program's run, so on a slow host one can stop early (CI
    # once lost 14 of the 40 inputs that way).  What the engine guarantees is half: a program that
    # reached fewer than half as many inputs as the median one is dropped as too slow instead.
    assert result.inputs >= 40 // 2, (result.inputs_over_budget, result.too_slow, result.timeouts)
    # yours and the three honest alternatives form the largest cluster; the hostile ones differ
    assert result.cluster_sizes[result.user_cluster] == 1 + len(HONEST_ALTERNATIVES)
    assert result.cluster_sizes[0] == 1 + len(HONEST_ALTERNATIVES) and sum(result.cluster_sizes) == k + 1 - dropped
    assert 0 < result.dsde < 1 and result.counterexample is not None
    x = int(result.counterexample.call[2:-1])
    assert result.counterexample.yours == str(3 * x + 1)
    assert machine.secret not in json.dumps(
        result.to_dict() if hasattr(result, "to_dict") else repr(result), default=str
    )
    assert wait_no_survivors(watch, ignore=(machine.server.pid,)) == []
    assert machine.violations() == []


async def test_language_server_stays_responsive(start, machine, tmp_path):
    """The nastiest entries as replayed alternatives in a real ``coherence serve``: the check
    finishes with a verdict, hover answers, a normal check still works, the server is alive and
    nothing is left behind."""
    ws = machine.ws
    k = replay_file(ws / "hostile_samples.jsonl", machine, NASTIEST)
    (ws / "target.py").write_text(SOURCE)
    (ws / "pyproject.toml").write_text(
        '[tool.coherence]\nreplay = "hostile_samples.jsonl"\nsamples = %d\ninputs = 40\ninput-budget = 60\n'
        "call-timeout = %s\nprogram-budget = %s\n" % (k + 1, LIMITS.call_timeout, LIMITS.program_budget)
    )
    machine.snapshots = machine._take()
    with ProcessWatch() as watch:
        lsp = await start()
        server_pid = lsp.client._server.pid
        uri = lsp.open("target.py")
        # the hostile alternatives crash or time out where yours returns: incoherent, and only a
        # hint (no evidence against yours), so the code lens shows it and no diagnostic does
        await lsp.wait_for(
            lambda: (
                lsp.client.statuses
                and lsp.client.statuses[-1].get("incoherent") == 1
                and lsp.client.statuses[-1]["checking"] == 0
            ),
            "a verdict for the hostile check",
            timeout=120,
        )
        await lsp.wait_idle(timeout=120)
        assert not [d for d in lsp.coherence_diagnostics(uri) if d.severity == 2], [
            d.message for d in lsp.coherence_diagnostics(uri)
        ]
        line = line_of(lsp.texts[uri], "def f")
        started = time.monotonic()
        hover = await lsp.hover(uri, line, 5)
        assert time.monotonic() - started < 5
        assert hover is not None and "**hint**" in hover.contents.value and "raise an exception" in hover.contents.value
        # and a normal check on request still answers, with the same verdict
        results = await lsp.command("coherence.checkFunction", uri, line)
        assert [r["name"] for r in results] == ["f"] and results[0]["status"] == "incoherent"
        assert lsp.client._server.returncode is None and lsp.client._server.pid == server_pid
        assert await lsp.shutdown() == 0
    assert wait_no_survivors(watch, ignore=(machine.server.pid,)) == []
    assert machine.violations() == []
