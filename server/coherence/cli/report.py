"""Where the report of ``coherence check`` goes: a file whose folder is made before any work, or
stdout."""

from __future__ import annotations

import sys
from pathlib import Path

from coherence.cli.work import why_unreadable
from coherence.engine.errors import ConfigurationError
from coherence.engine.result import CheckResult


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
        raise ConfigurationError(
            f"--output {path}: cannot create the folder {out.parent}: {why_unreadable(exc)}"
        ) from exc
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


def render(args, plan, results: list[CheckResult], status: int, notifications: list, interrupted: list[str]) -> str:
    """The report in ``--format``, after the notice of a weak sandbox on stderr."""
    from coherence import formats
    from coherence.engine.execution import sandbox as sb

    weak = sorted({r.sandbox for r in results if r.sandbox and sb.is_weak(r.sandbox)})
    if weak:
        print(sb.WEAK_NOTICE.format(name=", ".join(weak)), file=sys.stderr)
    if args.format == "json":
        return formats.to_json(results, notifications)
    if args.format == "sarif":
        return formats.to_sarif(
            results, root=plan.config.workspace, fail_on=args.fail_on, notifications=notifications, exit_status=status
        )
    sources = {(t.path, t.qualname): t.function_source for t in plan.work.targets} if args.show_alternatives else None
    return formats.to_text(results, alternatives=sources, notes=[f"coherence: {n}" for n in interrupted])


def drop_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush finds no closed pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
