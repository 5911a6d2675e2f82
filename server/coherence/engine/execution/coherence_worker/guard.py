"""The worker's own guards, in every sandbox mode: an audit hook that blocks the dangerous parts
of the OS interface, resource limits, the privilege drop of children, the namespaces a root
worker isolates itself in, and the standard streams user code writes to (/dev/null).

The audit hook reads its mode and roots from a dict the worker changes as it goes (``state``):

    mode LOAD   : importing user code in the leader: block processes, network, foreign writes,
                  reads of hidden and private paths (the children inherit what it reads)
    mode LEADER : the worker's own bookkeeping: allow everything
    mode CHILD  : running a program: like LOAD, and kill only of itself
"""

from __future__ import annotations

import errno
import io
import os
import signal
import stat
import struct
import sys

from .protocol import describe_exc

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType
    from typing import Any, NoReturn

    from .protocol import Job

    Guard = dict[str, Any]  # the hook's state: its mode, the write root, the private paths...

resource: ModuleType | None
try:
    import resource
except ImportError:  # pragma: no cover - non-Unix
    resource = None

LOAD = "load"
LEADER = "leader"
CHILD = "child"
NOBODY = 65534
# Children that drop root privileges each get a uid (and gid) of their own instead of sharing
# "nobody": processes of one uid may signal each other, so with a shared uid a hostile program
# could kill(-1, SIGKILL) every other program's child (and any "nobody" process on the host).
# The range is far above real accounts; each leader starts at a random point in it.
CHILD_UID_BASE = 1500000000
CHILD_UID_SPAN = 500000000

# event -> ((index of a path argument, index of its dir_fd argument or None), ...): a write
# must stay inside the child's directory.  Each path is judged against its own dir_fd
# (os.rename's destination has one of its own: judged against the source's, a rename into the
# workspace passed).
PATHS = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.mkdir": ((0, 2),),
    "os.rename": ((0, 2), (1, 3)),
    "os.link": ((1, 3),),
    "os.symlink": ((1, 2),),
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.lchown": ((0, None),),
    "os.utime": ((0, 3),),
    "os.truncate": ((0, None),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),),
    "os.mkfifo": ((0, 2),),
    "os.mknod": ((0, 3),),
    "shutil.rmtree": ((0, 1),),
    "shutil.copyfile": ((1, None),),
    "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),),
    "shutil.copytree": ((1, None),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.chown": ((0, None),),
}
PROCS = frozenset(
    (
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "os.startfile",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "_thread.start_new_thread",
        "_thread.start_joinable_thread",
        "os.setuid",
        "os.setgid",
        "os.setreuid",
        "os.setregid",
        "os.setresuid",
        "os.setresgid",
        "os.setgroups",
        "os.chroot",
        "os.pidfd_open",
    )
)
KILL = frozenset(("os.kill", "os.killpg", "signal.pthread_kill"))
# C modules of the standard library that write files without an "open" event: sqlite3 names
# its database in "sqlite3.connect" (Python >= 3.10); readline writes its history file and the
# dbm backends their databases with none.  Those are not importable (ImportError, so that
# dbm.open falls back to dbm.dumb, which writes with open()).
SQLITE = "sqlite3.connect"
NO_IMPORT = frozenset(("readline", "_dbm", "_gdbm"))
WATCH = frozenset(PATHS) | PROCS | KILL | {"open", SQLITE, "import"}


def arm(state: Guard, job: Job) -> None:
    """Fill ``state`` from the job (the private paths, and what in them children may read) and
    install the hook, once per process: audit hooks cannot be removed."""
    state["private"] = tuple(os.path.realpath(p) for p in job.get("private") or () if p)
    # the workspace's dotfiles and VCS directories (.env, .git): hidden even where allowed
    # (real paths already: visibility.hidden_paths resolves each, and a workspace like a home
    # folder sends hundreds, whose realpath would cost every job tens of milliseconds)
    state["hidden"] = frozenset(os.path.normpath(p) for p in job.get("hidden") or () if p and os.path.isabs(p))
    allow = [os.path.realpath(p) for p in (job.get("allow") or []) + sys.path if p and os.path.isabs(p)]
    # A folder that holds a private one (a workspace at /, /home or the home folder itself) is
    # never readable whole: it would grant ~/.netrc, ~/.aws and ~/.git-credentials.  What the
    # programs need below it (the interpreter, the checked file's folder) is granted on its own.
    private = state["private"]
    state["not_granted"] = sorted(
        {p for p in allow if any(q == p or q.startswith(p.rstrip(os.sep) + os.sep) for q in private)}
    )
    state["allow"] = tuple(p for p in allow if p not in state["not_granted"]) + (state["root"],)
    install_guard(state)


def install_guard(state: Guard) -> None:
    """Install the audit hook.  ``state`` (mutable dict) holds the mode (see the module's
    docstring), the allowed write root, the private paths and what in them may be read."""
    realpath = os.path.realpath
    join = os.path.join
    getcwd = os.getcwd
    fspath = os.fspath
    fsdecode = os.fsdecode
    readlink = os.readlink
    sep = os.sep
    WFLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    getpid = os.getpid
    listdir = os.listdir
    fstat = os.fstat
    S_ISDIR = stat.S_ISDIR
    fd_dir = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    # closure cells, not globals: the hook runs on every audit event (a child's marshal load of
    # each input is one)
    watch, paths, procs, kills, sqlite, no_import = WATCH, PATHS, PROCS, KILL, SQLITE, NO_IMPORT
    leader, child = LEADER, CHILD

    def resolved(p: Any, dir_fd: Any) -> str:
        """The real path ``p`` names, relative to ``dir_fd`` when it is one (else the cwd)."""
        p = fspath(p)
        if isinstance(p, bytes):
            p = fsdecode(p)
        if not p.startswith("/") and isinstance(dir_fd, int) and dir_fd >= 0:
            base = readlink("/proc/self/fd/%d" % dir_fd)
        else:
            base = getcwd()
        return realpath(join(base, p))

    def inside(path: Any, dir_fd: Any = None) -> bool:
        try:
            if isinstance(path, int):
                return True  # an already-open descriptor
            full = resolved(path, dir_fd)
            root = state["root"]
            return full == root or full.startswith(root + sep)
        except BaseException:
            return False

    def relative(path: Any) -> bool:
        try:
            if isinstance(path, int):
                return False  # a descriptor, not a path
            p = fspath(path)
            return not (p.startswith(b"/") if isinstance(p, bytes) else p.startswith("/"))
        except BaseException:
            return True

    def holds_a_folder() -> bool:
        """Whether this process holds a descriptor of a directory."""
        try:
            fds: Iterable[int] = [int(n) for n in listdir(fd_dir)]
        except BaseException:
            # a child in guard mode: its leader's Landlock domain grants no child's /proc entry
            try:
                fds = range(min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 4096))  # type: ignore[union-attr]
            except BaseException:
                return True
        for n in fds:
            try:
                if S_ISDIR(fstat(n).st_mode):
                    return True
            except BaseException:
                continue  # (not open, or the listing's own descriptor, closed by now)
        return False

    def under(path: str, roots: Iterable[str]) -> bool:
        for r in roots:
            if path == r or path.startswith(r + sep):
                return True
        return False

    def readable(path: Any, dir_fd: Any = None) -> bool:
        """Reads are free except other processes' /proc entries (their environment holds the
        editor's API keys), the workspace's hidden paths, and the private directories (the
        user's home) outside the paths the program legitimately needs (interpreter,
        site-packages, workspace).  Judged on the resolved path, never its text:
        ``/proc//1/environ``, ``/proc/self/root/proc/1`` and a symlink all name /proc/1."""
        try:
            if isinstance(path, int):
                return True
            full = resolved(path, dir_fd)
            if full.startswith("/proc/"):
                head = full[6:].split("/", 1)[0]
                if head.isdigit() and int(head) != getpid():
                    return False
            hidden = state.get("hidden")
            if hidden:
                # the path or a folder above it: a lookup per level, not a comparison per hidden path
                up = full
                while up:
                    if up in hidden:
                        return False
                    up = up.rpartition(sep)[0]
            private = state.get("private") or ()
            return not (private and under(full, private) and not under(full, state.get("allow") or ()))
        except BaseException:
            return False

    def deny(event: str) -> NoReturn:
        raise PermissionError(errno.EACCES, "blocked by the coherence sandbox: " + event)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in watch:
            return
        mode = state["mode"]
        if mode == leader:
            return
        if event == "open":
            try:
                m = args[1]
                fl = args[2]
                writing = (isinstance(m, str) and ("w" in m or "a" in m or "x" in m or "+" in m)) or (
                    isinstance(fl, int) and fl & WFLAGS
                )
            except BaseException:
                m = None
                writing = True
            if m is None and relative(args[0]) and holds_a_folder():
                # os.open's event does not carry its dir_fd: os.open(".env", dir_fd=<the
                # workspace>) would be judged as a path in the child's own directory.  With no
                # folder open, dir_fd can name none (Path.touch of a relative path is fine)
                deny("os.open of a relative path " + str(args[0])[:200])
            if writing:
                if not inside(args[0]):
                    deny("writing " + str(args[0])[:200])
            elif not readable(args[0]):  # (loading too: what the leader reads, its children inherit)
                deny("reading " + str(args[0])[:200])
            return
        if event == "import":
            if args and args[0] in no_import:
                raise ImportError("blocked by the coherence sandbox: import " + str(args[0]))
            return
        if event == sqlite:
            # an in-memory database, or a file in the child's own directory (ATTACH in SQL
            # still names any file: see the weak modes in docs/sandbox.md)
            db = args[0] if args else None
            if isinstance(db, bytes):
                db = fsdecode(db)
            if isinstance(db, str) and db.startswith("file:"):
                db = db[5:].split("?", 1)[0]
            if db not in ("", ":memory:") and not inside(db):
                deny("sqlite3.connect " + str(args[0])[:200])
            return
        spec = paths.get(event)
        if spec is not None:
            for k, dfd in spec:
                dir_fd = args[dfd] if dfd is not None and dfd < len(args) else None
                if k < len(args) and not inside(args[k], dir_fd):
                    deny(event + " " + str(args[k])[:200])
            # a hard link to a hidden file in the child's own directory reads as that file
            # (realpath cannot tell them apart)
            if event == "os.link" and mode == child and not readable(args[0], args[2] if len(args) > 2 else None):
                deny("os.link of " + str(args[0])[:200])
            return
        if event in procs:
            deny(event)
        if event in kills:
            try:
                pid = args[0]
            except BaseException:
                pid = None
            if event == "os.kill" and (pid == getpid() or pid == 0) and mode == child:
                return
            if event == "signal.pthread_kill":
                return
            deny(event)

    sys.addaudithook(hook)


# --------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------


def plain_streams() -> tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper]:
    """``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` as a script run with them redirected to
    /dev/null has them (descriptors 0, 1 and 2 are /dev/null in every worker): text files of
    their own over descriptors 0 to 2, made like the interpreter's (its encoding, errors and
    buffering), so that code cannot tell a check by their type, name or ``sys.__stdout__``.  The
    worker's own ``sys.stdin`` may still hold the next job's frame in its buffer: these start
    empty."""
    made = []
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        like = getattr(sys, "__%s__" % name, None)
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        raw.name = "<%s>" % name  # (as the interpreter names its own)
        buffer: Any = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        made.append(
            io.TextIOWrapper(
                buffer,
                encoding=getattr(like, "encoding", None) or "utf-8",
                errors=getattr(like, "errors", None) or ("backslashreplace" if fd == 2 else "strict"),
                newline="\n",
                line_buffering=bool(getattr(like, "line_buffering", fd == 2)),
                write_through=bool(getattr(like, "write_through", False)),
            )
        )
    return made[0], made[1], made[2]


def use_streams(streams: tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper]) -> None:
    """Make ``streams`` (from plain_streams) this process's standard streams, ``sys.__stdout__``
    and the others too, as at an interpreter's start."""
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


def vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except BaseException:
        return 0


def prctl_pdeathsig() -> Callable[[], None] | None:
    """Return a function that makes the calling process die with its parent (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl

        def set_pdeathsig() -> None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

        return set_pdeathsig
    except BaseException:
        return None


def isolate_as_root(tmp: str, disk_mb: int, disk_files: int) -> tuple[list[str], bool]:
    """Guard mode as root (bubblewrap missing or not working): the audit hook stops Python-level
    writes and connections, but ctypes calls libc directly, and the children's own uid may still
    create files in world-writable directories (/tmp, /var/tmp, /dev/shm) and connect to any
    address, loopback included.  So the leader, while still root, moves into a network namespace
    of its own (no interface but a down loopback: every connect fails) and a mount namespace of its
    own where every mount is read-only except ``tmp``, the run's temp dir.  Its children inherit
    both.  Nothing changes outside this process tree.  Returns what it could not do (best effort:
    without CAP_SYS_ADMIN, e.g. in a container, the guards stay as they were), and whether
    ``tmp`` is now a tmpfs of ``disk_mb`` MiB and ``disk_files`` inodes."""
    if not sys.platform.startswith("linux") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return [], False
    problems: list[str] = []
    bounded = False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000
        MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 0x20, 0x1000, 0x4000, 1 << 18
        if libc.unshare(CLONE_NEWNET) != 0:
            problems.append("network namespace: errno %d" % ctypes.get_errno())
        # SysV IPC objects die with the job's own namespace instead of outliving the check
        if libc.unshare(CLONE_NEWIPC) != 0:
            problems.append("IPC namespace: errno %d" % ctypes.get_errno())
        if libc.unshare(CLONE_NEWNS) != 0:
            problems.append("mount namespace: errno %d" % ctypes.get_errno())
            return problems, bounded
        # our mounts stop propagating to the host's namespace
        if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            problems.append("private mounts: errno %d" % ctypes.get_errno())
            return problems, bounded
        # every mount read-only: mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, {MOUNT_ATTR_RDONLY})
        attr = ctypes.create_string_buffer(struct.pack("QQQQ", 1, 0, 0, 0), 32)
        if libc.syscall(442, -100, b"/", 0x8000, attr, 32) != 0:
            # an older kernel: remount each mount point read-only, one by one
            with open("/proc/self/mountinfo", "rb") as f:
                points = [line.split()[4] for line in f.read().splitlines() if len(line.split()) > 4]
            for point in points:
                point = point.replace(b"\\040", b" ")
                libc.mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
        # the host's runtime sockets (/run/user/$UID/bus, docker.sock, agents) out of sight
        real = os.path.realpath(tmp).encode()
        for run in (b"/run", b"/var/run"):
            if (
                os.path.isdir(run)
                and not os.path.islink(run)
                and not (real + b"/").startswith(run + b"/")
                and libc.mount(b"tmpfs", run, b"tmpfs", MS_RDONLY, b"mode=0755,size=4k") != 0
            ):
                problems.append("tmpfs over %s: errno %d" % (run.decode(), ctypes.get_errno()))
        # The run's temp dir writable again, as a tmpfs of its own of ``disk_mb`` (bubblewrap's
        # is the same size): RLIMIT_FSIZE bounds each file a child writes, and only a file
        # system of that size bounds how many, files unlinked but still open included.  Its
        # pages are charged to the writer's memory cgroup where there is one.  It is this mount
        # namespace's alone: what the children write never reaches the host's disk and is gone
        # with the job's last process.  Where it cannot be mounted, a bind mount of the directory
        # remounted read-write, and the leader measures instead (disk.py).
        real = os.path.realpath(tmp).encode()
        opts = b"mode=0711,size=%dk,nr_inodes=%d" % (disk_mb * 1024, disk_files)
        if libc.mount(b"tmpfs", real, b"tmpfs", MS_NOSUID | MS_NODEV, opts) == 0:
            bounded = True
        elif (
            libc.mount(real, real, None, MS_BIND, None) != 0
            or libc.mount(None, real, None, MS_REMOUNT | MS_BIND, None) != 0
        ):
            problems.append("writable temp dir: errno %d" % ctypes.get_errno())
    except BaseException as e:
        problems.append(describe_exc(e))
    return problems, bounded


def setrlimit(which: int, soft: int, extra: int = 0) -> None:
    """Lower a limit (soft, and hard = soft + extra so the program cannot raise it again)."""
    if resource is None:
        return
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
            new_hard = min(soft + extra, hard)
        else:
            new_hard = soft + extra
        resource.setrlimit(which, (soft, new_hard))
    except BaseException:
        try:
            resource.setrlimit(which, (soft, resource.getrlimit(which)[1]))
        except BaseException:
            pass


def limit_child(as_limit: int, file_size: int, cpu_seconds: int, nofile: int) -> None:
    """A child's resource limits, lowered for good (see setrlimit)."""
    if resource is None:
        return
    setrlimit(resource.RLIMIT_AS, as_limit)
    setrlimit(resource.RLIMIT_FSIZE, file_size)
    # backstop only (SIGXCPU -> Timeout); the wall-clock watchdog acts first
    setrlimit(resource.RLIMIT_CPU, cpu_seconds, 2)
    setrlimit(resource.RLIMIT_NOFILE, nofile)
    setrlimit(resource.RLIMIT_CORE, 0)


def drop_capabilities() -> None:
    """Root only, before the uid change: empty the capability bounding set and the ambient set,
    so that no exec (a setuid ``su``, a binary with file capabilities) can give any back.  Needs
    CAP_SETPCAP (bubblewrap's root mode already keeps only the few it adds)."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
        for cap in range(64):
            if prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:  # PR_CAPBSET_DROP
                break  # past the last capability this kernel knows
    except BaseException:
        pass


def drop_privileges(uid: int, set_pdeathsig: Callable[[], None] | None) -> None:
    """A child of a root worker becomes ``uid`` (its own, see CHILD_UID_BASE), dies with its
    leader, and may start no process."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        drop_capabilities()
        try:
            os.setgroups([])
        except BaseException:
            pass
        try:
            os.setgid(uid)
            os.setuid(uid)
        except BaseException:
            pass
    if set_pdeathsig is not None:
        try:
            set_pdeathsig()  # after the uid change, which clears it
        except BaseException:
            pass
    if os.getppid() == 1:
        os._exit(1)
    if resource is not None and hasattr(resource, "RLIMIT_NPROC"):
        setrlimit(resource.RLIMIT_NPROC, 0)


def confine(state: Guard, cwd: str) -> None:
    """The child's own temp dir becomes its working directory, home, temp dir and the only
    place it may write; the hook switches to CHILD."""
    try:
        os.chdir(cwd)
    except OSError:
        pass
    os.environ["HOME"] = cwd
    os.environ["TMPDIR"] = cwd
    if "tempfile" in sys.modules:
        try:
            sys.modules["tempfile"].tempdir = cwd  # type: ignore[attr-defined]  # tempfile's own global
        except BaseException:
            pass
    try:
        os.umask(0o077)
    except BaseException:
        pass
    state["root"] = os.path.realpath(cwd)
    state["mode"] = CHILD
