"""How the worker is started: the interpreter, its environment, and the sandbox around it.

Two modes, both with the worker's own guards (audit hook, rlimits, privilege drop, no network
calls, writes only in a private temp dir):

- ``bwrap``: the worker runs under bubblewrap: the file system read-only (``--ro-bind / /``),
  private ``/tmp``, ``/dev``, ``/proc``, no network (a fresh network namespace), a new session,
  killed with its parent, a scrubbed environment, and the user's home directory hidden except the
  parts the interpreter and the module context need (re-bound read-only).
- ``guard``: no bubblewrap (missing, or its probe fails): the same worker, with the same guards,
  started directly in a new session with a scrubbed environment.

Probes (interpreter facts, whether bubblewrap works) run once per interpreter and are cached.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coherence.engine.errors import ConfigurationError
from coherence.engine.execution.visibility import exposed_paths, hidden_roots, mtimes, under
from coherence.engine.execution.visibility import hidden_paths as hidden_paths  # executor calls sb.hidden_paths

# The worker's launcher.  The package it runs (coherence_worker/) sits beside it, so binding this
# directory read-only into bubblewrap (``visibility.exposed_paths``) and allowing children to read it
# (the job's "allow") covers both.
WORKER = str(Path(__file__).with_name("worker.py"))

# Environment variables the worker may see.  Everything else (API keys, tokens, proxies, the
# editor's variables) is dropped.  The locale ones are named one by one: a prefix ("LC_*") let
# LC_OPENAI_API_KEY through.
LOCALE = (
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
)
ENV_ALLOW = frozenset(("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "LD_LIBRARY_PATH", "SYSTEMROOT") + LOCALE)
ENV_FIXED = {
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
    "PYTHONUNBUFFERED": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "MPLBACKEND": "Agg",
    # litellm loads a .env from its parent folders at import unless it runs in production mode
    "LITELLM_MODE": "PRODUCTION",
}
BWRAP_TMP = "/tmp/tmpw"  # (a name that tells the checked code nothing)

_PROBE = r"""
import json, os, sys
info = {
    "executable": sys.executable,
    "version": list(sys.version_info[:3]),
    "implementation": sys.implementation.name,
    "prefix": sys.prefix, "base_prefix": getattr(sys, "base_prefix", sys.prefix),
    "exec_prefix": sys.exec_prefix,
    "base_exec_prefix": getattr(sys, "base_exec_prefix", sys.exec_prefix),
    "path": [p for p in sys.path if p],
    "site_dirs": [], "user_base": None, "user_site": None,
}
try:
    import site
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        info["user_site"] = site.getusersitepackages()
        dirs.append(info["user_site"])
    info["user_base"] = site.getuserbase()
    info["site_dirs"] = dirs
except Exception:
    pass
print("COHERENCE-PROBE" + json.dumps(info))
"""


@dataclass(frozen=True)
class Interpreter:
    """Facts about the Python interpreter that runs the worker (from a probe, cached)."""

    requested: str
    executable: str
    version: tuple[int, int, int]
    prefixes: tuple[str, ...]
    path: tuple[str, ...]  # its sys.path with site processing (.pth entries included)
    site_dirs: tuple[str, ...]
    user_base: str | None
    stamp: tuple[Any, ...] = ()

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


_lock = threading.Lock()
_interpreters: dict[str, Interpreter] = {}
_bwrap_ok: dict[tuple[Any, ...], bool] = {}


def base_env(home: str, hashseed: int = 0) -> dict[str, str]:
    """The scrubbed environment of the worker."""
    env = {}
    for key, value in os.environ.items():
        if key in ENV_ALLOW:
            env[key] = value
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(ENV_FIXED)
    env["PYTHONHASHSEED"] = str(hashseed)
    env["HOME"] = home
    env["TMPDIR"] = home
    return env


def probe_interpreter(python: str | None = None) -> Interpreter:
    """Run ``python`` once to learn its executable, version and paths; cached per path."""
    python = python or sys.executable
    with _lock:
        cached = _interpreters.get(python)
    if cached is not None and cached.stamp == mtimes(cached.site_dirs):
        return cached
    exe = shutil.which(python) if os.sep not in python else python
    if not exe or not os.path.exists(exe):
        raise ConfigurationError(f"The Python interpreter {python!r} was not found.")
    env = {
        k: v
        for k, v in os.environ.items()
        if k in ENV_ALLOW or k in ("HOME", "VIRTUAL_ENV", "PYENV_VERSION", "PYENV_ROOT", "CONDA_PREFIX")
    }
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    try:
        proc = subprocess.run(
            [exe, "-c", _PROBE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            env=env,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigurationError(f"The Python interpreter {python!r} could not be started: {exc}.") from exc
    out = proc.stdout.decode("utf-8", "replace")
    marker = out.rfind("COHERENCE-PROBE")
    if proc.returncode != 0 or marker < 0:
        tail = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
        raise ConfigurationError(
            f"The Python interpreter {python!r} does not work (exit status {proc.returncode}: {tail[:300]})."
        )
    try:
        info = json.loads(out[marker + len("COHERENCE-PROBE") :].strip().splitlines()[0])
    except (ValueError, IndexError) as exc:
        raise ConfigurationError(f"The Python interpreter {python!r} gave an unreadable answer.") from exc
    version = tuple(int(v) for v in info.get("version", (0, 0, 0)))
    if info.get("implementation") != "cpython" or version < (3, 8):
        raise ConfigurationError(
            f"The Python interpreter {python!r} is {info.get('implementation')} "
            f"{'.'.join(map(str, version))}; coherence needs CPython 3.8 or newer to run code."
        )
    prefixes = []
    for key in ("prefix", "base_prefix", "exec_prefix", "base_exec_prefix"):
        value = info.get(key)
        if value and value not in prefixes:
            prefixes.append(value)
    executable = info.get("executable") or exe
    interp = Interpreter(
        requested=python,
        executable=executable,
        version=version,  # type: ignore[arg-type]
        prefixes=tuple(prefixes),
        path=tuple(p for p in info.get("path", []) if isinstance(p, str)),
        site_dirs=tuple(p for p in info.get("site_dirs", []) if isinstance(p, str)),
        user_base=info.get("user_base"),
    )
    object.__setattr__(interp, "stamp", mtimes(interp.site_dirs))  # a new install: re-probe
    with _lock:
        _interpreters[python] = interp
    return interp


_which: list[str | None] = [None, None]  # PATH, where bwrap is on it


def _which_bwrap() -> str | None:
    """``shutil.which("bwrap")``, looked up again only when PATH changes (every check asks)."""
    path = os.environ.get("PATH")
    if _which[0] != path or _which[1] is None:
        _which[:] = [path, shutil.which("bwrap")]
    return _which[1]


# The size of the sandbox's /tmp under bubblewrap, where the children's directories are: files
# written there are memory (a tmpfs) that no rlimit counts, and RLIMIT_FSIZE bounds each file, not
# how many, so without a size a child can fill memory past its limit (docs/results.md#disk-budget).
TMPFS_MB = 256
_size_flag: dict[str, bool] = {}


def _tmpfs_size(mb: int) -> list[str]:
    """``--size`` for the next ``--tmpfs``, where this bubblewrap has it (0.8 does; older ones
    are asked once, by their --help)."""
    bwrap = _which_bwrap() or ""
    if bwrap not in _size_flag:
        try:
            out = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10).stdout
            _size_flag[bwrap] = b"--size" in out
        except (OSError, subprocess.SubprocessError):
            _size_flag[bwrap] = False
    return ["--size", str(mb << 20)] if _size_flag[bwrap] else []


def bwrap_command(interp: Interpreter, env: dict[str, str], extra_paths: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap prefix for running ``interp`` (the command follows after ``--``)."""
    bwrap = _which_bwrap()
    if not bwrap:
        raise ConfigurationError("bubblewrap (bwrap) is not installed.")
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    roots = hidden_roots()
    for root in roots:
        # a tmpfs is memory no limit of the child counts: /tmp (the children's directories) is
        # bounded, the others hold only mount points
        cmd += ["--perms", "0755"] + _tmpfs_size(TMPFS_MB if root == "/tmp" else 1) + ["--tmpfs", root]
    made: set[str] = set(roots)
    bound = exposed_paths(interp, extra_paths)
    for path in bound:
        root = next(r for r in roots if under(path, r))
        # intermediate directories, world-traversable so the dropped user can reach the binds
        parts = path[len(root) :].strip("/").split("/")
        cur = root
        for part in parts[:-1]:
            cur = cur.rstrip("/") + "/" + part
            if cur not in made:
                made.add(cur)
                cmd += ["--perms", "0755", "--dir", cur]
        cmd += ["--ro-bind", path, path]
        made.add(path)
    # the host's runtime sockets (/run/user/$UID/bus, docker.sock, ssh and gpg agents) out of sight
    for run in ("/run", "/var/run"):
        if os.path.isdir(run) and not os.path.islink(run) and not any(under(p, run) for p in made):
            cmd += _tmpfs_size(1) + ["--tmpfs", run]
    for path in hidden_paths(interp, extra_paths):
        if any(under(path, r) for r in roots) and not any(under(path, b) for b in bound):
            continue  # under a hidden root and not bound back: out of sight already
        if os.path.isdir(path):
            cmd += _tmpfs_size(1) + ["--tmpfs", path]
        elif os.path.exists(path):
            cmd += ["--ro-bind", "/dev/null", path]
    if os.geteuid() == 0:
        # privileged bubblewrap: no user namespace (so the worker can drop to "nobody" and the
        # process limit applies), all capabilities dropped except changing uid/gid and killing
        # the children that dropped to "nobody" (the watchdog)
        cmd += [
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
            "--cap-add",
            "CAP_KILL",
        ]
    else:
        cmd += ["--unshare-all"]
    cmd += ["--die-with-parent", "--new-session", "--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", "/tmp"]
    return cmd


def bwrap_works(interp: Interpreter, extra_paths: tuple[str, ...] = ()) -> bool:
    """Whether bubblewrap can run this interpreter here (probe cached per interpreter/paths)."""
    if not _which_bwrap():
        return False
    key = (interp.executable, tuple(exposed_paths(interp, extra_paths)))
    with _lock:
        known = _bwrap_ok.get(key)
    if known is not None:
        return known
    ok = False
    try:
        env = base_env(BWRAP_TMP)
        cmd = bwrap_command(interp, env, extra_paths) + [
            "--",
            interp.executable,
            "-S",
            "-c",
            "import sys; sys.stdout.write('coherence-ok')",
        ]
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, env=env)
        ok = proc.returncode == 0 and b"coherence-ok" in proc.stdout
    except (OSError, subprocess.SubprocessError, ConfigurationError):
        ok = False
    with _lock:
        _bwrap_ok[key] = ok
    return ok


MODES = ("auto", "bwrap", "guard", "strict")


def kernel_layers() -> list[str]:
    """The kernel layers a guard-mode child can apply here (``coherence_worker.kernel``): Landlock
    (file access) and seccomp (system calls)."""
    from coherence.engine.execution.coherence_worker import landlock, seccomp

    return (["landlock"] if landlock.abi() else []) + (["seccomp"] if seccomp.available() else [])


def planned_layers(mode: str) -> list[str]:
    """The kernel layers a worker in ``mode`` applies here (what its name will say): the same in
    both modes (under bubblewrap, Landlock confines writes and signals; see kernel.py), and in
    guard mode ``memcg`` first where a cgroup v2 memory limit can be made (cgroup.py)."""
    return (["memcg"] if mode == "guard" and memory_cgroup()[0] else []) + kernel_layers()


def memory_cgroup() -> tuple[str | None, str]:
    """Where a guard-mode job's memory cgroup goes, or why there is none (``cgroup.find``)."""
    from coherence.engine.execution.coherence_worker import cgroup

    return cgroup.find()


def required_layers(requested: str, mode: str) -> list[str]:
    """What a ``strict`` sandbox must have on top of ``mode``; the worker refuses to run without."""
    if requested != "strict":
        return []
    return ["seccomp"] if mode == "bwrap" else ["landlock", "seccomp"]


def choose_mode(requested: str, interp: Interpreter, extra_paths: tuple[str, ...] = ()) -> str:
    """``auto`` -> ``bwrap`` when it works here, else ``guard``; an explicit ``bwrap`` that does
    not work is a configuration error.  ``strict``: ``bwrap`` with seccomp, else ``guard`` with
    Landlock and seccomp, else a configuration error (it refuses to run weakly)."""
    if requested not in MODES:
        raise ConfigurationError(f"Unknown sandbox mode {requested!r} (use auto, bwrap, guard or strict).")
    if requested == "guard":
        return "guard"
    ok = bwrap_works(interp, extra_paths)
    if requested == "strict":
        have = kernel_layers()
        if ok and "seccomp" in have:
            return "bwrap"
        missing = [x for x in required_layers("strict", "guard") if x not in have]
        if not missing:
            return "guard"
        raise ConfigurationError(
            'sandbox = "strict" refuses to run here: bubblewrap does not work'
            + ("" if ok else " (missing, or unprivileged user namespaces are not allowed)")
            + f", and the kernel offers no {' and no '.join(missing)}. "
            "Install bubblewrap and allow user namespaces, or use Linux >= 5.13 with Landlock enabled, "
            'or accept a weaker sandbox with sandbox = "auto".'
        )
    if requested == "bwrap" and not ok:
        raise ConfigurationError(
            "The bubblewrap sandbox was requested but does not work here "
            "(install bubblewrap, or allow unprivileged user namespaces, or use sandbox 'auto')."
        )
    return "bwrap" if ok else "guard"


def worker_command(mode: str, interp: Interpreter, env: dict[str, str], extra_paths: tuple[str, ...] = ()) -> list[str]:
    """The full command line that starts the worker in the given mode."""
    py = [interp.executable, "-S", "-B", WORKER]
    if mode == "bwrap":
        return bwrap_command(interp, env, extra_paths) + ["--"] + py
    return py


def sandbox_name(mode: str, layers: Iterable[object] | None) -> str:
    """The sandbox that ran, precisely: ``bwrap+landlock+seccomp``, ``guard+landlock+seccomp``, ``guard``."""
    return "+".join([mode, *[x for x in layers or () if isinstance(x, str)]])


def is_weak(name: str) -> bool:
    """A sandbox that leaves the user's files readable: guard mode without Landlock, and not root
    (a root worker confines itself in namespaces of its own, see guard.isolate_as_root)."""
    parts = name.split("+")
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return bool(name) and parts[0] == "guard" and "landlock" not in parts and not root


WEAK_NOTICE = (
    "coherence: the sandbox is weak here ({name}): bubblewrap does not work and the kernel offers no Landlock, "
    "so generated code can read your files (~/.aws, ~/.netrc, the workspace's .env) and reach local sockets. "
    'Install bubblewrap (and allow unprivileged user namespaces), or set sandbox = "strict" to refuse to run weakly.'
)
