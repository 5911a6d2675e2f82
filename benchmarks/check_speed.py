"""Time full checks (m programs x n inputs, sandboxed) against the same calls run bare in-process.

Not a test: it prints figures.  Needs ../shared/corpus.

    python benchmarks/check_speed.py [--tasks 20] [--samples 10] [--inputs 1000] [--sandbox auto] [--cold]

For each of the first --tasks HumanEval tasks of one model's recorded samples, candidate 0 plays
the user's function and candidates 1..m-1 the alternatives (the replay provider).  "check" is the
wall time of ``Checker.check`` (input generation, sandboxed execution, metrics, counterexample),
"cpu s" its CPU seconds (as below);
"re-check" is a second check of the same function, with its inputs cached as after an edit of the
body in the editor (the LSP caches results by body, so this re-runs everything but the inputs);
"bare" is the wall time of calling the same m programs on the same inputs in this process with no
isolation at all (every sample, where the check runs copies of one program once: the count is
printed).  The ratio check/bare is the sandbox's price.  With --cold, each task is also
checked with one-shot workers (no warm pool), right after the warm check, so both see the same load.
With --input-cost 1,0.5,0, each first check is run again with a stand-in for its input stage
that spends the given fraction of the CPU time generating, ordering and packing its inputs takes
(measured alone, per task), then hands over the same inputs: what a cheaper generator would give.
With --overlap, each first check is run again by a fresh checker on the same workers with its
inputs already made (what it would take if generating them cost nothing), and once more with a
generation of them running beside it in this process (a perfect overlap of generation and run).

Wall time on a shared machine includes whatever the machine (or its hypervisor) gave to others,
so the same figures are also printed in CPU seconds: the check's own process plus the sandbox's
jobs (as the warm workers report them), against bare's CPU time.  On this machine's cores, the
check cannot take less wall time than its CPU time divided by the number of cores, or rather by
how much faster the cores together get through CPU-bound work than one core alone: on a virtual
machine that is less than their number, so it is measured (``parallel_speedup``) and printed.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig
from coherence.engine.execution.executor import cpu_count
from coherence.engine.inputs.generate import generate_inputs
from coherence.engine.markers import target_for
from coherence.engine.sampling.replay import ReplayProvider

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CORES = cpu_count()


class _CallTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _CallTimeout


def _burn(loops: int) -> None:
    total = 0
    for i in range(loops):
        total += i


def parallel_speedup(workers: int = CORES, loops: int = 3_000_000) -> float:
    """How many times more pure-Python work ``workers`` processes get done at once than one:
    ``workers`` on dedicated cores, less where cores are shared (hypervisor steal, SMT)."""
    start = time.perf_counter()
    _burn(loops)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    pids = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            try:
                _burn(loops)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    together = time.perf_counter() - start
    return workers * alone / together


def bare_seconds(
    name: str, programs: list[str], inputs: list[str], call_timeout: float, limit: float = 120.0
) -> tuple[float, float] | None:
    """(wall, CPU) seconds of ``_bare`` in a forked copy of this process, or None when it hangs: a
    call stuck in C (``sum(range(2**31))``) ignores SIGALRM, and that must not stop the benchmark."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, b"%r %r" % _bare(name, programs, inputs, call_timeout))
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
        return None
    data = os.read(r, 200)
    os.close(r)
    if not data:
        return None
    wall, cpu = data.split()
    return float(wall), float(cpu)


def _bare(name: str, programs: list[str], inputs: list[str], call_timeout: float) -> tuple[float, float]:
    """The same calls with no sandbox: exec each program here and call it on every input."""
    signal.signal(signal.SIGALRM, _alarm)
    compiled = [compile(src, "<input>", "eval") for src in inputs]
    devnull = open(os.devnull, "w")  # noqa: SIM115 - closed after the loop, once
    start = time.perf_counter()
    cpu = time.process_time()
    for source in programs:
        ns: dict = {"__name__": "bare"}
        old = sys.stdout
        sys.stdout = devnull
        try:
            exec(compile(source, "<program>", "exec"), ns)
            fn = ns[name]
        except BaseException:
            continue
        finally:
            sys.stdout = old
        for code in compiled:
            try:
                args, kwargs = eval(code, ns)
                old = sys.stdout
                sys.stdout = devnull
                signal.setitimer(signal.ITIMER_REAL, call_timeout)
                try:
                    fn(*args, **kwargs)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    sys.stdout = old
            except BaseException:
                pass
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    devnull.close()
    return elapsed, cpu


async def _check_with_inputs_made(checker: Checker, config: CheckConfig, provider, target, *, beside: bool) -> float:
    """Seconds of a first check (a fresh checker on the same workers) whose inputs are already
    made: what a check would take if input generation cost nothing.  ``beside``: a generation of
    the same inputs runs in a thread meanwhile, as if it overlapped the run perfectly, in this
    process and on these cores."""
    fresh = Checker(config, provider=provider, executor=checker.executor)
    fresh._inputs_cache = dict(checker._inputs_cache)  # the inputs the first check made
    spent = None
    if beside:
        again = Checker(config, provider=provider, executor=checker.executor)
        spent = asyncio.ensure_future(asyncio.to_thread(again._inputs_for, target))
    start = time.perf_counter()
    await fresh.check(target)
    if spent is not None:  # a streamed run cannot end before its last input exists
        await spent
    return time.perf_counter() - start


def _burn_cpu(seconds: float) -> None:
    """Pure-Python work for ``seconds`` of this thread's CPU time, holding the interpreter lock
    between its switches as generating inputs does."""
    end = time.thread_time() + seconds
    total = 0
    while time.thread_time() < end:
        for i in range(200):
            total += i


async def _check_with_input_cost(
    checker: Checker, config: CheckConfig, provider, target, fraction: float, stage_cpu: float
) -> float:
    """Seconds of a first check (a fresh checker on the same workers) whose input stage costs
    ``fraction`` of ``stage_cpu``, the CPU time that generating, ordering and packing its inputs
    takes: a stand-in spends that much and hands over the inputs the first check made (the
    re-run's first inputs at once, as a generation makes them first).  What a check would take
    with an input generator that much cheaper."""
    made = checker._inputs_for(target)  # the first check's, from its cache

    def stand_in(_target, early=None):
        if early is not None:
            early.inputs_made(made[0][: early.count])
        _burn_cpu(fraction * stage_cpu)
        return made

    fresh = Checker(config, provider=provider, executor=checker.executor)
    fresh._inputs_for = stand_in  # type: ignore[method-assign]  # the input stage, replaced
    start = time.perf_counter()
    await fresh.check(target)
    return time.perf_counter() - start


def _input_stage_cpu(config: CheckConfig, provider, checker: Checker, target) -> float:
    """CPU seconds of one input stage for ``target`` (generation, ordering, packing), alone."""
    fresh = Checker(config, provider=provider, executor=checker.executor)
    start = time.thread_time()
    fresh._inputs_for(target)
    return time.thread_time() - start


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gpt_4o")
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--inputs", type=int, default=1000)
    ap.add_argument("--sandbox", default="auto")
    ap.add_argument("--cold", action="store_true", help="also time one-shot workers (no warm pool)")
    ap.add_argument(
        "--overlap",
        action="store_true",
        help="also time each check with its inputs already made, and with a generation's CPU spent beside it",
    )
    ap.add_argument(
        "--input-cost",
        default="",
        metavar="F,F...",
        help="also time each first check with a stand-in input stage costing each fraction F of its CPU",
    )
    args = ap.parse_args()
    try:
        fractions = [float(f) for f in args.input_cost.split(",") if f.strip()]
    except ValueError:
        print(f"--input-cost takes fractions such as 1,0.5,0: {args.input_cost!r}", file=sys.stderr)
        return 2
    corpus = CORPUS / f"humaneval-{args.model}.jsonl.gz"
    if not corpus.is_file():
        print(f"corpus not found: {corpus}", file=sys.stderr)
        return 2
    with gzip.open(corpus, "rt") as fh:
        rows = [json.loads(line) for line in fh][: args.tasks]
    config = CheckConfig(samples=args.samples, inputs=args.inputs, sandbox=args.sandbox)
    provider = ReplayProvider(corpus, skip=1)
    checker = Checker(config, provider=provider)
    cold_checker = None
    if args.cold:
        from coherence.engine.execution.executor import Executor

        cold_checker = Checker(
            config,
            provider=provider,
            executor=Executor(sandbox=args.sandbox, limits=checker.executor.limits, warm=False),
        )
    checks, bares, ratios, colds, exec_ratios, rechecks, recheck_ratios = [], [], [], [], [], [], []
    made_ratios: list[float] = []
    cost_ratios: dict[float, list[float]] = {f: [] for f in fractions}
    stage_cpus: list[float] = []
    beside_ratios: list[float] = []
    stages: dict[str, list[float]] = {}
    ran = [0, 0]  # programs the checks ran, programs bare ran (copies of one program run once)
    cpus, cpu_ratios, bare_cpus, floors, unknown = [], [], [], [], 0
    print(
        f"{'task':<16} {'status':<16} {'m':>3} {'n':>5} {'check s':>8} {'cpu s':>6} {'re-check':>8} {'bare s':>8} {'ratio':>6}"
        + (f" {'cold s':>8}" if args.cold else "")
    )
    for row in rows:
        name = row["entry_point"]
        try:
            target = target_for(row["candidates"][0], name, f"{row['task_id']}.py", docstring=row.get("description"))
        except (SyntaxError, LookupError) as exc:
            print(f"{row['task_id']:<16} skipped: {exc}")
            continue
        t0 = time.perf_counter()
        own, sandbox, blind = time.process_time(), checker.executor.cpu_used, checker.executor.cpu_unknown
        result = await checker.check(target)
        check_s = time.perf_counter() - t0
        check_cpu = time.process_time() - own + checker.executor.cpu_used - sandbox
        unknown += checker.executor.cpu_unknown - blind
        t0 = time.perf_counter()
        await checker.check(target)
        recheck_s = time.perf_counter() - t0
        rechecks.append(recheck_s)
        cold = ""
        if cold_checker is not None:
            t1 = time.perf_counter()
            await cold_checker.check(target)
            colds.append(time.perf_counter() - t1)
            cold = f" {colds[-1]:>8.3f}"
        made_s = beside_s = None
        if args.overlap:
            made_s = await _check_with_inputs_made(checker, config, provider, target, beside=False)
            beside_s = await _check_with_inputs_made(checker, config, provider, target, beside=True)
        cost_s: dict[float, float] = {}
        if fractions:
            stage_cpus.append(_input_stage_cpu(config, provider, checker, target))
            # alternated per task, so that a drift of the machine's speed does not favour one
            for f in fractions if len(checks) % 2 == 0 else fractions[::-1]:
                cost_s[f] = await _check_with_input_cost(checker, config, provider, target, f, stage_cpus[-1])
        inputs = generate_inputs(
            target.spec,
            args.inputs,
            module_source=target.module_source,
            seed=config.seed,
            time_budget=config.input_budget,
        )
        programs = [row["candidates"][0]] + list(row["candidates"][1 : args.samples])
        bare = bare_seconds(name, programs, [i.source() for i in inputs], config.call_timeout)
        bare_s = None if bare is None else bare[0]
        checks.append(check_s)
        cpus.append(check_cpu)
        if result.extra.get("programs_run"):
            ran[0] += result.extra["programs_run"]
            ran[1] += len(programs)
        timings = result.extra.get("timings", {})
        for stage, seconds in timings.items():
            stages.setdefault(stage, []).append(seconds)
        head = f"{row['task_id']:<16} {result.status:<16} {result.samples:>3} {result.inputs:>5} {check_s:>8.3f} {check_cpu:>6.2f} {recheck_s:>8.3f}"
        if bare_s is None:
            print(f"{head} {'hung':>8} {'-':>6}{cold}")
            continue
        bares.append(bare_s)
        bare_cpus.append(bare[1])
        cpu_ratios.append(check_cpu / max(bare[1], 1e-9))
        floors.append(check_cpu / CORES / max(bare_s, 1e-9))
        ratios.append(check_s / max(bare_s, 1e-9))
        recheck_ratios.append(recheck_s / max(bare_s, 1e-9))
        if made_s is not None and beside_s is not None:
            made_ratios.append(made_s / max(bare_s, 1e-9))
            beside_ratios.append(beside_s / max(bare_s, 1e-9))
        for f, seconds in cost_s.items():
            cost_ratios[f].append(seconds / max(bare_s, 1e-9))
        execution = timings.get("execution")
        if execution is not None:
            exec_ratios.append(execution / max(bare_s, 1e-9))
        print(f"{head} {bare_s:>8.3f} {ratios[-1]:>6.1f}{cold}")
    if not checks:
        return 1
    med_c = statistics.median(checks)
    print()
    print(
        f"tasks {len(checks)} · m={args.samples} · n={args.inputs} · sandbox {result.sandbox} · bare hung on {len(checks) - len(bares)}"
    )
    print(
        f"median seconds per function: check {med_c:.3f}"
        + (f" · one-shot workers {statistics.median(colds):.3f}" if colds else "")
    )
    ordered = sorted(checks)
    print(
        f"slowest checks: p90 {ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]:.2f} s · max {ordered[-1]:.2f} s · total {sum(checks):.1f} s"
    )
    # a stage that some checks skip (no counterexample when coherent) is the median of those that ran it
    print(
        "median seconds per stage: "
        + " · ".join(f"{k} {statistics.median(v):.3f} ({len(v)})" for k, v in stages.items())
    )
    if ran[1]:
        print(
            f"programs run by the checks: {ran[0]} distinct of the {ran[1]} that bare runs ({ran[1] - ran[0]} copies of another sample's code)"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if bares:
        med_b = statistics.median(bares)
        print(
            f"bare in-process (tasks where it finished): median {med_b:.3f} · median ratio check/bare {statistics.median(ratios):.2f}x"
        )
        print(
            f"re-check with the inputs cached (an edit of the body): median {statistics.median(rechecks):.3f} · median ratio re-check/bare {statistics.median(recheck_ratios):.2f}x"
        )
        if made_ratios:
            print(
                f"the same first check with its inputs already made: median ratio {statistics.median(made_ratios):.2f}x bare; "
                f"with a generation's CPU spent beside it (input generation overlapped with the run in this process, "
                f"perfectly): {statistics.median(beside_ratios):.2f}x"
            )
        if stage_cpus and any(cost_ratios.values()):
            print(
                f"the same first check with a stand-in input stage (median CPU of the real one "
                f"{statistics.median(stage_cpus) * 1000:.0f} ms) costing a fraction of it: "
                + " · ".join(
                    f"{f:g}: {statistics.median(v):.2f}x" for f, v in sorted(cost_ratios.items(), reverse=True) if v
                )
                + " bare"
            )
        if exec_ratios:
            print(
                f"sandboxed execution alone (the same m x n calls, plus the nondeterminism re-run) / bare: median {statistics.median(exec_ratios):.2f}x"
            )
        print(
            f"CPU seconds (this process + the sandbox's jobs{'; ' + str(unknown) + ' runs did not report theirs' if unknown else ''}): "
            f"check median {statistics.median(cpus):.3f} · bare {statistics.median(bare_cpus):.3f} · median ratio {statistics.median(cpu_ratios):.2f}x"
        )
        print(
            f"on {CORES} cores a check's wall time is at least its CPU time / {CORES}: that floor is median {statistics.median(floors):.1f}x bare's wall time"
        )
        speedup = statistics.median(parallel_speedup() for _ in range(5))
        print(
            f"measured now, {CORES} processes get through {speedup:.2f}x the CPU-bound work of one: with that, the floor is "
            f"median {statistics.median(f * CORES / speedup for f in floors):.1f}x bare's wall time"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
