"""Running one hostile entry through the real executor and checking the machine afterwards.

Shared by the pytest suite (``tests/hostile/test_hostile.py``) and the tally script
(``benchmarks/hostile_tally.py``).  ``Machine`` sets up what an attack could damage or steal
(canary files in a tmp dir, the workspace and the real home directory, a secret API key in a
"server" process's environment, loopback TCP/UDP listeners) and ``Machine.violations`` lists
everything that changed.  ``run_entry`` returns the list of violations for one entry in one
sandbox mode: empty means contained.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from coherence.engine.errors import ConfigurationError
from coherence.engine.execution import sandbox as sb
from coherence.engine.execution.executor import Executor
from coherence.engine.execution.pool import POOL
from coherence.engine.execution.program import ExecutionLimits, ModuleContext, Program
from coherence.engine.outcomes import Outcome, canonical
from tests.hostile.corpus import Hostile, render
from tests.support.processes import ProcessWatch

# Short limits keep the suite quick: a hostile program is stopped after 0.5 s per call and 2 s
# in all; the memory bomb hits 512 MB of address space.
LIMITS = ExecutionLimits(call_timeout=0.5, program_budget=2.0, memory_mb=512, load_timeout=20.0)
XS = [1, 2, 3]
INPUTS = [f"(({x},), {{}})" for x in XS]
# The wall-clock bound of one entry, derived from the limits: the hostile program's budget plus
# one call timeout, the watchdog's grace and a kill, the honest programs, start-up of the
# interpreter (and bubblewrap) twice over, and a wide margin for a loaded 2-core machine.
WALL_BOUND = 2 * (LIMITS.program_budget + LIMITS.call_timeout + 1.0) + 12.0

HONEST_MODULE = '''
def f(x):
    """Return three times x plus one."""
    return 3 * x + 1
'''
HONEST_ALTERNATIVES = [
    "def f(x):\n    return x * 3 + 1\n",
    "def f(x):\n    return x + x + x + 1\n",
    "def f(x):\n    total = 1\n    for _ in range(3):\n        total += x\n    return total\n",
]
EXPECTED_HONEST = [Outcome.returned(canonical(3 * x + 1)) for x in XS]


def bwrap_ok() -> bool:
    try:
        return sb.bwrap_works(sb.probe_interpreter())
    except ConfigurationError:
        return False


def modes() -> list[str]:
    return ["guard"] + (["bwrap"] if bwrap_ok() else [])


def wait_no_survivors(watch: ProcessWatch, timeout: float = 3.0, ignore: tuple[int, ...] = ()) -> list[int]:
    """Survivors after a short grace (killed processes take a moment to disappear).  The warm
    workers idling in the executor's pool are not survivors of a run (``POOL.pids()`` lists only
    the workers themselves: anything a job left below them still counts)."""
    deadline = time.monotonic() + timeout
    while True:
        pool = POOL.pids()
        left = [pid for pid in watch.survivors() if pid not in ignore and pid not in pool]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------
# the machine an attack could damage


def _snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (stat.S_IMODE(st.st_mode), p.read_bytes() if p.is_file() else None)
    return out


CREDENTIAL_FILES = {
    ".aws/credentials": "[default]\naws_access_key_id = AKIACANARY\naws_secret_access_key = {secret}\n",
    ".netrc": "machine example.com login u password {secret}\n",
}


@dataclass
class Machine:
    tmp: Path
    ws: Path
    home: Path
    home_created: bool
    secret: str
    tcp: socket.socket
    udp: socket.socket
    unix: socket.socket  # a listener on a unix socket in ``tmp`` (an agent's, docker's)
    escape: str
    server: subprocess.Popen
    snapshots: dict = field(default_factory=dict)
    planted: list = field(default_factory=list)  # ~/.aws/credentials, ~/.netrc: made here, removed after

    @property
    def values(self) -> dict[str, str]:
        return {
            "TMP": str(self.tmp),
            "WS": str(self.ws),
            "HOME": str(self.home),
            "PORT": str(self.tcp.getsockname()[1]),
            "UDP": str(self.udp.getsockname()[1]),
            "ESCAPE": self.escape,
            "SECRET": self.secret,
            "UNIX": self.unix.getsockname(),
            "REALHOME": os.path.expanduser("~"),
        }

    @classmethod
    def create(cls) -> Machine:
        token = secrets.token_hex(6)
        tmp = Path(tempfile.mkdtemp(prefix="coherence-hostile-canary-"))
        tmp.chmod(0o755)  # world-readable like most directories: only the sandbox stops writes
        (tmp / "canary.txt").write_text("canary " + token)
        (tmp / "canary.txt").chmod(0o644)
        ws = Path(tempfile.mkdtemp(prefix="coherence-hostile-ws-"))
        ws.chmod(0o755)
        (ws / "mod.py").write_text(HONEST_MODULE)
        (ws / "data.txt").write_text("workspace data " + token)
        (ws / "pkg").mkdir()
        (ws / "pkg" / "__init__.py").write_text("")
        # a workspace's secrets: a .env and a remote with credentials (made below, with the key)
        (ws / ".git").mkdir()
        # The real home directory: a fake ~/.ssh with a private key.  If ~/.ssh exists we never
        # touch it: the fake key goes to a directory of our own in the home instead.
        # (pytest-xdist runs machines side by side: whoever makes ~/.ssh first owns it, the others
        # take the fallback, so the check and the mkdir are one step)
        real_home = Path(os.path.expanduser("~"))
        home = real_home / ".ssh"
        try:
            home.mkdir(mode=0o700)
            created = True
        except FileExistsError:
            created = False
            home = real_home / f".coherence-hostile-{token}"
            home.mkdir(mode=0o700)
        (home / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\ncanary-key-{token}\n")
        (home / "id_rsa").chmod(0o600)
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(16)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        secret = f"sk-canary-{token}"
        (ws / ".env").write_text(f"OPENAI_API_KEY={secret}\n")
        (ws / ".git" / "config").write_text(f'[remote "origin"]\n\turl = https://x:{secret}@example.com/r.git\n')
        # and one a folder down, as a monorepo keeps backend/.env (only the top level was hidden)
        (ws / "pkg" / ".env.local").write_text(f"OPENAI_API_KEY={secret}\n")
        # and a key file without a dot, which only its name marks
        (ws / "pkg" / "deploy.pem").write_text(f"-----BEGIN PRIVATE KEY-----\n{secret}\n")
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(tmp / "agent.sock"))
        unix.listen(4)
        # a stand-in for the language server: the key in its (initial) environment
        server = subprocess.Popen(
            # (and in its command line, as an --api-base with credentials would be)
            [sys.executable, "-c", "import time; time.sleep(3600)", f"--api-base=https://u:{secret}@example.com"],
            env={**os.environ, "OPENAI_API_KEY": secret, "ANTHROPIC_API_KEY": secret},
            stdin=subprocess.DEVNULL,
        )
        m = cls(tmp, ws, home, created, secret, tcp, udp, unix, f"coherence-escape-{token}", server)
        # the credentials files of the usual tools, in the real home where there are none (a real
        # one is never touched) and always a copy in ``home``, so an attack has one to find
        for rel, text in CREDENTIAL_FILES.items():
            (home / rel.replace("/", "_")).write_text(text.format(secret=secret))
            path = real_home / rel
            if not path.exists() and not path.is_symlink():
                for d in reversed([p for p in path.parents if p != real_home and real_home in p.parents]):
                    try:
                        d.mkdir(mode=0o700)
                        m.planted.append(d)
                    except FileExistsError:  # there already, or another machine's just now
                        pass
                path.write_text(text.format(secret=secret))
                path.chmod(0o600)
                m.planted.append(path)
        m.snapshots = m._take()
        return m

    def _take(self) -> dict:
        return {"tmp": _snapshot(self.tmp), "ws": _snapshot(self.ws), "home": _snapshot(self.home)}

    def violations(self) -> list[str]:
        out = []
        now = self._take()
        for name, before in self.snapshots.items():
            if now[name] != before:
                out.append(f"{name} changed: {sorted(set(now[name]) ^ set(before)) or 'contents'}")
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            p = Path(d) / self.escape
            if p.exists():
                out.append(f"{p} was created")
        ready = select.select([self.tcp, self.udp, self.unix], [], [], 0)[0]
        if self.unix in ready:
            conn, _ = self.unix.accept()
            conn.close()
            out.append("the unix socket listener got a connection")
        if self.tcp in ready:
            conn, addr = self.tcp.accept()
            conn.close()
            out.append(f"loopback TCP listener got a connection from {addr}")
        if self.udp in ready:
            data, addr = self.udp.recvfrom(65536)
            out.append(f"loopback UDP listener got {data[:40]!r}")
        if self.server.poll() is not None:
            out.append("the stand-in server process was killed")
        return out

    def close(self) -> None:
        for s in (self.tcp, self.udp, self.unix):
            s.close()
        if self.server.poll() is None:
            self.server.kill()
        self.server.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)
        shutil.rmtree(self.ws, ignore_errors=True)
        # only what we made: our key, and the directory if it is ours and now empty (anything
        # else someone put into a ~/.ssh we created stays)
        (self.home / "id_rsa").unlink(missing_ok=True)
        for rel in CREDENTIAL_FILES:
            (self.home / rel.replace("/", "_")).unlink(missing_ok=True)
        for p in reversed(self.planted):
            try:
                p.rmdir() if p.is_dir() else p.unlink()
            except OSError:
                pass
        planted = self.home / "authorized_keys"  # only there if an attack escaped
        if planted.exists() and b"attacker" in planted.read_bytes():
            planted.unlink()
        try:
            self.home.rmdir()
        except OSError:
            pass
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            try:
                (Path(d) / self.escape).unlink()
            except OSError:
                pass


# ---------------------------------------------------------------------------------------------


@dataclass
class EntryResult:
    entry: Hostile
    mode: str
    seconds: float
    hostile: list[Outcome]
    violations: list[str]


def programs_for(entry: Hostile, machine: Machine) -> tuple[ModuleContext, list[Program], int]:
    src = render(entry, machine.values)
    alts = [Program("f", s, f"honest {k}") for k, s in enumerate(HONEST_ALTERNATIVES)]
    if entry.side == "user":
        module = ModuleContext(
            source=src, filename=str(machine.ws / "mod.py"), module_name="mod", sys_path=(str(machine.ws),)
        )
        return module, [Program("f", label="yours (hostile)")] + alts, 0
    module = ModuleContext(
        source=HONEST_MODULE, filename=str(machine.ws / "mod.py"), module_name="mod", sys_path=(str(machine.ws),)
    )
    return module, [Program("f", label="yours")] + alts[:2] + [Program("f", src, "hostile")] + alts[2:], 3


def run_entry(entry: Hostile, mode: str, machine: Machine) -> EntryResult:
    module, programs, h = programs_for(entry, machine)
    start = time.monotonic()
    with ProcessWatch() as watch:
        report = Executor(limits=LIMITS, sandbox=mode).run(module, programs, INPUTS)
    seconds = time.monotonic() - start
    v: list[str] = []
    if seconds > WALL_BOUND:
        v.append(f"took {seconds:.1f}s > {WALL_BOUND:.1f}s")
    if report.sandbox != sb.sandbox_name(mode, sb.planned_layers(mode)):
        v.append(f"ran in {report.sandbox}, not {mode}")
    if report.module_error is not None:
        v.append(f"module error: {report.module_error}")
    hostile = report.outcomes[h] if len(report.outcomes) > h else []
    for p, row in enumerate(report.outcomes):
        if p != h and row != EXPECTED_HONEST:
            v.append(f"honest program {p} ({programs[p].label}) changed: {row}")
    if len(hostile) != len(XS):
        v.append(f"hostile row has {len(hostile)} outcomes")
    if entry.expect == "raise":
        bad = [o for o in hostile if o.kind != "raise"]
        if bad:
            v.append(f"the attack returned normally (it only does when it worked): {bad[0].render(200)}")
    for o in hostile:
        if len(o.key) > 40_000:
            v.append(f"an outcome of {len(o.key)} bytes")
    text = repr([o.key for row in report.outcomes for o in row]) + repr(report.load_errors) + repr(report.diagnostics)
    if machine.secret in text or machine.secret[3:] in text:
        v.append("the secret API key appears in the results")
    if "canary-key-" in text:
        v.append("the ~/.ssh key appears in the results")
    left = wait_no_survivors(watch, ignore=(machine.server.pid,))
    if left:
        v.append(f"processes left behind: {left}")
        for pid in left:  # do not leave them for the next entry
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    v += machine.violations()
    return EntryResult(entry, mode, seconds, hostile, v)
