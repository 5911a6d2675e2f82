"""One job, start to finish (``run_job``): its phases fill in the job's context (``setup``: the
guards and the kernel's layers; ``run``: the module, the programs, the inputs), then its leader
schedules the children.  A forked child leaves the leader's stack here (``become_child``).
"""

from __future__ import annotations

import os
import signal
import sys

from . import ahead, child, disk, guard, kernel, landlock, loading, protocol
from .canon import make_canonicalizer
from .leader import Leader
from .protocol import DONE_RECORD, META, MODULE, SANDBOX
from .spawn import Forked
from .timer import handle_quietly

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from .protocol import Job
    from .spawn import Spec


class Refused(Exception):
    """The job asked for a sandbox layer this kernel does not give."""


def setup(z: Leader) -> None:
    ctx, out, lim = z.ctx, z.out, z.ctx.limits
    job = ctx.job
    try:
        if hasattr(sys, "set_int_max_str_digits"):
            sys.set_int_max_str_digits(0)
    except BaseException:
        pass
    sys.dont_write_bytecode = True
    os.makedirs(ctx.tmp, exist_ok=True)
    try:
        os.chmod(ctx.tmp, 0o711)
    except OSError:
        pass
    memcg = kernel.enter_memcg(job, lim.memory_mb, lim.jobs)  # before the namespaces below
    bounded = job.get("sandbox") == "bwrap"  # its /tmp is a tmpfs of disk_mb (sandbox.py)
    if job.get("isolate", True):
        ctx.isolation_problems, mounted = guard.isolate_as_root(ctx.tmp, lim.disk_mb, disk.MAX_FILES)
        bounded = bounded or mounted
    if not bounded:
        z.disk = disk.Budget(ctx.tmp, lim.disk_mb * 1024 * 1024, disk.MAX_FILES)
    loading.set_path(job)
    ctx.timer.install()
    sig = getattr(signal, "SIGHUP", None)
    if sig is not None:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except BaseException:
            pass
    # SIGTERM from coherence: kill and reap the children, then leave (nothing orphaned).
    # SIGINT gets the interpreter's handler, as in a script (no terminal reaches this
    # session), even where whatever started the worker ignored SIGINT (a job started in the
    # background by a shell, nohup), which Python would keep; neither tells the module it is
    # being checked (see timer.handle_quietly).
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except (OSError, ValueError):
        pass
    handle_quietly(signal.SIGTERM, z.on_term)
    if guard.resource is not None:
        guard.setrlimit(guard.resource.RLIMIT_CORE, 0)
    ctx.set_pdeathsig = guard.prctl_pdeathsig()
    if ctx.set_pdeathsig is not None and job.get("die_with_parent", True):
        try:
            ctx.set_pdeathsig()
        except BaseException:
            pass
    state = ctx.guard
    guard.arm(state, job)
    ctx.layers = kernel.plan(job, [p for p in state["allow"] if p != state["root"]], state["hidden"])
    ctx.layers.memcg = memcg
    if state["not_granted"]:
        out.emit_json(
            META,
            protocol.DIAGNOSTIC,
            "not readable by the programs: %s, which holds your home folder (what they need below "
            "it, such as the interpreter and its packages, is granted on its own)"
            % ", ".join(state["not_granted"][:3]),
        )
    if ctx.layers.left_out:
        left = ctx.layers.left_out
        out.emit_json(
            META,
            protocol.DIAGNOSTIC,
            f"Landlock: {len(left)} paths left unreadable, past {landlock.MAX_RULES} rules "
            f"(the workspace's hidden entries are many): {', '.join(left[:3])}",
        )
    # which kernel layers the children apply, so coherence can name the sandbox that ran
    names = ctx.layers.names()
    out.emit_json(META, SANDBOX, names)
    missing = [x for x in job.get("require") or () if x not in names]
    if missing:
        raise Refused('sandbox "strict": the kernel refused ' + " and ".join(missing))
    ctx.canon, ctx.dump = make_canonicalizer()
    # from here on the leader runs code of the job: it reads what its children may
    refused = kernel.confine_leader(ctx.layers, ctx.tmp, job.get("sandbox") == "bwrap")
    if refused is not None:
        raise Refused(refused)
    guard.use_streams(ctx.streams)


def run(z: Leader) -> None:
    ctx, out = z.ctx, z.out
    job = ctx.job
    try:
        setup(z)
    except Refused as e:
        # nothing runs weaker than "strict" asked: the module is reported as not loaded
        ctx.guard["mode"] = guard.LEADER
        out.emit_json(META, MODULE, str(e))
        out.emit(DONE_RECORD)
        out.flush()
        return
    loader = ctx.loader
    loader.preimport(loading.PREIMPORT_CORE)
    if not loading.children_can_import():
        loader.preimport(loading.PREIMPORT)
    mod_spec = job.get("module") or {}
    ctx.module, err = loader.load_module(mod_spec)
    ctx.guard["mode"] = guard.LEADER
    out.emit_json(META, MODULE, err)
    if err is not None:
        out.emit(DONE_RECORD)
        out.flush()
        return
    ctx.guard["mode"] = guard.LOAD
    texts = [p.get("source") or "" for p in job["programs"]]
    texts.append(mod_spec.get("source") or "")
    if any("async" in t for t in texts):
        loader.preimport(("asyncio",))
    ctx.programs = loader.prepare_programs(job["programs"], ctx.module)
    # read here, where the workspace is readable: children of root run as nobody
    dirs = [d for d in mod_spec.get("sys_path") or () if d]
    ctx.workspace_roots = tuple({os.path.join(x, "") for d in dirs for x in (d, os.path.realpath(d))})
    ctx.scanned = {mod_spec.get("filename")}  # the module's source is checked as text already
    ctx.workspace_draws = bool(ctx.workspace_roots) and loading.draws(ctx.workspace_roots, ctx.scanned)
    ctx.modules_scanned = loading.modules_mark()
    ctx.guard["mode"] = guard.LEADER
    guard.use_streams(ctx.streams)
    out.flush()
    if job.get("inputs_fd") is not None:
        ahead.prefork(z)
    if not ahead.receive_inputs(z):
        ahead.drop_preforked(z)  # and their directories: the job's must be left empty
        return
    ctx.input_codes = loading.prepare_inputs(job["inputs"], job.get("packed"))
    if z.preforked:
        ahead.publish_inputs(z)
    z.schedule()
    out.emit(DONE_RECORD)
    out.flush()


def run_job(job: Job) -> None:
    """One run, start to finish, in this process (the one-shot worker or a job leader)."""
    z = Leader(job)
    forked = None
    try:
        run(z)
    except Forked as f:
        forked = f.args
    except BaseException:
        try:
            z.ctx.guard["mode"] = guard.LEADER
            import traceback

            z.out.emit(protocol.record(META, protocol.DIAGNOSTIC, traceback.format_exc()[-4000:]))
            z.out.flush()
        except BaseException:
            pass
        kernel.leave(getattr(z.ctx, "layers", None))
        os._exit(3)
    if forked is not None:  # a child, its leader's frames gone with the exception
        become_child(z, *forked)
    kernel.leave(getattr(z.ctx, "layers", None))  # (its children are reaped)
    os._exit(0)


def become_child(z: Leader, spec: Spec, batch: list[int]) -> None:
    """A forked child, out of its leader's stack (see Forked): never returns."""
    task, indices, _park, slot, cwd, uid, _r, w, go_r, _go_w = spec
    code = 1
    try:
        for fd in batch:  # its siblings' pipes: held here, they would never see EOF
            if fd != w and fd != go_r:
                os.close(fd)
        # forked before the inputs came (ahead.prefork): the stdin its leader reads them
        # from (the stack it left took it out of child_fds on the way)
        stdin = z.ctx.job.pop("inputs_fd", None)
        if stdin is not None:
            os.close(stdin)
        z.forget_others()
        # its leader's record descriptor and its siblings' pipes (see child.enter)
        close = [z.out.fd] + [x for x in z.child_fds if x != w]
        child.child_main(z.ctx, z.anchor, task, indices, w, slot, cwd, close, uid, go_r, z.memfd)
        code = 0
    except BaseException:
        try:
            import traceback

            os.write(w, protocol.record(META, protocol.DIAGNOSTIC, traceback.format_exc()[-2000:]))
        except BaseException:
            pass
    finally:
        os._exit(code)
