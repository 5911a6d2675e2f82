"""One task of the eval: candidate 0 against its alternatives through the engine's ``Checker``,
the benchmark's labels on the side.

1. every candidate 0..m-1 goes through ``extract_program`` (the replay provider's reading);
2. candidate 0 becomes the Target (``target_for``; MBPP's task sentence stands in for a docstring);
   candidates 1..m-1 are handed to ``Checker.check`` as its ``samples=`` override;
3. inputs: the Checker generates them itself.  ``--seeds signature`` gives it no workspace (IDE mode:
   signature and docstring only).  ``--seeds tests`` gives it a private workspace holding the
   benchmark's tests as ``test_benchmark.py`` (HumanEval's ``candidate`` renamed to the function),
   which the engine's test-seed harvester reads: the test inputs become seeds and mutation parents;
4. the executor the Checker uses is wrapped so that its first run (the m x n matrix) also runs the
   reference solution on the same inputs, in the same worker; that row is taken out before the
   Checker sees the report, so the estimator never sees it.  It gives the pointwise error;
5. labels: every candidate and the reference on the benchmark's own tests (``labels.run_labels``).

``evaluate_task`` is all a backend (``eval/backends``) runs: it depends on nothing but its
arguments, so a task gives the same record in a local thread or on a Ray node.
"""

import asyncio
import platform
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.errors import CoherenceError
from coherence.engine.execution import ExecutionLimits, Program
from coherence.engine.execution.executor import ExecutionReport, Executor, input_sources
from coherence.engine.inputs import Input
from coherence.engine.markers import target_for
from coherence.engine.outcomes import label_matrix, outcomes_equal
from coherence.engine.sampling import SampleSet, extract_program
from coherence.eval.corpus import BenchmarkTask, SampleTask, safe_name
from coherence.eval.labels import label_executor, pointwise_error, run_labels, test_file_source

SEED_MODES = ("signature", "tests")
CHECKED = ("coherent", "incoherent", "nondeterministic")
_MISSING_MODULE = re.compile(r"^(ModuleNotFoundError|ImportError)\b")
_WORKER_FAILURE = re.compile(r"the worker (died|exited|did not finish)")
RECORD_VERSION = 1


# the engine's time budgets are the eval's defaults too, so that eval measures what users run
_ENGINE = CheckConfig()


@dataclass(frozen=True)
class EvalOptions:
    samples: int = 10  # m, candidate 0 included
    inputs: int = 1000  # n
    seeds: str = "signature"
    jobs: int = 1
    seed: int = 0
    call_timeout: float = 1.0
    program_budget: float = 20.0
    run_budget: float | None = _ENGINE.run_budget  # all programs of a task together
    tail_budget: float | None = _ENGINE.tail_budget  # CPU seconds past each program's first 100 inputs
    input_budget: float = 2.0
    label_timeout: float = 10.0
    sandbox: str = "auto"
    python: str | None = None
    keep_matrices: bool = False  # also write each task's outcome matrix (matrices.jsonl)

    def settings(self) -> dict:
        """What must match for a resumed run to be the same run."""
        d = asdict(self)
        for k in ("jobs", "python", "sandbox", "keep_matrices"):
            d.pop(k, None)
        return d


# ---------------------------------------------------------------------------------------------
# the recording executor
# ---------------------------------------------------------------------------------------------


class _ReferenceExecutor(Executor):
    """Runs like a plain Executor, except that after the first run the benchmark's ``reference``
    runs alone on the same inputs; ``first`` is that run's report with the reference's row
    appended, and the caller gets the run without it.

    It also drops the module's extra ``sys_path`` (the ``--seeds tests`` workspace is for seed
    harvesting only, and the corpus programs import nothing from it)."""

    def __init__(self, reference: Program | None, **kw):
        super().__init__(**kw)
        self.reference = reference
        self.first: ExecutionReport | None = None
        self.first_inputs: list[str] = []
        # the inputs themselves, when the checker handed Input objects (their origins are recorded)
        self.first_values: list[Input] | None = None

    def prepare(self, module, programs, **kw):  # same contract as Executor.prepare
        module = replace(module, sys_path=())
        if self.first is not None or self.reference is None:
            return super().prepare(module, programs, **kw)
        return _FirstRun(self, module, kw.get("seed", 0), super().prepare(module, programs, **kw))


class _FirstRun:
    """The checker's first run, then the reference's own run on its inputs (see
    _ReferenceExecutor).  The reference used to be one more program of the first run, whose
    programs then had the budgets of m + 1 programs and shared the job's slots with it: under one
    slot (``--jobs`` as many as the cores) HumanEval/103 (Llama 3.1 8B) kept no input, where the
    same run without the reference kept 65, as a user's check would."""

    def __init__(self, owner: _ReferenceExecutor, module, seed: int, prepared):
        self.owner = owner
        self.module = module
        self.seed = seed
        self.prepared = prepared

    def run(self, inputs, **kw):
        owner = self.owner
        report = self.prepared.run(inputs, **kw)
        owner.first = report  # set first: the reference's run below is a plain one
        owner.first_inputs = input_sources(inputs)
        owner.first_values = list(inputs) if all(isinstance(i, Input) for i in inputs) else None
        assert owner.reference is not None  # (prepare made this run for it)
        # a failure to load shows in its row; a cancelled check raises here as in the first run
        ref = owner.run(
            self.module, [owner.reference], inputs, seed=self.seed, cancel=kw.get("cancel"), last=kw.get("last", ())
        )
        row, error, timeouts = ref.outcomes[0], ref.load_errors[0], ref.timeouts[0]
        owner.first = replace(
            report,
            outcomes=[*report.outcomes, row],
            load_errors=[*report.load_errors, error],
            timeouts=[*report.timeouts, timeouts],
        )
        return report

    def start_rerun(self, inputs):
        """The checker's early nondeterminism re-run (``PreparedRun.start_rerun``): without it, the
        eval's first run re-ran its inputs during the run, and logged a failure per task."""
        return self.prepared.start_rerun(inputs)

    @property
    def pending(self):
        return self.prepared.pending

    def close(self):
        self.prepared.close()


class _NoProvider:
    """The eval always passes ``samples=``; asking this for more is a bug."""

    model = "replay"
    cacheable = False
    temperature = 0.0

    async def generate(self, spec, count):  # pragma: no cover - defensive
        raise CoherenceError("coherence eval: the checker asked for samples it was not given")


# ---------------------------------------------------------------------------------------------
# one task
# ---------------------------------------------------------------------------------------------


def evaluate_task(
    st: SampleTask,
    bt: BenchmarkTask,
    opts: EvalOptions,
    *,
    cancel: threading.Event | None = None,
    paper: dict | None = None,
    workers: int = 0,
) -> dict[str, Any]:
    """Evaluate one task; returns its ``tasks.jsonl`` record.  Raises ``CheckCancelled`` when
    ``cancel`` is set mid-way (nothing is recorded then)."""
    started = time.monotonic()
    m = opts.samples
    name = st.entry_point
    extracted = [extract_program(c, name) for c in st.candidates[:m]]
    if st.origins:  # a panel: each alternative carries the model that wrote it
        extracted = [replace(s, model=o) for s, o in zip(extracted, st.origins)]
    codes = [s.code if s.ok else None for s in extracted]
    rec: dict[str, Any] = {
        "version": RECORD_VERSION,
        "benchmark": st.benchmark,
        "model": st.model,
        "task_id": st.task_id,
        "entry_point": name,
        "seeds": opts.seeds,
        "samples_requested": m,
        "inputs_requested": opts.inputs,
        "candidates_available": len(st.candidates),
        "status": "error",
        "reason": "",
        "host": platform.node(),  # which machine ran it (a Ray node, or this one)
    }
    if paper:
        rec["paper"] = paper
    if st.panel:
        rec["panel"] = st.panel
        rec["alternative_models"] = dict(Counter(st.origins[1:m] if st.origins else []))

    # -- labels ------------------------------------------------------------------------------
    t_lab = time.monotonic()
    lab = run_labels(
        label_executor(opts.label_timeout, opts.python, opts.sandbox, workers),
        bt,
        codes,
        name,
        cancel=cancel,
    )
    rec["passed"] = lab.passed
    rec["label_details"] = lab.details
    rec["reference_passed"] = lab.reference_passed
    rec["candidate0_pass"] = bool(lab.passed[0]) if lab.passed else False
    rec["label_seconds"] = round(time.monotonic() - t_lab, 3)
    if lab.retries:
        rec["label_retries"] = lab.retries

    # -- the check ---------------------------------------------------------------------------
    t_chk = time.monotonic()
    code0 = codes[0] if codes else None
    if codes and code0 is None:
        s0 = extracted[0]
        rec["reason"] = f"candidate 0 is not usable ({s0.status}: {s0.detail})".strip()
        return _finish(rec, started, t_chk)
    if code0 is None:
        rec["reason"] = "no candidates"
        return _finish(rec, started, t_chk)
    try:
        target = target_for(code0, name, f"{safe_name(st.task_id)}.py", docstring=st.description or None)
    except (SyntaxError, LookupError) as exc:
        rec["reason"] = f"candidate 0: {exc}"
        return _finish(rec, started, t_chk)

    reference = Program(name, bt.reference, "reference") if bt.reference.strip() else None
    executor, result, attempt = _check(target, st, bt, extracted[1:], reference, opts, cancel, workers)
    rec["check_retries"] = attempt
    # The inputs the checker ran (for their origins), as the executor got them.
    inputs = executor.first_values if executor.first is not None else None

    rec.update(
        status=result.status,
        reason=result.reason,
        samples=result.samples,
        inputs=result.inputs,
        incoherence=result.incoherence,
        incoherence_interval=result.incoherence_interval,
        disagreement=result.disagreement,
        sde=result.sde,
        dsde=result.dsde,
        trust=result.trust,
        trust_map=result.trust_map,
        clusters=result.cluster_sizes,
        cluster_models=[c.models for c in result.clusters],
        user_cluster=result.user_cluster,
        pac_bound=result.pac_bound,
        sampling=result.sampling,
        timeouts=result.timeouts,
        inputs_over_budget=result.inputs_over_budget,
        too_slow=result.too_slow,
        load_errors=len(result.load_errors),
        sandbox=result.sandbox,
    )
    rec.update(
        severity=result.severity, evidence=result.evidence, domain=result.domain, outside_domain=result.outside_domain
    )
    if result.counterexample is not None:
        ce = result.counterexample
        rec["counterexample"] = {"call": ce.call, "yours": ce.yours, "theirs": ce.theirs, "summary": ce.summary()}
        if reference is not None and result.disagreeing_code:
            rec["counterexample"]["reference"] = verify_counterexample(executor, target, result, reference)
    if inputs is not None:
        rec["input_origins"] = dict(Counter(i.origin for i in inputs))

    # Which candidates took part: candidate 0, the valid alternatives in order, minus those the
    # checker dropped for importing a module that is not installed.
    valid_idx = [i for i, s in enumerate(extracted) if i > 0 and s.ok][: m - 1]
    rows = [0] + valid_idx  # candidate index of each program row of the first run
    used_rows = list(range(len(rows)))
    if executor.first is not None:
        errs = executor.first.load_errors
        used_rows = [r for r in used_rows if r == 0 or not (errs[r] and _MISSING_MODULE.match(errs[r]))]
    rec["used"] = [rows[r] for r in used_rows]
    rec["all_used_pass"] = all(lab.passed[c] for c in rec["used"]) if lab.passed else False

    if executor.first is not None and reference is not None and result.status in CHECKED:
        _pointwise(rec, executor.first, executor.first_inputs, used_rows, inputs, name)
        if opts.keep_matrices:
            rec["_matrix"] = outcome_matrix(executor.first, [rows[r] for r in used_rows], used_rows, inputs)
            if inputs is not None:  # the stated domain, for replays of the severity rule
                from coherence.engine.verdict.scoring import stated_domain

                domain = stated_domain(target, inputs)
                rec["_matrix"]["inside"] = "".join("1" if domain.empty or domain.contains(i) else "0" for i in inputs)
                # each input's source (cut at 300 characters), for replays of rules that look at
                # the arguments themselves (``stated.degenerate``)
                rec["_matrix"]["inputs"] = [i.source()[:300] for i in inputs]
    return _finish(rec, started, t_chk)


def _check(target, st: SampleTask, bt: BenchmarkTask, alternatives, reference, opts: EvalOptions, cancel, workers: int):
    """The engine's check of candidate 0 against the alternatives, through the recording executor.
    Returns (the executor, the result, the retries it took)."""
    m = opts.samples
    workspace = None
    if opts.seeds == "tests":
        workspace = tempfile.mkdtemp(prefix="coherence-eval-seeds-")
        Path(workspace, "test_benchmark.py").write_text(test_file_source(bt, target.name), encoding="utf-8")
    try:
        config = CheckConfig(
            samples=m,
            inputs=opts.inputs,
            seed=opts.seed,
            call_timeout=opts.call_timeout,
            program_budget=opts.program_budget,
            run_budget=opts.run_budget,
            tail_budget=opts.tail_budget,
            input_budget=opts.input_budget,
            sandbox=opts.sandbox,
            python=opts.python,
            workspace=workspace,
            # eval measures the metrics of every task, however few alternatives it kept: the
            # refusal to call thin evidence coherent is for users' verdicts
            min_alternatives=1,
        )
        samples = SampleSet(samples=alternatives, requested=m - 1, failures=[], model=f"replay:{st.model}")
        # A worker that dies or exits early while loading (under heavy load) is the
        # infrastructure's failure, not candidate 0's: check again, at most twice more.
        for attempt in range(3):  # noqa: B007 - returned: the retries it took
            executor = _ReferenceExecutor(
                reference,
                python=opts.python,
                limits=ExecutionLimits(
                    call_timeout=opts.call_timeout,
                    program_budget=opts.program_budget,
                    run_budget=opts.run_budget,
                    tail_budget=opts.tail_budget,
                    jobs=workers,
                ),
                sandbox=opts.sandbox,
            )
            checker = Checker(config, provider=_NoProvider(), executor=executor)
            result = asyncio.run(checker.check(target, cancel=cancel, samples=samples))
            if not (result.status == "error" and _WORKER_FAILURE.search(result.reason or "")):
                break
    finally:
        if workspace:
            shutil.rmtree(workspace, ignore_errors=True)
    return executor, result, attempt


def verify_counterexample(executor: Executor, target, result, reference: Program) -> str:
    """Run the reference solution on the counterexample the user would see, in the sandbox, beside
    yours and the program it is set against: "theirs" (the reference agrees with the alternatives),
    "yours", "neither", or "rejects" (the reference raises there: the input is out of contract).
    "unknown" when the call cannot be rebuilt or the run fails."""
    from coherence.engine.check import module_context_for
    from coherence.engine.verdict.acceptance import input_from_call

    inp = input_from_call(target, result.counterexample.call)
    if inp is None:
        return "unknown"
    name = target.name
    programs = [Program(name, None, "yours"), Program(name, result.disagreeing_code, "theirs"), reference]
    module = replace(module_context_for(target, None), sys_path=())
    try:
        report = executor.run(module, programs, [inp])
    except Exception:  # noqa: BLE001 - a label, not the check: record that it is missing
        return "unknown"
    if report.module_error or any(report.load_errors):
        return "unknown"
    yours, theirs, ref = (row[0] for row in report.outcomes)
    if ref.kind != "ok":
        return "rejects"
    if outcomes_equal(ref, theirs):
        return "theirs"
    return "yours" if outcomes_equal(ref, yours) else "neither"


_ORIGIN_CODE = {"doctest": "d", "test": "t", "default": "f", "annotation": "a", "mutation": "m", "shrink": "s"}


def outcome_matrix(report: ExecutionReport, candidates: list[int], used_rows: list[int], inputs) -> dict:
    """A compact copy of the outcome matrix of the programs that took part (and the reference,
    last), for offline what-if analyses of the comparison rules (``benchmarks/eval_whatif.py``).

    ``labels[i][x]``: equal labels = equal outcomes at input x (``outcomes_equal``, closed
    transitively, over these rows); ``errors[i][x]``: -1 when the call returned, else an index into
    ``error_names``; ``origins``: one letter per input (d doctest, t test, f default, a annotation,
    m mutation); ``inside`` (added by the caller): one character per input, 1 when it lies inside
    the stated domain."""
    rows = [report.outcomes[r] for r in used_rows] + [report.outcomes[-1]]
    labels = label_matrix(rows)
    names: dict[str, int] = {}
    errors = [[-1 if o.kind == "ok" else names.setdefault(o.error or "", len(names)) for o in row] for row in rows]
    return {
        "candidates": candidates,
        "labels": labels.tolist(),
        "errors": errors,
        "error_names": list(names),
        "origins": "".join(_ORIGIN_CODE.get(i.origin, "?") for i in inputs) if inputs is not None else None,
    }


def _pointwise(rec: dict, report: ExecutionReport, sources: list[str], used_rows: list[int], inputs, name: str) -> None:
    outcomes = report.outcomes
    ref = outcomes[-1]
    if report.load_errors[-1]:
        rec["reference_error"] = report.load_errors[-1].splitlines()[0][:200]
        return
    pw = pointwise_error(outcomes[0], ref)
    # the reference's calls that ran out of time (its row is not in the check's ``timeouts``): the
    # inputs they leave out of ``error`` depend on the machine's load
    rec["reference_timeouts"] = report.timeouts[-1] if report.timeouts else 0
    rec["error"] = pw.error
    rec["error_value"] = pw.error_value
    rec["error_inputs"] = pw.counted
    rec["reference_raises"] = len(ref) - pw.counted
    per_prog = [e for r in used_rows if (e := pointwise_error(outcomes[r], ref).error) is not None]
    rec["error_mean_candidates"] = sum(per_prog) / len(per_prog) if per_prog else None
    rec["candidate_errors"] = per_prog
    rec["wrong_inputs"] = len(pw.wrong)
    if not pw.wrong:
        return
    others = [r for r in used_rows if r != 0]
    flagged = [x for x in pw.wrong if any(not outcomes_equal(outcomes[r][x], outcomes[0][x]) for r in others)]
    rec["wrong_flagged"] = len(flagged)  # wrong inputs where some alternative disagrees with candidate 0
    if inputs is not None:
        rec["wrong_origins"] = dict(Counter(inputs[x].origin for x in pw.wrong))

    # One example input where candidate 0 is wrong: prefer both returning, then the smallest.
    def key(x):
        size = inputs[x].size() if inputs is not None else len(sources[x])
        return (outcomes[0][x].kind != "ok", size, x)

    x = min(pw.wrong, key=key)
    agree = sum(1 for r in others if outcomes_equal(outcomes[r][x], outcomes[0][x]))
    example = {
        "candidate0": outcomes[0][x].render(160),
        "reference": ref[x].render(160),
        "alternatives_agreeing": agree,
        "alternatives": len(others),
    }
    if inputs is not None:
        example["call"] = inputs[x].call(name)[:300]
        example["origin"] = inputs[x].origin
    else:
        example["input"] = sources[x][:300]
    rec["error_example"] = example


def _finish(rec: dict, started: float, t_chk: float) -> dict:
    rec["check_seconds"] = round(time.monotonic() - t_chk, 3)
    rec["seconds"] = round(time.monotonic() - started, 3)
    rec["complete"] = True
    return rec
