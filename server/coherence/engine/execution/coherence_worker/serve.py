"""Serve mode: a warm, long-lived worker that runs one job after another.

Starting the interpreter (under bubblewrap) costs tens of milliseconds per run, and a check
makes several runs (the main run, the re-run, shrinking rounds).  In serve mode this process
stays up, reads jobs framed as b"<length>\n<json>" from stdin, and forks a *job leader* per
job that does exactly what a one-shot worker does.  Nothing of a job outlives it here: the
leader loads the module context and every program, and this process never runs user code,
so one job cannot poison the next.  After the leader exits this process sweeps any process
left in its session, removes the job's temp dir, and reports on the job's result descriptor:

    "-1 3 <json>"      the job is over: {"status": <wait status as returncode>, "clean": bool,
                       "cpu": CPU seconds of the leader and its children}

"clean" is false when something of the job could not be removed; coherence then retires
this worker instead of reusing it.  EOF on stdin (coherence is gone) ends it.

A job marked "inputs_follow" comes without its inputs (protocol.INPUT_KEYS): they are the
next frame, and the job's leader reads it from stdin itself once it has loaded the module and
the programs (ahead.receive_inputs).  An empty frame there means coherence gave the run up.
A frame that is no job (the inputs of a leader that ended before reading them) is skipped.
"""

from __future__ import annotations

import json
import os
import signal
import time

from . import guard, kernel, loading, protocol
from .job import run_job
from .protocol import META, OVER

_WARM_TASKS = 32  # programs per job whose record patterns the warm worker compiles ahead


def serve() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    # what job leaders import (PREIMPORT when the children cannot read the standard library,
    # ctypes for the root guard's namespaces, typing for most generated code's annotations): once
    # here, shared by every fork, instead of at the start of every run
    # (docs/results.md#worker-start)
    for name in loading.PREIMPORT_CORE + loading.PREIMPORT + ("ctypes", "typing"):
        try:
            __import__(name)
        except BaseException:
            pass
    # what the kernel offers and the seccomp filter (kernel.py), found once here for every job
    kernel.warm()
    # the patterns a leader reads its children's records with, compiled once here for every job
    for t in range(_WARM_TASKS):
        protocol.record_index(t)
    set_pdeathsig = guard.prctl_pdeathsig()
    if set_pdeathsig is not None:
        try:
            set_pdeathsig()
        except BaseException:
            pass
    leader = [0]

    def on_term(signum: int, frame: object) -> None:
        # the leader's own SIGTERM handler kills and reaps its children
        if leader[0]:
            try:
                os.kill(leader[0], signal.SIGTERM)
            except OSError:
                pass
            until = time.monotonic() + 1.0
            while time.monotonic() < until:
                try:
                    if os.waitpid(leader[0], os.WNOHANG)[0]:
                        break
                except OSError:
                    break
                time.sleep(0.005)
        sweep((os.getpid(),))
        os._exit(1)

    signal.signal(signal.SIGTERM, on_term)
    me = os.getpid()
    while True:
        header = protocol.read_line(0)
        if not header:
            os._exit(0)
        try:
            raw = protocol.read_exact(0, int(header))
            job = json.loads(raw.decode("utf-8")) if raw else None
        except (TypeError, ValueError):
            os._exit(4)
        if not isinstance(job, dict) or "fd" not in job:
            # The inputs frame of a job sent ahead of its inputs, whose leader ended before it
            # read them (its module failed to load), or coherence giving such a job up.
            continue
        fd = job["fd"]
        tmp = job["tmp"]
        pid = os.fork()
        if pid == 0:
            try:
                if job.get("inputs_follow"):
                    # the leader reads the job's inputs, the next frame, itself (receive_inputs);
                    # this process reads stdin again only once the leader is gone
                    job["inputs_fd"] = os.dup(0)
                os.dup2(devnull, 0)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.makedirs(tmp, exist_ok=True)
                os.chdir(tmp)
            except BaseException:
                pass
            raw = header = None  # the job as it came, every program in it: not for its children
            run_job(job)
        leader[0] = pid
        status = 255
        cpu = None
        while True:
            try:
                # the leader's CPU time with its children's: what the job cost, free of the time a
                # busy machine (or its hypervisor) took away, which wall time is not
                _, wait_status, usage = os.wait4(pid, 0)
                status = returncode(wait_status)
                cpu = round(usage.ru_utime + usage.ru_stime, 6)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                break
        leader[0] = 0
        clean = sweep((me, 1)) if job.get("sweep_session", True) else True
        if job.get("sandbox") == "bwrap" and not sweep_ipc():
            clean = False
        if job.get("remove_tmp", True):
            try:
                os.rmdir(tmp)
            except FileNotFoundError:
                pass
            except OSError:
                clean = False
        record = protocol.record(META, OVER, {"status": status, "clean": clean, "cpu": cpu})
        try:
            os.write(fd, record)
        except OSError:
            os._exit(0)


def returncode(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 255


def sweep(keep: tuple[int, ...]) -> bool:
    """SIGKILL every other process of this session (what a job left behind); True if none."""
    try:
        sid = os.getsid(0)
    except OSError:
        return True
    found = False
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit() or int(name) in keep:
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if int(fields[3]) != sid or fields[0] == b"Z":
                continue
            os.kill(int(name), signal.SIGKILL)
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return not found


def sweep_ipc() -> bool:
    """Remove every SysV IPC object of this worker's IPC namespace (bubblewrap gives it one of
    its own): what a job's module made there must not outlive the job (children cannot make
    any, see seccomp.py).  True when nothing is left."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except BaseException:
        return True
    left = False
    # shmctl(id, IPC_RMID, NULL), semctl(id, 0, IPC_RMID), msgctl(id, IPC_RMID, NULL)
    for kind, ctl, last in (("shm", "shmctl", None), ("sem", "semctl", 0), ("msg", "msgctl", None)):
        try:
            with open("/proc/sysvipc/" + kind, "rb") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            try:
                if getattr(libc, ctl)(int(row.split()[1]), 0, last) != 0:  # IPC_RMID
                    left = True
            except (ValueError, IndexError):
                continue
    return not left
