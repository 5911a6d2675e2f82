"""A child's seccomp filter: the system calls a program never needs and an escape always does.

The audit hook stops Python-level calls, but ``ctypes`` calls libc directly.  This filter is the
kernel's answer to the same list, and holds whatever the program loads: no new process or exec
(a setuid ``su`` included), no socket of any family (loopback ports, ``/run/user/$UID/bus``,
``docker.sock``, agent sockets), no new namespace, no io_uring (which runs system calls the filter
never sees), no kernel keyring, no ptrace or reading other processes' memory, no mounts, no SysV
IPC or POSIX message queues (they outlive the program), no memfd (memory no rlimit counts), no
``prctl(PR_SET_DUMPABLE)`` (it would hide the files a child holds open from its leader's measure).
``socketpair`` stays allowed: it connects nothing outside the process (``asyncio.run`` makes one).

The filter is a small classic-BPF program built here (stdlib only: the worker runs under the
user's interpreter), installed with ``prctl(PR_SET_SECCOMP)`` after ``PR_SET_NO_NEW_PRIVS``, so
it needs no privilege.  System call numbers are per architecture: x86_64 (its own table) and
aarch64 (the kernel's generic table, asm-generic/unistd.h, which has no fork, vfork, iopl or
ioperm: clone is the only way to a new process there, and the clone rule holds it).  The filter
first checks the audit architecture of each call, so a call made through another ABI (32-bit
int 0x80 on x86_64, AArch32 compat on aarch64) is denied rather than read with the wrong
numbers.  Elsewhere ``available()`` says no and the sandbox's name does not claim it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from functools import lru_cache

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AUDIT_ARCH_X86_64 = 0xC000003E  # EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
AUDIT_ARCH_AARCH64 = 0xC00000B7  # EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
X32_SYSCALL_BIT = 0x40000000

# classic BPF opcodes
LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
JA = 0x05  # BPF_JMP | BPF_JA
RET_K = 0x06  # BPF_RET | BPF_K
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000

# offsets in struct seccomp_data
NR, ARCH, ARG0 = 0, 4, 16

# x86_64 numbers of the denied calls (arch/x86/entry/syscalls/syscall_64.tbl)
DENY_X86_64 = {
    "socket": 41,
    "connect": 42,
    "bind": 49,
    "listen": 50,
    "fork": 57,
    "vfork": 58,
    "execve": 59,
    "execveat": 322,
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "pidfd_getfd": 438,
    "unshare": 272,
    "setns": 308,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "bpf": 321,
    "perf_event_open": 298,
    "userfaultfd": 323,
    "fanotify_init": 300,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "shmget": 29,
    "semget": 64,
    "msgget": 68,
    "mq_open": 240,
    "pidfd_open": 434,
    "pidfd_send_signal": 424,
    "memfd_create": 319,
    "memfd_secret": 447,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "acct": 163,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "quotactl": 179,
}
# signals: only to the process itself (its children share a uid when coherence is not root, and
# kill(-1) or a sibling's pid would reach them): the target, argument 0, must be this process
SIGNAL_SELF_X86_64 = {"tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297}
KILL_X86_64 = 62
PID_MARK = 0x5EA1D00D  # stands for the child's pid in ``program``'s output (see for_process)
CLONE_X86_64 = 56
CLONE3_X86_64 = 435
PRCTL_X86_64 = 157
# prctl(PR_SET_DUMPABLE): a process that is not dumpable closes its /proc/<pid>/fd to its leader
# (same uid, no CAP_SYS_PTRACE), which measures the files a child holds open after unlinking them
# (disk.py).  No program needs it; every other prctl passes.
PR_SET_DUMPABLE = 4
# clone flags that make a namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
# NEWNET) and CLONE_NEWTIME
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
CLONE_THREAD = 0x00010000


# aarch64 numbers of the same calls (include/uapi/asm-generic/unistd.h; tests/engine/
# test_seccomp_program.py checks both tables against the installed kernel headers when present)
DENY_AARCH64 = {
    "socket": 198,
    "connect": 203,
    "bind": 200,
    "listen": 201,
    "execve": 221,
    "execveat": 281,
    "ptrace": 117,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "kcmp": 272,
    "pidfd_getfd": 438,
    "unshare": 97,
    "setns": 268,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "bpf": 280,
    "perf_event_open": 241,
    "userfaultfd": 282,
    "fanotify_init": 262,
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "chroot": 51,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "name_to_handle_at": 264,
    "open_by_handle_at": 265,
    "shmget": 194,
    "semget": 190,
    "msgget": 186,
    "mq_open": 180,
    "pidfd_open": 434,
    "pidfd_send_signal": 424,
    "memfd_create": 279,
    "memfd_secret": 447,
    "kexec_load": 104,
    "kexec_file_load": 294,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "acct": 89,
    "swapon": 224,
    "swapoff": 225,
    "reboot": 142,
    "sethostname": 161,
    "setdomainname": 162,
    "quotactl": 60,
}
SIGNAL_SELF_AARCH64 = {"tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240}
KILL_AARCH64 = 129
CLONE_AARCH64 = 220
CLONE3_AARCH64 = 435
PRCTL_AARCH64 = 167


class Arch:
    """One architecture's side of the filter: its audit value and its system call numbers.
    (A plain class: the worker imports no ``typing`` at run time.)"""

    __slots__ = ("audit", "deny", "kill", "signal_self", "clone", "clone3", "prctl", "x32")

    def __init__(
        self,
        audit: int,
        deny: dict[str, int],
        kill: int,
        signal_self: dict[str, int],
        clone: int,
        clone3: int,
        prctl: int,
        x32: bool,  # whether numbers with X32_SYSCALL_BIT set alias the same calls (x86_64's x32 ABI)
    ) -> None:
        self.audit = audit
        self.deny = deny
        self.kill = kill
        self.signal_self = signal_self
        self.clone = clone
        self.clone3 = clone3
        self.prctl = prctl
        self.x32 = x32


ARCHES = {
    "x86_64": Arch(
        AUDIT_ARCH_X86_64, DENY_X86_64, KILL_X86_64, SIGNAL_SELF_X86_64, CLONE_X86_64, CLONE3_X86_64, PRCTL_X86_64, True
    ),
    "aarch64": Arch(
        AUDIT_ARCH_AARCH64,
        DENY_AARCH64,
        KILL_AARCH64,
        SIGNAL_SELF_AARCH64,
        CLONE_AARCH64,
        CLONE3_AARCH64,
        PRCTL_AARCH64,
        False,
    ),
}
# what platform.machine() says on each (Linux says x86_64 and aarch64; the others for safety)
MACHINES = {"x86_64": "x86_64", "AMD64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def machine_arch() -> str | None:
    """This machine's architecture among ``ARCHES``, or None."""
    return MACHINES.get(platform.machine())


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def _to_self(nr: int, deny: int, also: int | None = None) -> list[bytes]:
    """System call ``nr`` allowed only when its first argument is this process (PID_MARK) or
    ``also``; the accumulator holds the call's number again after it."""
    ok = [PID_MARK] + ([also] if also is not None else [])
    out = [_ins(JEQ_K, 0, 3 + len(ok), nr), _ins(LD_ABS_W, 0, 0, ARG0)]
    out += [_ins(JEQ_K, len(ok) - k, 0, v) for k, v in enumerate(ok)]
    out += [_ins(RET_K, 0, 0, deny), _ins(RET_K, 0, 0, RET_ALLOW), _ins(LD_ABS_W, 0, 0, NR)]
    return out


@lru_cache(maxsize=None)  # (a warm worker makes it once, before it forks its job leaders)
def program(deny_errno: int = errno.EPERM, arch: str | None = None) -> bytes:
    """The filter (bytes of struct sock_filter) for ``arch`` (a key of ``ARCHES``; this
    machine's by default)."""
    a = ARCHES[arch or machine_arch() or "x86_64"]
    deny = RET_ERRNO | deny_errno
    out = [
        _ins(LD_ABS_W, 0, 0, ARCH),
        _ins(JEQ_K, 1, 0, a.audit),
        _ins(RET_K, 0, 0, deny),  # another ABI's call (32-bit int 0x80, AArch32): none is needed
        _ins(LD_ABS_W, 0, 0, NR),
    ]
    if a.x32:
        out += [
            _ins(JGE_K, 0, 1, X32_SYSCALL_BIT),  # the x32 ABI's numbers alias the same calls
            _ins(RET_K, 0, 0, deny),
        ]
    # the denied calls share one return: the filter is compiled when each child installs it,
    # and its length is that cost
    denied = sorted(set(a.deny.values()))
    n = len(denied)
    out += [_ins(JEQ_K, n - i, 0, nr) for i, nr in enumerate(denied)]
    out += [_ins(JA, 0, 0, 1), _ins(RET_K, 0, 0, deny)]
    # kill: this process (or its own group, 0: the child leads a group of its own); the others
    # that name a target process: this process only
    out += _to_self(a.kill, deny, also=0)
    for nr in sorted(a.signal_self.values()):
        out += _to_self(nr, deny)
    # prctl: all but PR_SET_DUMPABLE (see PR_SET_DUMPABLE)
    out += [
        _ins(JEQ_K, 0, 4, a.prctl),
        _ins(LD_ABS_W, 0, 0, ARG0),
        _ins(JEQ_K, 0, 1, PR_SET_DUMPABLE),
        _ins(RET_K, 0, 0, deny),
        _ins(LD_ABS_W, 0, 0, NR),
    ]
    # clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc use clone
    out += [_ins(JEQ_K, 0, 1, a.clone3), _ins(RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
    # clone: threads only, and no namespace (a process without CLONE_THREAD is a fork); the
    # flags are the first argument on both architectures
    out += [
        _ins(JEQ_K, 0, 5, a.clone),
        _ins(LD_ABS_W, 0, 0, ARG0),
        _ins(JSET_K, 2, 0, CLONE_NEW_ANY),
        _ins(JSET_K, 0, 1, CLONE_THREAD),
        _ins(RET_K, 0, 0, RET_ALLOW),
        _ins(RET_K, 0, 0, deny),
    ]
    out.append(_ins(RET_K, 0, 0, RET_ALLOW))
    return b"".join(out)


# What a job leader keeps of the list: it forks its children, shares memory with them (the told
# map and the inputs are memfds) and sees what they hold open through pidfds (disk.Budget; from
# a domain of its own, Landlock lets it take only its children's descriptors); everything else a
# leader never needs after its setup.
LEADER_NEEDS = frozenset(("fork", "vfork", "memfd_create", "pidfd_open", "pidfd_getfd"))


@lru_cache(maxsize=None)
def leader_program(deny_errno: int = errno.EPERM, arch: str | None = None) -> bytes:
    """The job leader's filter: the children's list of denied calls but ``LEADER_NEEDS``, and
    clone without a new namespace (a fork).  The leader imports the module context and the
    packages the programs name: none of their code may start a process, open a socket or leave
    the leader's namespaces.  Signals are the leader's to send (it kills its children)."""
    a = ARCHES[arch or machine_arch() or "x86_64"]
    deny = RET_ERRNO | deny_errno
    out = [
        _ins(LD_ABS_W, 0, 0, ARCH),
        _ins(JEQ_K, 1, 0, a.audit),
        _ins(RET_K, 0, 0, deny),
        _ins(LD_ABS_W, 0, 0, NR),
    ]
    if a.x32:
        out += [_ins(JGE_K, 0, 1, X32_SYSCALL_BIT), _ins(RET_K, 0, 0, deny)]
    denied = sorted({nr for name, nr in a.deny.items() if name not in LEADER_NEEDS})
    n = len(denied)
    out += [_ins(JEQ_K, n - i, 0, nr) for i, nr in enumerate(denied)]
    out += [_ins(JA, 0, 0, 1), _ins(RET_K, 0, 0, deny)]
    out += [_ins(JEQ_K, 0, 1, a.clone3), _ins(RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
    out += [
        _ins(JEQ_K, 0, 3, a.clone),
        _ins(LD_ABS_W, 0, 0, ARG0),
        _ins(JSET_K, 0, 1, CLONE_NEW_ANY),
        _ins(RET_K, 0, 0, deny),
    ]
    out.append(_ins(RET_K, 0, 0, RET_ALLOW))
    return b"".join(out)


def pid_offsets(code: bytes) -> list[int]:
    """Where in ``code`` PID_MARK stands (offsets of the ``k`` fields): found once, in the leader."""
    mark = struct.pack("I", PID_MARK)
    return [k + 4 for k in range(0, len(code), 8) if code[k + 4 : k + 8] == mark]


def for_process(code: bytes, pid: int, offsets: list[int] | None = None) -> bytes:
    """``code`` (from ``program``) with this process's pid in place of PID_MARK."""
    out = bytearray(code)
    put_pid(out, pid, pid_offsets(code) if offsets is None else offsets)
    return bytes(out)


def put_pid(buf: bytearray | ctypes.Array[ctypes.c_char], pid: int, offsets: list[int]) -> None:
    """Write ``pid`` at ``offsets`` of ``buf`` (a writable buffer of the filter), in place: what
    ``for_process`` does to a copy and ``Prepared.install`` to a child's own buffer."""
    for k in offsets:
        struct.pack_into("I", buf, k, pid)


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc: list[ctypes.CDLL] = []


def libc() -> ctypes.CDLL:
    if not _libc:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.prctl.restype = ctypes.c_int  # bound here, in the leader, rather than in every child
        _libc.append(lib)
    return _libc[0]


@lru_cache(maxsize=None)
def available() -> bool:
    """Whether this kernel and architecture take the filter (Linux x86_64 or aarch64 with seccomp)."""
    if os.uname().sysname != "Linux" or machine_arch() is None:
        return False
    try:
        with open("/proc/self/status", "rb") as f:
            if b"\nSeccomp:" not in f.read():
                return False
        libc()
        return True
    except OSError:
        return False


def no_new_privs() -> bool:
    """``PR_SET_NO_NEW_PRIVS``: no exec ever grants privileges again (setuid, file capabilities).
    True when set."""
    try:
        return bool(libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
    except BaseException:
        return False


class Prepared:
    """The filter in a C buffer, with the ``sock_fprog`` that points at it, made in the leader
    once per job: a child only writes its pid into the buffer and installs it.  Building both in
    every child (``for_process``, a buffer, the struct) cost it first touches of the leader's
    pages after the fork, which made it slower than a child writing its pid
    (docs/results.md#worker-start)."""

    __slots__ = ("buf", "prog", "pid_at")

    def __init__(self, code: bytes) -> None:
        self.pid_at = pid_offsets(code)
        self.buf = ctypes.create_string_buffer(code, len(code))
        self.prog = _Fprog(len(code) // 8, ctypes.cast(self.buf, ctypes.c_void_p))

    def install(self, pid: int) -> bool:
        """Install the filter, with ``pid`` in place of PID_MARK, on this process (a child: the
        buffer is its own copy after the fork).  True on success; needs no_new_privs."""
        put_pid(self.buf, pid, self.pid_at)
        try:
            return bool(libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self.prog), 0, 0) == 0)
        except BaseException:
            return False
