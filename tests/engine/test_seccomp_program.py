"""The seccomp filter's program, for each architecture it is built for (issue 28).

The program is classic BPF; the kernel runs it on a ``struct seccomp_data`` per system call.
Here it runs on a small interpreter of the opcodes it uses (loads of the data's words, jumps,
returns), for x86_64 and aarch64 alike, without an aarch64 machine: every denied call of the
architecture's table is denied, ordinary calls pass, a call from another ABI is denied, clone
makes threads but no process or namespace, signals reach only the process itself.  The
hostile suite (``tests/hostile/corpus_kernel.py``) runs the installed filter against real
attacks on this machine's architecture.  The numbers are checked against the kernel headers
installed here, when they are.
"""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from coherence.engine.execution.coherence_worker import seccomp

ALLOW = seccomp.RET_ALLOW
EPERM = seccomp.RET_ERRNO | errno.EPERM
ENOSYS = seccomp.RET_ERRNO | errno.ENOSYS
PID = 4242

# ordinary calls a program makes (read, write, openat, close, mmap, munmap, brk, futex,
# exit_group, getpid, socketpair): the filter must let them through
ALLOWED = {
    "x86_64": {"read": 0, "write": 1, "close": 3, "mmap": 9, "brk": 12, "getpid": 39, "socketpair": 53,
               "futex": 202, "exit_group": 231, "openat": 257},
    "aarch64": {"read": 63, "write": 64, "close": 57, "mmap": 222, "brk": 214, "getpid": 172, "socketpair": 199,
                "futex": 98, "exit_group": 94, "openat": 56},
}  # fmt: skip
HEADERS = {
    "x86_64": ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"),
    "aarch64": ("/usr/include/asm-generic/unistd.h",),
}


def run(code: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the filter ``code`` returns for system call ``nr`` of audit architecture ``arch``."""
    words = [nr, arch, 0, 0] + [w for a in (*args, *[0] * (6 - len(args))) for w in (a & 0xFFFFFFFF, a >> 32)]
    data = struct.pack("<16I", *words)  # struct seccomp_data: nr, arch, ip (u64), args[6] (u64)
    prog = [struct.unpack_from("HBBI", code, k) for k in range(0, len(code), 8)]
    acc, pc = 0, 0
    for _ in range(len(prog) + 1):  # classic BPF jumps forward only
        op, jt, jf, k = prog[pc]
        if op == seccomp.LD_ABS_W:
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == seccomp.RET_K:
            return k
        elif op == seccomp.JA:
            pc += k
        elif op in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            hit = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[op]
            pc += jt if hit else jf
        else:
            raise AssertionError(f"opcode {op:#x} at {pc}")
        pc += 1
    raise AssertionError("the program did not return")


@pytest.fixture(params=sorted(seccomp.ARCHES))
def arch(request):
    return request.param


def test_the_x86_64_program_is_the_default_here():
    if seccomp.machine_arch() == "x86_64":
        assert seccomp.program() == seccomp.program(arch="x86_64")
    assert seccomp.program(arch="x86_64") != seccomp.program(arch="aarch64")


def test_every_denied_call_is_denied_and_ordinary_calls_pass(arch):
    a = seccomp.ARCHES[arch]
    code = seccomp.for_process(seccomp.program(arch=arch), PID)
    for name, nr in a.deny.items():
        assert run(code, nr, a.audit) == EPERM, name
    for name, nr in ALLOWED[arch].items():
        assert run(code, nr, a.audit) == ALLOW, name
    # the memory no rlimit counts and the IPC that outlives a program, on both
    for name in ("memfd_create", "shmget", "semget", "msgget", "mq_open", "io_uring_setup", "socket", "connect"):
        assert name in a.deny


def test_a_call_from_another_abi_is_denied(arch):
    a = seccomp.ARCHES[arch]
    code = seccomp.program(arch=arch)
    other = next(x.audit for k, x in seccomp.ARCHES.items() if k != arch)
    compat = {"x86_64": 0x40000003, "aarch64": 0x40000028}[arch]  # AUDIT_ARCH_I386, AUDIT_ARCH_ARM
    for audit in (other, compat):
        for nr in ALLOWED[arch].values():
            assert run(code, nr, audit) == EPERM
    if a.x32:  # x86_64's x32 ABI: the same calls with bit 30 set
        assert run(code, seccomp.X32_SYSCALL_BIT | ALLOWED[arch]["read"], a.audit) == EPERM


def test_clone_makes_threads_only(arch):
    a = seccomp.ARCHES[arch]
    code = seccomp.program(arch=arch)
    thread = 0x003D0F00  # what glibc's pthread_create passes (CLONE_VM|FS|FILES|SIGHAND|THREAD|...)
    assert run(code, a.clone, a.audit, (thread,)) == ALLOW
    assert run(code, a.clone, a.audit, (0x01200011,)) == EPERM  # fork(): CHILD_SETTID|CHILD_CLEARTID|SIGCHLD
    assert run(code, a.clone, a.audit, (thread | 0x10000000,)) == EPERM  # a thread in a new user namespace
    assert run(code, a.clone3, a.audit) == ENOSYS  # libc falls back to clone


def test_signals_reach_only_the_process_itself(arch):
    a = seccomp.ARCHES[arch]
    code = seccomp.for_process(seccomp.program(arch=arch), PID)
    assert run(code, a.kill, a.audit, (PID, 9)) == ALLOW
    assert run(code, a.kill, a.audit, (0, 9)) == ALLOW  # its own process group
    for target in (1, PID + 1, (1 << 32) - 1):  # init, a sibling, -1 (every process of the uid)
        assert run(code, a.kill, a.audit, (target, 9)) == EPERM
    for nr in a.signal_self.values():
        assert run(code, nr, a.audit, (PID,)) == ALLOW
        assert run(code, nr, a.audit, (PID + 1,)) == EPERM
    # the program itself leaves the pid to for_process
    assert run(seccomp.program(arch=arch), a.kill, a.audit, (PID, 9)) == EPERM


def test_prctl_passes_but_for_making_the_process_undumpable(arch):
    a = seccomp.ARCHES[arch]
    code = seccomp.program(arch=arch)
    assert run(code, a.prctl, a.audit, (seccomp.PR_SET_DUMPABLE, 0)) == EPERM
    for option in (15, 16, 38):  # PR_SET_NAME, PR_GET_NAME, PR_SET_NO_NEW_PRIVS
        assert run(code, a.prctl, a.audit, (option, 0)) == ALLOW
    assert run(code, ALLOWED[arch]["read"], a.audit, (seccomp.PR_SET_DUMPABLE,)) == ALLOW  # (prctl's rule only)


def test_the_numbers_are_the_kernel_headers(arch):
    path = next((p for p in HEADERS[arch] if Path(p).exists()), None)
    if path is None:
        pytest.skip(f"no {arch} kernel headers installed here")
    defined = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", Path(path).read_text())}
    a = seccomp.ARCHES[arch]
    named = {
        **a.deny,
        **a.signal_self,
        "kill": a.kill,
        "clone": a.clone,
        "clone3": a.clone3,
        "prctl": a.prctl,
        **ALLOWED[arch],
    }
    assert {k: defined.get(k) for k in named} == named
    # the generic table has no fork, vfork, iopl or ioperm: clone's rule is what stops a new process
    if arch == "aarch64":
        assert not {"fork", "vfork", "iopl", "ioperm"} & set(defined)


def test_available_follows_the_architecture(monkeypatch):
    import platform

    seccomp.available.cache_clear()
    try:
        for machine, expected in (("aarch64", "aarch64"), ("x86_64", "x86_64"), ("riscv64", None), ("ppc64le", None)):
            monkeypatch.setattr(platform, "machine", lambda m=machine: m)
            assert seccomp.machine_arch() == expected
            seccomp.available.cache_clear()
            assert seccomp.available() is (expected is not None and Path("/proc/self/status").exists())
    finally:
        seccomp.available.cache_clear()
