"""Jobs sent ahead of their inputs ("inputs_follow", warm workers only).

coherence hands a warm worker the job while it still generates the inputs; the job's leader
loads the module and the programs meanwhile, forks the first children (which load their
programs and park), and then reads the inputs from the next frame on its stdin.  The parked
children get them through a sealed memfd.
"""

from __future__ import annotations

import json
import os
import select

from . import disk, handover, protocol, watch
from .protocol import INPUT_KEYS, PREFORK_INPUTS, TOLD_HANGS

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    from .leader import Leader


def receive_inputs(leader: Leader) -> bool:
    """A job sent ahead of its inputs gets them here, as the next frame on the warm worker's
    stdin: the module and the programs are loaded by then, while coherence was still generating
    the inputs.  False when coherence gave up on the run (an empty frame, or EOF)."""
    job = leader.ctx.job
    fd = job.pop("inputs_fd", None)
    if fd is None:
        return True
    more = None
    try:
        if leader.disk is not None and leader.preforked:
            watch_disk_until_readable(leader, fd)
        header = protocol.read_line(fd)
        raw = protocol.read_exact(fd, int(header)) if header else None
        if raw:
            more = json.loads(raw.decode("utf-8"))
    except BaseException:
        more = None
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    if not isinstance(more, dict) or not isinstance(more.get("inputs"), list):
        return False
    for key in INPUT_KEYS:
        job[key] = more.get(key)
    leader.anchor.read(job)
    return True


def watch_disk_until_readable(leader: Leader, fd: int) -> None:
    """While coherence still makes the inputs, the children forked ahead load their programs,
    which may write as they load: the job's disk budget holds then too (disk.py)."""
    while True:
        try:
            if select.select([fd], [], [], disk.SCAN_EVERY)[0]:
                return
        except InterruptedError:
            continue
        leader.check_disk(leader.preforked.values())


def prefork(leader: Leader) -> None:
    """Fork the first children, one per program up to the slots and the spare ones, while
    coherence is still making the inputs: a child's fork, setup and program load
    (docs/results.md#worker-start) then run on a core that would wait for the inputs, not in
    the run.  They park with their programs loaded; publish_inputs hands them the inputs and
    schedule releases them like any parked child.  Nothing happens where the inputs cannot be
    handed over this way (no memfd or no file seals)."""
    if not handover.available():
        return
    job = leader.ctx.job
    try:
        if select.select([job["inputs_fd"]], [], [], 0)[0]:
            # The inputs are there already (cached ones, a shrinking round): nothing to wait
            # for, and forking ahead would only add the hand-over (docs/results.md#worker-start).
            return
    except (OSError, ValueError):
        return
    limits = leader.ctx.limits
    tasks = [t for t in leader.make_tasks() if t.program.error is None][: limits.jobs + limits.max_parked]
    if not tasks:
        return
    try:
        leader.memfd = handover.make()
    except (OSError, AttributeError):
        return
    leader.anchor.share(PREFORK_INPUTS, leader.ctx.tmp)
    leader.before_forks()
    # the worker's stdin, where this leader reads its inputs, is no child's business
    stdin = job["inputs_fd"]
    leader.child_fds.add(stdin)
    try:
        children = leader.spawn_all([(task, None, True) for task in tasks])
    finally:
        leader.child_fds.discard(stdin)
    for child in children:
        if child is not None:  # (a parked child always is)
            leader.preforked[child.task.t] = child
    # The memfd is for these children alone: publish_inputs closes the leader's copy before
    # any other fork, so no later child inherits it.


def publish_inputs(leader: Leader) -> None:
    """Write the inputs where the children forked before them read them (see prefork): the
    order, the late inputs, the anchor and each input's maker, marshalled into the memfd,
    which is then sealed against writes and read back.  Generated code ran in those children
    (each loaded its program), and could have written to the memfd, which they hold: whatever
    it wrote is overwritten or cut off before the seal, and after it nothing can be written.
    If any of this fails, the children are killed and the programs start afresh like the
    others."""
    fd, leader.memfd = leader.memfd, None
    anchor, codes = leader.anchor, leader.ctx.input_codes
    assert fd is not None and anchor.told is not None  # (prefork made both)
    try:
        ok = len(codes) + TOLD_HANGS <= len(anchor.told) and handover.publish(
            fd, (leader.input_order(), sorted(anchor.late), anchor.t, codes)
        )
    finally:
        os.close(fd)
    if not ok:
        drop_preforked(leader)


def drop_preforked(leader: Leader) -> None:
    for c in leader.preforked.values():
        watch.kill(c)
        try:
            os.waitpid(c.pid, 0)
        except OSError:
            pass
        for fd in (c.fd, c.go):
            if fd is None:
                continue
            leader.child_fds.discard(fd)
            try:
                os.close(fd)
            except OSError:
                pass
        watch.remove_cwd(c.cwd, leader.ctx.tmp)
    leader.preforked = {}
