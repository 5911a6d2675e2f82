"""Checking the functions of ``coherence check`` one by one: each on its own (one that fails
becomes an ``error`` result, never the end of the run), said in CI logs as each finishes, within
the run's budget, until a signal stops the run.

Every result carries the exit status it calls for (``EXIT_*``); the run exits with the highest.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coherence.cli.exits import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from coherence.cli.interrupt import Interrupt
from coherence.cli.work import Work, internal_reason
from coherence.engine.errors import CheckCancelled, ConfigurationError, SamplingError
from coherence.engine.redact import display
from coherence.engine.result import CheckResult
from coherence.engine.spec import Target

log = logging.getLogger(__name__)


class Progress:
    """On a terminal, the function being checked; in a log (stderr not a TTY), one line per
    finished function, so a CI job shows where it is and what each took."""

    def __init__(self, total: int, *, tty: bool, stream=None):
        self.total = total
        self.tty = tty
        self.stream = stream or sys.stderr
        self.done = 0

    def _print(self, line: str) -> None:
        # a cloned repository names its files and functions: escaped and redacted like every report
        print(display(line), file=self.stream, flush=True)

    def started(self, target: Target) -> None:
        if self.tty:
            self._print(f"checking {target.path}:{target.name_line} {target.qualname}…")

    def finished(self, result: CheckResult) -> None:
        self.done += 1
        if self.tty:
            return
        what = result.finding or result.status
        if result.trust is not None and result.status in ("coherent", "incoherent"):
            what += f", trust {result.trust:.2f}"
        elif result.status in ("error", "skipped") and result.reason:
            what += f": {result.reason[:160]}"
        self._print(
            f"[{self.done}/{self.total}] {result.path}:{result.line} {result.qualname or result.name}: {what} ({result.seconds:.1f}s)"
        )


# Failures of the run's LLM rather than of one function: the provider is not asked again in
# this run, and its message is said once (the short reason goes on every function it leaves).
_GIVE_UP = {
    "auth": "not checked: the provider rejected the API key (said above)",
    "config": "not checked: the provider refused the model or its settings (said above)",
    "deadline": "not checked: the LLM did not answer within llm_timeout (said above)",
}


@dataclass
class RunNotes:
    """What the run has said once on stderr (``said``) and the providers it no longer asks
    (``given_up``: the provider's id -> the reason and exit status each later function gets).
    ``notifications`` are the run-level messages a report carries: (level, text)."""

    said: set[str] = field(default_factory=set)
    given_up: dict[int, tuple[str, int]] = field(default_factory=dict)
    notifications: list[tuple[str, str]] = field(default_factory=list)

    def say(self, message: str, level: str = "error") -> None:
        if message not in self.said:
            self.said.add(message)
            self.notifications.append((level, message))
            print(f"coherence: {message}", file=sys.stderr)


async def check_one(checker, target: Target, notes: RunNotes) -> tuple[CheckResult, int]:
    """One function's result and exit status.  What goes wrong for this function alone (the LLM
    failed on it, the replay file lacks it, an unexpected exception) becomes its ``error`` result;
    a failure of the run's LLM (``_GIVE_UP``) is said once in ``notes`` and ends the asking."""
    from coherence.engine.check import result_for

    started = time.monotonic()
    provider = getattr(checker, "_provider", None)
    if provider is not None and id(provider) in notes.given_up:
        reason, code = notes.given_up[id(provider)]
        return result_for(target, "error", reason), code
    try:
        return await checker.check(target), EXIT_OK
    except CheckCancelled:
        raise
    except (SamplingError, ConfigurationError) as exc:
        message = str(exc)
        kind = "config" if isinstance(exc, ConfigurationError) else exc.kind
        # No key, a rejected one, an unknown model or refused settings are the run's
        # configuration (exit 2); an outage, a rate limit or a replay miss are this function's.
        code = EXIT_USAGE if kind in ("auth", "config") else EXIT_FINDINGS
        if kind in _GIVE_UP:
            notes.say(message)
            if provider is None:
                provider = getattr(checker, "_provider", None)
            if provider is not None:
                notes.given_up[id(provider)] = (_GIVE_UP[kind], code)
        result = result_for(target, "error", message)
    except Exception as exc:  # one function's failure must not end the run
        log.debug("checking %s failed", target.qualname, exc_info=True)
        result = result_for(target, "error", internal_reason(exc))
        print(
            f"coherence: {target.path}:{target.name_line} {target.qualname}: {result.reason}; "
            "run with -v for the traceback",
            file=sys.stderr,
        )
        code = EXIT_INTERNAL
    result.seconds = time.monotonic() - started
    return result, code


def _incoherent(result: CheckResult) -> bool:
    return result.status == "incoherent" or result.contradicts_docstring


class Budget:
    """What the run has spent on samples, against each checker's ``max_cost_usd``."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.refused = 0

    def refusal(self, checker, target: Target) -> str:
        """Why ``target`` must not be sampled ("" when it may): the limit is reached, or its
        samples would go past it (litellm's estimate; samples already cached cost nothing)."""
        limit = checker.config.max_cost_usd
        if limit is None or target.skip_reason or not getattr(checker.provider, "cacheable", False):
            return ""  # no limit, nothing to sample, or a replay file: nothing is bought
        from coherence.engine.sampling.cost import estimate

        cfg = checker.config
        price = estimate(
            [target], checker.provider.model, count=cfg.samples - 1, cache=checker.cache, temperature=cfg.temperature
        ).usd
        if price == 0 or (price is None and self.spent < limit) or (price is not None and self.spent + price <= limit):
            return ""
        self.refused += 1
        spent = f"${self.spent:.4f} spent so far"
        if price is None or self.spent >= limit:
            return f"not sampled: max_cost_usd ${limit:g} reached ({spent})"
        return f"not sampled: its samples would cost about ${price:.4f}, past max_cost_usd ${limit:g} ({spent})"


async def check_all(
    checker_for: Callable[[Target], Any],
    work: Work,
    progress: Progress,
    *,
    prepare: Callable[[Target], Target] | None = None,
    is_finding: Callable[[CheckResult], bool] = _incoherent,
    budget: Budget | None = None,
    notes: RunNotes | None = None,
    interrupt: Interrupt | None = None,
) -> tuple[list[CheckResult], int]:
    """Every result in file order, and the exit status the run calls for; ``checker_for`` gives
    the checker of a target's file (each file's nearest config has its own).  ``prepare`` may
    adjust each target before its check (a baseline's accepted disagreements); ``is_finding``
    says which results fail the run (a --fail-on threshold).  An error always does.  ``budget``
    skips, with the reason, the functions past ``max_cost_usd``.  Once ``interrupt`` has caught a
    signal, the function being checked is dropped and the results so far are returned."""
    results: list[CheckResult] = []
    worst = EXIT_OK
    notes = notes if notes is not None else RunNotes()
    for item in work.items:
        if interrupt is not None and interrupt.signum:
            break
        if isinstance(item, Target):
            progress.started(item)
            done = await _check_target(checker_for(item), item, prepare, budget, notes, interrupt)
            if done is None:
                break
            result, code = done
        else:
            result, code = item
        if result.status == "error" or is_finding(result):
            code = max(code, EXIT_FINDINGS)
        worst = max(worst, code)
        results.append(result)
        progress.finished(result)
    if budget is not None and budget.refused:
        print(
            f"coherence: max_cost_usd reached: {budget.refused} function(s) not sampled, ${budget.spent:.4f} spent",
            file=sys.stderr,
        )
    return results, worst


async def _check_target(
    checker,
    target: Target,
    prepare: Callable[[Target], Target] | None,
    budget: Budget | None,
    notes: RunNotes,
    interrupt: Interrupt | None,
) -> tuple[CheckResult, int] | None:
    """One target's result and exit status, skipped past the budget; None when a signal dropped it."""
    from coherence.engine.check import result_for

    refusal = budget.refusal(checker, target) if budget is not None else ""
    if refusal:
        result, code = result_for(target, "skipped", refusal), EXIT_OK
    else:
        try:
            result, code = await check_one(checker, prepare(target) if prepare else target, notes)
        except asyncio.CancelledError:
            if interrupt is None or not interrupt.signum:
                raise
            interrupt.uncancel()
            return None
    if budget is not None:
        budget.spent += result.cost_usd
    return result, code
