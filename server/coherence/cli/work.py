"""What the files of a check hold: every file read and parsed first, so the run knows how many
functions it has; a file that cannot be read or parsed is a result of its own."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from coherence.cli.exits import EXIT_FINDINGS, EXIT_INTERNAL
from coherence.engine.markers import find_targets, read_source
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
            work.items.append((_file_error(path, f"cannot read file: {why_unreadable(exc)}"), EXIT_FINDINGS))
        except SyntaxError as exc:  # without a line: the coding line, from read_source
            reason = (
                f"syntax error: {exc.msg} (line {exc.lineno})"
                if exc.lineno
                else f"cannot read file: {why_unreadable(exc)}"
            )
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


def why_unreadable(exc: BaseException) -> str:
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
