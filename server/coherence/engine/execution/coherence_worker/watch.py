"""How a leader reads its children: it forwards their records (only their own, well-formed),
watches their progress in their slots, kills one whose call ran out of time or that broke the
protocol, and, once one is reaped, records the outcome of the input it died in and says what
a fresh child must still run.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import time

from . import protocol
from .protocol import (
    BUDGET_EXCEEDED,
    CLAIM_HINT,
    CRASH_PROTOCOL,
    DIAGNOSTIC_PREFIX,
    INPUT_ERROR,
    LOAD_FAILED,
    LOAD_PENDING,
    MAX_LINE,
    RESERVED_MARK,
    TIMEOUT,
    TOLD_HANGS,
)

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    import mmap

    from .anchor import Anchor
    from .context import Limits
    from .output import Output
    from .task import Task

    # the inputs a child may write records for, as ints and as the bytes of its records
    Allowed = tuple[set[int], set[bytes]]

GRACE = 0.5  # seconds past a deadline before the watchdog kills
# A call past its timeout is over whatever happens next: its outcome is Timeout, from the child's
# own timer or from the kill.  A child still in that call this long after (stuck in C, where the
# timer cannot reach: ``sum(range(2**40))``) is killed now rather than after GRACE, which cost
# the program's budget, and the user's function the inputs after it, a whole GRACE per such call
# (docs/results.md#call-grace).  Killing a child the timer
# was about to free costs only a fork.
CALL_GRACE = 0.15
_TIMEOUT_CLAIM = TIMEOUT.encode("ascii")
_BUDGET_CLAIM = BUDGET_EXCEEDED.encode("ascii")
_INPUT_CLAIM = INPUT_ERROR.encode("ascii")
# What a child's checked claims were, per input (see check_claim): a call that timed out, an
# input that could not be made, an input skipped on its own (a hang the anchor had too), and one
# of a run of inputs skipped to the end of their group (cut, budget or timeouts in a row).
TIMED_OUT, NO_INPUT, HANG_SKIP, RUN_SKIP = "T", "I", "H", "R"
_EPSILON = 0.01  # seconds: clock reads of two processes


class Child:
    """A forked child, as its leader sees it."""

    __slots__ = (
        "pid",
        "fd",
        "slot",
        "task",
        "indices",
        "buf",
        "eof",
        "status",
        "seen_pos",
        "seen_time",
        "kill_reason",
        "cwd",
        "eof_time",
        "prefix",
        "allowed",
        "records",
        "diag",
        "parked",
        "go",
        "polled",
        "began",
        "timeouts",
        "claims",
        "run_end",
        "where",
        "has_late",
        "seen",
    )

    def __init__(
        self,
        pid: int,
        fd: int,
        slot: mmap.mmap,
        task: Task,
        indices: list[int] | None,
        cwd: str,
        allowed: Allowed | None,
        parked: bool,
        go: int | None,
        now: float,
    ) -> None:
        self.pid = pid
        self.fd = fd  # read end of its record pipe
        self.slot = slot  # its shared slot (protocol.SLOT_*)
        self.task = task
        # the inputs it runs, in order.  None for a child forked before they came (ahead.prefork):
        # parked until leader.schedule sets them, and no record of its is read before that
        self.indices: list[int] = indices  # type: ignore[assignment]
        self.buf = b""  # an incomplete last line
        self.eof = False
        self.status: int | None = None  # wait status once reaped
        self.seen_pos = -2  # the slot's position at the last look, and when it changed
        self.seen_time = now
        self.kill_reason: str | None = None  # the outcome of the input in progress when the leader killed it
        self.cwd = cwd
        self.eof_time = 0.0  # when eof was seen (read only once it was)
        self.prefix = b"%d " % task.t
        self.allowed: Allowed = allowed  # type: ignore[assignment]  # see Leader.allowed_for; None as indices
        self.records = protocol.record_index(task.t)
        self.diag = 0  # its own tracebacks forwarded
        self.parked = parked  # loaded and waiting for a slot
        self.go = go  # write end of the pipe that releases it (parked only)
        self.polled: float = 0  # when the watchdog last asked waitpid
        self.began = now  # when it could start its calls (its release, for a parked one)
        self.timeouts = 0  # Timeout claims forwarded
        self.claims: dict[int, str] = {}  # input -> what its checked claim was (TIMED_OUT, ...)
        self.seen: set[bytes] = set()  # the inputs (as bytes) it forwarded a record or a claim for
        self.run_end: tuple[int, bool] | None = None  # (position, late) of the last input of a checked RUN_SKIP
        self.where: dict[int, int] | None = None  # input -> position in indices (see position)
        self.has_late: bool | None = None  # whether any of its inputs is a late one (see position)


def read_child(c: Child, out: Output, anchor: Anchor, limits: Limits) -> None:
    """Forward the child's complete lines as they are (the child writes coherence's format)."""
    try:
        data = os.read(c.fd, 1 << 16)
    except InterruptedError:
        return
    except OSError:
        data = b""
    if not data:
        c.eof = True
        c.eof_time = time.monotonic()
        try:
            _, written, load_state = struct.unpack_from("qqq", c.slot, 0)
        except BaseException:
            written, load_state = 0, LOAD_PENDING
        if written >= len(c.indices) or load_state == LOAD_FAILED:
            # it finished and is exiting: reap it now rather than on the next tick
            try:
                c.status = os.waitpid(c.pid, 0)[1]
            except ChildProcessError:
                c.status = 0
        return
    buf = c.buf + data if c.buf else data
    k = buf.rfind(b"\n")
    if k < 0:
        c.buf = buf
        if len(buf) > MAX_LINE:  # a flood without newlines: no record is that long
            c.buf = b""
            reject(c)
        return
    if k == len(buf) - 1:
        c.buf = b""
        chunk = buf
    else:
        c.buf = buf[k + 1 :]
        chunk = buf[: k + 1]
        if len(c.buf) > MAX_LINE:
            c.buf = b""
            reject(c)
    # Forward only the child's own records: its task number, one of its inputs (or -1, the
    # load line), no longer than a record can be.  Generated code can write to this pipe
    # (it is an open descriptor in its process), and a forged line for another task or for
    # the module status ("-1 0", "-1 2") would change other programs' results.
    prefix = c.prefix
    allowed, allowed_b = c.allowed
    # The usual chunk, only well-formed records, is checked with a few passes in C: the
    # per-line loop below is slow on every run's critical path (docs/results.md#call-costs).
    # One match per line means every line starts with the task's prefix and an index.
    # A chunk with a claim of a reserved outcome (" !") is read line by line: each claim is
    # checked (check_claim), and such chunks are few (a timeout costs a call's whole time).
    n_lines = chunk.count(b"\n")
    if CLAIM_HINT not in chunk and (len(chunk) <= MAX_LINE or max(map(len, chunk.split(b"\n"))) <= MAX_LINE):
        found = c.records.findall(b"\n" + chunk)
        indices = set(found)
        if len(found) == n_lines and indices <= allowed_b:
            out.buf.append(chunk)
            c.seen |= indices
            return
    good = []
    bad = False
    now = time.monotonic()
    for line in chunk.split(b"\n")[:-1]:
        if len(line) <= MAX_LINE:
            if line.startswith(prefix):
                try:
                    at = line.index(b" ", len(prefix))
                    i = int(line[len(prefix) : at])
                except ValueError:
                    i = None
                if i is not None and i in allowed:
                    if line[at + 1 : at + 2] != RESERVED_MARK:
                        c.seen.add(b"%d" % i)
                        good.append(line)
                        continue
                    if i >= 0 and check_claim(c, i, line[at + 2 :], now, anchor, limits):
                        good.append(line)
                        continue
            elif line.startswith(DIAGNOSTIC_PREFIX) and c.diag < 3:  # its own traceback
                c.diag += 1
                good.append(line)
                continue
        bad = True
    if good:
        good.append(b"")
        out.buf.append(b"\n".join(good))
    if bad:
        reject(c)


def check_claim(c: Child, i: int, word: bytes, now: float, anchor: Anchor, limits: Limits) -> bool:
    """Whether a child's claim of the reserved outcome ``word`` for input ``i`` is true, as far
    as its leader can tell; the anchor's true claims tell the other programs (Anchor.note_*).

    Timeout: its timeouts so far fit in the time since it began (each took a call's timeout).
    InputError: no more than a raise (nothing treats it as anything else).
    BudgetExceeded: what child.call_loop skips, from what the leader knows itself: an input at
    or past the anchor's cut, or after the budget's deadline (the likely inputs' earlier one),
    or past the head once the child has run as long as its tail budget,
    or right after three calls in a row that timed out, or the anchor's hang after one of this
    program's own."""
    key = b"%d" % i
    if key in c.seen:
        return False  # one record per input: a claim for one it ran does not count
    c.seen.add(key)
    t = c.task.t
    if word == _TIMEOUT_CLAIM:
        c.timeouts += 1
        if c.timeouts * limits.call_timeout > now - c.began + _EPSILON:
            return False
        c.claims[i] = TIMED_OUT
        if t == anchor.t:
            anchor.note_hang(i)
        return True
    if word == _INPUT_CLAIM:
        c.claims[i] = NO_INPUT
        return True
    if word != _BUDGET_CLAIM or not 0 <= i < len(anchor.rank):
        return False
    late = i in anchor.late
    pos = position(c, i, anchor.late)
    if _run_skip(c, i, pos, late, now, anchor, limits):
        c.claims[i] = RUN_SKIP
        c.run_end = (pos, late)
    elif (
        t != anchor.t
        and anchor.t is not None
        and (told := anchor.told) is not None
        and told[TOLD_HANGS + i]
        and any(v == TIMED_OUT and told[TOLD_HANGS + j] for j, v in c.claims.items())
    ):
        c.claims[i] = HANG_SKIP
    else:
        return False
    if t == anchor.t:
        anchor.note_left_out([i])
    return True


def _run_skip(c: Child, i: int, pos: int, late: bool, now: float, anchor: Anchor, limits: Limits) -> bool:
    if c.run_end is not None and c.run_end == (pos - 1, late):
        return True  # the run it began goes on to the end of its group
    if anchor.rank[i] >= anchor.cuts[1 if late else 0]:
        return True
    # past the head, the tail budget (CPU seconds, which the child cannot have spent in less
    # wall time since it began): see child.call_loop
    tail = limits.tail_budget
    if tail > 0 and (late or pos >= limits.tail_head) and now - c.began + _EPSILON >= tail:
        return True
    deadline = c.task.deadline
    if deadline is not None:
        if now > deadline:
            return True
        # (the likely inputs stop a fifth of the budget earlier when late ones follow)
        if not late and now > deadline - 0.2 * limits.program_budget and c.has_late:
            return True
    # three calls in a row that timed out just before it (skips and unmade inputs between)
    found = 0
    indices, claims = c.indices, c.claims
    for q in range(pos - 1, -1, -1):
        kind = claims.get(indices[q])
        if kind == TIMED_OUT:
            found += 1
            if found == 3:
                return True
        elif kind != NO_INPUT and kind != HANG_SKIP:
            return False
    return False


def position(c: Child, i: int, late: frozenset[int]) -> int:
    """Where input ``i`` is in the child's order (built at its first claim of a skip)."""
    if c.where is None:
        c.where = {j: p for p, j in enumerate(c.indices)}
        c.has_late = not late.isdisjoint(c.indices)
    return c.where[i]


def reject(c: Child) -> None:
    """The child wrote what no child writes: kill it; the input in progress gets the crash."""
    if c.kill_reason is None:
        c.kill_reason = CRASH_PROTOCOL
        kill(c)


def check_child(c: Child, now: float, out: Output, anchor: Anchor, limits: Limits) -> bool:
    """Watchdog; returns True when the child is gone (reaped, pipe drained)."""
    if c.status is None and (c.eof or now - c.polled > 0.05):
        c.polled = now
        try:
            pid, status = os.waitpid(c.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = c.pid, 0
        if pid:
            c.status = status
    if c.status is not None:
        while not c.eof:
            try:
                ready = select.select([c.fd], [], [], 0)[0]
            except InterruptedError:
                continue
            if not ready:
                break
            read_child(c, out, anchor, limits)
        return True
    if c.parked:
        return False  # waiting for a slot: no clock runs yet
    try:
        pos = struct.unpack_from("q", c.slot, protocol.SLOT_POS)[0]
    except BaseException:
        pos = c.seen_pos
    if pos != c.seen_pos:
        c.seen_pos = pos
        c.seen_time = now
        return False
    limit = limits.prog_load_timeout + GRACE if pos < 0 else limits.call_timeout + CALL_GRACE
    reason = None
    deadline = c.task.deadline  # set once its child left the park (see Leader.start_clock)
    if now - c.seen_time > limit or (deadline is not None and now > deadline + limits.call_timeout + GRACE):
        reason = TIMEOUT
    elif c.eof and now - c.eof_time > GRACE + 0.5:
        reason = protocol.crash("closed its pipe")
    if reason is not None and c.kill_reason is None:
        c.kill_reason = reason
        kill(c)
    return False


def kill(c: Child) -> None:
    for kill_by in (os.killpg, os.kill):  # its process group, then itself
        try:
            kill_by(c.pid, signal.SIGKILL)
        except OSError:
            pass


def finish_child(c: Child, out: Output, anchor: Anchor, child_fds: set[int], tmp: str) -> tuple[Task, list[int]] | None:
    """The child is reaped.  Record the outcome of the input in progress if it died in a
    call; return (task, remaining indices) for a fresh child, or None."""
    for fd in (c.fd, c.go):
        if fd is not None:
            child_fds.discard(fd)
            try:
                os.close(fd)
            except OSError:
                pass
    try:
        os.killpg(c.pid, signal.SIGKILL)  # anything left in its process group
    except OSError:
        pass
    task = c.task
    t = task.t
    indices = c.indices
    try:
        pos, written, load_state = struct.unpack_from("qqq", c.slot, 0)
    except BaseException:
        pos, written, load_state = -1, 0, LOAD_PENDING
    try:
        c.slot.close()
    except BaseException:
        pass
    remove_cwd(c.cwd, tmp)
    if load_state == LOAD_FAILED:
        return None  # it reported its load error itself
    status = c.status or 0
    reason = c.kill_reason or protocol.status_reason(status)
    if load_state == LOAD_PENDING:
        out.emit_json(t, protocol.LOADED, "%s while loading the program" % reason)
        return None
    if written >= len(indices):
        return None  # finished normally
    remaining = indices[written:]
    cur = None
    if written <= pos < len(indices):
        cur = indices[pos]
    elif task.stalls >= 2:
        cur = remaining[0]  # dies between calls again and again: blame the next input
    else:
        task.stalls += 1
    if cur is not None:
        task.stalls = 0
        task.careful = True  # its replacement writes every record at once (see child.call_loop)
        out.emit(b"%d %d %s\n" % (t, cur, protocol.reserved(reason)))
        if t == anchor.t and reason == TIMEOUT:
            anchor.note_hang(cur)
        remaining = [i for i in remaining if i != cur]
    if not remaining:
        return None
    if task.deadline is not None and time.monotonic() >= task.deadline:
        anchor.timeout_rest(out, task, remaining)
        return None
    task.queued_at = time.monotonic()
    return (task, remaining)


def kill_all(children: list[Child]) -> None:
    """Kill and reap these children, each once (SIGTERM from coherence: nothing is orphaned)."""
    running = list({c.pid: c for c in children}.values())
    for c in running:
        kill(c)
    until = time.monotonic() + 1.0
    for c in running:
        while time.monotonic() < until:
            try:
                if os.waitpid(c.pid, os.WNOHANG)[0]:
                    break
            except OSError:
                break
            time.sleep(0.002)


def remove_cwd(path: str, tmp: str) -> None:
    """A reaped child's own directory (never the job's, ``tmp``)."""
    if path == tmp:
        return
    try:
        os.rmdir(path)  # usually empty
        return
    except OSError:
        pass
    try:
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    except BaseException:
        pass
