"""A baseline file: the disagreements a project accepted as they are, as mypy and ruff users know it.

``coherence check --write-baseline`` records every current finding (severity information or
warning); later checks read the file and treat each entry as an ``accept`` statement of its
function (``# coherence: accept <call>``).  An entry is keyed by the function's spec hash, so a
changed signature or docstring (new samples, a new spec) drops it, and names the counterexample's
call (and the input it was shrunk from, ``evidence``): a later finding whose evidence or
counterexample is that call is the accepted one (``verdict.acceptance.covers``); any other
finding still shows.

The file is JSON, sorted, with paths relative to the file's own folder, so that it diffs well and
moves with the repository.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the command line reads DEFAULT_NAME before any check is set up
    from coherence.engine.result import CheckResult
    from coherence.engine.spec import Target

VERSION = 1
DEFAULT_NAME = ".coherence-baseline.json"


# A baseline is a list of flat entries (depth 3) of a few hundred bytes each; a repository's file
# past these bounds is refused with a message instead of costing the editor its parse.
MAX_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 16
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class BaselineError(ValueError):
    pass


def nesting(text: str) -> int:
    """How deeply ``text``'s JSON arrays and objects nest (brackets inside strings not counted),
    in linear time and without recursion: ``json.loads`` recurses once per level."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def _read(path: Path) -> Any:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_BYTES:
        raise BaselineError(f"the baseline {path} is larger than {MAX_BYTES // (1024 * 1024)} MB; it is not read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc}") from exc
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise BaselineError(
            f"the baseline {path} nests {depth} levels deep (a baseline has 3, at most {MAX_DEPTH} are read); it is not read"
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc}") from exc


def _key(path: str | Path, root: Path) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


def entries_for(results: Iterable[CheckResult], root: Path) -> list[dict[str, Any]]:
    out = []
    for r in results:
        if r.finding not in ("warning", "information") or r.counterexample is None:
            continue
        out.append(
            {
                "path": _key(r.path, root),
                "function": r.qualname or r.name,
                "spec_hash": r.spec_hash,
                "accept": r.counterexample.call,
                "yours": r.counterexample.yours,
                "theirs": r.counterexample.theirs,
                # the input the finding rests on, when the call shown was shrunk from it: the
                # next run accepts the finding by either (``verdict.acceptance.covers``)
                **({"evidence": r.counterexample.shrunk_from} if r.counterexample.shrunk_from else {}),
            }
        )
    return sorted(out, key=lambda e: (e["path"], e["function"], e["accept"]))


def write(path: str | Path, results: Iterable[CheckResult]) -> int:
    """Write the baseline of ``results`` to ``path``; returns the number of entries."""
    from coherence.engine.safe_write import write_text

    path = Path(path)
    entries = entries_for(results, path.resolve().parent)
    write_text(
        path, json.dumps({"version": VERSION, "entries": entries}, indent=2, ensure_ascii=False) + "\n", "the baseline"
    )
    return len(entries)


class Baseline:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.root = self.path.resolve().parent
        data = _read(self.path)
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise BaselineError(
                f'{self.path} is not a coherence baseline (expected {{"version": 1, "entries": [...]}})'
            )
        self._by_key: dict[tuple[str, str, str], list[str]] = {}
        for i, e in enumerate(data["entries"]):
            if not isinstance(e, dict) or not all(
                isinstance(e.get(k), str) for k in ("path", "function", "spec_hash", "accept")
            ):
                raise BaselineError(f"{self.path}: entry {i} needs the strings path, function, spec_hash and accept")
            calls = self._by_key.setdefault((e["path"], e["function"], e["spec_hash"]), [])
            calls.append(e["accept"])
            if isinstance(e.get("evidence"), str):
                calls.append(e["evidence"])

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_key.values())

    def apply(self, target: Target) -> Target:
        """``target`` with the calls its baseline entries accept added to its ``accept``."""
        calls = self._by_key.get((_key(target.path, self.root), target.qualname or target.name, target.spec.spec_hash))
        if not calls:
            return target
        return dataclasses.replace(target, accept=tuple(dict.fromkeys([*target.accept, *calls])))


def nearest(path: str | Path, stop: str | Path | None = None) -> Path | None:
    """The baseline file that applies to ``path``: ``.coherence-baseline.json`` in its folder or
    the nearest folder above it, up to ``stop`` (the workspace root) when given."""
    here = Path(path).resolve().parent
    end = Path(stop).resolve() if stop else None
    for folder in (here, *here.parents):
        candidate = folder / DEFAULT_NAME
        if candidate.is_file():
            return candidate
        if end is not None and folder == end:
            break
    return None


_loaded: dict[Path, tuple[float, Baseline]] = {}


def load_cached(path: Path) -> Baseline:
    """``Baseline(path)``, read again only when the file changed (the language server asks on
    every parse)."""
    mtime = path.stat().st_mtime
    hit = _loaded.get(path)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    baseline = Baseline(path)
    _loaded[path] = (mtime, baseline)
    return baseline
