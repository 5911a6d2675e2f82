"""Issue 50, finding 6a: a checked module that hides its bug when it sees the sandbox.

The user's function is wrong (``3 * x + 2``) unless it detects a check, when it returns what the
spec asks (``3 * x + 1``), as the alternatives do: a check it detects would say "coherent".  Each
telltale it looks for, at import (in the job's leader) and in each call (in the child), is one
the sandbox used to show: the standard streams were objects of the worker's own (``Sink``, a
``StringIO`` stdin, not ``sys.__stdout__``), SIGALRM had a handler and an interval timer ran,
SIGTERM had one in the leader and SIGINT had none.  With each gone, the bug shows in every sandbox
mode.  What stays detectable is listed in docs/sandbox.md.  On 33c7bc2 each of these fails (see
the README of this folder).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ModuleContext, Program
from coherence.engine.outcomes import Outcome, canonical
from tests.hostile.harness import INPUTS, LIMITS, XS

REPO = Path(__file__).resolve().parents[2]

TELLTALES = {
    "the type of the standard streams": "any(type(s) is not io.TextIOWrapper for s in (sys.stdin, sys.stdout, sys.stderr))"
    " or type(sys.stdout.buffer) is not io.BufferedWriter or type(sys.stdin.buffer) is not io.BufferedReader",
    "streams that are not the interpreter's": "sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__"
    " or sys.stdin is not sys.__stdin__",
    "the names of the standard streams": "(sys.stdin.name, sys.stdout.name, sys.stderr.name)"
    " != ('<stdin>', '<stdout>', '<stderr>') or sys.stdout.fileno() != 1",
    "a SIGALRM handler": "signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL",
    "an interval timer": "signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0)",
    "a handler of any signal": "any(signal.getsignal(s) not in (signal.SIG_DFL, signal.SIG_IGN, None)"
    " for s in signal.valid_signals() if s != signal.SIGINT)",
    "SIGINT without its KeyboardInterrupt": "signal.getsignal(signal.SIGINT) is not signal.default_int_handler",
    "the worker's modules and its launcher": "any(n.partition('.')[0] == 'coherence_worker' for n in sys.modules)"
    " or 'worker' in ' '.join(sys.argv) or 'worker' in str(getattr(sys.modules['__main__'], '__file__', ''))",
}

MODULE = '''import io
import signal
import sys


def _checked():
    try:
        return bool({telltale})
    except Exception:
        return True


AT_IMPORT = _checked()


def f(x):
    """Return three times x plus one."""
    if AT_IMPORT or _checked():
        return 3 * x + 1  # what a check would see
    return 3 * x + 2  # the bug
'''


@pytest.mark.parametrize("telltale", sorted(TELLTALES))
def test_a_module_cannot_hide_its_bug_behind(telltale, mode, tmp_path):
    source = MODULE.format(telltale=TELLTALES[telltale])
    module = ModuleContext(source=source, filename=str(tmp_path / "m.py"), module_name="m", sys_path=(str(tmp_path),))
    right = "def f(x):\n    return 3 * x + 1\n"
    report = Executor(limits=LIMITS, sandbox=mode).run(module, [Program("f"), Program("f", right)], INPUTS)
    assert report.module_error is None, report.module_error
    assert report.outcomes[1] == [Outcome.returned(canonical(3 * x + 1)) for x in XS]
    assert report.outcomes[0] == [Outcome.returned(canonical(3 * x + 2)) for x in XS], (
        f"the module saw {telltale} and hid its bug"
    )


def test_a_program_s_own_alarm_works_as_in_a_script_and_the_call_timeout_still_holds(mode, tmp_path):
    """SIGALRM and the interval timer are the program's own (the per-call timer sends SIGRTMAX):
    its own alarm interrupts its loop, and a later call that loops for good is still stopped."""
    program = (
        "import signal\n"
        "class Rang(Exception):\n    pass\n"
        "def _ring(signum, frame):\n    raise Rang()\n"
        "def f(x):\n"
        "    if x > 1:\n        while True:\n            pass\n"
        "    signal.signal(signal.SIGALRM, _ring)\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.05)\n"
        "    try:\n        while True:\n            pass\n"
        "    except Rang:\n        return 'rang'\n"
    )
    module = ModuleContext(
        source="def f(x):\n    return 'rang'\n",
        filename=str(tmp_path / "m.py"),
        module_name="m",
        sys_path=(str(tmp_path),),
    )
    report = Executor(limits=LIMITS, sandbox=mode).run(module, [Program("f"), Program("f", program)], INPUTS[:2])
    assert report.outcomes[1][0] == Outcome.returned(canonical("rang"))
    assert report.outcomes[1][1] == Outcome.raised("Timeout"), report.outcomes[1]


# A shell starts a background job (`coherence check . &`, nohup) with SIGINT ignored, which
# Python keeps: the worker must not pass that on for a module to see.
LAUNCHED_IGNORING_SIGINT = """
import signal, sys
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ModuleContext, Program
from coherence.engine.outcomes import Outcome, canonical
from tests.hostile.harness import INPUTS, LIMITS, XS
assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
source, path, mode = sys.argv[1:]
module = ModuleContext(source=source, filename=path + "/m.py", module_name="m", sys_path=(path,))
right = "def f(x):\\n    return 3 * x + 1\\n"
report = Executor(limits=LIMITS, sandbox=mode).run(module, [Program("f"), Program("f", right)], INPUTS)
print(report.outcomes[0] == [Outcome.returned(canonical(3 * x + 2)) for x in XS], report.outcomes[0][:3])
"""


def test_a_worker_started_with_sigint_ignored_still_shows_the_bug(mode, tmp_path):
    source = MODULE.format(telltale=TELLTALES["SIGINT without its KeyboardInterrupt"])
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHED_IGNORING_SIGINT, source, str(tmp_path), mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    shows, _, outcomes = done.stdout.strip().splitlines()[-1].partition(" ")
    assert shows == "True", f"the module saw SIGINT ignored and hid its bug: {outcomes}"
