"""Benchmark labels, run in the sandbox: pass/fail on the benchmark's own tests, the reference
solution, the pointwise error, and the test file that seeds ``--seeds tests``.

Pass/fail: each candidate becomes one program defining a zero-argument ``__coherence_label__``
that runs the benchmark's tests against it; the Executor calls it on the input ``((), {})``.

- HumanEval: ``<candidate>`` + ``<test>`` + ``def __coherence_label__(): check(<entry_point>)``.
  When the test uses a helper the prompt defines (``poly``, ``encode_cyclic``, ...) and the
  candidate does not, the prompt is put in front of the candidate (the candidate's definitions win).
- MBPP: ``<test_imports>`` + ``<candidate>`` + one function per assert of ``test_list``;
  ``__coherence_label__`` runs each and returns a list with ``True`` (passed), ``False`` (assertion
  failed) or the exception type name, so a failing task shows which assert failed.

A candidate passes when the call returns normally (HumanEval) or every assert passed (MBPP).
A raise, a timeout or a load error is a failure.  Labels never reach the estimator.
"""

from __future__ import annotations

import ast
import builtins
import threading
from dataclasses import dataclass, field

from coherence.engine import syntax
from coherence.engine.execution import ExecutionLimits, ModuleContext, Program
from coherence.engine.execution.executor import BUDGET_EXCEEDED, Executor
from coherence.engine.outcomes import Outcome, outcomes_equal
from coherence.eval.corpus import HUMANEVAL, BenchmarkTask
from coherence.eval.verdicts import verified

LABEL_ENTRY = "__coherence_label__"
LABEL_INPUT = "((), {})"
_BUILTINS = set(dir(builtins))


# ---------------------------------------------------------------------------------------------
# programs
# ---------------------------------------------------------------------------------------------


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _free_names(source: str) -> set[str]:
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return set()
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return used - _defined_names(tree) - _BUILTINS


def _defines(source: str, names: set[str]) -> bool:
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return False
    top = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    top.add(t.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update(a.asname or a.name.split(".")[0] for a in node.names)
    return names <= top


def label_source(task: BenchmarkTask, code: str, entry_point: str) -> str:
    """A program defining ``__coherence_label__()``: the benchmark's tests run on ``code``."""
    if task.benchmark == HUMANEVAL:
        test = task.test or ""
        needs = _free_names(test) - {entry_point}
        prefix = ""
        if needs and not _defines(code, needs) and task.prompt:
            prefix = task.prompt.rstrip() + "\n    pass\n\n\n"  # helpers of the prompt; its stub is overridden below
        return f"{prefix}{code}\n\n\n{test}\n\n\ndef {LABEL_ENTRY}():\n    check({entry_point})\n    return True\n"
    lines = [*task.test_imports, "", code, "", ""]
    names = []
    for i, assertion in enumerate(task.test_list):
        fn = f"__coherence_assert_{i}"
        names.append(fn)
        body = "\n".join("    " + ln for ln in assertion.splitlines())
        lines.append(f"def {fn}():\n{body}\n")
    lines.append(
        f"def {LABEL_ENTRY}():\n"
        f"    results = []\n"
        f"    for fn in ({', '.join(names)}{',' if len(names) == 1 else ''}):\n"
        f"        try:\n"
        f"            fn()\n"
        f"            results.append(True)\n"
        f"        except AssertionError:\n"
        f"            results.append(False)\n"
        f"        except Exception as exc:\n"
        f"            results.append(type(exc).__name__)\n"
        f"    return results\n"
    )
    return "\n".join(lines)


def test_file_source(task: BenchmarkTask, entry_point: str) -> str:
    """The benchmark's tests as a workspace test file that calls ``entry_point`` by name, for the
    engine's test-seed harvester (``--seeds tests``).  HumanEval's ``candidate`` is renamed."""
    if task.benchmark == HUMANEVAL:
        try:
            tree = syntax.parse(task.test or "")
        except SyntaxError:
            return ""

        class _Rename(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.Name:
                if node.id == "candidate":
                    node.id = entry_point
                return node

            def visit_arg(self, node: ast.arg) -> ast.arg:
                if node.arg == "candidate":
                    node.arg = entry_point
                return node

        tree = _Rename().visit(tree)
        return ast.unparse(tree) + f"\n\n\ncheck({entry_point})\n"
    return "\n".join([*task.test_imports, "", *task.test_list]) + "\n"


# ---------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------


@dataclass
class LabelResult:
    passed: list[bool]  # per candidate given
    reference_passed: bool | None
    details: list[str] = field(default_factory=list)  # per candidate: "ok", "raises X", MBPP per-assert
    reference_detail: str = ""
    sandbox: str = ""
    retries: int = 0  # label runs repeated because the worker itself failed


def _verdict(task: BenchmarkTask, outcome: Outcome) -> tuple[bool, str]:
    if outcome.kind != "ok":
        return False, f"raises {outcome.error}"
    if task.benchmark == HUMANEVAL:
        return True, "ok"
    value = outcome.value
    items = value[1] if isinstance(value, list) and value[:1] == ["L"] else None
    if items is None:
        return False, f"unexpected {outcome.render(60)}"
    marks = []
    for it in items:
        if it == ["B", True]:
            marks.append("pass")
        elif it == ["B", False]:
            marks.append("fail")
        elif isinstance(it, list) and it[:1] == ["S"]:
            marks.append(str(it[1]))
        else:
            marks.append("?")
    ok = bool(marks) and all(m == "pass" for m in marks)
    return ok, "ok" if ok else "asserts: " + ", ".join(marks)


def run_labels(
    executor: Executor,
    task: BenchmarkTask,
    codes: list[str | None],
    entry_point: str,
    *,
    with_reference: bool = True,
    cancel: threading.Event | None = None,
    retries: int = 2,
) -> LabelResult:
    """Pass/fail of each code (``None``: no usable program, a failure) and of the reference."""
    programs: list[Program] = []
    slots: list[int | None] = []
    for code in codes:
        if code is None:
            slots.append(None)
            continue
        slots.append(len(programs))
        programs.append(Program(LABEL_ENTRY, label_source(task, code, entry_point), f"label {len(slots) - 1}"))
    ref_slot = None
    if with_reference and task.reference.strip():
        ref_slot = len(programs)
        programs.append(Program(LABEL_ENTRY, label_source(task, task.reference, entry_point), "label reference"))
    if not programs:
        return LabelResult([False] * len(codes), None, ["no program"] * len(codes))
    # The module context is empty, so a module error is the infrastructure's (a worker that died
    # or exited early under load), never the candidate's: run again, up to ``retries`` times.
    for attempt in range(retries + 1):  # noqa: B007 - read after the loop: the retries it took
        report = executor.run(ModuleContext(), programs, [LABEL_INPUT], cancel=cancel)
        if not report.module_error:
            break
    retried = attempt
    passed, details = [], []
    for slot in slots:
        if slot is None:
            passed.append(False)
            details.append("no program")
            continue
        err = report.load_errors[slot]
        if err:
            passed.append(False)
            details.append(f"load error: {err.splitlines()[0][:200]}")
            continue
        ok, detail = _verdict(task, report.outcomes[slot][0])
        passed.append(ok)
        details.append(detail)
    ref_ok, ref_detail = None, ""
    if ref_slot is not None:
        err = report.load_errors[ref_slot]
        if err:
            ref_ok, ref_detail = False, f"load error: {err.splitlines()[0][:200]}"
        else:
            ref_ok, ref_detail = _verdict(task, report.outcomes[ref_slot][0])
    return LabelResult(passed, ref_ok, details, ref_detail, report.sandbox, retried)


def label_executor(timeout: float = 10.0, python: str | None = None, sandbox: str = "auto", jobs: int = 0) -> Executor:
    return Executor(
        python=python,
        limits=ExecutionLimits(call_timeout=timeout, program_budget=timeout + 5.0, jobs=jobs),
        sandbox=sandbox,
    )


# ---------------------------------------------------------------------------------------------
# pointwise error
# ---------------------------------------------------------------------------------------------


def _value_only(o: Outcome) -> Outcome:
    return Outcome.returned(o.value) if o.kind == "ok" else o


@dataclass
class PointwiseError:
    error: float | None  # share of counted inputs where the program differs from the reference
    error_value: float | None  # same, comparing return values only (argument mutation ignored)
    counted: int  # inputs where the reference returned normally
    wrong: list[int]  # indices of the inputs where the program differs (full outcome equality)


def pointwise_error(program: list[Outcome], reference: list[Outcome]) -> PointwiseError:
    """The papers' pointwise error of one program against the reference, on the same inputs;
    inputs where the reference raises (or times out) are excluded, and so are inputs the program
    never reached because it used up its time budget (``BudgetExceeded``: no outcome at all)."""
    counted = 0
    wrong: list[int] = []
    wrong_value = 0
    for x, (o, r) in enumerate(zip(program, reference)):
        if r.kind != "ok" or o.error == BUDGET_EXCEEDED:
            continue
        counted += 1
        if not outcomes_equal(o, r):
            wrong.append(x)
            if not outcomes_equal(_value_only(o), _value_only(r)):
                wrong_value += 1
    if not counted:
        return PointwiseError(None, None, 0, [])
    return PointwiseError(len(wrong) / counted, wrong_value / counted, counted, wrong)


# ---------------------------------------------------------------------------------------------
# the label trust is calibrated on
# ---------------------------------------------------------------------------------------------


def right(record: dict) -> bool:
    """Whether candidate 0 was right, as trust means it: it passes the benchmark's tests, and the
    reference solution does not side with the alternatives on the counterexample the user was
    shown (the complement of a verified diagnostic, ``eval.verdicts.verified``)."""
    return not verified(record)
