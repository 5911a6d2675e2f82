"""Issue 50, findings 1, 2, 3 and 6a: the job leader is confined as its children are, and what
lies beside the workspace stays out of reach (see ``leader_attacks.py``).  Each attack runs in
both sandbox modes, as whichever user runs the suite (CI runs it as root and as an ordinary
user).  On 078c415, before the fix, these fail (the README of this folder has the control run).
"""

from __future__ import annotations

import pytest

from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ModuleContext, Program
from coherence.engine.outcomes import Outcome, canonical
from tests.hostile.harness import INPUTS, LIMITS
from tests.hostile.leader_attacks import ATTACKS, run_attack


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attack_is_contained(attack, mode):
    assert run_attack(attack, mode) == []


def test_a_child_that_reads_no_proc_entry_still_opens_its_own_files(mode, tmp_path):
    """In guard mode a child inherits its leader's Landlock domain, which grants no child's /proc
    entry (``other_processes``): the audit hook, which asks whether a relative ``os.open`` could
    name a folder through a descriptor, finds the child's descriptors without /proc."""
    program = (
        "import os\n"
        "def f(x):\n"
        "    fd = os.open('mine.txt', os.O_WRONLY | os.O_CREAT, 0o600)\n"
        "    os.write(fd, b'ok')\n"
        "    os.close(fd)\n"
        "    return open('mine.txt').read()\n"
    )
    module = ModuleContext(
        source="def f(x):\n    return 'ok'\n",
        filename=str(tmp_path / "m.py"),
        module_name="m",
        sys_path=(str(tmp_path),),
    )
    report = Executor(limits=LIMITS, sandbox=mode).run(module, [Program("f"), Program("f", program)], INPUTS[:1])
    assert report.outcomes == [[Outcome.returned(canonical("ok"))]] * 2
