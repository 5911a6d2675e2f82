"""Attacks on the job leader and on what lies beside the workspace (issue 50, findings 1, 2, 3
and 6a), shared by ``test_leader.py`` and ``benchmarks/boundary_tally.py``.

Each attack sets up what a repository or a machine ships (a ``.env`` a module loads at import,
a package that loads one from its parents, a sibling project installed editable, a workspace at
the home folder or at ``/``, a symlink into the home, a private file outside it, a module that
looks for the sandbox), runs one real ``Executor`` job in a sandbox mode, and returns what got
through: an empty list means contained.  A canary counts in any of the encodings the attacks
use (as is, reversed, hex): the defence is that no child ever holds it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from coherence.engine.execution.executor import Executor
from coherence.engine.execution.program import ModuleContext, Program
from tests.hostile.harness import INPUTS, LIMITS, Machine

# reads a file through libc, below the audit hook: only Landlock, the mounts and the uid stop it
CREAD = """
def _cread(path):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(path.encode(), 0)
    if fd < 0:
        return ""
    buf = ctypes.create_string_buffer(65536)
    n = libc.read(fd, buf, 65536)
    libc.close(fd)
    return buf.raw[: max(n, 0)].decode("latin-1")


def _read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except BaseException:
        pass
    try:
        return _cread(path)
    except BaseException:
        return ""
"""

HONEST = 'def f(x):\n    """Return three times x plus one."""\n    return 3 * x + 1\n'

# finding 1, through the user's module: it loads the workspace's .env at import (as a module
# that calls load_dotenv() does), so the leader holds it, in os.environ and in a global
DOTENV_MODULE = (
    "import os\n"
    + CREAD
    + '''

def _load():
    text = _read(os.path.join(os.path.dirname(__file__), ".env"))
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip():
            os.environ[key.strip()] = value.strip()
    return text


LOADED = _load()


def f(x):
    """Return three times x plus one."""
    return 3 * x + 1
'''
)
SEES_SECRETS = """import os


def f(x):
    seen = [v for v in os.environ.values() if "sk-canary" in v]
    seen.append(globals().get("LOADED") or "")
    return "".join(seen)[::-1]
"""

# finding 1, through a program: an installed package that loads a .env from its parent folders
# at import unless LITELLM_MODE is PRODUCTION (what litellm does), named by an alternative
ENV_PACKAGE = """import os

if os.getenv("LITELLM_MODE", "DEV") == "DEV":
    here = os.path.dirname(os.path.abspath(__file__))
    while here != os.path.dirname(here):
        try:
            with open(os.path.join(here, ".env")) as fh:
                for line in fh.read().splitlines():
                    key, _, value = line.partition("=")
                    os.environ[key.strip()] = value.strip()
            break
        except OSError:
            here = os.path.dirname(here)
"""
NAMES_ENV_PACKAGE = "import envpkg\n" + SEES_SECRETS

# finding 2: a sibling project installed editable; its top-level code steals what the process
# that imports it can read
SIBLING = (
    "import os\n"
    + CREAD
    + """
PID = os.getpid()
LOOT = _read({netrc!r}) + _read({dotenv!r})
"""
)
IMPORTS_SIBLING = """import os
import sibling


def f(x):
    return [sibling.PID == os.getpid(), sibling.LOOT[::-1]]
"""

# finding 3: reads of files beside the workspace, by Python and by libc
READS = (
    CREAD
    + """

def f(x):
    return "".join(_read(p) for p in {paths!r})[::-1]
"""
)

# finding 6a: the checked module hides its bug when it sees the sandbox
DETECTS = """import io
import os
import signal
import sys


def f(x):
    seen = []
    if type(sys.stdout) is not io.TextIOWrapper or sys.stdout is not sys.__stdout__:
        seen.append("the standard streams")
    if signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL or signal.getitimer(signal.ITIMER_REAL)[0]:
        seen.append("a timer")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        seen.append("SIGINT")
    if "coherence_worker" in sys.modules:
        seen.append("coherence_worker in sys.modules")
    if any("coherence" in name for name in sys.modules):
        seen.append("a module named coherence")
    if any("coherence" in str(a) for a in sys.argv):
        seen.append("sys.argv")
    if "coherence" in str(getattr(sys.modules.get("__main__"), "__file__", "")):
        seen.append("__main__")
    if "coherence" in os.getcwd():
        seen.append("the working directory")
    if any("coherence" in k.lower() or "coherence" in v for k, v in os.environ.items() if k != "PATH"):
        seen.append("the environment")
    return seen
"""


# other processes' /proc entries: the checked module reads them at import, in the leader (which
# watches its children), and an alternative in its own process; the stand-in server holds the
# canary in its environment and its command line
PROC_READS = (
    "import os\n"
    + CREAD
    + """

def _proc_loot():
    found = {{}}
    for path in ("/proc/1/environ", "/proc/{server}/environ", "/proc/{server}/cmdline", "/proc/{server}/maps"):
        found[path] = _read(path)[::-1]
    try:
        found["pids"] = sorted(n for n in os.listdir("/proc") if n.isdigit())
    except OSError:
        found["pids"] = []
    return found
"""
)
PROC_MODULE = PROC_READS + "\n\nAT_LOAD = _proc_loot()\n\n\n" + HONEST
PROC_ALTERNATIVE = (
    PROC_READS
    + """

def f(x):
    return [globals().get("AT_LOAD"), _proc_loot()]
"""
)


class Place:
    """What an attack plants: a folder of its own (world-readable, as most are: only the sandbox
    stops a child of a root worker) and, for some, a virtual environment with a package that
    loads a .env and a sibling project installed editable into it."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.dir = Path(tempfile.mkdtemp(prefix="coherence-leader-"))
        self.dir.chmod(0o755)
        self.python: str | None = None
        self.cleanup: list[Path] = []

    def venv(self) -> str:
        """A venv in ``proj/venv`` whose parent holds a .env, with ``envpkg`` installed and
        ``common/`` (a sibling project with its own .env and .git/config) installed editable."""
        secret = self.machine.secret
        proj = self.dir / "proj"
        proj.mkdir()
        (proj / ".env").write_text(f"OPENAI_API_KEY={secret}\n")
        venv = proj / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
        python = str(venv / "bin" / "python")
        site = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        (Path(site) / "envpkg").mkdir()
        (Path(site) / "envpkg" / "__init__.py").write_text(ENV_PACKAGE)
        common = self.dir / "common"
        (common / ".git").mkdir(parents=True)
        (common / ".env").write_text(f"OPENAI_API_KEY={secret}\n")
        (common / ".git" / "config").write_text(f'[remote "origin"]\n\turl = https://x:{secret}@example.com/r.git\n')
        netrc = str(self.machine.home / ".netrc")
        (common / "sibling.py").write_text(SIBLING.format(netrc=netrc, dotenv=str(common / ".env")))
        (Path(site) / "__editable__.common-0.1.pth").write_text(str(common) + "\n")
        # readable by a child of a root worker (its own uid); never through a link (the venv's
        # python links to the interpreter's own executable)
        for p in [self.dir, *self.dir.rglob("*")]:
            if not p.is_symlink() and (
                p.is_dir() or (p.suffix in (".py", ".pth", ".env", "") and p.parent.name != "bin")
            ):
                p.chmod(0o755 if p.is_dir() else 0o644)
        self.python = python
        return python

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        for p in self.cleanup:
            try:
                p.unlink()
            except OSError:
                pass


def _module(machine: Machine, source: str = HONEST, sys_path: tuple[str, ...] | None = None) -> ModuleContext:
    ws = machine.ws
    return ModuleContext(source=source, filename=str(ws / "mod.py"), module_name="mod", sys_path=sys_path or (str(ws),))


def _leaks(machine: Machine, text: str) -> list[str]:
    s = machine.secret
    forms = {"as is": s, "reversed": s[::-1], "hex": s.encode().hex()}
    return [f"the canary came back {how}" for how, v in forms.items() if v in text or v[3:-3] in text]


def _run(place: Place, mode: str, module: ModuleContext, attack: str) -> tuple[list[str], object]:
    (place.dir / "mod.py").write_text(module.source or "")
    report = Executor(python=place.python, limits=LIMITS, sandbox=mode).run(
        module, [Program("f", label="yours"), Program("f", attack, "attack")], INPUTS
    )
    out: list[str] = []
    if report.module_error is not None:
        out.append(f"module error: {report.module_error}")
    if report.load_errors[1] is not None:
        out.append(f"the attack did not load: {report.load_errors[1]}")
    text = repr([o.key for row in report.outcomes for o in row]) + repr(report.load_errors) + repr(report.diagnostics)
    return out + _leaks(place.machine, text), report


def dotenv_in_module(place: Place, mode: str) -> list[str]:
    """Finding 1: the module loads the workspace's .env at import; every program sees it."""
    out, _ = _run(place, mode, _module(place.machine, DOTENV_MODULE), SEES_SECRETS)
    return out


def dotenv_of_a_package(place: Place, mode: str) -> list[str]:
    """Finding 1: an alternative names a package that loads a .env from its parents at import."""
    place.venv()
    out, _ = _run(place, mode, _module(place.machine), NAMES_ENV_PACKAGE)
    return out


def sibling_runs_in_leader(place: Place, mode: str) -> list[str]:
    """Finding 2: an alternative names a sibling project installed editable; its top-level code
    must run in the alternative's sandboxed process, never in the leader."""
    place.venv()
    out, report = _run(place, mode, _module(place.machine), IMPORTS_SIBLING)
    rows = [o.render() for o in report.outcomes[1]]  # type: ignore[attr-defined]
    if any(r.startswith("[False") for r in rows):
        out.append("the sibling's top-level code ran in the leader")
    if not any(r.startswith("[True") for r in rows):
        out.append(f"the alternative did not run: {rows[:1]}")
    return out


def sibling_dotfiles(place: Place, mode: str) -> list[str]:
    """Finding 3: a sibling project on the interpreter's path: its .env and .git/config."""
    place.venv()
    common = place.dir / "common"
    return _run(
        place, mode, _module(place.machine), READS.format(paths=[str(common / ".env"), str(common / ".git/config")])
    )[0]


def _home_reads(place: Place) -> str:
    m = place.machine
    return READS.format(paths=[str(m.home / ".netrc"), str(m.home / ".aws_credentials")])


def home_as_workspace(place: Place, mode: str) -> list[str]:
    """Finding 3: the home folder, or /, as a workspace folder: ~/.netrc, ~/.aws/credentials."""
    out: list[str] = []
    for root in (os.path.expanduser("~"), "/"):
        got, report = _run(
            place, mode, _module(place.machine, sys_path=(str(place.machine.ws), root)), _home_reads(place)
        )
        out += [f"workspace {root}: {v}" for v in got]
        if not any("holds your home folder" in d for d in report.diagnostics):  # type: ignore[attr-defined]
            out.append(f"workspace {root}: the result does not say the home folder was left out")
    return out


def symlink_into_home(place: Place, mode: str) -> list[str]:
    """Finding 3: a workspace entry that is a symbolic link to the home folder."""
    m = place.machine
    link = m.ws / "homelink"
    link.symlink_to(os.path.expanduser("~"))
    m.snapshots = m._take()  # (the link is the attack's, not a change a program made)
    rel = m.home.relative_to(os.path.expanduser("~"))
    paths = [str(link / rel / ".netrc"), str(link / rel / ".aws_credentials")]
    return _run(place, mode, _module(m), READS.format(paths=paths))[0]


def private_file_outside_home(place: Place, mode: str) -> list[str]:
    """Finding 3: a file of the user's own, mode 0600, outside the home (bubblewrap binds /)."""
    fd, name = tempfile.mkstemp(prefix="coherence-leader-", dir="/var/tmp")
    os.write(fd, f"token={place.machine.secret}\n".encode())
    os.close(fd)
    os.chmod(name, 0o600)
    place.cleanup.append(Path(name))
    return _run(place, mode, _module(place.machine), READS.format(paths=[name]))[0]


def other_processes(place: Place, mode: str) -> list[str]:
    """Other processes' /proc entries (a server's environment, command line and memory map, the
    list of processes), read by the checked module in the leader and by an alternative."""
    server = place.machine.server.pid
    module = _module(place.machine, PROC_MODULE.format(server=server))
    out, report = _run(place, mode, module, PROC_ALTERNATIVE.format(server=server))
    text = repr([o.key for o in report.outcomes[1]])  # type: ignore[attr-defined]
    if "[stack]"[::-1] in text:
        out.append("a program read the server's memory map")
    if f'"{server}"' in text:
        out.append("a program listed the server's process")
    if not any(o.kind == "ok" for o in report.outcomes[1]):  # type: ignore[attr-defined]
        out.append(f"the attack did not run: {report.outcomes[1][:1]}")  # type: ignore[attr-defined]
    return out


def sandbox_visible(place: Place, mode: str) -> list[str]:
    """Finding 6a: the checked module can tell the check from a real run."""
    out, report = _run(place, mode, _module(place.machine, DETECTS), HONEST)
    seen = {o.render() for o in report.outcomes[0]}  # type: ignore[attr-defined]
    if seen != {"[]"}:
        out.append(f"the checked code saw the sandbox: {sorted(seen)[0]}")
    return out


ATTACKS: dict[str, Callable[[Place, str], list[str]]] = {
    "dotenv_in_module": dotenv_in_module,
    "dotenv_of_a_package": dotenv_of_a_package,
    "sibling_runs_in_leader": sibling_runs_in_leader,
    "sibling_dotfiles": sibling_dotfiles,
    "home_as_workspace": home_as_workspace,
    "symlink_into_home": symlink_into_home,
    "private_file_outside_home": private_file_outside_home,
    "sandbox_visible": sandbox_visible,
    "other_processes": other_processes,
}
# the attack classes of the tallies (benchmarks/boundary_tally.py)
CLASSES = {
    "dotenv_in_module": "secrets through the leader (issue 50.1)",
    "dotenv_of_a_package": "secrets through the leader (issue 50.1)",
    "sibling_runs_in_leader": "code in the leader (issue 50.2)",
    "sibling_dotfiles": "files beside the workspace (issue 50.3)",
    "home_as_workspace": "files beside the workspace (issue 50.3)",
    "symlink_into_home": "files beside the workspace (issue 50.3)",
    "private_file_outside_home": "files beside the workspace (issue 50.3)",
    "sandbox_visible": "a sandbox the checked code sees (issue 50.6a)",
    "other_processes": "other processes' /proc (issue 50)",
}


def run_attack(name: str, mode: str) -> list[str]:
    """One attack in one sandbox mode on a fresh machine: what got through (empty: contained)."""
    machine = Machine.create()
    place = Place(machine)
    saved = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    os.environ.update(dict.fromkeys(saved, machine.secret))
    try:
        return ATTACKS[name](place, mode) + machine.violations()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        place.close()
        machine.close()
