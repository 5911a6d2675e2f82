"""The coherence process holds a bounded amount of what children send (issue 28, section 5):
distinct large outputs past a run's budget are kept as digests that still compare exactly, and a
worker's diagnostics are capped in number and length."""

from __future__ import annotations

import json

from coherence.engine.execution import ModuleContext, Program, records
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.worker_run import WorkerRun
from coherence.engine.inputs.values import Input

BUDGET = 1 << 20
# The same 8-12 KB value per input, written two ways (so they run as two programs), and a third
# that differs from them at x == 3 only.
BIG = "def f(x):\n    return str(x) * 4000\n"
BIG_TOO = "def f(x):\n    return ''.join([str(x)] * 4000)\n"
BIG_BUT_3 = "def f(x):\n    return str(x) * (3999 if x == 3 else 4000)\n"


def held_bytes(rows) -> int:
    seen: dict[int, int] = {}
    for row in rows:
        for o in row:
            seen[id(o)] = len(o.key)
    return sum(seen.values())


def test_large_distinct_outputs_are_kept_within_the_budget_and_still_compare(monkeypatch):
    monkeypatch.setattr(records, "RECORD_BYTES", BUDGET)
    inputs = [Input((i,), ()) for i in range(10, 210)] + [Input((3,), ())]
    report = Executor().run(
        ModuleContext(), [Program("f", BIG), Program("f", BIG_TOO), Program("f", BIG_BUT_3)], inputs
    )
    a, b, c = report.outcomes
    assert all(o.kind == "ok" for o in a + b + c)
    # 200 distinct values of 8-12 KB each (2 MB): the first ones are kept whole, the rest as digests
    digests = sum('["Z",' in o.key for o in a)
    assert 0 < digests < len(a) and '["Z","str",' in a[-2].key
    assert held_bytes(report.outcomes) < BUDGET + 64 * 1024
    # equal values stay equal whichever program sent them first, a different one stays different
    assert a == b
    assert [x == y for x, y in zip(a, c)] == [True] * 200 + [False]


def test_a_flood_of_worker_diagnostics_is_capped():
    run = WorkerRun("worker", 1, 1)
    line = b"-1 1 " + json.dumps("Traceback (most recent call last):\n" + "x" * 70000).encode() + b"\n"
    for _ in range(20):
        run.feed(line * 100)  # 2,000 diagnostics of 70 KB: 140 MB
    assert len(run.diagnostics) <= 21 and run.diagnostics_dropped == 2000 - 20
    assert sum(map(len, run.diagnostics)) < 21 * 2100
    assert run.diagnostics[0].startswith("worker: Traceback") and "left out" in run.diagnostics[-1]
    # and outcomes still stream after it
    run.feed(b'0 0 ["ok",["I","7"],null,null]\n')
    assert run.results[0][0].value == ["I", "7"]
