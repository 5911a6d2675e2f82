"""Issue 28, section 3: outcomes and verdicts that generated code cannot forge.

Each attack is an alternative implementation, run through the real engine and sandbox (a
``Checker`` with replayed samples, or the ``Executor``), in both sandbox modes.  The user's
function is wrong on some inputs; the attacks try to make those inputs disappear from the
metrics (a reserved outcome word, forged records, a write to what the leader shares with its
children), to read what other programs are (their sources, the user's function), or to make
the job's leader import a workspace script before it drops its privileges.  Each was an escape
before the fix: the verdict became "coherent" (or "every input ran out of the time budget"),
or the probe found what it looked for.
"""

from __future__ import annotations

import json

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution.executor import BUDGET_EXCEEDED, Executor
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.markers import find_targets
from tests.hostile.harness import HONEST_ALTERNATIVES, LIMITS

# Wrong where x % 5 == 2.  The attackers know where (with the user's function in reach they
# could compute it; see test_programs_do_not_see_each_other_or_the_user_s_function).
SOURCE = '''
# coherence
def f(x: int) -> int:
    """Return three times x plus one."""
    if x % 5 == 2:
        return 0
    return 3 * x + 1
'''

ATTACKS = {
    # the attack: its own exception, named like the executor's reserved outcome
    "own_budget_exceeded": """
class BudgetExceeded(Exception):
    pass


def f(x):
    if x % 5 == 2:
        raise BudgetExceeded("never reached")
    return 3 * x + 1
""",
    # records for its own task, written where the child collects them: the reserved outcome as
    # a raise record (the old form) and as a claim of one (the new form)
    "forged_records": """
import sys


def f(x):
    if x % 5 == 2:
        frame = sys._getframe()
        while frame is not None:
            seen = frame.f_locals
            if "lines" in seen and "prefix" in seen and "i" in seen:
                head = seen["prefix"] + b"%d " % seen["i"]
                seen["lines"].append(head + b'["raise",null,null,"BudgetExceeded"]\\n')
                seen["lines"].append(head + b"!BudgetExceeded\\n")
                break
            frame = frame.f_back
        raise ValueError("forged")
    return 3 * x + 1
""",
    # the map the leader shares with every child (the anchor's cuts): cut at 0, every program
    # would skip every input; and every other shared map it can find (the children's slots),
    # and every memfd it holds, reopened read-write by a raw libc call (past the audit hook)
    "shared_map_writer": """
import ctypes
import gc
import mmap
import resource
import os
import struct
import sys


def _smash(m):
    try:
        m[0:16] = struct.pack("qq", 0, 0)
    except Exception:
        pass


def f(x):
    for o in gc.get_objects():
        if isinstance(o, mmap.mmap):
            _smash(o)
    frame = sys._getframe()
    while frame is not None:
        for name in ("leader", "self"):
            told = getattr(frame.f_locals.get(name), "told", None)
            if told is not None:
                _smash(told)
        frame = frame.f_back
    libc = ctypes.CDLL(None, use_errno=True)
    # (a child in guard mode cannot list /proc/self/fd, but reads each link)
    for fd in range(resource.getrlimit(resource.RLIMIT_NOFILE)[0]):
        try:
            if "memfd" in os.readlink("/proc/self/fd/%d" % fd):
                rw = libc.open(("/proc/self/fd/%d" % fd).encode(), os.O_RDWR)
                if rw >= 0:
                    _smash(mmap.mmap(rw, 16))
        except Exception:
            pass
    return 3 * x + 1
""",
}


async def _verdict(root, mode, alternatives):
    """A real check of the user's (wrong) function, with these alternatives replayed."""
    root.mkdir()
    replay = root / "samples.jsonl"
    replay.write_text(json.dumps({"entry_point": "f", "candidates": alternatives}) + "\n")
    module = root / "target.py"
    module.write_text(SOURCE)
    (target,) = find_targets(SOURCE, str(module))
    config = CheckConfig(
        replay=str(replay),
        samples=len(alternatives) + 1,
        inputs=40,
        workspace=str(root),
        sandbox=mode,
        call_timeout=LIMITS.call_timeout,
        program_budget=LIMITS.program_budget,
        input_budget=60,
    )
    return await Checker(config).check(target)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
async def test_an_alternative_cannot_take_away_the_inputs_where_the_user_is_wrong(mode, tmp_path, attack):
    honest = await _verdict(tmp_path / "honest", mode, HONEST_ALTERNATIVES)
    # (first among the alternatives: it runs beside the user's function, before the others)
    attacked = await _verdict(tmp_path / "attacked", mode, [ATTACKS[attack]] + HONEST_ALTERNATIVES)
    assert honest.status == "incoherent" and honest.inputs_over_budget == 0
    # the attack changes nothing about which inputs count, and the user's function stays wrong
    assert attacked.status == "incoherent", (attacked.status, attacked.reason)
    assert attacked.inputs_over_budget == 0, attacked.reason
    assert attacked.inputs == honest.inputs and attacked.disagreement > 0 and attacked.trust < 1.0
    x = int(attacked.counterexample.call[2:-1])
    assert x % 5 == 2 and attacked.counterexample.yours == "0"


# -- the executor: what a child can claim, see and make its leader import --------------------
FAST = ExecutionLimits(call_timeout=0.5, program_budget=4.0, memory_mb=512, load_timeout=20.0, jobs=2)
USER = "def f(x):\n    return 0 if x % 5 == 2 else 3 * x + 1\n"
HONEST = 'def f(x):\n    "honest-marker"\n    return 3 * x + 1\n'  # its marker, in its source and its code
XS = list(range(10))
INPUTS = [f"(({x},), {{}})" for x in XS]
RESERVED = {"Timeout", BUDGET_EXCEEDED, "InputError", "LoadError"}

# Claims of reserved outcomes, written where the child collects its records, without spending
# the time they stand for: three timeouts in a row, then "the rest was never reached".
FALSE_CLAIMS = """
import sys


def f(x):
    frame = sys._getframe()
    while frame is not None:
        seen = frame.f_locals
        if "lines" in seen and "indices" in seen and "pos" in seen:
            rest = seen["indices"][seen["pos"]:]
            for j in rest[:3]:
                seen["lines"].append(seen["prefix"] + b"%d !Timeout\\n" % j)
            for j in rest[3:]:
                seen["lines"].append(seen["prefix"] + b"%d !BudgetExceeded\\n" % j)
            break
        frame = frame.f_back
    return 3 * x + 1
"""

# What it finds of the other programs and of the user's function: in the namespace it is loaded
# in, in the modules, and in everything it reaches from the frames below its call and from what
# the collector tracks (attributes, slots, containers, code constants).  Its own marker is built
# at run time (a join: constants are folded), so that only another program's source holds it.
PROBE = """
import collections
import gc
import sys

USERS = globals().get("f")
FOUND = None


def _crawl(roots, own, marker, found, limit=400000):
    seen = {}  # id -> the object, held: a frame's f_locals is a new dict, whose id comes back
    todo = collections.deque(roots)  # breadth first: what is near the roots first
    while todo and len(seen) < limit:
        o = todo.popleft()
        if id(o) in seen:
            continue
        seen[id(o)] = o
        kind = type(o).__name__
        try:
            if isinstance(o, (str, bytes)):
                if (marker if isinstance(o, str) else marker.encode()) in o:
                    found.add("a source")
            elif kind == "code":
                if marker in o.co_consts:
                    found.add("code")
                todo.extend(c for c in o.co_consts if type(c).__name__ == "code")
            elif kind == "function":
                if o.__name__ == "f" and o.__code__ is not own:
                    found.add("a function f")
                todo.append(o.__code__)
            elif isinstance(o, dict):
                todo.extend(o.keys())
                todo.extend(o.values())
            elif isinstance(o, (list, tuple, set, frozenset)):
                todo.extend(o)
            elif kind == "frame":
                todo.append(o.f_locals)
                todo.append(o.f_back)
            elif not isinstance(o, (int, float, type(None))):
                d = getattr(o, "__dict__", None)
                if isinstance(d, dict):
                    todo.append(d)
                for slot in getattr(type(o), "__slots__", ()):
                    todo.append(getattr(o, slot, None))
        except Exception:
            pass


def f(x):
    global FOUND
    if FOUND is None:
        found = set()
        if USERS is not None:
            found.add("namespace")
        for mod in list(sys.modules.values()):
            g = getattr(mod, "__dict__", {}).get("f")
            if callable(g) and getattr(g, "__code__", None) is not f.__code__:
                found.add("module " + getattr(mod, "__name__", "?"))
        _crawl([sys._getframe().f_back] + gc.get_objects(), f.__code__, "-".join(["honest", "marker"]), found)
        FOUND = sorted(found)
    return FOUND
"""

DEPLOY_SCRIPT = "import os\nIMPORTED_IN = os.getpid()\nEUID = os.geteuid()\n"
IMPORTS_DEPLOY = """
import os
import deploy


def f(x):
    return [deploy.IMPORTED_IN == os.getpid(), deploy.EUID == os.geteuid()]
"""


def _run(mode, programs, module=None):
    module = module or ModuleContext(source=USER)
    ex = Executor(limits=FAST, sandbox=mode)
    return ex.run(
        module,
        [Program("f", None, "yours")] + [Program("f", p, f"alternative {k}") for k, p in enumerate(programs, 1)],
        INPUTS,
        anchor=0,
    )


def test_false_claims_of_reserved_outcomes_are_not_forwarded(mode):
    report = _run(mode, [FALSE_CLAIMS, HONEST])
    user, claims, honest = report.outcomes
    assert [o.render() for o in user] == [str(0 if x % 5 == 2 else 3 * x + 1) for x in XS]
    assert [o.render() for o in honest] == [str(3 * x + 1) for x in XS]
    assert not any(o.kind == "raise" and o.error in RESERVED for o in claims), [o.render() for o in claims]


def test_programs_do_not_see_each_other_or_the_user_s_function(mode):
    report = _run(mode, [PROBE, HONEST, HONEST.replace("3 * x", "x + 2 * x")])
    assert report.load_errors == [None] * 4
    assert {o.render() for o in report.outcomes[1]} == {"[]"}, report.outcomes[1][0].render()


def test_the_leader_imports_no_workspace_module_an_alternative_names(mode, tmp_path):
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "deploy.py").write_text(DEPLOY_SCRIPT)
    module = ModuleContext(source=USER, filename=str(ws / "target.py"), sys_path=(str(ws),))
    report = _run(mode, [IMPORTS_DEPLOY], module)
    # deploy.py ran in the alternative's own process, as that process's (dropped) user
    assert report.load_errors == [None, None]
    assert {o.render() for o in report.outcomes[1]} == {"[True, True]"}
