"""How a leader reads its children: it forwards their records (only their own, well-formed),
watches their progress in their slots, kills one whose call ran out of time or that broke the
protocol, and, once one is reaped, records the outcome of the input it died in and says what
a fresh child must still run.
"""

import os
import select
import signal
import struct
import time

from . import protocol
from .protocol import BUDGET_EXCEEDED, CRASH_PROTOCOL, DIAGNOSTIC_PREFIX, LOAD_FAILED, LOAD_PENDING, MAX_LINE, TIMEOUT

GRACE = 0.5  # seconds past a deadline before the watchdog kills
# A call past its timeout is over whatever happens next: its outcome is Timeout, from the child's
# own timer or from the kill.  A child still in that call this long after (stuck in C, where the
# timer cannot reach: ``sum(range(2**40))``) is killed now rather than after GRACE, which cost
# the program's budget half a second per such call (two of them ended a 2 s budget, and the
# user's function took every input after them away from all programs).  Killing a child the timer
# was about to free costs only a fork.
CALL_GRACE = 0.15
_BUDGET_WORD = BUDGET_EXCEEDED.encode("ascii")
_TIMEOUT_WORD = b'"%s"' % TIMEOUT.encode("ascii")


class Child:
    """A forked child, as its leader sees it."""

    __slots__ = ("pid", "fd", "slot", "task", "indices", "buf", "eof", "status", "seen_pos",
                 "seen_time", "kill_reason", "cwd", "eof_time", "prefix", "allowed", "records",
                 "diag", "parked", "go", "polled")

    def __init__(self, pid, fd, slot, task, indices, cwd, allowed, parked, go, now):
        self.pid = pid
        self.fd = fd  # read end of its record pipe
        self.slot = slot  # its shared slot (protocol.SLOT_*)
        self.task = task
        self.indices = indices  # the inputs it runs, in order (None: forked before they came)
        self.buf = b""  # an incomplete last line
        self.eof = False
        self.status = None  # wait status once reaped
        self.seen_pos = -2  # the slot's position at the last look, and when it changed
        self.seen_time = now
        self.kill_reason = None  # the outcome of the input in progress when the leader killed it
        self.cwd = cwd
        self.eof_time = None
        self.prefix = b"%d " % task.t
        self.allowed = allowed  # see allowed_for
        self.records = protocol.record_index(task.t)
        self.diag = 0  # its own tracebacks forwarded
        self.parked = parked  # loaded and waiting for a slot
        self.go = go  # write end of the pipe that releases it (parked only)
        self.polled = 0  # when the watchdog last asked waitpid



def allowed_for(leader, indices):
    """The input indices a child may write records for (and -1, its load line), as ints and
    as the bytes its records spell them in.  A child that runs every input (all but
    restarts) shares one pair per job: the sets cost 0.1 ms to build, and testing a
    thousand records' indices as bytes takes a third of the time it takes as ints."""
    full = len(indices) == len(leader.input_codes)
    if full and leader.allowed_all is not None:
        return leader.allowed_all
    pair = (set(indices) | {protocol.LOADED}, {b"%d" % i for i in indices} | {b"%d" % protocol.LOADED})
    if full:
        leader.allowed_all = pair
    return pair


def read_child(leader, c):
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
        c.buf = buf[k + 1:]
        chunk = buf[:k + 1]
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
    # per-line loop below cost the leader 3 ms per thousand records, on every run's critical path.
    # One match per line means every line starts with the task's prefix and an index.
    n_lines = chunk.count(b"\n")
    if len(chunk) <= MAX_LINE or max(map(len, chunk.split(b"\n"))) <= MAX_LINE:
        found = c.records.findall(b"\n" + chunk)
        if len(found) == n_lines and set(found) <= allowed_b:
            leader.out_buf.append(chunk)
            _note_anchor_records(leader, c, chunk)
            return
    good = []
    bad = False
    for line in chunk.split(b"\n")[:-1]:
        if len(line) <= MAX_LINE:
            if line.startswith(prefix):
                try:
                    i = int(line[len(prefix):line.index(b" ", len(prefix))])
                except ValueError:
                    i = None
                if i in allowed:
                    good.append(line)
                    continue
            elif line.startswith(DIAGNOSTIC_PREFIX) and c.diag < 3:  # its own traceback
                c.diag += 1
                good.append(line)
                continue
        bad = True
    if good:
        good.append(b"")
        data = b"\n".join(good)
        leader.out_buf.append(data)
        _note_anchor_records(leader, c, data)
    if bad:
        reject(c)


def _note_anchor_records(leader, c, data):
    """The inputs the anchor task's forwarded records leave out (see Leader.note_left_out), and
    those it timed out on."""
    if c.task.t != leader.anchor:
        return
    if _BUDGET_WORD in data:
        leader.note_left_out([int(x) for x in leader.left_out.findall(data)])
    if _TIMEOUT_WORD in data:
        for x in leader.hung.findall(data):
            leader.note_anchor_hang(int(x))


def reject(c):
    """The child wrote what no child writes: kill it; the input in progress gets the crash."""
    if c.kill_reason is None:
        c.kill_reason = CRASH_PROTOCOL
        kill(c)


def check_child(leader, c, now):
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
            read_child(leader, c)
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
    limit = leader.prog_load_timeout + GRACE if pos < 0 else leader.call_timeout + CALL_GRACE
    reason = None
    if now - c.seen_time > limit or now > c.task.deadline + leader.call_timeout + GRACE:
        reason = TIMEOUT
    elif c.eof and now - c.eof_time > GRACE + 0.5:
        reason = protocol.crash("closed its pipe")
    if reason is not None and c.kill_reason is None:
        c.kill_reason = reason
        kill(c)
    return False


def kill(c):
    for fn in (lambda: os.killpg(c.pid, signal.SIGKILL), lambda: os.kill(c.pid, signal.SIGKILL)):
        try:
            fn()
        except OSError:
            pass


def finish_child(leader, c):
    """The child is reaped.  Record the outcome of the input in progress if it died in a
    call; return (task, remaining indices) for a fresh child, or None."""
    for fd in (c.fd, c.go):
        if fd is not None:
            leader.child_fds.discard(fd)
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
    remove_cwd(leader, c.cwd)
    if load_state == LOAD_FAILED:
        return None  # it reported its load error itself
    status = c.status or 0
    reason = c.kill_reason or protocol.status_reason(status)
    if load_state == LOAD_PENDING:
        leader.emit_json(t, protocol.LOADED, "%s while loading the program" % reason)
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
        leader.emit_json(t, cur, ["raise", None, None, reason])
        if t == leader.anchor and reason == TIMEOUT:
            leader.note_anchor_hang(cur)
        remaining = [i for i in remaining if i != cur]
    if not remaining:
        return None
    if task.deadline is not None and time.monotonic() >= task.deadline:
        leader.timeout_rest(task, remaining)
        return None
    task.queued_at = time.monotonic()
    return (task, remaining)


def kill_all(leader):
    """Kill and reap every child, the parked ones forked ahead too (SIGTERM from coherence:
    nothing is orphaned)."""
    running = list({c.pid: c for c in list(leader.running.values()) + list(leader.preforked.values())}.values())
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


def remove_cwd(leader, path):
    """A reaped child's own directory (never the job's)."""
    if path == leader.tmp:
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
