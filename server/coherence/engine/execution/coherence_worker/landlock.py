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

import ctypes
import os
import struct
from functools import lru_cache

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


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def plan(readable: list[str], hidden: list[str]) -> list[tuple[str, bool]]:
    """``[(path, whole)]``: the directories (and files) to grant read access to: each of
    ``readable`` whole, except one that holds a ``hidden`` path, which may only be listed (its
    names are no secret; the importer lists each directory on ``sys.path``) and whose entries are
    granted in turn (recursively, down to the hidden ones, which are left out)."""
    hidden = [os.path.realpath(h) for h in hidden]
    out: list[tuple[str, bool]] = []
    seen: set[str] = set()

    def add(path: str, depth: int) -> None:
        if path in seen or depth > 12:
            return
        seen.add(path)
        if any(_under(path, h) for h in hidden):
            return
        if not any(_under(h, path) for h in hidden):
            out.append((path, True))
            return
        out.append((path, False))
        try:
            names = os.listdir(path)
        except OSError:
            return
        for name in names:
            add(os.path.join(path, name), depth + 1)

    for p in readable:
        if p and os.path.isabs(p) and os.path.exists(p):
            add(os.path.realpath(p), 0)
    # a path under another one granted whole needs no rule of its own
    out.sort(key=lambda pw: len(pw[0]))
    kept: list[tuple[str, bool]] = []
    for p, whole in out:
        if not any(w and _under(p, k) for k, w in kept):
            kept.append((p, whole))
    return kept


def open_rules(paths: list[tuple[str, bool]]) -> list[tuple[int, bool, int]]:
    """``[(fd, is_dir, rights)]``: an ``O_PATH`` descriptor per planned path (opened once, in the
    leader)."""
    out: list[tuple[int, bool, int]] = []
    for p, whole in paths:
        try:
            fd = os.open(p, _O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            is_dir = os.path.isdir(p)
        except OSError:
            is_dir = False
        out.append((fd, is_dir, READ if whole else READ_DIR))
    return out


WRITES = WRITE_FILE | ABI1_ALL & ~(EXECUTE | READ_FILE | READ_DIR) | REFER | TRUNCATE


class Prepared:
    """What a child needs to restrict itself, made in the leader once per job: the ruleset's
    attributes and a rule per path (``O_PATH`` descriptors held open), so that a child makes
    only its own two rules (its directory, its /proc entry) and a few system calls."""

    __slots__ = ("attr", "rules", "fs", "reads", "fds")

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
                fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            wanted.append((fd, os.path.isdir(path), rights))
        self.fds = [fd for fd, _, _ in wanted]
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
