"""Hostile entries of issue 28 section 2: what the sandbox must hold at the kernel's level, where
the audit hook cannot see (``ctypes`` straight into libc or the raw system call), for an
ordinary user as for root.  The rule of ``corpus.py`` holds: an entry returns normally only when
its attack worked.  Extra placeholders: ``@@UNIX@@`` a unix socket the test listens on,
``@@REALHOME@@`` the home directory of the user running the tests.
"""

from __future__ import annotations

from tests.hostile.corpus import LIBC, Hostile

KERNEL: list[Hostile] = [
    # -- no privilege from exec, whatever the binary ------------------------------------------
    Hostile(
        "no_new_privs_unset",
        "processes",
        "alternative",
        LIBC
        + """
def f(x):
    nnp = libc.prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS
    caps = (ctypes.c_uint32 * 6)()
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    check(libc.capget(header, caps), "capget")
    effective = caps[0] | caps[3] << 32
    if nnp == 1 and effective == 0:
        raise LookupError("no_new_privs set, no effective capability: an exec gains nothing")
    return {"no_new_privs": nnp, "effective": hex(effective)}
""",
    ),
    Hostile(
        "ctypes_exec_setuid_su",
        "processes",
        "alternative",
        LIBC
        + """
def f(x):
    argv = (ctypes.c_char_p * 5)(b"su", b"root", b"-c", b"touch /tmp/@@ESCAPE@@ /var/tmp/@@ESCAPE@@", None)
    for path in (b"/bin/su", b"/usr/bin/su", b"/usr/bin/sudo"):
        libc.execv(path, argv)  # returns only when it failed
    raise OSError(ctypes.get_errno(), "exec refused")
""",
    ),
    # -- other processes' secrets, by a path the hook used to misread -------------------------
    Hostile(
        "proc_environ_double_slash",
        "secrets",
        "alternative",
        """
import os
def f(x):
    got = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            for path in ("/proc//%s/environ" % name, "/proc/./%s/environ" % name, "/proc/self/../%s/environ" % name):
                try:
                    data = open(path, "rb").read()
                except OSError:
                    continue
                if b"@@SECRET@@" in data:
                    got.append(path)
    if not got:
        raise LookupError("no environ readable")
    return got
""",
    ),
    Hostile(
        "proc_cmdline_scan",
        "secrets",
        "alternative",
        LIBC
        + """
def f(x):
    got = []
    buf = ctypes.create_string_buffer(1 << 16)
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        fd = libc.open(("/proc/%s/cmdline" % name).encode(), os.O_RDONLY)
        if fd < 0:
            continue
        n = libc.read(fd, buf, 1 << 16)
        libc.close(fd)
        if n > 0 and b"@@SECRET@@" in buf.raw[:n]:
            got.append(buf.raw[:n].decode("latin-1"))
    if not got:
        raise LookupError("no command line with the key in sight")
    return got
""",
    ),
    # -- the credentials files of the usual tools in the home directory (the harness plants
    # ~/.aws/credentials and ~/.netrc where there are none, and copies beside the fake ~/.ssh):
    # reading any of them at all, by Python or by libc, is the escape
    Hostile(
        "read_aws_credentials_and_netrc",
        "secrets",
        "alternative",
        LIBC
        + """
def f(x):
    got = {}
    buf = ctypes.create_string_buffer(4096)
    for path in ("@@REALHOME@@/.aws/credentials", "@@REALHOME@@/.netrc", "@@HOME@@/.aws_credentials", "@@HOME@@/.netrc"):
        try:
            with open(path) as fh:
                got[path] = fh.read()
        except OSError:
            pass
        fd = libc.open(path.encode(), os.O_RDONLY)
        if fd >= 0:
            n = libc.read(fd, buf, 4096)
            libc.close(fd)
            got[path + " (libc)"] = buf.raw[: max(n, 0)].decode("latin-1")
    if not got:
        raise LookupError("no credentials file could be read")
    return got
""",
    ),
    Hostile(
        "locale_variable_key",
        "secrets",
        "user",
        """
import os
def f(x):
    leaked = {k: v for k, v in os.environ.items() if "@@SECRET@@" in v}
    if not leaked:
        raise LookupError("no secret in the environment")
    return leaked
""",
    ),
    # -- the workspace's dotfiles and the home directory, in C -------------------------------
    Hostile(
        "read_workspace_dotenv",
        "secrets",
        "alternative",
        """
def f(x):
    got = []
    for path in ("@@WS@@/.env", "@@WS@@/.git/config", "@@WS@@/pkg/.env.local", "@@WS@@/pkg/deploy.pem"):
        try:
            got.append(open(path).read())
        except OSError:
            pass
    if not got:
        raise LookupError("no dotfile readable")
    return got
""",
    ),
    Hostile(
        "ctypes_read_workspace_dotenv",
        "secrets",
        "alternative",
        LIBC
        + """
def f(x):
    got = []
    buf = ctypes.create_string_buffer(4096)
    for path in (b"@@WS@@/.env", b"@@WS@@/.git/config", b"@@WS@@/pkg/.env.local", b"@@WS@@/pkg/deploy.pem"):
        fd = libc.open(path, os.O_RDONLY)
        if fd >= 0:
            n = libc.read(fd, buf, 4096)
            libc.close(fd)
            got.append(buf.raw[:max(n, 0)].decode("latin-1"))
    if not got:
        raise OSError(ctypes.get_errno(), "no dotfile readable")
    return got
""",
    ),
    Hostile(
        "ctypes_open_bashrc_for_append",
        "files",
        "alternative",
        LIBC
        + """
def f(x):
    # opened only, never written: the open itself is the escape
    fd = check(libc.open(b"@@REALHOME@@/.bashrc", os.O_WRONLY | os.O_APPEND), "open ~/.bashrc")
    libc.close(fd)
    return "could append to ~/.bashrc"
""",
    ),
    # -- local sockets -----------------------------------------------------------------------
    Hostile(
        "ctypes_unix_socket_connect",
        "network",
        "alternative",
        LIBC
        + """
import struct
def f(x):
    s = check(libc.socket(1, 1, 0), "socket(AF_UNIX)")  # AF_UNIX, SOCK_STREAM
    path = b"@@UNIX@@"
    addr = struct.pack("H", 1) + path + b"\\0" * (108 - len(path))
    check(libc.connect(s, addr, len(addr)), "connect")
    libc.write(s, b"pwned", 5)
    return "connected"
""",
    ),
    Hostile(
        "run_dir_sockets",
        "network",
        "alternative",
        """
import os
def f(x):
    found = []
    for top in ("/run", "/var/run"):
        for dirpath, dirnames, filenames in os.walk(top):
            found += [os.path.join(dirpath, n) for n in filenames if n.endswith((".sock", "bus"))]
            if len(found) > 20:
                break
    if not found:
        raise LookupError("no runtime socket in sight")
    return found[:20]
""",
    ),
    # -- kernel interfaces a program never needs --------------------------------------------
    Hostile(
        "ctypes_new_namespaces",
        "processes",
        "alternative",
        LIBC
        + """
def f(x):
    got = []
    for flag, name in ((0x10000000, "user"), (0x40000000, "net"), (0x08000000, "ipc"), (0x00020000, "mount")):
        if libc.unshare(flag) == 0:
            got.append(name)
    if not got:
        raise OSError(ctypes.get_errno(), "unshare refused")
    return got
""",
    ),
    Hostile(
        "ctypes_io_uring_keyctl_ptrace",
        "processes",
        "alternative",
        LIBC
        + """
def f(x):
    libc.syscall.restype = ctypes.c_long
    got = []
    params = ctypes.create_string_buffer(120)
    if libc.syscall(425, 8, params) >= 0:  # io_uring_setup
        got.append("io_uring")
    if libc.syscall(250, 1, None) >= 0:  # keyctl(KEYCTL_JOIN_SESSION_KEYRING)
        got.append("keyctl")
    if libc.ptrace(16, os.getppid(), None, None) == 0:  # PTRACE_ATTACH to the leader
        got.append("ptrace")
    if not got:
        raise OSError(ctypes.get_errno(), "all refused")
    return got
""",
    ),
    # -- memory no rlimit counts, and objects that outlive the check --------------------------
    Hostile(
        "ctypes_memfd_hog",
        "resources",
        "alternative",
        LIBC
        + """
def f(x):
    libc.syscall.restype = ctypes.c_long
    # Memory in memfds counts against no rlimit: 15 MB each (under the file size limit), as many
    # as descriptors allow, held 1.6 GB against a 1 GB limit.  Two show the way is open (a full
    # hog takes longer than the suite's call timeout to allocate).
    fds = []
    for k in range(2):
        fd = check(libc.syscall(319, b"hog", 0), "memfd_create")  # memfd_create
        fds.append(fd)
        check(libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(8 << 20)), "fallocate")
    return "held %d MB in memfds" % (8 * len(fds))
""",
    ),
    Hostile(
        "ctypes_sysv_shm_survivor",
        "resources",
        "alternative",
        LIBC
        + """
def f(x):
    shmid = check(libc.shmget(0, 64 << 20, 0o1666), "shmget")  # IPC_PRIVATE, IPC_CREAT | 0666
    return "made a 64 MB SysV segment %d" % shmid
""",
    ),
]
