"""``coherence trust``: let a repository's own ``[tool.coherence]`` choose the settings that
decide where the API key goes and what runs outside the sandbox (``config.USER_ONLY``).

Building the parser imports nothing heavy (``coherence --help`` stays fast); the engine is
imported when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from coherence.cli.exits import EXIT_OK, EXIT_USAGE
from coherence.cli.files import python_files


def add_trust_parser(sub) -> None:
    p = sub.add_parser(
        "trust",
        help="let a repository's own config choose model, api_base, python, sandbox, cache_dir",
        description=(
            "A repository's [tool.coherence] may set samples, inputs, markers, budgets and a replay file inside it. "
            "The settings that decide where your API key goes or what runs outside the sandbox (model, api_base, "
            "python, sandbox, cache_dir, workspace) come from you (flags, COHERENCE_* variables, your own config.toml) "
            "unless you trust the repository. Trust is recorded per config file and the hash of its [tool.coherence] "
            "in your config directory, and lapses when that table changes."
        ),
    )
    p.add_argument(
        "path",
        nargs="?",
        default=".",
        metavar="PATH",
        help="trust the configs 'coherence check PATH' reads (default: .)",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="show the trusted configs, and whether they changed since")
    what.add_argument(
        "--revoke", action="store_true", help="withdraw trust from the configs at, below and nearest above PATH"
    )


def run_trust(args) -> int:
    from coherence.engine.errors import ConfigurationError
    from coherence.engine.trust import TrustStore

    store = TrustStore()
    try:
        if args.list:
            return _list(store)
        if args.revoke:
            return _revoke(store, Path(args.path))
        return _grant(store, args.path)
    except ConfigurationError as exc:
        print(f"coherence: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _configs(path: str) -> list:
    """The configs ``coherence check PATH`` would read: the nearest at or above PATH and the
    nearest to each of its Python files."""
    from coherence.engine.errors import ConfigurationError
    from coherence.engine.resolve import ConfigResolver, ProjectConfig

    try:
        files = python_files([path])
    except FileNotFoundError as exc:
        raise ConfigurationError(f"no such file or folder: {exc}") from exc
    resolver = ConfigResolver()
    found: dict[Path, ProjectConfig] = {}
    starts: list[str | Path] = [path, *files]
    for start in starts:
        project = resolver.locate(start)[0]
        if project is not None:
            found.setdefault(project.path, project)
    return list(found.values())


def _grant(store, path: str) -> int:
    from coherence.engine.config import USER_ONLY

    configs = _configs(path)
    if not configs:
        print(
            f"coherence: no [tool.coherence] in a pyproject.toml at, above or below {path}; nothing to trust",
            file=sys.stderr,
        )
        return EXIT_USAGE
    for project in configs:
        store.grant(project.path, project.digest)
        chosen = [f"{k} = {_shown(project.table, k)!r}" for k in USER_ONLY if _key(project.table, k)]
        sets = ", ".join(chosen) if chosen else "none of " + ", ".join(USER_ONLY)
        print(f"trusted {project.path} (it sets {sets}); it stays trusted until its [tool.coherence] changes")
    return EXIT_OK


def _list(store) -> int:
    from coherence.engine.errors import ConfigurationError
    from coherence.engine.resolve import ConfigResolver

    grants = store.grants()
    if not grants:
        print("no repository's config is trusted (coherence trust PATH trusts one)")
        return EXIT_OK
    resolver = ConfigResolver()
    for g in grants:
        try:
            project = resolver.locate(g.config)[0]
            if project is None or project.path != Path(g.config):
                state = "gone    "
            else:
                state = "trusted " if project.digest == g.sha256 else "changed "
        except ConfigurationError:
            state = "broken  "
        print(f"{state} {g.granted}  {g.config}")
    return EXIT_OK


def _revoke(store, path: Path) -> int:
    """Grants for configs at or below PATH, and the nearest granted one above it."""
    here = path.resolve()
    grants = store.grants()
    below = [Path(g.config) for g in grants if Path(g.config).parent.is_relative_to(here)]
    above = sorted(
        (Path(g.config) for g in grants if here.is_relative_to(Path(g.config).parent)), key=lambda c: len(c.parts)
    )
    gone = store.revoke(below + above[-1:])
    for g in gone:
        print(f"no longer trusted: {g.config}")
    if not gone:
        print(f"coherence: no trusted config at, below or above {path}")
    return EXIT_OK


def _key(table: dict, name: str) -> str | None:
    return next((k for k in table if k.replace("-", "_") == name), None)


def _shown(table: dict, name: str):
    """The value as written, with any password in a URL hidden."""
    value = table[_key(table, name)]
    if isinstance(value, str) and "@" in value and "://" in value:
        parts = urlsplit(value)
        if parts.password or parts.username:
            host = parts.hostname or ""
            value = urlunsplit(parts._replace(netloc=f"***@{host}" + (f":{parts.port}" if parts.port else "")))
    return value
