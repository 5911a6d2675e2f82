"""Hostile generated code against the real executor and sandbox, in both sandbox modes.

Each corpus entry (``corpus.py``) runs as one program among honest ones.  Afterwards: the run
finished within a bound derived from the limits; the hostile program's outcomes are raises
(crash, timeout, blocked call) unless the entry returns odd values by design; every honest
program's outcomes are exactly those of a clean run; no process is left behind (descendants and
anything under the sandbox's uids, counted by walking /proc); canary files in a tmp dir, the
workspace and ~/.ssh are byte-identical; nothing new in /tmp, /var/tmp, /dev/shm; the secret
API key appears in no result; the loopback TCP/UDP listeners received nothing; the stand-in
server process holding the key is alive.  ``benchmarks/hostile_tally.py`` prints the counts.
The default test run takes one entry per attack class in the guard mode; the slow run (CI) all.
"""

from __future__ import annotations

import collections

import pytest

from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.pool import POOL
from coherence.engine.execution.program import ModuleContext, Program
from tests.hostile.corpus import CORPUS, REPRESENTATIVES
from tests.hostile.harness import (
    EXPECTED_HONEST,
    HONEST_ALTERNATIVES,
    HONEST_MODULE,
    INPUTS,
    LIMITS,
    ProcessWatch,
    run_entry,
    wait_no_survivors,
)

REQUIRED = {
    "files",
    "secrets",
    "network",
    "processes",
    "resources",
    "signals",
    "crash",
    "flood",
    "poison",
    "time",
    "objects",
    "finalizers",
}


def test_corpus_covers_the_issue():
    assert len(CORPUS) >= 30
    assert {h.category for h in CORPUS} == REQUIRED
    sides = collections.Counter(h.side for h in CORPUS)
    assert sides["alternative"] >= 20 and sides["user"] >= 8
    for h in CORPUS:
        assert "def f(x)" in h.source and h.side in ("alternative", "user") and h.expect in ("raise", "any")


def test_clean_run_is_the_baseline(mode, machine):
    """The honest programs alone give what the hostile runs are compared with."""
    module = ModuleContext(
        source=HONEST_MODULE, filename=str(machine.ws / "mod.py"), module_name="mod", sys_path=(str(machine.ws),)
    )
    programs = [Program("f")] + [Program("f", s) for s in HONEST_ALTERNATIVES]
    with ProcessWatch() as watch:
        report = Executor(limits=LIMITS, sandbox=mode).run(module, programs, INPUTS)
    assert report.sandbox == sb.sandbox_name(mode, sb.planned_layers(mode)) and report.module_error is None
    assert report.outcomes == [EXPECTED_HONEST] * 4
    assert len(watch.seen) >= 2  # the watch does see the worker processes
    assert wait_no_survivors(watch, ignore=(machine.server.pid,)) == []
    assert machine.violations() == []


@pytest.mark.parametrize(
    "entry",
    [pytest.param(h, id=h.name, marks=() if h.name in REPRESENTATIVES else pytest.mark.slow) for h in CORPUS],
)
def test_hostile_entry_is_contained(mode, machine, entry):
    result = run_entry(entry, mode, machine)
    assert result.violations == [], (
        f"{entry.name} ({entry.category}, {entry.side}) escaped in {mode}: {result.violations}"
    )
    if entry.expect == "raise":
        assert all(o.kind == "raise" for o in result.hostile)


def test_warm_workers_reused_after_attacks_stay_clean(mode, machine):
    """A warm worker that ran a hostile job and went back to the pool runs the next job exactly
    like a fresh one, and closing the pool leaves nothing behind."""
    module = ModuleContext(
        source=HONEST_MODULE, filename=str(machine.ws / "mod.py"), module_name="mod", sys_path=(str(machine.ws),)
    )
    honest = [Program("f")] + [Program("f", s) for s in HONEST_ALTERNATIVES]
    nasty = [
        h
        for h in CORPUS
        if h.name
        in (
            "poison_builtins",
            "fork_bomb",
            "ctypes_kill_everything",
            "daemon_thread",
            "del_and_atexit",
            "forge_results",
        )
    ] or CORPUS[:4]
    with ProcessWatch() as watch:
        for entry in nasty:
            Executor(limits=LIMITS, sandbox=mode).run(module, honest + [Program("f", entry.source)], INPUTS)
            report = Executor(limits=LIMITS, sandbox=mode).run(module, honest, INPUTS)
            assert report.outcomes == [EXPECTED_HONEST] * 4, entry.name
        assert wait_no_survivors(watch, ignore=(machine.server.pid,)) == []
        POOL.close_all()
        assert wait_no_survivors(watch, ignore=(machine.server.pid,)) == []
        assert POOL.idle_count() == 0
    assert machine.violations() == []
