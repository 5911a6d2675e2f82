"""Issue 50, findings 1, 2, 3 and 6a: the job leader is confined as its children are, and what
lies beside the workspace stays out of reach (see ``leader_attacks.py``).  Each attack runs in
both sandbox modes, as whichever user runs the suite (CI runs it as root and as an ordinary
user).  On 078c415, before the fix, these fail (the README of this folder has the control run).
"""

from __future__ import annotations

import pytest

from tests.hostile.leader_attacks import ATTACKS, run_attack


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_attack_is_contained(attack, mode):
    assert run_attack(attack, mode) == []
