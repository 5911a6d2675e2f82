"""Which repositories' own configurations the user trusts (``coherence trust``).

A cloned repository's ``[tool.coherence]`` is input from whoever wrote the repository.  The
settings in ``config.USER_ONLY`` (where the API key goes, what runs outside the sandbox) are taken
from it only when the user has trusted it, as direnv does for ``.envrc``: a grant names the config
file (its resolved path) and the SHA-256 of its ``[tool.coherence]`` table, so any change to the
table withdraws it until the user trusts it again.  Grants live in the user's config directory
(``$XDG_CONFIG_HOME/coherence/trusted.json`` on Linux, the platform's equivalent elsewhere), out of
every repository's reach.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from coherence.engine.errors import ConfigurationError

STORE_NAME = "trusted.json"
USER_CONFIG_NAME = "config.toml"
_VERSION = 1


def user_config_dir() -> Path:
    """The user's configuration directory for coherence (platformdirs: XDG on Linux,
    ~/Library/Application Support on macOS, %APPDATA% on Windows)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("coherence", appauthor=False))


def table_digest(table: dict[str, Any]) -> str:
    """SHA-256 of a ``[tool.coherence]`` table, independent of key order and formatting."""
    text = json.dumps(table, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Grant:
    config: str  # absolute path of the pyproject.toml (see _key)
    sha256: str  # table_digest of its [tool.coherence] when the user trusted it
    granted: str  # when, ISO 8601 UTC


def _key(config: str | Path) -> str:
    """Where the config was found, its own name not resolved: a repository whose pyproject.toml is
    a symlink to a trusted one elsewhere gets no trust from it (its relative paths, such as
    ``python = ".venv/bin/python"``, would lead into the repository)."""
    return os.path.abspath(config)


class TrustStore:
    """The grants, in one JSON file written atomically (a reader never sees half a file)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else user_config_dir() / STORE_NAME

    def grants(self) -> list[Grant]:
        """Every grant; ``ConfigurationError`` naming the file when it cannot be read (a damaged
        store trusts nothing, and is never overwritten behind the user's back)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read the trust store {self.path}: {exc}") from exc
        try:
            data = json.loads(text)
            return [Grant(str(g["config"]), str(g["sha256"]), str(g.get("granted", ""))) for g in data["trusted"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(
                f"the trust store {self.path} is damaged ({type(exc).__name__}: {exc}); no repository is trusted "
                "until you fix or delete it"
            ) from exc

    def status(self, config: Path, digest: str) -> str:
        """``trusted``, ``changed`` (trusted with another table) or ``untrusted``."""
        key = _key(config)
        found = [g for g in self.grants() if g.config == key]
        if any(g.sha256 == digest for g in found):
            return "trusted"
        return "changed" if found else "untrusted"

    def grant(self, config: Path, digest: str) -> Grant:
        key = _key(config)
        new = Grant(key, digest, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self._write([g for g in self.grants() if g.config != key] + [new])
        return new

    def revoke(self, configs: list[Path]) -> list[Grant]:
        """Withdraw the grants of these config files; returns those withdrawn."""
        keys = {_key(c) for c in configs}
        grants = self.grants()
        gone = [g for g in grants if g.config in keys]
        if gone:
            self._write([g for g in grants if g.config not in keys])
        return gone

    def _write(self, grants: list[Grant]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"version": _VERSION, "trusted": [asdict(g) for g in grants]}, indent=2) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=".trusted-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(body)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
