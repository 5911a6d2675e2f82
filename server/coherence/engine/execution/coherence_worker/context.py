"""A job's context: its limits, and what its leader set up and loaded before the first fork
(the guard's state, the timer, the loader, the kernel's layers, the module, the programs, the
inputs' makers).  The job's phases (``job.py``) fill it in once, in order; after that it is
only read, and it is all a forked child sees of its leader besides its own task and the
anchor's told map."""

from __future__ import annotations

import os

from . import guard, loading
from .timer import Timer

TYPE_CHECKING = False  # see protocol.py
if TYPE_CHECKING:
    import io
    import types
    from collections.abc import Callable
    from typing import Any

    from .canon import Dump, Top
    from .kernel import Layers
    from .protocol import Job


class Limits:
    """The job's limits, read once from its "limits"."""

    __slots__ = (
        "call_timeout",
        "program_budget",
        "load_timeout",
        "prog_load_timeout",
        "memory_mb",
        "file_size_mb",
        "disk_mb",
        "jobs",
        "max_parked",
        "tail_budget",
        "tail_head",
    )

    def __init__(self, lim: dict[str, Any]) -> None:
        self.call_timeout = float(lim.get("call_timeout", 1.0))
        self.program_budget = float(lim.get("program_budget", 20.0))
        # CPU seconds a program may spend past its first tail_head inputs (0: no limit), and
        # again on the late inputs: see child.call_loop
        self.tail_budget = float(lim.get("tail_budget", 0.0) or 0.0)
        self.tail_head = int(lim.get("tail_head", 0) or 0)
        self.load_timeout = float(lim.get("load_timeout", 30.0))
        self.prog_load_timeout = min(self.load_timeout, max(5.0, 2 * self.call_timeout))
        self.memory_mb = int(lim.get("memory_mb", 1024))
        self.file_size_mb = int(lim.get("file_size_mb", 16))
        self.disk_mb = int(lim.get("disk_mb", 256))  # what the job's directory may hold (disk.py)
        jobs = int(lim.get("jobs", 0) or 0)
        if jobs <= 0:
            try:
                jobs = len(os.sched_getaffinity(0))
            except BaseException:
                jobs = os.cpu_count() or 1
        self.jobs = max(1, jobs)
        # children forked ahead and parked until a slot frees up (see Leader.schedule)
        self.max_parked = min(16, 4 * self.jobs)


class JobContext:
    """One job's context (see the module's docstring)."""

    __slots__ = (
        "base_env",
        "job",
        "limits",
        "seed",
        "tmp",
        "guard",
        "timer",
        "loader",
        "streams",
        "isolation_problems",
        "set_pdeathsig",
        "layers",
        "canon",
        "dump",
        "module",
        "programs",
        "workspace_roots",
        "scanned",
        "workspace_draws",
        "modules_scanned",
        "input_codes",
        "as_limit",
    )

    # set by job.setup
    isolation_problems: list[str]
    set_pdeathsig: Callable[[], None] | None
    layers: Layers
    canon: Top
    dump: Dump
    # set by job.run, once the module and the programs are loaded
    module: types.ModuleType
    programs: list[loading.Program]
    workspace_roots: tuple[str, ...]
    scanned: set[str | None]
    workspace_draws: bool
    modules_scanned: tuple[int, str] | None
    # set by Leader.before_forks, before each batch of forks
    as_limit: int

    def __init__(self, job: Job) -> None:
        # the worker's scrubbed environment, before anything of the job runs: each child starts
        # from it again, whatever the module context (a load_dotenv()) put in os.environ
        self.base_env = dict(os.environ)
        self.job = job
        self.limits = lim = Limits(job.get("limits") or {})
        self.seed = int(job.get("seed", 0))
        self.input_codes: list[tuple[str, Any] | None] = []  # see loading.prepare_inputs (none yet)
        self.tmp: str = job["tmp"]
        self.guard: guard.Guard = {"mode": guard.LOAD, "root": os.path.realpath(self.tmp)}
        self.timer = Timer()
        workspace = (job.get("module") or {}).get("sys_path") or ()
        self.loader = loading.Loader(
            self.timer, lim.load_timeout, lim.prog_load_timeout, workspace, job.get("site_dirs") or ()
        )
        self.streams: tuple[io.TextIOWrapper, io.TextIOWrapper, io.TextIOWrapper] = guard.plain_streams()
