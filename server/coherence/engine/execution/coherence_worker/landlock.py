"""A child's Landlock domain: file access for a sandbox without namespaces (guard mode).

Without bubblewrap, a program runs with the user's own file access: ``~/.aws/credentials``,
``~/.netrc``, the workspace's ``.env`` and ``.git``, appends to ``~/.bashrc``.  The audit hook
stops Python-level opens, not ``ctypes``.  Landlock (Linux >= 5.13, no privilege needed) lets a
process give up file access for good: after ``restrict``, the child may read only what the
program needs (the system's directories, the interpreter and its packages, the workspace but its
dotfiles and VCS directories) and write only in its own temp dir.  From ABI 4 on, TCP bind and
connect are refused too, and from ABI 6 abstract unix sockets and signals outside the domain.

The leader plans the rules once (``plan``: which directories, which of them expanded so that a
hidden entry inside is left out) and opens them (``open_rules``); each child builds its ruleset
from those descriptors, its own directory and its own /proc entry, and restricts itself.
Stdlib only (``ctypes`` and the raw system calls, the same numbers on every architecture).
"""

from __future__ import annotations

import collections
import ctypes
import os
import stat
import struct
from functools import lru_cache

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from collections.abc import Iterable

    _Rules = list[tuple[str, bool]]
else:
    _Rules = list  # (a subscripted list is no base class before Python 3.9; workers run under 3.8 too)

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
ABI1_ALL = (1 << 13) - 1  # execute .. make_sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1, 2

READ = EXECUTE | READ_FILE | READ_DIR
# what system directories the interpreter reads from; /etc for locale, time zones, certificates
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc")
SYSTEM_FILES = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")

_O_PATH = getattr(os, "O_PATH", 0o10000000)
_libc: list[ctypes.CDLL] = []


def _syscall(*args: object) -> int:
    if not _libc:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        _libc.append(lib)
    result: int = _libc[0].syscall(*args)
    return result


@lru_cache(maxsize=None)  # (a warm worker asks once, before it forks its job leaders)
def abi() -> int:
    """The Landlock ABI version this kernel offers (0: none, or disabled)."""
    try:
        if os.uname().sysname != "Linux":
            return 0
        v = _syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
        return v if v > 0 else 0
    except BaseException:
        return 0


def _fs_rights(version: int) -> int:
    """Every file-system right this ABI knows (what a ruleset handles: denied unless granted)."""
    rights = ABI1_ALL
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


# Rules a plan may make.  Each is an O_PATH descriptor the leader holds for the job and a system
# call in every child.  A workspace like a home folder asks for more than the usual 1,024
# descriptor limit (docs/results.md#hidden-paths); this many cover a monorepo's dotfiles, and past
# it folders are left unreadable rather than exposed.
MAX_RULES = 512


class Plan(_Rules):
    """``[(path, whole)]`` with ``left_out``: the folders and files not granted because the plan
    ran out of rules (they cannot be read)."""

    def __init__(self) -> None:
        super().__init__()
        self.left_out: list[str] = []


def plan(readable: list[str], hidden: Iterable[str], max_rules: int = MAX_RULES) -> Plan:
    """``[(path, whole)]``: the directories (and files) to grant read access to: each of
    ``readable`` whole, except one that holds a ``hidden`` path, which may only be listed (its
    names are no secret; the importer lists each directory on ``sys.path``) and whose entries are
    granted in turn, breadth first, down to the hidden ones, which are left out.  At most
    ``max_rules`` rules: a folder that would pass that is left out whole (fail closed).
    ``hidden`` are real paths (``visibility.hidden_paths`` gives them so).  Linear in the paths
    looked at: comparing each path with every hidden one was too slow for a workspace like a home
    folder (docs/results.md#hidden-paths)."""
    hidden_set = set(hidden)
    holders: set[str] = set()  # every folder above a hidden path
    for h in hidden_set:
        parent = os.path.dirname(h)
        while parent not in holders:
            holders.add(parent)
            if parent == "/":
                break
            parent = os.path.dirname(parent)
    out = Plan()
    whole: set[str] = set()

    def under_any(path: str, paths: set[str]) -> bool:
        while True:
            if path in paths:
                return True
            if path == "/":
                return False
            path = os.path.dirname(path)

    # the readable roots, shortest first: one under another granted whole needs no rule
    roots = sorted({os.path.realpath(p) for p in readable if p and os.path.isabs(p) and os.path.exists(p)}, key=len)
    # (path, depth); a root's ancestors are checked here, an entry's are the folder expanded
    # (neither hidden nor granted whole), so only the entry itself is looked up below
    queue = collections.deque((r, 0) for r in roots)
    seen: set[str] = set()
    while queue:
        path, depth = queue.popleft()
        if path in seen:
            continue
        seen.add(path)
        if depth == 0 and (under_any(path, hidden_set) or under_any(path, whole)):
            continue
        if path in hidden_set or path in whole:
            continue
        if depth > 12:
            continue  # (not granted: deeper than any import path)
        if len(out) >= max_rules:
            out.left_out.append(path)
            continue
        if path not in holders:
            out.append((path, True))
            whole.add(path)
            continue
        out.append((path, False))
        try:
            with os.scandir(path) as it:
                # folders and modules first: when the rules run out, what imports need is in
                names = [name for _, name in sorted((_later(e), e.name) for e in it)]
        except OSError:
            continue
        prefix = path.rstrip("/") + "/"
        queue.extend((prefix + name, depth + 1) for name in names)
    return out


def _later(entry: os.DirEntry[str]) -> bool:
    """An entry a plan short of rules grants after the others: neither a folder nor a module."""
    try:
        if entry.is_dir():
            return False
    except OSError:
        pass
    return not entry.name.endswith((".py", ".pth", ".so"))


def open_rules(paths: list[tuple[str, bool]]) -> list[tuple[int, bool, int]]:
    """``[(fd, is_dir, rights)]``: an ``O_PATH`` descriptor per planned path (opened once, in the
    leader)."""
    out: list[tuple[int, bool, int]] = []
    for p, whole in paths:
        # never through a symbolic link: a workspace entry linked to the home folder would grant
        # the home (its target is granted, or not, under its own path)
        try:
            fd = os.open(p, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            mode = 0
        if stat.S_ISLNK(mode) or not mode:
            os.close(fd)
            continue
        out.append((fd, stat.S_ISDIR(mode), READ if whole else READ_DIR))
    return out


WRITES = WRITE_FILE | ABI1_ALL & ~(EXECUTE | READ_FILE | READ_DIR) | REFER | TRUNCATE


class Prepared:
    """What a child needs to restrict itself, made in the leader once per job: the ruleset's
    attributes and a rule per path (``O_PATH`` descriptors held open), so that a child makes
    only its own two rules (its directory, its /proc entry) and a few system calls."""

    __slots__ = ("attr", "rules", "fs", "reads", "fds", "wanted", "version")

    def __init__(self, version: int, rules: list[tuple[int, bool, int]], reads: bool) -> None:
        fs = _fs_rights(version)
        if not reads:
            fs &= WRITES
        self.fs = fs
        self.reads = reads
        if version >= 6:
            attr = struct.pack("QQQ", fs, NET_BIND_TCP | NET_CONNECT_TCP, SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL)
        elif version >= 4:
            attr = struct.pack("QQ", fs, NET_BIND_TCP | NET_CONNECT_TCP)
        else:
            attr = struct.pack("Q", fs)
        self.attr = ctypes.create_string_buffer(attr, len(attr))
        wanted = list(rules) if reads else []
        fixed = [(p, READ) for p in SYSTEM + SYSTEM_FILES] if reads else []
        fixed += [(p, READ_FILE | WRITE_FILE) for p in DEVICES]
        for path, rights in fixed:
            try:
                fd = os.open(path, _O_PATH | os.O_CLOEXEC)  # (the system's own: /lib -> usr/lib)
            except OSError:
                continue
            wanted.append((fd, os.path.isdir(path), rights))
        self.fds = [fd for fd, _, _ in wanted]
        self.wanted = wanted  # (for the leader's own domain: see restrict_reads)
        self.version = version
        self.rules = [_rule(fd, rights & fs, is_dir, version) for fd, is_dir, rights in wanted]

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def _rule(fd: int, rights: int, is_dir: bool, version: int) -> ctypes.Array[ctypes.c_char]:
    if not is_dir:  # a file takes file rights only
        rights &= EXECUTE | WRITE_FILE | READ_FILE | (TRUNCATE if version >= 3 else 0)
    return ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)


def restrict(prepared: Prepared, own_dir: str) -> bool:
    """Restrict this process: ``prepared``'s rules, ``own_dir`` read-write and (confining reads)
    its own /proc entry.  True on success.  Needs no_new_privs set before.  Without ``reads``
    (under bubblewrap, whose mounts decide what is seen) only writes are confined, to
    ``own_dir`` (bubblewrap's /tmp and /dev/shm are memory no limit counts), with signals and
    abstract sockets kept inside."""
    syscall = _libc[0].syscall
    attr = prepared.attr
    ruleset = syscall(CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    opened: list[int] = []
    try:
        for rule in prepared.rules:
            syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, ctypes.c_uint32(0))
        own = [(own_dir, prepared.fs)]
        if prepared.reads:
            own.append(("/proc/%d" % os.getpid(), READ_FILE | READ_DIR))
        for path, rights in own:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            opened.append(fd)
            if syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, _rule(fd, rights, True, 0), ctypes.c_uint32(0)) != 0:
                return False
        return bool(syscall(RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0)
    except OSError:
        return False
    finally:
        for fd in opened + [ruleset]:
            try:
                os.close(fd)
            except OSError:
                pass


def restrict_reads(prepared: Prepared, extra: Iterable[str]) -> bool:
    """The job leader's own domain: it reads only what its children may (``prepared``'s
    rules) and ``extra`` (the job's directory, /proc, where it watches its children), so that
    what it imports (the module context, a package an alternative names) reads no secret to
    hand down to them.  Writes are left to the audit hook and the children's domains (the
    leader writes its cgroup and the job's directory).  True on success; needs no_new_privs."""
    if not _libc:
        _syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    syscall = _libc[0].syscall
    attr = ctypes.create_string_buffer(struct.pack("Q", READ), 8)
    ruleset = syscall(CREATE_RULESET, attr, ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    opened: list[int] = []
    try:
        # a planned rule the kernel refuses leaves its path unreadable, as in the children
        for fd, is_dir, rights in prepared.wanted:
            if rights & READ:
                rule = _rule(fd, rights & READ, is_dir, prepared.version)
                syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, ctypes.c_uint32(0))
        for path in extra:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            opened.append(fd)
            if syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, _rule(fd, READ, True, 0), ctypes.c_uint32(0)) != 0:
                return False
        return bool(syscall(RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) == 0)
    except OSError:
        return False
    finally:
        for fd in opened + [ruleset]:
            try:
                os.close(fd)
            except OSError:
                pass
