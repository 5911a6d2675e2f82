"""A pre-imported ``coherence`` process that forks a fresh one for each test that starts a server
or a command, so a test pays a fork (milliseconds) instead of Python's imports (0.5 s for the
language server, 4 s with litellm).

Each child is its own process: it gets the test's argv, environment, working directory and the
launcher's stdin, stdout and stderr, in a new session, and runs ``python -m coherence`` as a fresh
interpreter would.  What it does not repeat is importing modules, so the tests whose subject is
what happens before or during those imports (the server's startup, litellm's lazy import, a
missing litellm) start the real command instead (``forked_command`` returns ``None`` for them).

    python tests/support/zygote.py SOCKET OWNER [--preload litellm]   # a zygote, until OWNER ends
    python -I -S tests/support/zygote.py launch SOCKET ARGS...        # the process a test starts

The launcher stands in for the command: it exits with the child's code (or by the child's
signal) and forwards SIGTERM, SIGINT and SIGHUP to it.  The zygote is single-threaded (a fork
from a threaded process may copy a held lock), and waits on each child through a pidfd.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

_HEADER = struct.Struct("!I")


def _send(conn: socket.socket, obj: object, fds: list[int] | None = None) -> None:
    data = json.dumps(obj).encode()
    payload = _HEADER.pack(len(data)) + data
    if fds:
        socket.send_fds(conn, [payload], fds)
    else:
        conn.sendall(payload)


def _recv(conn: socket.socket, with_fds: int = 0) -> tuple[object, list[int]]:
    fds: list[int] = []
    if with_fds:
        head, fds, _, _ = socket.recv_fds(conn, _HEADER.size, with_fds)
    else:
        head = conn.recv(_HEADER.size)
    while head and len(head) < _HEADER.size:
        more = conn.recv(_HEADER.size - len(head))
        if not more:
            break
        head += more
    if len(head) < _HEADER.size:
        raise EOFError("the other end closed")
    (size,) = _HEADER.unpack(head)
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            raise EOFError("the other end closed")
        data += more
    return json.loads(data), fds


# -- the launcher: what a test starts --------------------------------------------------------------


def launch(path: str, argv: list[str]) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    _send(conn, {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}, [0, 1, 2])
    (pid,), _ = _recv(conn)  # type: ignore[misc]

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    # Only the child holds the test's pipes now, so the test sees their ends when the child exits.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    try:
        status, _ = _recv(conn)  # a forwarded signal interrupts nothing: recv resumes (PEP 475)
    except EOFError:
        os.write(2, b"zygote: the zygote went away before the command ended\n")
        return 1
    if isinstance(status, dict) and status.get("signal"):
        signal.signal(status["signal"], signal.SIG_DFL)
        os.kill(os.getpid(), status["signal"])
    return int(status["code"]) if isinstance(status, dict) else 1


# -- the zygote -------------------------------------------------------------------------------------


def _child(request: dict, fds: list[int], inherited: list) -> None:
    """In the forked child: become ``python -m coherence ARGS`` and end as it would, through the
    interpreter's own exit (atexit handlers, threads joined, an uncaught exception's traceback)."""
    try:
        for held in inherited:  # the zygote's own: its listener, selector, pidfds and connections
            held.close() if hasattr(held, "close") else os.close(held)
        os.setsid()
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import runpy
        import tempfile

        tempfile.tempdir = None  # computed from TMPDIR on first use, as in a fresh process
        sys.argv = ["coherence", *request["argv"]]
    except BaseException:
        os._exit(70)
    runpy.run_module("coherence", run_name="__main__", alter_sys=True)
    sys.exit(0)


def serve(path: str, owner: int, preload: list[str]) -> None:
    import selectors

    # Out of the starting process's tree (a double fork, as a daemon's): tests that watch every
    # descendant of pytest for survivors neither see the zygote nor its forks, nor kill them.
    # The zygote ends with ``owner`` (the pytest process) instead, through a pidfd.
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    owner_fd = os.pidfd_open(owner)

    import coherence.cli
    import coherence.lsp.handlers
    import coherence.lsp.language_server  # noqa: F401

    if "litellm" in preload:
        from coherence.engine.errors import SamplingError
        from coherence.engine.sampling.quiet_litellm import import_litellm

        try:
            import_litellm()
        except SamplingError:  # a Python without litellm (the llm extra): its children have none either
            pass
    import gc

    # What the zygote imported stays out of its children's collections: a full collection would
    # otherwise walk litellm's objects in every child (and copy their pages), where a fresh
    # process that never imports litellm has none.
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    sel.register(owner_fd, selectors.EVENT_READ, "owner")
    waiting: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the launcher's connection)
    sys.stdout.write(f"ready {os.getpid()}\n")
    sys.stdout.flush()
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # its starter reads "ready" to its end
    while True:
        for key, _ in sel.select():
            if key.data == "owner":
                os._exit(0)
            if key.data is None:
                conn, _ = listener.accept()
                try:
                    request, fds = _recv(conn, with_fds=3)
                except (EOFError, OSError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    held = [listener, sel, owner_fd, conn, *waiting, *(c for _, c in waiting.values())]
                    _child(request, fds, held)  # ends this process
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                waiting[pidfd] = (pid, conn)
                sel.register(pidfd, selectors.EVENT_READ, pid)
                try:
                    _send(conn, [pid])
                except OSError:
                    pass
            else:
                pidfd = key.fd
                pid, conn = waiting.pop(pidfd)
                sel.unregister(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                result = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"code": os.WEXITSTATUS(status)}
                try:
                    _send(conn, result)
                except OSError:
                    pass
                conn.close()


class Zygote:
    """One zygote, started on first use: ``command()`` is the argv prefix that runs ``python -m
    coherence`` through it (``forked_command`` picks the zygote whose start-up environment is the
    caller's)."""

    def __init__(self, env: dict[str, str], preload: tuple[str, ...] = ("litellm",)):
        self.env = env
        self.preload = preload
        self.pid: int | None = None
        self.dir: str | None = None
        self.path = ""  # its socket, once started

    def _start(self) -> None:
        import subprocess
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="coherence-zygote-")
        path = os.path.join(self.dir, "z.sock")
        argv = [sys.executable, os.path.abspath(__file__), path, str(os.getpid())]
        if self.preload:
            argv += ["--preload", *self.preload]
        with subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE) as starter:
            line = starter.stdout.readline().split()
        if line[:1] != [b"ready"]:
            raise RuntimeError(f"the test zygote did not start (exit code {starter.returncode})")
        self.pid = int(line[1])
        self.path = path

    def command(self) -> list[str]:
        if not self.path:
            self._start()
        return [sys.executable, "-I", "-S", os.path.abspath(__file__), "launch", self.path]

    def close(self) -> None:
        import shutil

        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


_BY_IMPORTS: dict[tuple, Zygote] = {}
# What a Python process reads as it starts (its path, flags, locale and stdio): a zygote per value.
_STARTUP = ("PYTHON", "LANG", "LC_")
_SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "server")


def _plain(env: dict[str, str]) -> bool:
    """Whether ``env`` imports what this process does: its PYTHONPATH adds at most the checkout's
    server, and no other PYTHON* variable differs (a test that hides or swaps a module starts fresh)."""
    for name in {*env, *os.environ}:
        if not name.startswith("PYTHON") or name == "PYTHONUNBUFFERED":
            continue
        if name == "PYTHONPATH":
            allowed = {_SERVER, *os.environ.get(name, "").split(os.pathsep)}
            if not set(env.get(name, "").split(os.pathsep)) - {""} <= allowed:
                return False
        elif env.get(name) != os.environ.get(name):
            return False
    return True


def forked_command(env: dict[str, str]) -> list[str] | None:
    """The argv prefix of ``python -m coherence`` forked from this process's zygote for ``env``'s
    PYTHON* variables (one zygote each, ended when this process exits), or ``None`` with
    COHERENCE_TEST_ZYGOTE=0: then every command starts as its own process."""
    if os.environ.get("COHERENCE_TEST_ZYGOTE") == "0" or not _plain(env):
        return None
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith(_STARTUP)))
    zygote = _BY_IMPORTS.get(key)
    if zygote is None:
        if not _BY_IMPORTS:
            import atexit

            atexit.register(lambda: [z.close() for z in _BY_IMPORTS.values()])
        clean = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
        zygote = _BY_IMPORTS[key] = Zygote(clean)
    return zygote.command()


def coherence_argv(env: dict[str, str] | None = None) -> list[str]:
    """``python -m coherence`` for a subprocess with ``env`` (this process's by default): forked
    from a zygote where it can be, else the real command."""
    return forked_command(dict(os.environ) if env is None else env) or [sys.executable, "-m", "coherence"]


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        sys.exit(launch(sys.argv[2], sys.argv[3:]))
    preload = sys.argv[sys.argv.index("--preload") + 1 :] if "--preload" in sys.argv else []
    serve(sys.argv[1], int(sys.argv[2]), preload)
