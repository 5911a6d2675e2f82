"""``coherence check``: each step of a run, from the command's refusals to the baseline it may
write.  The steps' own work lives in ``plan`` (before any work), ``checking`` (the checks),
``dry_run`` and ``report``."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path

from coherence.cli.checking import Budget, Progress, RunNotes, check_all
from coherence.cli.exits import EXIT_OK, EXIT_USAGE
from coherence.cli.files import python_files
from coherence.cli.interrupt import Interrupt
from coherence.cli.plan import Plan, plan_check
from coherence.cli.report import drop_stdout, in_source_order, render, write_report
from coherence.engine.baseline import DEFAULT_NAME, Baseline, BaselineError
from coherence.engine.errors import ConfigurationError

# A report format that cannot carry what an option asks for: (show_alternatives, format) -> why.
_REFUSED = {
    (True, "json"): "--show-alternatives is for the text report; JSON carries them as clusters[].representative_source",
    (
        True,
        "sarif",
    ): "--show-alternatives is for the text report; SARIF keeps the alternatives' sources out of code scanning",
}


@dataclass
class Outcome:
    """What the checks gave: results in source order, the exit status, what the run said, and the
    notice of the signal that stopped it (empty when none did)."""

    results: list
    status: int
    notes: RunNotes
    interrupted: list[str] = field(default_factory=list)


async def run_check(args) -> int:
    # Everything that can be wrong with the command is found before any work is done.
    refused = refusal(args)
    if refused:
        print(f"coherence: {refused}", file=sys.stderr)
        return EXIT_USAGE
    try:
        files = python_files(args.paths)
    except FileNotFoundError as exc:
        print(f"coherence: no such file or folder: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        plan = plan_check(args, files)
    except ConfigurationError as exc:
        print(f"coherence: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.dry_run:
        from coherence.cli.dry_run import dry_run

        return dry_run(plan.work, plan.checker_for, args.format)
    try:
        baseline = _baseline(args)
    except BaselineError as exc:
        print(f"coherence: {exc}", file=sys.stderr)
        return EXIT_USAGE
    outcome = await _check(args, plan, baseline)
    written = _report(args, plan, outcome)
    if written is not None:
        return written
    if outcome.interrupted:
        return outcome.status
    if args.write_baseline:
        return _write_baseline(args.write_baseline, outcome.results)
    return outcome.status


def refusal(args) -> str | None:
    """Options that cannot go together, said before anything is read."""
    refused = _REFUSED.get((args.show_alternatives, args.format))
    if args.dry_run and args.format == "sarif":
        refused = "--dry-run reports as text or JSON (SARIF is for findings)"
    return refused


def _baseline(args) -> Baseline | None:
    """The baseline the run accepts, if any; raises ``BaselineError``."""
    path = args.baseline or (
        DEFAULT_NAME if Path(DEFAULT_NAME).is_file() and not (args.write_baseline or args.no_baseline) else None
    )
    return Baseline(path) if path else None


async def _check(args, plan: Plan, baseline: Baseline | None) -> Outcome:
    """Every function checked, until a signal stops the run."""
    work = plan.work
    notes = RunNotes()
    interrupt = Interrupt()
    task = asyncio.ensure_future(
        check_all(
            lambda target: plan.checker_for(Path(target.path)),
            work,
            Progress(len(work.items), tty=sys.stderr.isatty() and args.format == "text"),
            prepare=baseline.apply if baseline is not None else None,
            is_finding=lambda r: failed([r], args.fail_on),
            budget=Budget(),
            notes=notes,
            interrupt=interrupt,
        )
    )
    interrupt.install(task)
    try:
        results, status = await task
    finally:
        if not interrupt.signum:
            interrupt.remove()
    outcome = Outcome(in_source_order(results), status, notes)
    if interrupt.signum:
        outcome.interrupted = [interrupt.notice(len(outcome.results), len(work.items))]
        notes.say(outcome.interrupted[0])
        outcome.status = interrupt.exit_status
    return outcome


def _report(args, plan: Plan, outcome: Outcome) -> int | None:
    """The report written; the exit status when that ends the run (None: it goes on)."""
    text = render(args, plan, outcome.results, outcome.status, outcome.notes.notifications, outcome.interrupted)
    try:
        write_report(text, plan.output)
    except BrokenPipeError:  # `| head`, `| true`: the reader has gone, the findings still decide
        drop_stdout()
        return outcome.status
    except OSError as exc:
        print(f"coherence: cannot write the report to {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    return None


def _write_baseline(path: str, results: list) -> int:
    from coherence.engine.baseline import write

    try:
        count = write(path, results)
    except OSError as exc:
        print(f"coherence: cannot write the baseline to {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"coherence: wrote {count} accepted disagreement(s) to {path}", file=sys.stderr)
    return EXIT_OK


def failed(results, fail_on: str) -> bool:
    """Whether some verdict is at least ``fail_on`` severe ("never": none is)."""
    from coherence.engine.verdict import at_least

    if fail_on == "never":
        return False
    return any(r.finding and at_least(r.finding, fail_on) for r in results)
