"""Everything that can be wrong with a ``coherence check`` command, found before any work: every
file's config resolved and its values checked, the report's file, the API keys, and a checker for
each config.  What it finds is a ``ConfigurationError`` (exit 2)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coherence.cli.report import open_output
from coherence.cli.work import Work, find_work
from coherence.engine.bounds import BOUNDS
from coherence.engine.errors import ConfigurationError


@dataclass
class Plan:
    """A check ready to run: the config of its first path (the report's root), the functions of
    its files, a checker for each file, and the report's file (None: stdout)."""

    config: Any
    work: Work
    checker_for: Callable[[Path], Any]
    output: Path | None


def plan_check(args, files: list[Path]) -> Plan:
    """The check ``args`` asks for over ``files``; raises ``ConfigurationError``."""
    config_for = _configs(_resolver(args), [args.paths[0], *files], validated)
    config = config_for(args.paths[0])
    output = open_output(args.output) if args.output and not args.dry_run else None
    if args.write_baseline:  # a link the repository planted: refused before any work
        from coherence.engine.safe_write import refusal

        why = refusal(args.write_baseline, "--write-baseline")
        if why:
            raise ConfigurationError(why)
    work = find_work(files, config_for)
    to_check = {repr(config_for(Path(t.path))): config_for(Path(t.path)) for t in work.targets if not t.skip_reason}
    missing = _missing_keys(to_check.values(), keys=not args.dry_run)
    if missing:  # before the engine's and litellm's imports (seconds), once for the run
        raise ConfigurationError(" ".join(missing))
    checker_for = _checker_factory(config_for, dry_run=args.dry_run)
    _check_providers(work, checker_for)
    return Plan(config, work, checker_for, output)


def _resolver(args):
    """The layers of settings, the command line's on top."""
    from coherence.engine.resolve import ConfigResolver

    model, models = model_options(args.model)
    return ConfigResolver(
        dict(
            model=model,
            models=models,
            api_base=args.api_base,
            replay=str(Path(args.replay).resolve()) if args.replay else None,
            samples=args.samples,
            inputs=args.inputs,
            temperature=args.temperature,
            python=args.python,
            mode=args.mode,
            call_timeout=args.call_timeout,
            seed=args.seed,
            sandbox=args.sandbox,
            cache_dir=args.cache_dir,
            llm_timeout=args.llm_timeout,
            max_cost_usd=args.max_cost_usd,
        ),
        trust=True if args.trust_workspace else None,
    )


def model_options(values: list[str] | None):
    """``--model`` given once: ``model``; given more than once, or with a share or api_base: a
    panel (``models``)."""
    from coherence.engine.config import parse_models

    if not values:
        return None, None
    if len(values) == 1 and len(values[0].split()) == 1:
        return values[0], None
    return None, parse_models(values, "--model")


def validated(config):
    """One config, its values checked (pyproject values no option type saw); its checker comes
    after the early key check (``_checker_factory``)."""
    from coherence.engine.execution import sandbox as sb
    from coherence.engine.selection import check_patterns

    try:
        config = config.merged(
            include=check_patterns(config.include, "include"), exclude=check_patterns(config.exclude, "exclude")
        )
    except ValueError as exc:
        raise ConfigurationError(f"[tool.coherence] {exc}") from None
    config = config.validated()  # what Checker checks, before the key check and any work
    problem = _config_problem(config) or _cache_problem(config)
    if problem:
        raise ConfigurationError(problem)
    if config.python:  # one that starts and that the worker supports, before any work (cached)
        _check_interpreter(config.python)
        sb.probe_interpreter(config.python)
    if config.sandbox == "strict":  # refuses before any work rather than run weakly
        sb.choose_mode("strict", sb.probe_interpreter(config.python))
    return config


def _configs(resolver, paths, make):
    """Each file's ``make(config)``, from the config nearest to it (one per distinct config).
    Every config is resolved here, before any work: a broken one stops the run at once, and each
    repository setting refused for want of trust is named once on stderr."""
    checkers: dict = {}
    by_path = {}
    for path in paths:
        resolved = resolver.for_path(path)
        config = resolved.config
        if config.workspace is None:  # no pyproject.toml above it: its own folder is the project
            here = Path(path).resolve()
            config = config.merged(workspace=str(here if here.is_dir() else here.parent))
        if repr(config) not in checkers:
            checkers[repr(config)] = make(config)
            if resolved.notice:
                print(resolved.notice, file=sys.stderr)
        by_path[path] = checkers[repr(config)]
    return by_path.__getitem__


def _config_problem(config) -> str | None:
    """What the command line's types cannot catch: values from pyproject.toml."""
    for name in ("call_timeout", "temperature"):
        problem = BOUNDS[name].refusal(name, getattr(config, name))
        if problem:
            return problem
    if config.python and shutil.which(config.python) is None:
        return f"python: no interpreter {config.python!r} (give a path or a name on PATH)"
    return None


def _cache_problem(config) -> str | None:
    """A cache folder that is not coherence's (a user's file or folder): refused before any work,
    and before anything is written or moved (a replay run has no cache)."""
    from coherence.engine.sampling.cache import default_cache_path, folder_problem

    if config.replay:
        return None
    problem = folder_problem(config.cache_dir or default_cache_path().parent)
    return f"cache_dir: {problem}" if problem else None


_VERSION_PROBE = "import sys; sys.stdout.write('%s %d.%d.%d' % ((getattr(getattr(sys, 'implementation', None), 'name', 'cpython'),) + tuple(sys.version_info[:3])))"


def _check_interpreter(python: str) -> None:
    """An interpreter too old for the worker (Python 2.7, 3.7) is named as such, by a probe every
    Python can run, before the full probe fails on what that Python lacks."""
    import subprocess

    exe = shutil.which(python) or python
    try:
        out = subprocess.run(
            [exe, "-c", _VERSION_PROBE], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        ).stdout.decode("ascii", "replace")
        name, version = out.split()
        numbers = tuple(int(v) for v in version.split("."))
    except (OSError, subprocess.SubprocessError, ValueError):
        return  # the full probe says what is wrong
    if name != "cpython" or numbers < (3, 8):  # (the full probe's words)
        raise ConfigurationError(
            f"The Python interpreter {python!r} is {name} {version}; coherence needs CPython 3.8 or newer to run code."
        )


def _missing_keys(configs, *, keys: bool = True) -> list[str]:
    """What the models in ``configs`` lack, found without importing litellm: litellm itself (the
    ``llm`` extra, said once for the run; a dry run prices with it), then with ``keys`` each
    missing API key of a known provider."""
    from coherence.engine.sampling.keys import missing_keys
    from coherence.engine.sampling.quiet_litellm import litellm_installed, litellm_missing

    members = []
    for config in configs:
        if config.replay:
            continue
        if config.models:
            members += [(m.model, m.api_base or config.api_base, None) for m in config.models]
        elif config.model:
            members.append((config.model, config.api_base, None))
    missing = missing_keys(members) if keys else []
    if members and not litellm_installed():
        missing.insert(0, litellm_missing(members[0][0]))
    return missing


def _checker_factory(config_for, *, dry_run: bool):
    """Each file's ``Checker``, one per distinct config, made when first asked for."""
    from coherence.engine.check import Checker
    from coherence.engine.sampling.cache import SampleCache

    checkers: dict[str, Checker] = {}

    def checker_for(path: Path) -> Checker:
        config = config_for(path)
        if repr(config) not in checkers:
            # a dry run counts what the cache holds, and writes nothing
            cache = SampleCache(config.cache_dir, folder=True, readonly=True) if dry_run else None
            checkers[repr(config)] = Checker(config, cache=cache)
        return checkers[repr(config)]

    return checker_for


def _check_providers(work: Work, checker_for) -> None:
    """No model configured, or a malformed replay file: said now, before any work."""
    from coherence.engine.sampling.replay import ReplayProvider

    for checker in {id(c): c for c in (checker_for(Path(t.path)) for t in work.targets if not t.skip_reason)}.values():
        provider = checker.provider  # no model configured: say so now
        if isinstance(provider, ReplayProvider):
            provider.entry_points()  # a malformed replay file: say so now
