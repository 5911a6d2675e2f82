"""The executor with real worker processes (no mocks), in both sandbox modes."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from coherence.engine.errors import CheckCancelled, ConfigurationError
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.pool import POOL
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.outcomes import Outcome, canonical, outcomes_equal
from tests.support.processes import ProcessWatch

# The default run keeps the guard (it works on every machine, and bwrap adds its layers on top of
# the same guards); the bubblewrap runs are marked slow, and CI runs them.
MODES = ["guard", pytest.param("bwrap", marks=pytest.mark.slow)]

MODULE = ModuleContext(
    source='''
import dataclasses

@dataclasses.dataclass
class Point:
    x: int
    y: int

def add_one(x):
    """The user's function."""
    return x + 1

def push(xs, item):
    xs.append(item)

def norm(p):
    return abs(p.x) + abs(p.y)
''',
    filename="/workspace/user_module.py",
    module_name="user_module",
)

INTS = [f"(({i},), {{}})" for i in range(-3, 7)]


def _bwrap_ok() -> bool:
    try:
        return sb.bwrap_works(sb.probe_interpreter())
    except ConfigurationError:
        return False


@pytest.fixture(params=MODES)
def mode(request) -> str:
    if request.param == "bwrap" and not _bwrap_ok():
        pytest.skip("bubblewrap does not work here")
    return request.param


def executor(mode: str, **limits) -> Executor:
    base = dict(call_timeout=0.5, program_budget=10.0)
    base.update(limits)
    return Executor(limits=ExecutionLimits(**base), sandbox=mode)


def ok(value, mutated=None) -> Outcome:
    return Outcome.returned(canonical(value), None if mutated is None else canonical(mutated))


def err(name: str) -> Outcome:
    return Outcome.raised(name)


# ---------------------------------------------------------------------------------------------


def test_correct_versus_off_by_one(mode):
    programs = [
        Program("add_one", label="yours"),
        Program("add_one", "def add_one(x):\n    return x + 1\n"),
        Program("add_one", "def add_one(x):\n    return x + 2 if x > 2 else x + 1\n"),
        Program("add_one", "def add_one(n):\n    return 1.0 + n\n"),
    ]
    report = executor(mode).run(MODULE, programs, INTS)
    assert report.sandbox == sb.sandbox_name(mode, sb.planned_layers(mode))
    assert report.module_error is None and report.load_errors == [None] * 4
    assert len(report.outcomes) == 4 and all(len(row) == len(INTS) for row in report.outcomes)
    yours, same, off, floaty = report.outcomes
    assert yours == [ok(i + 1) for i in range(-3, 7)]
    assert same == yours
    assert [o == y for o, y in zip(off, yours)] == [i <= 2 for i in range(-3, 7)]
    assert all(outcomes_equal(a, b) for a, b in zip(floaty, yours))
    assert report.timeouts == [0, 0, 0, 0]
    assert report.seconds > 0


def test_mutation_exceptions_and_module_names(mode):
    programs = [
        Program("push"),
        Program("push", "def push(xs, item):\n    return xs + [item]\n"),
        Program("push", "def push(xs, item):\n    xs.insert(0, item)\n"),
        Program(
            "push",
            "import sys\ndef push(xs, item):\n    if item == 0: sys.exit(2)\n    if item == 1: raise KeyError(item)\n    return 1 / (item - 2)\n",
        ),
        Program("norm", "def norm(p):\n    p.x = 0\n    return p.y\n"),
        Program("norm", "def norm(p):\n    return norm(p)\n"),
    ]
    inputs = [
        "(([5],), {'item': 0})",
        "(([],), {'item': 1})",
        "(([1, 2],), {'item': 2})",
        "((Point(3, -4),), {})",
        "((Nope(1),), {})",
    ]
    report = executor(mode).run(MODULE, programs, inputs)
    push, concat, insert, raising, mutating_norm, recursive = report.outcomes
    assert push[0] == ok(None, mutated=([5, 0], {"item": 0}))
    assert push[2] == ok(None, mutated=([1, 2, 2], {"item": 2}))
    assert concat[0] == ok([5, 0])  # no mutation recorded
    assert not outcomes_equal(insert[0], push[0])
    assert raising[:3] == [err("SystemExit"), err("KeyError"), err("ZeroDivisionError")]
    assert push[3] == err("TypeError")  # Point has no append
    assert mutating_norm[3].kind == "ok" and mutating_norm[3].value == ["I", "-4"]
    assert mutating_norm[3].mutated[1][0][0] == "O" and "x=0" in mutating_norm[3].render()
    assert recursive[3] == err("RecursionError")
    assert all(row[4] == err("InputError") for row in report.outcomes)  # Nope is not defined


def test_timeouts_do_not_lose_other_programs(mode):
    programs = [
        Program("add_one"),
        Program("add_one", "def add_one(x):\n    while x == 2:\n        pass\n    return x + 1\n"),
        Program(
            "add_one",
            "def add_one(x):\n    if x == 3:\n        return sum(range(10**13))  # a C loop: SIGALRM cannot stop it\n    return x + 1\n",
        ),
        Program(
            "add_one",
            "def add_one(x):\n    while x == 4:\n        try:\n            while True: pass\n        except BaseException: pass\n    return x + 1\n",
        ),
    ]
    start = time.monotonic()
    report = executor(mode, call_timeout=0.3).run(MODULE, programs, INTS)
    elapsed = time.monotonic() - start
    assert elapsed < 8
    yours = report.outcomes[0]
    assert yours == [ok(i + 1) for i in range(-3, 7)]
    for p, bad in ((1, 2), (2, 3), (3, 4)):
        row = report.outcomes[p]
        assert row[bad + 3] == err("Timeout")
        assert [o for k, o in enumerate(row) if k != bad + 3] == [o for k, o in enumerate(yours) if k != bad + 3]
    assert report.timeouts == [0, 1, 1, 1]


def test_program_budget(mode):
    programs = [
        Program("add_one"),
        Program("add_one", "import time\ndef add_one(x):\n    time.sleep(0.2)\n    return x + 1\n"),
    ]
    inputs = [f"(({i},), {{}})" for i in range(30)]
    start = time.monotonic()
    report = executor(mode, call_timeout=1.0, program_budget=1.0).run(MODULE, programs, inputs)
    assert time.monotonic() - start < 6
    assert report.outcomes[0] == [ok(i + 1) for i in range(30)]
    slow = report.outcomes[1]
    assert slow[0] == ok(1)
    assert 10 <= report.timeouts[1] < 30 and slow[-1] == err("BudgetExceeded")


def test_a_run_can_lower_the_program_budget(mode):
    slow = Program("add_one", "import time\ndef add_one(x):\n    time.sleep(0.1)\n    return x + 1\n")
    inputs = [f"(({i},), {{}})" for i in range(20)]
    ex = executor(mode, call_timeout=1.0, program_budget=5.0)
    full = ex.run(MODULE, [Program("add_one"), slow], inputs)
    assert full.outcomes[1] == [ok(i + 1) for i in range(20)]  # 2 s of calls fit in 5 s
    cut = ex.run(MODULE, [Program("add_one"), slow], inputs, budget=0.5)
    assert cut.outcomes[0] == full.outcomes[0]
    reached = [o for o in cut.outcomes[1] if o.kind == "ok"]
    assert 2 <= len(reached) <= 8, cut.outcomes[1]
    assert cut.outcomes[1][-1] == err("BudgetExceeded")
    # a budget above the configured one changes nothing
    assert ex.run(MODULE, [slow], inputs[:3], budget=60.0).outcomes[0] == [ok(1), ok(2), ok(3)]


def test_crashes_hit_one_input_only(mode):
    programs = [
        Program("add_one"),
        Program("add_one", "import os\ndef add_one(x):\n    if x == 0:\n        os._exit(3)\n    return x + 1\n"),
        Program(
            "add_one",
            "import ctypes\ndef add_one(x):\n    if x in (1, 4):\n        ctypes.string_at(0)\n    return x + 1\n",
        ),
        Program("add_one", "def add_one(x):\n    if x == 2:\n        b = bytearray(1 << 40)\n    return x + 1\n"),
    ]
    report = executor(mode).run(MODULE, programs, INTS)
    yours = report.outcomes[0]
    expected = {1: {0: "Crash(exit 3)"}, 2: {1: "Crash(SIGSEGV)", 4: "Crash(SIGSEGV)"}, 3: {2: "MemoryError"}}
    for p, bad in expected.items():
        for k, o in enumerate(report.outcomes[p]):
            x = k - 3
            assert o == (err(bad[x]) if x in bad else yours[k]), (p, x, o)


def test_load_errors(mode):
    programs = [
        Program("add_one"),
        Program("add_one", "def add_one(x) return x\n"),
        Program("add_one", "def other(x):\n    return x\n"),
        Program("add_one", "import no_such_module_anywhere\ndef add_one(x):\n    return x\n"),
        Program("add_one", "raise RuntimeError('top level')\n"),
        Program("missing_in_module"),
    ]
    report = executor(mode).run(MODULE, programs, INTS[:3])
    errors = report.load_errors
    assert errors[0] is None
    assert errors[1].startswith("SyntaxError") and "line 1" in errors[1]
    assert "add_one" in errors[2]
    assert "ModuleNotFoundError" in errors[3]
    assert "RuntimeError: top level" in errors[4]
    assert "missing_in_module" in errors[5]
    for p in range(1, 6):
        assert report.outcomes[p] == [err("LoadError")] * 3
    assert report.outcomes[0] == [ok(-2), ok(-1), ok(0)]


@pytest.mark.parametrize(
    "source, words",
    [
        ("def f(x):\n    return x +\n", ["SyntaxError", "line 2"]),
        ("import no_such_module_anywhere\n", ["ModuleNotFoundError"]),
        ("raise ValueError('boom')\n", ["ValueError: boom"]),
        ("import os\nos._exit(0)\n", ["status 0"]),
    ],
)
def test_module_error(mode, source, words):
    module = ModuleContext(source=source, filename="broken.py")
    report = executor(mode).run(module, [Program("f"), Program("f", "def f(x):\n    return x\n")], INTS[:2])
    assert report.module_error is not None
    assert all(w in report.module_error for w in words), report.module_error
    assert report.outcomes == [[err("LoadError")] * 2] * 2


def test_nondeterminism_rerun(mode):
    programs = [
        Program("f", "import random\ndef f(x):\n    return random.random() + x\n"),
        Program("f", "import time\ndef f(x):\n    return time.time_ns()\n"),
        Program("f", "def f(x):\n    return x * 2\n"),
        Program("f", "def f(x):\n    return list({str(x), 'a', 'b', 'c', 'd', 'e', 'f'})\n"),
    ]
    ex = executor(mode)
    inputs = INTS[:4]
    rerun = [3, 0, 3]
    main = ex.run(ModuleContext(), programs, inputs, rerun=rerun, rerun_program=0, seed=5)
    again = ex.run(ModuleContext(), programs, inputs, seed=5)
    assert main.outcomes[0] == again.outcomes[0]  # seeded per call: reproducible within a seed
    assert len(main.rerun) == 3 and main.rerun[0] == main.rerun[2]
    assert all(not outcomes_equal(main.outcomes[0][i], r) for i, r in zip(rerun, main.rerun))
    for p, differs in ((1, True), (2, False), (3, True)):
        rep = ex.run(ModuleContext(), programs, inputs, rerun=[0, 1], rerun_program=p)
        same = [rep.outcomes[p][i] == r for i, r in zip([0, 1], rep.rerun)]
        assert (not all(same)) == differs, (p, same)
    assert ex.run(ModuleContext(), programs, inputs).rerun == []


def test_random_is_seeded_per_call_when_a_workspace_module_draws(mode, tmp_path):
    # Reseeding is skipped for code that cannot draw numbers; a helper module in the workspace
    # can, though the program's own text never says "random".
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "dice.py").write_text("import random\ndef roll():\n    return random.randint(1, 10 ** 9)\n")
    (ws / "lazy.py").write_text("def roll():\n    from random import randint\n    return randint(1, 10 ** 9)\n")
    (ws / "plain.py").write_text("def same(x):\n    return x\n")
    module = ModuleContext(
        source="from plain import same\ndef f(x):\n    return same(x)\n",
        filename=str(ws / "mod.py"),
        sys_path=(str(ws),),
    )
    programs = [
        Program("f"),
        Program("f", "from dice import roll\ndef f(x):\n    return roll()\n"),
        Program("f", "def f(x):\n    import lazy\n    return lazy.roll()\n"),
    ]
    inputs = INTS[:4]
    first = executor(mode).run(module, programs, inputs, seed=7)
    assert first.outcomes[0] == [ok(x) for x in range(-3, 1)]
    for p in (1, 2):
        row = first.outcomes[p]
        assert row[0].kind == "ok" and row == [row[0]] * 4, (p, row)
    again = executor(mode).run(module, programs, inputs, seed=7)
    other = executor(mode).run(module, programs, inputs, seed=8)
    assert again.outcomes == first.outcomes and other.outcomes[1] != first.outcomes[1]


def test_random_is_seeded_per_call_when_a_program_loads_a_drawing_module_unseen(mode):
    # The leader looks at the modules it loaded (the module context's, the programs' imports it
    # can see); a child looks again only when its program's load imported more, here a workspace
    # module no import statement names.  (A workspace the children can read: as root they run
    # as nobody, and pytest's tmp_path is private.)
    ws = Path(tempfile.mkdtemp(prefix="coherence-test-ws-"))
    try:
        ws.chmod(0o755)
        (ws / "hidden.py").write_text("import random\ndef roll():\n    return random.randint(1, 10 ** 9)\n")
        (ws / "hidden.py").chmod(0o644)
        module = ModuleContext(source="def f(x):\n    return x\n", filename=str(ws / "mod.py"), sys_path=(str(ws),))
        programs = [Program("f"), Program("f", "roll = __import__('hid' + 'den').roll\ndef f(x):\n    return roll()\n")]
        row = executor(mode).run(module, programs, INTS[:4], seed=3).outcomes[1]
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    assert row[0].kind == "ok" and row == [row[0]] * 4, row


def test_stdout_flood_and_env(mode, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    programs = [
        Program(
            "f",
            "import sys\n"
            "def f(x):\n"
            "    print('x' * 1_000_000)\n"
            "    for i in range(20000):\n"
            "        print(i, file=sys.stderr)\n"
            "    sys.__stdout__.write('y' * 100000)\n"
            "    sys.stdout.buffer.write(b'z' * 100000)\n"
            "    sys.stdout.flush()\n"
            "    return x\n",
        ),
        Program(
            "f",
            "import os\n"
            "def leaked():\n"
            "    try:\n"
            "        return 'sk-test-secret' in open('/proc/self/environ').read()\n"
            "    except OSError:\n"
            "        return False\n"
            "def f(x):\n"
            "    os.write(1, b'z' * 200000)\n"
            "    return [os.environ.get('OPENAI_API_KEY'), os.environ.get('ANTHROPIC_API_KEY'), leaked(),\n"
            "            os.path.expanduser('~') == os.getcwd()]\n",
        ),
    ]
    report = executor(mode).run(ModuleContext(), programs, INTS[:3])
    assert report.outcomes[0] == [ok(-3), ok(-2), ok(-1)]
    assert report.outcomes[1] == [ok([None, None, False, True])] * 3


def test_private_reads_blocked(mode, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text("machine api password sk-secret")
    monkeypatch.setenv("HOME", str(home))
    programs = [
        Program("f", f"def f(x):\n    return open({str(home / '.netrc')!r}).read()\n"),
        Program("f", "import os\ndef f(x):\n    return open(f'/proc/{os.getppid()}/environ').read()\n"),
        Program("f", "def f(x):\n    return len(open('/proc/self/status').read()) > 0\n"),
    ]
    report = executor(mode).run(ModuleContext(), programs, INTS[:1])
    assert report.outcomes[0][0].kind == "raise" and report.outcomes[0][0].error in (
        "PermissionError",
        "FileNotFoundError",
    )
    assert report.outcomes[1][0] == err("PermissionError")
    # its own entry: under bubblewrap (a private pid namespace); in guard mode a child inherits
    # its leader's Landlock domain, which grants no child's entry (docs/sandbox.md)
    own = err("PermissionError") if mode == "guard" and "landlock" in sb.planned_layers(mode) else ok(True)
    assert report.outcomes[2][0] == own


def test_a_changed_home_is_not_served_the_old_homes_exposed_paths(tmp_path, monkeypatch):
    """The paths kept visible under a hidden root are kept a few seconds, and the home directory
    is a hidden root: bubblewrap's mounts need each kept path under a root of the HOME now.  An
    answer kept from the old HOME crashed ``bwrap_command`` (StopIteration) when
    ``test_private_reads_blocked`` ran alone: the mode probe had just asked under the real HOME."""
    from coherence.engine.execution.visibility import exposed_paths

    interp = sb.probe_interpreter()
    old, new = tmp_path / "old", tmp_path / "new"
    ws = old / "ws"
    ws.mkdir(parents=True)
    new.mkdir()
    monkeypatch.setenv("HOME", str(old))
    assert os.path.realpath(ws) in exposed_paths(interp, (str(ws),))
    ws.rmdir()
    monkeypatch.setenv("HOME", str(new))
    assert os.path.realpath(ws) not in exposed_paths(interp, (str(ws),))


@pytest.fixture
def workspace_outside_tmp(tmp_path):
    """A workspace folder outside /tmp when the machine has a /var/tmp (/tmp is a hidden root,
    which treats a workspace below it differently), readable by the sandbox's dropped user."""
    if not os.access("/var/tmp", os.W_OK):
        yield tmp_path
        return
    ws = Path(tempfile.mkdtemp(prefix="coherence-test-ws-", dir="/var/tmp"))
    ws.chmod(0o755)
    try:
        yield ws
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def test_a_dotfile_written_between_two_checks_is_hidden_from_the_second(mode, workspace_outside_tmp):
    """The workspace's hidden entries were kept 5 s between checks: a ``.env`` saved just after
    one check was readable by the generated code of the next (the audit hook, bubblewrap's mounts
    and Landlock all got the stale list).  Found by reading the cache; both reads returned the
    key before the change, in both modes."""
    ws = workspace_outside_tmp
    (ws / "mod.py").write_text("def f(x):\n    return x\n")
    module = ModuleContext(source="def f(x):\n    return x\n", filename=str(ws / "mod.py"), sys_path=(str(ws),))
    path = str(ws / ".env")
    read_in_python = Program(
        "f",
        f"def f(x):\n    try:\n        return open({path!r}).read()\n    except OSError as e:\n        return type(e).__name__\n",
    )
    read_in_c = Program(
        "f",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def f(x):\n    buf = ctypes.create_string_buffer(4096)\n"
        f"    fd = libc.open({path.encode()!r}, os.O_RDONLY)\n"
        "    if fd < 0:\n        return 'errno %d' % ctypes.get_errno()\n"
        "    n = libc.read(fd, buf, 4096)\n    libc.close(fd)\n    return buf.raw[:max(n, 0)].decode()\n",
    )
    ex = executor(mode)
    first = ex.run(module, [Program("f"), read_in_python, read_in_c], INTS[:1])
    assert first.outcomes[1][0] in (ok("FileNotFoundError"), ok("PermissionError"))
    (ws / ".env").write_text("OPENAI_API_KEY=sk-live-0123456789\n")
    second = ex.run(module, [Program("f"), read_in_python, read_in_c], INTS[:1])
    assert second.outcomes[1][0] == ok("PermissionError")
    if mode == "bwrap" or os.geteuid() == 0 or "landlock" in sb.kernel_layers():  # below the audit hook
        assert second.outcomes[2][0] == ok("errno 13")


def readers(paths: list[str]) -> tuple[Program, Program]:
    """Two programs that read each of ``paths`` and return what they got: with ``open()`` (the
    audit hook sees it: the error's name) and with libc's ``open`` (below it: ``errno N``)."""
    in_python = Program(
        "f",
        f"def f(x):\n    out = []\n    for p in {paths!r}:\n        try:\n            out.append(open(p).read())\n"
        "        except OSError as e:\n            out.append(type(e).__name__)\n    return out\n",
    )
    in_c = Program(
        "f",
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"def f(x):\n    out = []\n    for p in {paths!r}:\n        buf = ctypes.create_string_buffer(4096)\n"
        "        fd = libc.open(p.encode(), os.O_RDONLY)\n"
        "        if fd < 0:\n            out.append('errno %d' % ctypes.get_errno())\n            continue\n"
        "        n = libc.read(fd, buf, 4096)\n        libc.close(fd)\n        out.append(buf.raw[:max(n, 0)].decode())\n"
        "    return out\n",
    )
    return in_python, in_c


def test_a_dotfile_deep_in_the_workspace_is_hidden(mode, workspace_outside_tmp):
    """backend/.env and a nested .git, checked from another folder of the same workspace: only
    the workspace's top level was hidden, and both were readable, in both modes."""
    ws = workspace_outside_tmp
    (ws / "pkg").mkdir()
    (ws / "pkg" / "mod.py").write_text("def f(x):\n    return x\n")
    (ws / "backend" / ".git").mkdir(parents=True)
    (ws / "backend" / ".env").write_text("OPENAI_API_KEY=sk-nested-0123456789\n")
    (ws / "backend" / ".git" / "config").write_text("url = https://user:token@example.com/repo\n")
    (ws / "backend" / "README").write_text("readable\n")
    for p in (ws / "pkg", ws / "backend", ws / "backend" / ".git"):
        p.chmod(0o755)
    module = ModuleContext(
        source="def f(x):\n    return x\n", filename=str(ws / "pkg" / "mod.py"), sys_path=(str(ws / "pkg"), str(ws))
    )
    paths = [str(ws / "backend" / name) for name in (".env", ".git/config", "README")]
    read_in_python, read_in_c = readers(paths)
    report = executor(mode).run(module, [Program("f"), read_in_python, read_in_c], INTS[:1])
    assert report.outcomes[1][0] == ok(["PermissionError", "PermissionError", "readable\n"])
    if mode == "bwrap" or os.geteuid() == 0 or "landlock" in sb.kernel_layers():  # below the audit hook
        # a hidden folder is an empty tmpfs under bubblewrap: its files are not found there
        assert report.outcomes[2][0] in (ok(["errno 13", gone, "readable\n"]) for gone in ("errno 13", "errno 2"))


def test_a_workspace_of_many_projects_hides_the_others_whole_and_runs_the_checked_one(mode, workspace_outside_tmp):
    """A folder of 150 projects opened as one workspace (each with .env, .git and backend/.env):
    600 hidden entries would be 600 bubblewrap mounts (it took 0.4 s to start with 900) and a
    Landlock plan past the descriptor limit.  The projects that do not hold the checked file are
    hidden whole; the checked one runs, its README is readable and its secrets are not."""
    ws = workspace_outside_tmp
    for i in range(150):
        p = ws / f"p{i}"
        (p / ".git").mkdir(parents=True)
        (p / "backend").mkdir()
        (p / "src").mkdir()
        (p / ".env").write_text(f"OPENAI_API_KEY=sk-project-{i}\n")
        (p / "backend" / ".env").write_text(f"OPENAI_API_KEY=sk-backend-{i}\n")
        (p / "README").write_text(f"readme {i}\n")
        for d in (p, p / ".git", p / "backend", p / "src"):
            d.chmod(0o755)
    source = "def f(x):\n    return x\n"
    (ws / "p7" / "src" / "mod.py").write_text(source)
    module = ModuleContext(
        source=source, filename=str(ws / "p7" / "src" / "mod.py"), sys_path=(str(ws / "p7" / "src"), str(ws))
    )
    paths = [str(ws / rel) for rel in ("p7/README", "p7/.env", "p7/backend/.env", "p3/README", "p3/.env")]
    read_in_python, read_in_c = readers(paths)
    report = executor(mode).run(module, [Program("f"), read_in_python, read_in_c], INTS[:1])
    assert report.outcomes[0][0] == ok(-3)
    assert report.outcomes[1][0] == ok(["readme 7\n"] + ["PermissionError"] * 4)
    if mode == "bwrap" or os.geteuid() == 0 or "landlock" in sb.kernel_layers():  # below the audit hook
        # Landlock refuses (EACCES).  Under bubblewrap a hidden file is /dev/null bound on a nodev
        # mount (EACCES) and a project hidden whole an empty tmpfs (ENOENT)
        errs = ["errno 13"] * 4 if mode == "guard" else ["errno 13", "errno 13", "errno 2", "errno 2"]
        assert report.outcomes[2][0] == ok(["readme 7\n", *errs])


def test_a_guard_plan_out_of_rules_leaves_files_unreadable_and_says_so(workspace_outside_tmp):
    """A flat folder with a .env and 600 other files needs a Landlock rule per file, past the
    512 a plan makes: the last data files are left unreadable (never exposed), the modules are
    granted first so a module imported at run time still loads (helper.py sorts after
    data_*.txt), and the run's diagnostics say what happened."""
    if "landlock" not in sb.kernel_layers():
        pytest.skip("no Landlock here")
    ws = workspace_outside_tmp
    (ws / ".env").write_text("OPENAI_API_KEY=sk-flat-0123456789\n")
    for i in range(600):
        (ws / f"data_{i:03}.txt").write_text(f"{i}\n")
    (ws / "helper.py").write_text("def g():\n    return 1\n")
    # imported by a name the source does not spell, so in the child, under its Landlock domain
    # (the leader imports every module a source names before it forks the children)
    source = "import importlib\n\ndef f(x):\n    return x + importlib.import_module('hel' + 'per').g()\n"
    (ws / "zz_mod.py").write_text(source)
    module = ModuleContext(source=source, filename=str(ws / "zz_mod.py"), sys_path=(str(ws),))
    read_in_python, read_in_c = readers([str(ws / "data_000.txt"), str(ws / "data_599.txt"), str(ws / ".env")])
    report = executor("guard").run(module, [Program("f"), read_in_python, read_in_c], INTS[:1])
    assert report.outcomes[0][0] == ok(-2)
    assert report.outcomes[1][0] == ok(["0\n", "PermissionError", "PermissionError"])
    assert report.outcomes[2][0] == ok(["0\n", "errno 13", "errno 13"])
    assert any("left unreadable, past 512 rules" in d for d in report.diagnostics), report.diagnostics


def test_workspace_is_read_only(mode, tmp_path):
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "data.txt").write_text("original")
    (ws / "helper.py").write_text("def twice(x):\n    return 2 * x\n")
    module = ModuleContext(
        source="from helper import twice\ndef f(x):\n    return twice(x)\n",
        filename=str(ws / "mod.py"),
        sys_path=(str(ws),),
    )
    root = repr(str(ws))
    programs = [
        Program("f"),
        Program("f", f"def f(x):\n    open({root} + '/data.txt', 'w').write('pwned')\n    return x\n"),
        Program("f", f"import os\ndef f(x):\n    os.remove({root} + '/data.txt')\n    return x\n"),
        Program("f", f"import shutil\ndef f(x):\n    shutil.rmtree({root})\n    return x\n"),
        Program("f", f"def f(x):\n    open({root} + '/new.txt', 'x').write('new')\n    return x\n"),
        Program(
            "f",
            f"import ctypes, os\ndef f(x):\n    fd = ctypes.CDLL(None).open(({root} + '/c.txt').encode(), os.O_WRONLY | os.O_CREAT, 0o644)\n    return fd\n",
        ),
        Program("f", "def f(x):\n    open('scratch.txt', 'w').write('fine')\n    return open('scratch.txt').read()\n"),
    ]
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    report = executor(mode).run(module, programs, INTS[:2])
    assert report.module_error is None
    assert report.outcomes[0] == [ok(-6), ok(-4)]
    for p in (1, 2, 3, 4):
        assert all(o.kind == "raise" and o.error in ("PermissionError", "OSError") for o in report.outcomes[p]), p
    if mode == "bwrap" or os.geteuid() == 0:  # below the audit hook: the sandbox itself refuses
        assert report.outcomes[5] == [ok(-1)] * 2
    assert report.outcomes[6] == [ok("fine")] * 2  # its own temp dir is writable
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before


def test_network_and_processes_blocked(mode):
    programs = [
        Program(
            "f", "import socket\ndef f(x):\n    socket.create_connection(('127.0.0.1', 9), timeout=0.2)\n    return x\n"
        ),
        Program("f", "import subprocess\ndef f(x):\n    return subprocess.run(['true']).returncode\n"),
        Program("f", "import os\ndef f(x):\n    return os.fork()\n"),
        Program("f", "import os\ndef f(x):\n    os.kill(1, 9)\n    return x\n"),
        Program(
            "f", "import threading\ndef f(x):\n    t = threading.Thread(target=print)\n    t.start()\n    return x\n"
        ),
    ]
    report = executor(mode).run(ModuleContext(), programs, INTS[:2])
    for p, row in enumerate(report.outcomes):
        assert all(o.kind == "raise" for o in row), (p, row)
        assert row[0].error in ("PermissionError", "RuntimeError", "OSError", "BlockingIOError"), (p, row)


def test_programs_run_at_a_lower_priority_than_the_server(mode):
    # os.nice(0) reports the niceness without changing it
    programs = [
        Program("f", "import os\ndef f(x):\n    return os.nice(0)\n"),
        Program("f", "import os\ndef f(x):\n    return os.nice(-10)\n"),
    ]
    report = executor(mode).run(ModuleContext(), programs, INTS[:2])
    mine = os.nice(0)
    assert report.outcomes[0] == [ok(min(mine + 10, 19))] * 2
    # and cannot take it back: root's children drop their privileges, and no one else may
    assert report.outcomes[1] == [err("PermissionError")] * 2


def test_no_processes_left_behind(mode):
    programs = [
        Program("add_one"),
        Program("add_one", "def add_one(x):\n    return sum(range(10**13))\n"),
        Program("add_one", "import ctypes\ndef add_one(x):\n    ctypes.string_at(0)\n"),
        Program("add_one", "import time\ndef add_one(x):\n    time.sleep(100)\n"),
    ]
    with ProcessWatch() as watch:
        report = executor(mode, call_timeout=0.3, program_budget=1.0).run(MODULE, programs, INTS[:3], rerun=[0, 1])
    assert len(watch.seen) >= 2
    assert report.outcomes[0] == [ok(-2), ok(-1), ok(0)]
    time.sleep(0.1)
    # what stays is the pool's idle warm workers themselves, nothing of the run's programs
    assert set(watch.survivors()) <= POOL.pids()
    POOL.close_all()
    assert watch.survivors() == []


def test_cancel(mode):
    cancel = threading.Event()
    programs = [Program("add_one"), Program("add_one", "def add_one(x):\n    while True:\n        pass\n")]
    ex = executor(mode, call_timeout=30, program_budget=300)
    timer = threading.Timer(0.5, cancel.set)
    with ProcessWatch() as watch:
        timer.start()
        start = time.monotonic()
        with pytest.raises(CheckCancelled):
            ex.run(MODULE, programs, INTS, cancel=cancel)
        assert time.monotonic() - start < 3
    time.sleep(0.1)
    assert watch.survivors() == []


def test_inputs_are_fresh_per_call_and_per_program(mode):
    # every program and every call sees the original list, even after others mutated theirs
    programs = [
        Program("push"),
        Program("push", "def push(xs, item):\n    xs.append(item)\n    xs.append(item)\n"),
    ]
    inputs = ["(([1],), {'item': 2})"] * 3
    report = executor(mode).run(MODULE, programs, inputs)
    assert report.outcomes[0] == [ok(None, mutated=([1, 2], {"item": 2}))] * 3
    assert report.outcomes[1] == [ok(None, mutated=([1, 2, 2], {"item": 2}))] * 3


def test_async_functions_are_awaited(mode):
    module = ModuleContext(source="import asyncio\nasync def f(x):\n    await asyncio.sleep(0)\n    return 2 * x\n")
    programs = [
        Program("f"),
        Program("f", "async def f(x):\n    return x + x\n"),
        Program("f", "import asyncio\nasync def f(x):\n    await asyncio.sleep(60)\n"),
    ]
    report = executor(mode, call_timeout=0.3).run(module, programs, INTS[:2])
    assert report.outcomes[0] == [ok(-6), ok(-4)]
    assert report.outcomes[1] == report.outcomes[0]
    assert report.outcomes[2] == [err("Timeout")] * 2


def test_bad_interpreter():
    with pytest.raises(ConfigurationError):
        Executor(python="/nonexistent/python3").run(MODULE, [Program("add_one")], INTS)
    with pytest.raises(ConfigurationError):
        Executor(python="/bin/false").run(MODULE, [Program("add_one")], INTS)
    with pytest.raises(ConfigurationError):
        Executor(sandbox="docker").run(MODULE, [Program("add_one")], INTS)


def test_empty_program_list():
    report = Executor().run(MODULE, [], INTS)
    assert report.outcomes == [] and report.load_errors == []


def test_speed(mode):
    # nine different programs: copies of one would run once
    programs = [Program("add_one")] + [
        Program("add_one", f"def add_one(x):\n    return x + {k % 2 + 1} + {k} - {k}\n") for k in range(9)
    ]
    inputs = [f"(({i},), {{}})" for i in range(1000)]
    ex = executor(mode)
    ex.run(MODULE, programs[:1], inputs[:1])  # probes are cached per interpreter
    best = min(_timed(ex, programs, inputs) for _ in range(2))
    assert best < 2.0  # the target is well under 0.5 s on an idle 2-core machine


def _timed(ex: Executor, programs, inputs) -> float:
    start = time.perf_counter()
    report = ex.run(MODULE, programs, inputs)
    elapsed = time.perf_counter() - start
    assert report.outcomes[1] == report.outcomes[0]
    return elapsed


def test_other_python_versions(tmp_path):
    found = (
        [p for p in Path("/root/.pyenv/versions").glob("3.*/bin/python3") if p.exists()]
        if os.access("/root", os.R_OK)
        else []
    )
    old = [p for p in found if p.parent.parent.name.startswith(("3.8", "3.13"))]
    if not old:
        pytest.skip("no other CPython versions installed")
    for py in old:
        report = Executor(python=str(py)).run(
            MODULE, [Program("add_one"), Program("norm")], ["((1,), {})", "((Point(1, -2),), {})"]
        )
        assert report.outcomes[0][0] == ok(2), py
        assert report.outcomes[1][1] == ok(3), py


def test_inputs_run_cheapest_first_and_timeouts_in_a_row_end_the_program(mode):
    """Programs take the inputs shortest source first, so running out of time leaves out the
    largest ones; three timeouts in a row leave out the rest of the (larger) inputs at once."""
    big = [f"(({10**k},), {{}})" for k in range(13, 7, -1)]  # listed largest first
    small = [f"(({i},), {{}})" for i in range(40)]
    inputs = big + small
    programs = [
        Program("add_one"),
        # a pure-Python loop the timer interrupts: every input of 10**8 and more times out
        Program("add_one", "def add_one(x):\n    t = 0\n    for i in range(x):\n        t += 1\n    return x + 1\n"),
    ]
    report = executor(mode, call_timeout=0.3, program_budget=30.0).run(MODULE, programs, inputs)
    slow = report.outcomes[1]
    assert slow[len(big) :] == report.outcomes[0][len(big) :]  # the small ones ran first, all of them
    # the three shortest big inputs timed out, in that order; the three longest were never run
    assert [o.error for o in slow[: len(big)]] == ["BudgetExceeded"] * 3 + ["Timeout"] * 3
    assert report.timeouts[1] == 6


def test_inputs_run_last_cannot_take_the_others_away_by_hanging(mode):
    """Inputs the function is likely not meant for run after all others: hangs on them (a
    negative n loops forever) end the program only once everything else has run."""
    negatives = [f"(({-i},), {{}})" for i in range(1, 30)]
    positives = [f"(({i},), {{}})" for i in range(30)]
    inputs = negatives + positives  # the same lengths: cheapest first alone would mix them
    program = Program("add_one", "def add_one(x):\n    while x < 0:\n        pass\n    return x + 1\n")
    run = executor(mode, call_timeout=0.2, program_budget=30.0)
    report = run.run(MODULE, [program], inputs, last=range(len(negatives)))
    row = report.outcomes[0]
    assert row[len(negatives) :] == [ok(i + 1) for i in range(30)]
    errors = [o.error for o in row[: len(negatives)]]
    assert errors.count("Timeout") == 3 and set(errors) == {"Timeout", "BudgetExceeded"}
    # without the order, the hangs among the small inputs leave out most of the others
    mixed = run.run(MODULE, [program], inputs).outcomes[0]
    assert sum(o.error == "BudgetExceeded" for o in mixed[len(negatives) :]) > 10


def test_timeouts_in_a_row_leave_out_the_likely_inputs_but_not_the_late_ones(mode):
    """Timeouts in a row among the likely inputs say those grew too large: the rest of them are
    left out, and the late ones (cheap here) still run."""
    small = [f"(({i},), {{}})" for i in range(20)]
    big = [f"(({10**k},), {{}})" for k in range(8, 14)]
    negatives = [f"(({-i},), {{}})" for i in range(1, 20)]
    inputs = small + big + negatives
    program = Program(
        "add_one", "def add_one(x):\n    t = 0\n    for i in range(x):\n        t += 1\n    return x + 1\n"
    )
    report = executor(mode, call_timeout=0.2, program_budget=30.0).run(MODULE, [program], inputs, last=range(26, 45))
    row = report.outcomes[0]
    assert row[:20] == [ok(i + 1) for i in range(20)]
    assert [o.error for o in row[20:26]] == ["Timeout"] * 3 + ["BudgetExceeded"] * 3
    assert row[26:] == [ok(-i + 1) for i in range(1, 20)]


def test_the_late_inputs_keep_a_fifth_of_the_budget(mode):
    """Likely inputs that would use the whole budget stop a fifth of it early, and the late ones
    (cheap here) run in what is left."""
    likely = [f"(({i},), {{}})" for i in range(100)]
    late = [f"(({-i},), {{}})" for i in range(1, 20)]
    program = Program(
        "add_one", "import time\ndef add_one(x):\n    if x >= 0:\n        time.sleep(0.05)\n    return x + 1\n"
    )
    report = executor(mode, call_timeout=0.5, program_budget=1.0).run(
        MODULE, [program], likely + late, last=range(100, 119)
    )
    row = report.outcomes[0]
    assert row[100:] == [ok(-i + 1) for i in range(1, 20)]
    assert row[0] == ok(1) and row[99].error == "BudgetExceeded"


def test_inputs_the_anchor_leaves_out_are_skipped_by_the_other_programs(mode):
    """The caller drops every input the anchor (the user's function) did not reach, so once it
    leaves inputs out, the others do not spend their time on them."""
    small = [f"(({i},), {{}})" for i in range(20)]
    big = [f"(({10**k},), {{}})" for k in range(8, 14)]
    anchor = Program(
        "add_one", "def add_one(x):\n    t = 0\n    for i in range(x):\n        t += 1\n    return x + 1\n"
    )
    slow = Program(
        "add_one", "import time\ndef add_one(x):\n    if x > 100:\n        time.sleep(0.1)\n    return x + 1\n"
    )
    run = executor(mode, call_timeout=0.3, program_budget=30.0, jobs=1)  # one at a time: the anchor first
    shared = run.run(MODULE, [anchor, slow], small + big, anchor=0).outcomes
    assert [o.error for o in shared[0][20:]] == ["Timeout"] * 3 + ["BudgetExceeded"] * 3
    assert shared[1][:23] == [ok(x + 1) for x in list(range(20)) + [10**8, 10**9, 10**10]]
    assert [o.error for o in shared[1][23:]] == ["BudgetExceeded"] * 3
    # not told which program is the anchor, the other one runs everything
    alone = run.run(MODULE, [anchor, slow], small + big).outcomes
    assert alone[1][23:] == [ok(10**k + 1) for k in range(11, 14)]


def test_a_program_that_hangs_where_the_anchor_hangs_skips_the_anchors_other_hangs(mode):
    """Once a program has timed out on an input the anchor timed out on too, the anchor's other
    timeouts are left out for it (and so dropped): agreeing on each hang again cost a whole
    call_timeout per program.  A program that returns there still runs them all."""
    small = [f"(({i},), {{}})" for i in range(20)]
    big = [f"(({10**k},), {{}})" for k in range(8, 14)]
    loop = "def add_one(x):\n    t = {start}\n    for i in range(x):\n        t += 1\n    return x + 1\n"
    anchor, hangs = Program("add_one", loop.format(start=0)), Program("add_one", loop.format(start=1))
    fast = Program("add_one", "def add_one(x):\n    return x + 1\n")
    run = executor(mode, call_timeout=0.3, program_budget=30.0, jobs=1)  # one at a time: the anchor first
    shared = run.run(MODULE, [anchor, hangs, fast], small + big, anchor=0).outcomes
    assert [o.error for o in shared[0][20:]] == ["Timeout"] * 3 + ["BudgetExceeded"] * 3
    assert shared[1][:20] == shared[2][:20] == [ok(x + 1) for x in range(20)]
    assert [o.error for o in shared[1][20:]] == ["Timeout"] + ["BudgetExceeded"] * 5
    assert shared[2][20:23] == [ok(10**k + 1) for k in range(8, 11)]
    # not told which program is the anchor, each one that hangs pays for every hang
    alone = run.run(MODULE, [anchor, hangs, fast], small + big).outcomes
    assert [o.error for o in alone[1][20:23]] == ["Timeout"] * 3


def test_results_survive_a_child_killed_in_a_call_stuck_in_c(mode):
    """A call stuck in C ignores the timer, so the child is killed; what it had computed but not
    yet written must not be lost to the budget (it used to be: a few stuck calls at the end of a
    run of cheap inputs left only the budget's BudgetExceeded)."""
    small = [f"(({i},), {{}})" for i in range(300)]
    stuck = ["((10 ** 13,), {})", "((10 ** 14,), {})"]
    programs = [Program("add_one", "def add_one(x):\n    return sum(range(x)) * 0 + x + 1\n")]
    report = executor(mode, call_timeout=0.3, program_budget=1.2).run(MODULE, programs, small + stuck)
    row = report.outcomes[0]
    assert row[:300] == [ok(i + 1) for i in range(300)]
    assert [o.error for o in row[300:]] == ["Timeout", "Timeout"]


def test_a_call_stuck_in_c_costs_the_budget_little_more_than_its_timeout(mode):
    """The watchdog kills a child still in a call shortly after the call's timeout, not half a
    second later: three stuck calls used to take 3 x (0.2 + 0.5) s of a 1.9 s budget, and every
    input after them was left out (for the user's function, out of every program's run)."""
    stuck = [f"(('h{k}',), {{}})" for k in range(3)]
    cheap = [f"(('a{k}',), {{}})" for k in range(40)]
    programs = [Program("f", "def f(s):\n    return sum(range(10**13)) if s[0] == 'h' else len(s)\n")]
    report = executor(mode, call_timeout=0.2, program_budget=1.9).run(MODULE, programs, stuck + cheap)
    row = report.outcomes[0]
    assert [o.error for o in row[:3]] == ["Timeout"] * 3
    assert row[3:] == [ok(len(f"a{k}")) for k in range(40)]


ROUNDED_AVG = '''
# coherence
def rounded_avg(n: int, m: int):
    """The average of the integers n through m, rounded, in binary; -1 if n > m.

    >>> rounded_avg(1, 5)
    '0b11'
    >>> rounded_avg(7, 5)
    -1
    >>> rounded_avg(10, 20)
    '0b1111'
    >>> rounded_avg(20, 33)
    '0b11010'
    """
    if n > m:
        return -1
    return bin(round((n + m) / 2))
'''


def test_a_restarted_program_does_not_wait_behind_the_spare_child(mode):
    """Nine alternatives whose ``sum(range(n, m + 1))`` gets stuck in C on the few huge inputs:
    each is killed there and restarted.  A restart goes before the spare child (its budget runs,
    the spare's has not started) and is not charged for time spent waiting for a slot.  Before,
    some restarts waited until their budget was gone and lost every input."""
    from coherence.engine.inputs.generate import generate_inputs
    from coherence.engine.markers import find_targets

    (target,) = find_targets(ROUNDED_AVG, "m.py")
    inputs = generate_inputs(target.spec, 1000, module_source=ROUNDED_AVG, seed=0, time_budget=10)
    alt = "def rounded_avg(n, m):\n    if n > m:\n        return -1\n    return bin(round(sum(range(n, m + 1)) / (m - n + 1)))\n"
    programs = [Program("rounded_avg", None, "yours")] + [Program("rounded_avg", alt, f"p{k}") for k in range(9)]
    module = ModuleContext(source=ROUNDED_AVG, filename="/workspace/m.py", module_name="m")
    report = executor(mode, call_timeout=0.5, program_budget=2.0, jobs=2).run(module, programs, inputs)
    reached = [sum(1 for o in row if o.error != "BudgetExceeded") for row in report.outcomes]
    assert reached[0] == len(inputs)
    assert min(reached[1:]) >= len(inputs) - 10, reached  # only the last few, huge inputs are left out


def test_run_budget_is_shared_out_as_program_budgets():
    ex = Executor(limits=ExecutionLimits(program_budget=5.0, run_budget=10.0, jobs=2))
    assert ex.limits_for(10).program_budget == 2.0
    assert ex.limits_for(2).program_budget == 5.0  # never more than program_budget
    assert ex.limits_for(50).program_budget == 1.0  # never less than a second
    assert Executor(limits=ExecutionLimits(program_budget=5.0, jobs=2)).limits_for(10).program_budget == 5.0


def test_copies_of_one_program_run_once_and_keep_their_rows(mode):
    # os.getpid() tells processes apart: every program runs in its own child, so two programs
    # that ran separately return different numbers, and copies that ran once the same.
    pid = "import os\ndef f(x):\n    return os.getpid()\n"
    programs = [
        Program("f", "import os\ndef f(x):\n    return os.getpid() + 0\n"),  # the user's stand-in
        Program("f", pid, label="alternative 1"),
        Program(
            "f",
            "import os\n\n# the same code, formatted otherwise\ndef f( x ):\n    return os.getpid()  # pid\n",
            label="alternative 2",
        ),
        Program("f", "import os\ndef f(x):\n    return int(os.getpid())\n", label="alternative 3"),
        Program("f", pid, label="alternative 4"),
        Program("f", "import no_such_module_anywhere\ndef f(x):\n    return x\n", label="alternative 5"),
        Program("f", "import no_such_module_anywhere\ndef f( x ):\n    return x\n", label="alternative 6"),
    ]
    report = executor(mode).run(ModuleContext(), programs, INTS[:3], rerun=[0], rerun_program=0)
    assert report.programs_run == 4
    assert len(report.outcomes) == len(report.load_errors) == len(report.timeouts) == len(programs)
    rows = report.outcomes
    assert rows[1] == rows[2] == rows[4]  # one run for the three copies
    assert all(o.kind == "ok" for o in rows[1])
    pids = {repr(rows[p][0].value) for p in (0, 1, 3)}
    assert len(pids) == 3, pids  # the others each ran apart
    assert report.load_errors[5] == report.load_errors[6] and "ModuleNotFoundError" in report.load_errors[5]
    assert rows[5] == rows[6] == [err("LoadError")] * 3
    assert report.load_errors[:5] == [None] * 5
    # the re-run is still of the program asked for (the first), in its own process
    assert len(report.rerun) == 1 and report.rerun[0].kind == "ok" and report.rerun[0] != rows[0][0]


def test_the_users_function_is_never_merged_with_an_alternative(mode):
    # The same text as the user's function, but the user's runs against its module (where
    # add_one is the module's), the alternative against its own code: both run.
    programs = [
        Program("add_one", label="yours"),
        Program("add_one", 'def add_one(x):\n    """The user\'s function."""\n    return x + 1\n'),
    ]
    report = executor(mode).run(MODULE, programs, INTS[:2])
    assert report.programs_run == 2
    assert report.outcomes[0] == report.outcomes[1] == [ok(-2), ok(-1)]


def test_runs_report_the_cpu_time_of_their_jobs(mode):
    ex = executor(mode)
    burn = Program("f", "def f(x):\n    s = 0\n    for i in range(3 * 10**6):\n        s += i\n    return x\n")
    idle = Program("f", "import time\ndef f(x):\n    time.sleep(0.3)\n    return x\n")
    busy = ex.run(ModuleContext(), [burn], INTS[:1])
    asleep = ex.run(ModuleContext(), [idle], INTS[:1])
    assert busy.outcomes[0][0].kind == asleep.outcomes[0][0].kind == "ok"
    if not ex.warm:
        assert busy.cpu_seconds is None  # one-shot workers do not report it
        return
    # CPU time, not wall time: the loop burns it, the sleep does not
    assert busy.cpu_seconds > 0.05 and asleep.cpu_seconds < 0.25 < asleep.seconds
    assert busy.cpu_seconds > asleep.cpu_seconds
    before = ex.cpu_used
    again = ex.run(ModuleContext(), [burn], INTS[:1], rerun=[0], rerun_program=0)
    assert ex.cpu_used == pytest.approx(before + again.cpu_seconds)


# -- runs started ahead of their inputs (Executor.prepare) -------------------------------------


def _module_status(prepared, seconds: float = 20.0) -> bytes:
    """What the main job's leader wrote before it was given any input (fed on to the run): the
    sandbox's layers, then the module's status."""
    import select

    run = prepared.main
    got = b""
    until = time.monotonic() + seconds
    while not (b"-1 0 " in got and got.endswith(b"\n")) and time.monotonic() < until:
        if select.select([run.fd], [], [], 0.05)[0]:
            data = os.read(run.fd, 1 << 16)
            if not data:
                break
            got += data
    run.feed(got)
    return got


def test_a_prepared_run_loads_the_module_before_its_inputs_exist(mode):
    ex = executor(mode)
    programs = [Program("add_one"), Program("add_one", "def add_one(x):\n    return x + 2\n")]
    prepared = ex.prepare(MODULE, programs, rerun_program=0)
    try:
        if ex.warm:
            # the leader has imported the module and compiled the programs, and waits for inputs
            assert b"\n-1 0 null\n" in b"\n" + _module_status(prepared)
        report = prepared.run(INTS[:3], rerun=[0, 2])
    finally:
        prepared.close()
    plain = ex.run(MODULE, programs, INTS[:3], rerun=[0, 2])
    assert report.outcomes == plain.outcomes == [[ok(-2), ok(-1), ok(0)], [ok(-1), ok(0), ok(1)]]
    assert report.rerun == plain.rerun == [ok(-2), ok(0)]
    assert report.programs_run == 2 and not report.diagnostics


def test_a_prepared_run_given_up_leaves_nothing_and_its_worker_reusable(mode):
    ex = executor(mode)
    with ProcessWatch() as watch:
        prepared = ex.prepare(MODULE, [Program("add_one")], rerun_program=0)
        workers = [r.warm for r in prepared.pending]
        jobs = [w.jobs for w in workers]  # the pool is shared: they may have run jobs before
        if ex.warm:
            assert len(workers) == 2  # the main run and the re-run
            _module_status(prepared)
        prepared.close()
        assert prepared.pending == []
        with pytest.raises(CheckCancelled):
            prepared.run(INTS[:1])  # given up is given up
        # the workers finished their jobs cleanly (an empty inputs frame ends them), so the pool
        # keeps them, and they run the next jobs
        assert all(w.alive() for w in workers) and [w.jobs for w in workers] == [j + 1 for j in jobs]
        again = ex.run(MODULE, [Program("add_one")], INTS[:2], rerun=[1])
        assert again.outcomes == [[ok(-2), ok(-1)]] and again.rerun == [ok(-1)]
        assert all(w.alive() for w in workers) and [w.jobs for w in workers] == [j + 2 for j in jobs]
    time.sleep(0.1)
    assert set(watch.survivors()) <= POOL.pids()


def test_a_module_that_fails_before_the_inputs_come_is_reported_and_spares_the_worker(mode):
    ex = executor(mode)
    broken = ModuleContext(source="raise ValueError('no config')\ndef f(x):\n    return x\n")
    prepared = ex.prepare(broken, [Program("f"), Program("f", "def f(x):\n    return x\n")])
    worker = prepared.main.warm
    jobs = worker.jobs if worker is not None else 0
    if ex.warm:
        assert b"ValueError" in _module_status(prepared)
        time.sleep(0.2)  # its leader is gone before the inputs are sent: the worker drops them
    try:
        report = prepared.run(INTS[:2])
    finally:
        prepared.close()
    assert "ValueError" in report.module_error
    assert report.outcomes == [[err("LoadError")] * 2] * 2
    good = ex.run(MODULE, [Program("add_one")], INTS[:2])
    assert good.outcomes == [[ok(-2), ok(-1)]]
    if worker is not None:
        time.sleep(0.2)  # had it read the dropped inputs as a job, it would be gone by now
        assert worker.alive() and worker.jobs == jobs + 2


def test_a_prepared_run_cancelled_before_its_inputs_starts_nothing_more(mode):
    ex = executor(mode)
    cancel = threading.Event()
    with ProcessWatch() as watch:
        prepared = ex.prepare(MODULE, [Program("add_one")], rerun_program=0)
        cancel.set()
        with pytest.raises(CheckCancelled):
            prepared.run(INTS, rerun=[0], cancel=cancel)
        prepared.close()
    time.sleep(0.1)
    assert set(watch.survivors()) <= POOL.pids()


# the hash seed decides this order, and the re-run's process has another one
_SET_ORDER = Program("f", "def f(x):\n    return list({str(x), 'a', 'b', 'c', 'd', 'e', 'f', 'g'})\n")


def test_a_rerun_started_ahead_runs_before_the_others_and_still_sees_the_other_hash_seed(mode):
    ex = executor(mode)
    programs = [_SET_ORDER, Program("f", "def f(x):\n    return x\n")]
    prepared = ex.prepare(ModuleContext(), programs, rerun_program=0)
    try:
        started = prepared.start_rerun(INTS[:3])
        assert started == ex.warm  # one-shot workers take their jobs whole, in run
        if started:
            # it runs now: its job is over, and its outcomes are in, before run() is called
            _read_until_over(prepared.rr)
            assert prepared.rr.over and all(o is not None for o in prepared.rr.results[0])
            assert prepared.start_rerun(INTS[:3]) is False  # once
        report = prepared.run(INTS[:5], rerun=[0, 1, 2])
    finally:
        prepared.close()
    assert [o.kind for o in report.rerun] == ["ok"] * 3
    assert not all(outcomes_equal(report.outcomes[0][i], r) for i, r in enumerate(report.rerun))
    plain = ex.run(ModuleContext(), programs[1:], INTS[:5])
    assert report.outcomes[1] == plain.outcomes[0]


def test_a_rerun_started_ahead_on_other_inputs_than_run_asks_for_is_left_out(mode):
    ex = executor(mode)
    prepared = ex.prepare(MODULE, [Program("add_one")], rerun_program=0)
    try:
        prepared.start_rerun(INTS[1:3])  # not the first inputs of the run
        report = prepared.run(INTS[:3], rerun=[0, 1])
    finally:
        prepared.close()
    assert report.outcomes == [[ok(-2), ok(-1), ok(0)]]
    # never the outcomes of other inputs taken for these: that would look like nondeterminism
    assert report.rerun == ([] if ex.warm else [ok(-2), ok(-1)])


def test_a_run_given_up_after_its_rerun_started_ahead_leaves_nothing(mode):
    ex = executor(mode)
    with ProcessWatch() as watch:
        prepared = ex.prepare(MODULE, [Program("add_one")], rerun_program=0)
        prepared.start_rerun(INTS[:2])
        prepared.close()
        with pytest.raises(CheckCancelled):
            prepared.run(INTS[:2], rerun=[0, 1])
        assert prepared.start_rerun(INTS[:2]) is False
        again = ex.run(MODULE, [Program("add_one")], INTS[:2], rerun=[1])
        assert again.outcomes == [[ok(-2), ok(-1)]] and again.rerun == [ok(-1)]
    time.sleep(0.1)
    assert set(watch.survivors()) <= POOL.pids()


def _read_until_over(run, seconds: float = 20.0) -> None:
    """Feed a run what its worker writes until its job is over (the run reads no more then)."""
    import select

    until = time.monotonic() + seconds
    while not run.over and time.monotonic() < until:
        if select.select([run.fd], [], [], 0.05)[0]:
            data = os.read(run.fd, 1 << 16)
            if not data:
                break
            run.feed(data)


def test_one_shot_workers_start_a_prepared_run_with_its_inputs():
    ex = Executor(limits=ExecutionLimits(call_timeout=0.5), sandbox="guard", warm=False)
    prepared = ex.prepare(MODULE, [Program("add_one")], rerun_program=0)
    assert prepared.pending == []  # a one-shot worker takes its job in one piece
    try:
        report = prepared.run(INTS[:2], rerun=[1])
    finally:
        prepared.close()
    assert report.outcomes == [[ok(-2), ok(-1)]] and report.rerun == [ok(-1)]


def test_a_prepared_run_whose_worker_died_meanwhile_starts_afresh(mode):
    import signal

    from coherence.engine.execution import procs

    ex = executor(mode)
    prepared = ex.prepare(MODULE, [Program("add_one")])
    try:
        if not ex.warm:
            pytest.skip("one-shot workers start with their inputs")
        worker = prepared.main.warm
        _module_status(prepared)
        tree = [worker.proc.pid] + procs.descendants(worker.proc.pid)
        for pid in tree:
            # killing the first takes its descendants with it (bwrap's --die-with-parent, the
            # leader's PR_SET_PDEATHSIG): one may be gone already
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        worker.proc.wait(timeout=5)
        for _ in range(200):
            if not any(procs.running(pid) for pid in tree):
                break
            time.sleep(0.01)
        report = prepared.run(INTS[:2])
    finally:
        prepared.close()
    assert report.outcomes == [[ok(-2), ok(-1)]] and report.module_error is None
    assert not worker.alive()


def test_children_forked_together_hold_only_their_own_pipes(mode):
    """With two slots, eight of ten programs are forked together and parked until a slot frees
    up.  Each child must hold its own result pipe and nothing of its siblings': a sibling's
    write end held open would keep that pipe from ending when its program does."""
    # (the told map's read-only memfd, the same in every child, is not counted: see sealed.py)
    count = (
        "import os, resource\nK = {k}\ndef _link(fd):\n    try:\n        return os.readlink('/proc/self/fd/%d' % fd)\n"
        "    except OSError:\n        return None\n"
        # (in guard mode a child cannot list /proc/self/fd: each descriptor is asked for instead)
        "def f(x):\n    links = [_link(fd) for fd in range(resource.getrlimit(resource.RLIMIT_NOFILE)[0])]\n"
        "    return sum(1 for x in links if x is not None and 'coherence-told' not in x)\n"
    )
    programs = [Program("f", count.format(k=k), f"p{k}") for k in range(10)]
    report = executor(mode, jobs=2).run(ModuleContext(), programs, INTS[:2])
    assert report.programs_run == 10
    rows = report.outcomes
    assert all(o.kind == "ok" for row in rows for o in row), rows
    assert all(row == rows[0] for row in rows), [row[0] for row in rows]
    # stdin, stdout, stderr, the result pipe
    assert rows[0][0] in [ok(k) for k in range(4, 6)], rows[0][0]


_VANDAL = """
import os
for fd in range(3, 256):
    for write in (lambda: os.pwrite(fd, b"garbage" * 1000, 0), lambda: os.write(fd, b"garbage")):
        try:
            write()
        except OSError:
            pass
def f(x):
    return x * 2
"""

_HOLDS_INPUTS_FD = """
import os, resource
K = {k}
def _holds():
    # (in guard mode a child cannot list /proc/self/fd; readlink works)
    for fd in range(resource.getrlimit(resource.RLIMIT_NOFILE)[0]):
        try:
            if "coherence-inputs" in os.readlink("/proc/self/fd/%d" % fd):
                return True
        except OSError:
            pass
    return False
HELD_WHILE_LOADING = _holds()
def f(x):
    return [x * 2, HELD_WHILE_LOADING, _holds()]
"""


def test_programs_that_write_to_every_descriptor_while_they_load_change_no_one_s_inputs(mode):
    """The first children are forked, and load their programs, before the inputs exist
    (``coherence_worker.ahead.prefork``): the inputs reach them later through a descriptor they
    hold while their programs load.  A program that writes to every descriptor it has at that
    moment must not change what any program is called with."""
    from coherence.engine.inputs.values import Input

    inputs = INTS[:5] + [Input((x,)) for x in (10, 11, [1], "ab")]  # compiled, and marshalled
    expected = [-6, -4, -2, 0, 2, 20, 22, [1, 1], "abab"]
    programs = [Program("f", _VANDAL, "vandal")] + [
        Program("f", _HOLDS_INPUTS_FD.format(k=k), f"p{k}") for k in range(3)
    ]
    ex = executor(mode, jobs=2)
    prepared = ex.prepare(ModuleContext(), programs)
    try:
        if not ex.warm:
            pytest.skip("one-shot workers start with their inputs")
        _module_status(prepared)
        time.sleep(1.0)  # the inputs come later, as while a first check generates them
        report = prepared.run(inputs)
    finally:
        prepared.close()
    # Each program saw the descriptor while it loaded (else this tests nothing) and no longer
    # has it in its calls, and every input came through intact.
    want = [ok([x, True, False]) for x in expected]
    for row in report.outcomes[1:]:
        assert row == want, row
