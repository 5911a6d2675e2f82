"""One child: a forked process that runs one program over the inputs.

It enters the sandbox (its own process group, uid, limits, temp dir and guard mode), loads its
program on top of the module context its leader loaded, makes the inputs, and runs the call
loop, writing one record per input to its pipe and its progress to its slot, so that its leader
knows which input was in progress if it dies.
"""

from __future__ import annotations

import marshal
import os
import signal
import struct
import sys
import time
import types

from . import guard, handover, kernel, loading, protocol
from .call_setup import coroutines, input_makers, may_draw, numpy_seed
from .canon import LIM, message, tname
from .flat import flat_map, flat_seq, flat_set, snapshotter
from .protocol import (
    BUDGET_EXCEEDED,
    INPUT_ERROR,
    LOAD_FAILED,
    LOAD_OK,
    SLOT_LOAD,
    SLOT_POS,
    SLOT_WRITTEN,
    TIMEOUT,
    TOLD_HANGS,
)
from .timer import Timeout

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    import mmap
    from collections.abc import Callable
    from typing import Any

    from .anchor import Anchor
    from .context import JobContext
    from .task import Task


def child_main(
    ctx: JobContext,
    anchor: Anchor,
    task: Task,
    indices: list[int] | None,
    w: int,
    slot: mmap.mmap,
    cwd: str,
    close: list[int],
    uid: int = guard.NOBODY,
    go: int | None = None,
    memfd: int | None = None,
) -> None:
    """Run ``task``'s program over ``indices`` in this fresh fork: it sees the job's context, the
    anchor's told map, its pipe ``w`` and its ``slot``; ``close`` are its leader's descriptors.
    ``indices`` None: forked before the inputs came, which ``memfd`` hands over (ahead.prefork)."""
    refused = enter(ctx, w, cwd, uid, close)
    out = Records(w, slot)
    if refused is not None:
        # a layer the leader announced did not hold here: the program does not run weaker
        out.lines.append(protocol.record(task.t, protocol.LOADED, "the sandbox refused to run it: " + refused))
        out.flush(0)
        struct.pack_into("q", slot, SLOT_LOAD, LOAD_FAILED)
        return
    info = task.program
    ns = dict(ctx.module.__dict__)
    if info.code is not None:
        hide_users(ctx.module, info, ns)
    f, receiver, load_error = load_program(ctx, info, ns)
    out.lines.append(protocol.record(task.t, protocol.LOADED, load_error))
    out.flush(0)
    struct.pack_into("q", slot, SLOT_LOAD, LOAD_OK if load_error is None else LOAD_FAILED)
    if load_error is not None:
        return
    if indices is None:
        # forked before the inputs existed (see ahead.prefork): parked until they did and a
        # slot is free; they are in the memfd then
        assert go is not None  # (a parked child has its pipe)
        task.deadline = wait_for_slot(go)
        go = None
        assert memfd is not None  # (prefork made it)
        order, late, anchor.t, codes = handover.receive(memfd)
        anchor.late = frozenset(late)
        anchor.rank_by(order)
        indices = order
    else:
        codes = ctx.input_codes
    makers = input_makers(codes, ns, receiver)
    call_loop(ctx, anchor, task, indices, f, makers, out, go)


def enter(ctx: JobContext, w: int, cwd: str, uid: int, close: list[int]) -> str | None:
    """Into the sandbox: a process group of its own, none of its leader's or siblings'
    descriptors (``close``) but its pipe, the limits, the privilege drop, its own directory,
    the kernel's layers (see kernel.py).  None, or why a layer could not be applied."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass
    ctx.timer.install()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    lim = ctx.limits
    guard.limit_child(
        ctx.as_limit,
        lim.file_size_mb * 1024 * 1024,
        int(lim.program_budget + lim.call_timeout + 5),
        max(64, w + 16),
    )
    guard.drop_privileges(uid, ctx.set_pdeathsig)
    env = os.environ
    if env != ctx.base_env:
        env.clear()
        env.update(ctx.base_env)
    guard.confine(ctx.guard, cwd)
    guard.use_streams(ctx.streams)
    return kernel.apply(ctx.layers, cwd)


class Records:
    """The child's records, written to its pipe in batches, and how far it got in its slot."""

    __slots__ = ("lines", "state", "w", "slot")

    def __init__(self, w: int, slot: mmap.mmap) -> None:
        self.lines: list[bytes] = []
        self.state: list[float] = [0, time.monotonic()]  # bytes pending, last flush
        self.w = w
        self.slot = slot

    def flush(self, written: int) -> None:
        lines = self.lines
        if lines:
            data = b"".join(lines)
            del lines[:]
            protocol.write_all(self.w, data)
        struct.pack_into("q", self.slot, SLOT_WRITTEN, written)
        self.state[0] = 0
        self.state[1] = time.monotonic()


def hide_users(module: types.ModuleType, info: loading.Program, ns: dict[str, Any]) -> None:
    """An alternative does not see the user's function (or method): it is taken out of the
    namespace the alternative runs in and out of the module (this process's copy), and the
    alternative takes its place there once loaded (``load_program``), as a method alternative
    takes the method's place in the user's class.  Otherwise generated code could call the
    user's function and agree with it exactly where it is wrong."""
    if info.owner:
        cls = module.__dict__.get(info.owner)  # (the same class in ns)
        try:
            if isinstance(cls, type) and info.entry in cls.__dict__:
                delattr(cls, info.entry)
        except BaseException:
            pass
    else:
        ns.pop(info.entry, None)
        module.__dict__.pop(info.entry, None)


def load_program(ctx: JobContext, info: loading.Program, ns: dict[str, Any]) -> tuple[Any, type | None, str | None]:
    """``(function, receiver class or None, load error or None)``: the program executed in
    ``ns``, a copy of the module context's namespace."""
    module = ctx.module
    f = None
    load_error = None
    receiver = None
    try:
        if info.code is not None:
            ctx.timer.timed(ctx.limits.prog_load_timeout, exec, info.code, ns)
        if info.owner:
            f, receiver, load_error = ctx.loader.bind_method(info, ns, module)
        else:
            f = ns.get(info.entry)
            if info.code is not None and f is not None and f is module.__dict__.get(info.entry):
                f = None  # it did not define its own: the module's function is not an alternative
            if f is None:
                where = "program" if info.code is not None else "module"
                load_error = "the %s defines no function named %r" % (where, info.entry)
            elif not callable(f):
                load_error = "%r is not callable" % info.entry
            elif info.code is not None:
                module.__dict__[info.entry] = f  # in the user's function's place (see hide_users)
    except Timeout:
        load_error = "Timeout: loading the program took longer than %gs" % ctx.limits.prog_load_timeout
    except BaseException as e:
        load_error = protocol.describe_exc(e)
    return f, receiver, load_error


def wait_for_slot(go: int) -> float:
    """In a parked child: the deadline the leader sends when it gives the child a slot."""
    got = b""
    while len(got) < 8:
        try:
            part = os.read(go, 8 - len(got))
        except InterruptedError:
            continue
        if not part:
            os._exit(0)  # the leader is gone
        got += part
    os.close(go)
    deadline: float = struct.unpack("d", got)[0]
    return deadline


def call_loop(
    ctx: JobContext,
    anchor: Anchor,
    task: Task,
    indices: list[int],
    f: Callable[..., Any],
    makers: list[Any],
    out: Records,
    go: int | None,
) -> None:
    """Every input of ``indices``, one call each, one record each.

    One function, with everything it touches per call in local variables: this is the hot path
    of every check (a fast function's call costs a few microseconds, and the loop's own work
    per call is of that order), so none of it is split into calls of its own."""
    t = task.t
    info = task.program
    seed = task.seed
    import random

    rseed = random.seed
    text = info.source + (ctx.job.get("module", {}).get("source") or "")
    # Reseeding costs more than a typical call (docs/results.md#call-costs): per call only when
    # the code may draw numbers (see may_draw); a module imported during a call is looked at
    # after that call.
    roots = ctx.workspace_roots
    per_call_seed, watch = may_draw(ctx, text)
    seen_modules = len(sys.modules)
    np_seed = None
    if per_call_seed:
        np_seed = numpy_seed()
    np_s = seed % (2**32)
    rseed(seed)
    if np_seed is not None:
        try:
            np_seed(np_s)
        except BaseException:
            np_seed = None
    coroutine_type, run_coroutine = coroutines(text)

    lines = out.lines
    state = out.state
    flush = out.flush
    slot = out.slot
    pack = struct.pack_into
    canon = ctx.canon
    dump = ctx.dump
    loads = marshal.loads
    enc = protocol.encode
    take, changed = snapshotter(canon, dump)
    timer = ctx.timer
    ct = ctx.limits.call_timeout
    monotonic = time.monotonic
    deadline = task.deadline
    if go is not None:  # parked: wait for a slot (and the deadline) from the leader
        deadline = wait_for_slot(go)
    assert deadline is not None  # (its leader started the task's clock: Leader.start_clock)
    IMMUT = frozenset((int, float, str, bool, bytes, type(None), complex))
    flt_repr = float.__repr__
    prefix = b"%d " % t
    # claims of reserved outcomes (see protocol): the leader forwards each only once it has
    # checked it, so generated code in this process cannot forge one
    K_TIMEOUT = protocol.reserved(TIMEOUT)
    K_BUDGET = protocol.reserved(BUDGET_EXCEEDED)
    K_INPUT = protocol.reserved(INPUT_ERROR)
    K_NONE = b'["ok",["N"],null,null]'
    K_TRUE = b'["ok",["B",true],null,null]'
    K_FALSE = b'["ok",["B",false],null,null]'
    count = len(indices)
    # Inputs come cheapest first: after this many timeouts in a row the larger inputs that
    # follow would mostly time out too, at call_timeout each.  They are left out like inputs
    # past the budget (for every program), which keeps an exponential program to a second or
    # two instead of its whole budget.
    streak_limit = 3
    streak = 0
    # The late inputs (ones the function is likely not meant for) come last in the order.
    # Timeouts in a row before them say the likely inputs grew too large, not that the late
    # ones would hang; and the late ones are often cheap (a negative n is an empty range).
    # So the likely inputs stop at three timeouts in a row or a fifth of the budget before
    # the deadline, and what is left of them is left out; then the late ones run.
    late = anchor.late
    late_from = count
    if late:
        for p, i in enumerate(indices):
            if i in late:
                late_from = p
                break
    likely_deadline = deadline - 0.2 * ctx.limits.program_budget if late_from < count else deadline
    skip_to = 0
    # The tail budget: past its first tail_head inputs (the smallest), a program's calls share
    # tail_budget CPU seconds, and the late inputs as many again.  Where it runs out, in a call
    # (the timer's ticks stop it) or between calls, the rest of the group is left out, as past
    # the program budget: a few giant inputs cannot keep every program busy for seconds once
    # the small ones have had their say, and CPU time, unlike wall time, does not shrink the
    # inputs kept when the machine is busy.
    tail = ctx.limits.tail_budget
    tail_at = min(ctx.limits.tail_head, late_from) if tail > 0 else count
    cpu = time.process_time
    spent = False
    # what the anchor task has left out (see Anchor.note_left_out), looked at every 20 ms
    rank = anchor.rank
    unpack = struct.unpack_from
    told = anchor.told
    assert told is not None  # (shared before any fork: Anchor.share)
    cut_likely, cut_late = unpack("qq", told, 0)
    peek = 0.0
    # Where the user's function (the anchor) hangs, a program that hangs too agrees with it,
    # and each further such input would cost it a whole call_timeout to agree again (see
    # docs/results.md#hanging-anchor).  So once this program has
    # timed out on an input the anchor timed out on, it leaves the anchor's other timeouts
    # out (dropped for every program, as inputs past a budget are).  A program that returns
    # where the anchor hangs, the disagreement that matters there, runs them all.
    hangs = told if anchor.t is not None and t != anchor.t else None
    hangs_too = False
    careful = task.careful  # a child of this program was killed in a call
    timer.start_ticks(ct)
    for pos in range(count):
        if pos < skip_to:
            continue
        if pos >= tail_at:  # the tail's clock starts (again, for the late inputs)
            timer.cpu_end = cpu() + tail
            spent = False
            tail_at = late_from if pos < late_from else count
        i = indices[pos]
        pack("q", slot, SLOT_POS, pos)
        now = monotonic()
        if now > peek:
            cut_likely, cut_late = unpack("qq", told, 0)
            peek = now + 0.02
            if cpu() >= timer.cpu_end:
                spent = True
        if pos < late_from and (streak >= streak_limit or spent or now > likely_deadline or rank[i] >= cut_likely):
            for j in indices[pos:late_from]:
                lines.append(prefix + b"%d %s\n" % (j, K_BUDGET))
            skip_to = late_from
            streak = 0
            continue
        if now > deadline or streak >= streak_limit or spent or (pos >= late_from and rank[i] >= cut_late):
            for j in indices[pos:]:
                lines.append(prefix + b"%d %s\n" % (j, K_BUDGET))
            break
        if hangs_too and hangs[TOLD_HANGS + i]:  # type: ignore[index]  # hangs_too implies hangs
            lines.append(prefix + b"%d %s\n" % (i, K_BUDGET))
            continue
        mk = makers[i]
        if mk is None:
            lines.append(prefix + b"%d %s\n" % (i, K_INPUT))
            continue
        if per_call_seed:
            rseed(seed)
            if np_seed is not None:
                np_seed(np_s)
        stage = 0
        timer.fired = False
        try:
            try:
                timer.start = now
                timer.armed = True
                args, kwargs = loads(mk) if mk.__class__ is bytes else mk()
                if type(args) is not tuple:
                    args = tuple(args)
                if type(kwargs) is not dict:
                    kwargs = dict(kwargs)
                check = False
                for x in args:
                    if type(x) not in IMMUT:
                        check = True
                        break
                if kwargs and not check:
                    for x in kwargs.values():
                        if type(x) not in IMMUT:
                            check = True
                            break
                if check:
                    argv = args + (kwargs,) if kwargs else args
                    pre = take(argv)
                stage = 1
                r = f(*args, **kwargs)
                stage = 2
                tr = type(r)
                if tr is coroutine_type:
                    r = run_coroutine(r)  # type: ignore[misc]  # set whenever coroutine_type is
                    tr = type(r)
                if tr is int and -LIM < r < LIM:
                    v: bytes | bool | None = b'["I","%d"]' % r
                elif r is None:
                    v = None
                elif tr is bool:
                    v = r  # True or False itself: type(r) is bool
                elif tr is float and r - r == 0:
                    v = b'["F",' + flt_repr(r).encode("ascii") + b"]"
                elif tr is str and len(r) < 2000:
                    v = b'["S",' + enc(r).encode("ascii") + b"]"
                else:
                    if tr is list or tr is tuple:
                        v = flat_seq(r, tr)
                    elif tr is dict:
                        v = flat_map(r)
                    elif tr is set or tr is frozenset:
                        v = flat_set(r)
                    else:
                        v = None
                    if v is None:
                        v = dump(canon(r), r).encode("ascii")
                m = changed(pre, argv) if check else None
            finally:
                timer.armed = False
            if timer.fired:
                raise Timeout()
            if m is None:
                if v is None:
                    key = K_NONE
                elif v is True:
                    key = K_TRUE
                elif v is False:
                    key = K_FALSE
                else:
                    key = b'["ok",' + v + b",null,null]"
            else:
                if v is None:
                    v = b'["N"]'
                elif v is True:
                    v = b'["B",true]'
                elif v is False:
                    v = b'["B",false]'
                key = b'["ok",' + v + b"," + m + b",null]"
        except Timeout:
            key = K_TIMEOUT
        except BaseException as e:
            if timer.fired:
                key = K_TIMEOUT
            elif stage == 0:
                key = K_INPUT
            else:
                # the message rides after the key's four items: shown to the user, never compared
                key = enc(["raise", None, None, tname(e), message(e)]).encode("ascii")
        if timer.over:  # the tail budget ran out in this call: it was never made, like the rest
            timer.over = False
            spent = True
            key = K_BUDGET
        lines.append(prefix + b"%d %s\n" % (i, key))
        if key is K_TIMEOUT:
            streak += 1
            if hangs is not None and hangs[TOLD_HANGS + i]:
                hangs_too = True
        else:
            streak = 0
        if watch and len(sys.modules) != seen_modules:
            seen_modules = len(sys.modules)
            if loading.draws(roots, ctx.scanned):
                per_call_seed, watch = True, False
                np_seed = numpy_seed()
        state[0] += len(key)
        # A child killed in a call stuck in C (the timer cannot interrupt ``sum(range(2**31))``)
        # loses what it has not written, and its replacement re-runs that against the same
        # deadline: at most 50 ms of work, once, because the replacement writes every record
        # at once (``careful``) and so loses nothing to the next stuck call.  Writing more often
        # in every child would cost each run a leader wake-up per write.
        if careful or state[0] > 32768 or now - state[1] > 0.05:
            flush(pos + 1)
    timer.stop_ticks()
    pack("q", slot, SLOT_POS, count)
    flush(count)
