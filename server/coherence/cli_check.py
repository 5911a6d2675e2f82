"""The steps of ``coherence check`` after its options are valid: find the functions of every file,
check each one on its own (one that fails becomes an ``error`` result, never the end of the
run), say so in CI logs as each finishes, and write the report.

Every result carries the exit status it calls for (``EXIT_*``); the run exits with the highest.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from coherence.cli import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from coherence.engine.errors import CheckCancelled, ConfigurationError, SamplingError
from coherence.engine.markers import find_targets, read_source
from coherence.engine.redact import display, redact_tree
from coherence.engine.result import CheckResult
from coherence.engine.selection import EVERY_NAME, names_for
from coherence.engine.spec import Target

log = logging.getLogger(__name__)


@dataclass
class Work:
    """What the files hold, in order: targets to check, and results already known (a file that
    could not be read or parsed) with the exit status each calls for."""

    items: list[Target | tuple[CheckResult, int]] = field(default_factory=list)

    @property
    def targets(self) -> list[Target]:
        return [t for t in self.items if isinstance(t, Target)]


def _file_error(path: Path, reason: str, line: int = 1) -> CheckResult:
    return CheckResult(name="<module>", qualname="<module>", path=str(path), line=line, status="error", reason=reason)


def find_work(files: list[Path], config_for) -> Work:
    """Read and parse every file first, so the run knows how many functions it has.  A file
    that cannot be read or does not parse is a finding (exit 1): CI must not pass code that does
    not parse.  Any other failure to parse one is coherence's (exit 3); the other files go on."""
    work = Work()
    for path in files:
        config = config_for(path)
        include = names_for(path, config.include, config.workspace) if config.include else ()
        exclude = names_for(path, config.exclude, config.workspace) if config.exclude else ()
        if EVERY_NAME in exclude:
            continue  # the whole file is excluded: not even read
        try:
            source = read_source(path)
            targets = find_targets(source, str(path), mode=config.mode, include=include, exclude=exclude)
        except UnicodeDecodeError as exc:
            line = _bad_line(path, exc.encoding)
            reason = f"cannot read file: line {line} is not {exc.encoding.upper()}; {_DECLARE}"
            work.items.append((_file_error(path, reason, line), EXIT_FINDINGS))
        except OSError as exc:
            work.items.append((_file_error(path, f"cannot read file: {_why(exc)}"), EXIT_FINDINGS))
        except SyntaxError as exc:  # without a line: the coding line, from read_source
            reason = f"syntax error: {exc.msg} (line {exc.lineno})" if exc.lineno else f"cannot read file: {_why(exc)}"
            work.items.append((_file_error(path, reason, exc.lineno or 1), EXIT_FINDINGS))
        except Exception as exc:  # e.g. RecursionError on absurdly deep code
            log.debug("finding the functions of %s failed", path, exc_info=True)
            work.items.append((_file_error(path, internal_reason(exc)), EXIT_INTERNAL))
        else:
            work.items.extend(targets)
    return work


_DECLARE = "declare its encoding with a '# -*- coding: latin-1 -*-' line (or the one it uses)"


def _bad_line(path: Path, encoding: str) -> int:
    """The line of the first byte that is not ``encoding`` (the decoder's offset is within a
    chunk, not the file)."""
    try:
        data = path.read_bytes()
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1
    except (OSError, LookupError):
        pass
    return 1


def _why(exc: BaseException) -> str:
    """Why a file cannot be read, in words that say what to do (Python's own name the file)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc)
    if text.startswith("invalid or missing encoding declaration"):
        return f"it is not UTF-8; {_DECLARE}"
    if text.startswith("unknown encoding"):  # "unknown encoding for FILE: NAME"
        return f"its coding line names an unknown encoding, {text.rsplit(': ', 1)[-1]!r}"
    return text


def internal_reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    return f"internal error in coherence: {type(exc).__name__}{': ' + text if text else ''} (please report it)"


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
    from coherence.engine.check import result_for

    results: list[CheckResult] = []
    worst = EXIT_OK
    notes = notes if notes is not None else RunNotes()
    for item in work.items:
        if interrupt is not None and interrupt.signum:
            break
        if isinstance(item, Target):
            progress.started(item)
            checker = checker_for(item)
            refusal = budget.refusal(checker, item) if budget is not None else ""
            if refusal:
                result, code = result_for(item, "skipped", refusal), EXIT_OK
            else:
                try:
                    result, code = await check_one(checker, prepare(item) if prepare else item, notes)
                except asyncio.CancelledError:
                    if interrupt is None or not interrupt.signum:
                        raise
                    interrupt.uncancel()
                    break
            if budget is not None:
                budget.spent += result.cost_usd
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


class Interrupt:
    """SIGINT or SIGTERM during the checks: the check in progress is cancelled (its workers
    stopped by the engine) and the run writes what is done.  A second signal ends it at once."""

    EXIT: ClassVar[dict[int, int]] = {signal.SIGINT: 130, signal.SIGTERM: 143}

    def __init__(self) -> None:
        self.signum = 0
        self._task: asyncio.Task | None = None
        self._installed: list[int] = []

    def install(self, task: asyncio.Task) -> None:
        """Catch the signals for ``task`` (the checks), which a signal cancels."""
        loop = asyncio.get_running_loop()
        self._task = task
        for sig in self.EXIT:
            try:
                loop.add_signal_handler(sig, self._caught, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
                continue
            self._installed.append(sig)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed = []

    def _caught(self, signum: int) -> None:
        self.signum = signum
        self.remove()  # a second Ctrl-C is Python's KeyboardInterrupt again; SIGTERM's default ends it
        if signum == signal.SIGTERM:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if self._task is not None:
            self._task.cancel()

    def uncancel(self) -> None:
        if self._task is not None and hasattr(self._task, "uncancel"):
            self._task.uncancel()

    @property
    def exit_status(self) -> int:
        return self.EXIT.get(self.signum, 130) if self.signum else 0

    def notice(self, done: int, total: int) -> str:
        name = signal.Signals(self.signum).name if self.signum else "a signal"
        return f"interrupted by {name} after {done} of {total} item(s); the report holds the {done} finished"


def _item_path(item: Target | tuple[CheckResult, int]) -> str:
    return item.path if isinstance(item, Target) else item[0].path


def dry_run(work: Work, checker_for: Callable[[Path], Any], fmt: str = "text") -> int:
    """``check --dry-run``: each function, the samples it would request after the cache, and per
    model what they would cost (litellm's price map).  Nothing is sent and nothing runs.  As JSON
    (``--format json``), each function carries its spec hash: the sample cache's key, which the
    GitHub action keys its cache by."""
    import json

    from coherence.engine.sampling.cost import estimate

    lines: list[str] = []  # per function, put in source order at the end
    totals: list[str] = []  # per model
    doc: dict[str, list] = {"functions": [], "models": []}
    by_checker: dict[int, tuple[Any, list[Target]]] = {}
    for item in work.items:
        if not isinstance(item, Target):
            r = item[0]
            lines.append(f"{r.path}:{r.line}  {r.qualname}: {r.status} — {r.reason}")
            doc["functions"].append(
                {"path": r.path, "line": r.line, "qualname": r.qualname, "status": r.status, "reason": r.reason}
            )
        elif item.skip_reason:
            lines.append(f"{item.path}:{item.name_line}  {item.qualname}: skipped — {item.skip_reason}")
            doc["functions"].append(
                {
                    "path": item.path,
                    "line": item.name_line,
                    "qualname": item.qualname,
                    "status": "skipped",
                    "reason": item.skip_reason,
                }
            )
        else:
            checker = checker_for(Path(item.path))
            by_checker.setdefault(id(checker), (checker, []))[1].append(item)
    for checker, targets in by_checker.values():
        cfg = checker.config
        provider = checker.provider
        if not getattr(provider, "cacheable", False):  # a replay file
            for t in targets:
                lines.append(f"{t.path}:{t.name_line}  {t.qualname}: {cfg.samples - 1} recorded samples (replay)")
                doc["functions"].append(
                    {
                        "path": t.path,
                        "line": t.name_line,
                        "qualname": t.qualname,
                        "spec_hash": t.spec.spec_hash,
                        "model": provider.model,
                        "requested": 0,
                        "cached": 0,
                    }
                )
            totals.append(f"{provider.model}: {len(targets)} function(s) from recorded samples: nothing is bought, $0")
            doc["models"].append({"model": provider.model, "functions": len(targets), "requested": 0, "usd": 0.0})
            continue
        est = estimate(
            targets,
            provider.model,
            count=cfg.samples - 1,
            cache=checker.cache,
            temperature=cfg.temperature,
            supports_n=provider.supports_n() if hasattr(provider, "supports_n") else None,
        )
        for t, f in zip(targets, est.functions):
            lines.append(
                f"{f.path}:{f.line}  {f.qualname}: {f.requested} sample(s) to request, {f.cached} cached "
                f"· {f.requests} request(s), ~{f.prompt_tokens} prompt + ~{f.completion_tokens} completion tokens"
            )
            doc["functions"].append({**asdict(f), "spec_hash": t.spec.spec_hash, "model": est.model})
        limit = f" · max_cost_usd ${cfg.max_cost_usd:g}" if cfg.max_cost_usd is not None else ""
        totals.append(
            f"{est.model}: {len(est.functions)} function(s), {est.requested} sample(s) to request, {est.cached} cached, "
            f"~{est.prompt_tokens} prompt + ~{est.completion_tokens} completion tokens: {est.price_text()}{limit}"
        )
        doc["models"].append(
            {
                "model": est.model,
                "functions": len(est.functions),
                "requested": est.requested,
                "cached": est.cached,
                "prompt_tokens": est.prompt_tokens,
                "completion_tokens": est.completion_tokens,
                "usd": est.usd,
                "note": est.note or None,
                "max_cost_usd": cfg.max_cost_usd,
            }
        )
    order = {str(path): i for i, path in enumerate(dict.fromkeys(_item_path(item) for item in work.items))}
    where = [(order[str(f["path"])], f["line"]) for f in doc["functions"]]
    lines = [line for _, line in sorted(zip(where, lines), key=lambda pair: pair[0])]
    doc["functions"] = [f for _, f in sorted(zip(where, doc["functions"]), key=lambda pair: pair[0])]
    if fmt == "json":
        print(json.dumps(redact_tree(doc), indent=2))
    else:
        for line in lines + totals:
            print(display(line))
    print("coherence: dry run, nothing was sent and nothing ran", file=sys.stderr)
    return EXIT_OK


def open_output(path: str) -> Path:
    """The report's file, its folder created now: a bad ``-o`` must fail before any work."""
    from coherence.engine.safe_write import refusal

    out = Path(path)
    why = refusal(out, "--output")
    if why:
        raise ConfigurationError(why)
    if out.is_dir():
        raise ConfigurationError(f"--output {path} is a folder; give a file name")
    blocked = next((p for p in reversed(out.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise ConfigurationError(f"--output {path}: {blocked} is a file, not a folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"--output {path}: cannot create the folder {out.parent}: {_why(exc)}") from exc
    return out


def in_source_order(results: list[CheckResult]) -> list[CheckResult]:
    """Results by file, in the order the files came, and by line within each file."""
    first: dict[str, int] = {}
    for r in results:
        first.setdefault(r.path, len(first))
    return sorted(results, key=lambda r: (first[r.path], r.line))


def write_report(text: str, output: Path | None) -> None:
    if output is not None:
        from coherence.engine.safe_write import write_text

        write_text(output, text + "\n", "--output")
    else:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()  # now, so a closed pipe is found here and not at the interpreter's exit
