"""What the executor runs (programs on top of a module context, within limits), and what it
reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coherence.engine.outcomes import Outcome


@dataclass(frozen=True)
class ModuleContext:
    """The module every program is loaded on top of.

    The worker executes ``source`` as module ``module_name`` (the way pytest imports a test module,
    with ``sys_path`` prepended), then each program's own source is executed in a copy of that
    namespace.  ``source=None`` means an empty module (corpus replay: candidates are standalone).
    """

    source: str | None = None
    filename: str = "<module>"
    module_name: str = "coherence_target"
    sys_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Program:
    """One implementation of ``entry_point``.

    ``source=None`` means: use the function the module context itself defines (the user's own
    function).  Otherwise ``source`` (an alternative, possibly with imports and helpers) is executed
    in a copy of the module namespace and its ``entry_point`` is called.
    """

    entry_point: str
    source: str | None = None
    label: str = ""  # for messages: "yours", "alternative 3", ...
    # A method of class ``owner`` in the module context: the alternative takes the method's place
    # in that class (in its own process), and an instance method is called on ``owner()``.
    owner: str | None = None
    method_kind: str | None = None  # "instance" | "static" | "class"
    origin: str = ""  # who wrote it: the model of an alternative; "" for the user's function


@dataclass(frozen=True)
class ExecutionLimits:
    call_timeout: float = 1.0  # seconds of wall time per call
    program_budget: float = 20.0  # seconds of wall time for one program over all inputs
    # Seconds of wall time for all the programs of one run together, shared out over the parallel
    # slots: each program's budget is min(program_budget, max(1, run_budget * slots / programs)).
    # None: no cap beyond program_budget.
    run_budget: float | None = None
    # CPU seconds for all the programs of one run together on the inputs past their first
    # TAIL_HEAD, an equal share each whatever the slots (see coherence_worker/child.py, "the tail
    # budget"): ``program_tail`` is one program's share.  None: no tail budget.
    tail_budget: float | None = None
    program_tail: float | None = None
    memory_mb: int = 1024  # address-space limit of each program's process
    file_size_mb: int = 16  # largest file a program may write (in its temp cwd)
    jobs: int = 0  # programs run at once; 0 = number of CPUs
    load_timeout: float = 30.0  # seconds to import the module context (and what programs import)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass
class ExecutionReport:
    outcomes: list[list[Outcome]]  # [program][input], always m x n
    rerun: list[Outcome]  # rerun_program on the `rerun` inputs, fresh process, other seeds
    load_errors: list[str | None]  # per program: why it could not be loaded
    module_error: str | None  # the module context failed to load (every outcome is LoadError)
    sandbox: str  # "bwrap" | "guard"
    seconds: float
    timeouts: list[int]  # per program: number of Timeout outcomes
    python: str = ""  # the interpreter that ran the programs (executable)
    python_version: str = ""
    diagnostics: list[str] = field(default_factory=list)  # worker-side problems (not the user's)
    programs_run: int = 0  # distinct programs that ran (copies of one program run once)
    # CPU seconds of the workers' jobs (leaders and program children), when every run reported it
    # (warm workers do; one-shot workers do not): unlike ``seconds``, free of the time the machine
    # gave to something else
    cpu_seconds: float | None = None
