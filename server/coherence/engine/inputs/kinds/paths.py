"""``pathlib.Path`` arguments: ``Path('a/b.txt')``, called as the module names it.

Boundary values are the paths code trips on (empty, ``.``, ``..``, a root, a trailing slash, a
double suffix, a hidden file, spaces, non-ASCII); mutation appends or drops a part, changes the
suffix, makes the path absolute or relative, or edits the last part's name.  A path shrinks as
any call does, through its one string argument.
"""

from __future__ import annotations

from random import Random
from typing import Any

from coherence.engine.inputs.kinds.constructed import Constructed
from coherence.engine.inputs.kinds.registry import Kind
from coherence.engine.inputs.kinds.text import mutate_str
from coherence.engine.inputs.types import TypeDesc
from coherence.engine.inputs.values import Construct

_CLASSES = frozenset(("Path", "PurePath", "PosixPath", "PurePosixPath"))
_BOUNDARY = [
    "notes.txt",
    "",
    "a/b/c.py",
    "/tmp/data.csv",
    ".",
    "..",
    "dir/",
    "/",
    "archive.tar.gz",
    ".hidden",
    "name with spaces.md",
    "ünï/çødé.txt",
    "a//b/./c",
]
_PARTS = ["a", "b", "src", "data", "x", "my dir", "..", "."]
_STEMS = ["notes", "main", "data", "a", "README", "x", "report_2024"]
_SUFFIXES = ["", ".txt", ".py", ".csv", ".json", ".tar.gz", ".md"]


def _random_path(rng: Random) -> str:
    parts = [rng.choice(_PARTS) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    parts.append(rng.choice(_STEMS) + rng.choice(_SUFFIXES))
    path = "/".join(parts)
    return "/" + path if rng.random() < 0.2 else path


def _edit(path: str, rng: Random) -> str:
    head, _, last = path.rpartition("/")
    op = rng.choice(("append", "parent", "suffix", "absolute", "name", "fresh"))
    if op == "append":
        return f"{path.rstrip('/')}/{rng.choice(_STEMS)}{rng.choice(_SUFFIXES)}" if path else rng.choice(_STEMS)
    if op == "parent":
        return head if path != head else ""
    if op == "suffix":
        stem = last if last.startswith(".") else last.split(".", 1)[0]
        last = stem + rng.choice(_SUFFIXES)
    elif op == "absolute":
        return path.lstrip("/") if path.startswith("/") else "/" + path
    elif op == "name":
        last = mutate_str(last, rng)
    else:
        return _random_path(rng)
    return f"{head}/{last}" if "/" in path else last


class Path(Constructed):
    """A path, built from one string."""

    name = "path"

    def from_annotation(self, dotted: str) -> TypeDesc | None:
        last = dotted.rsplit(".", 1)[-1]
        if last in _CLASSES and (dotted == last or dotted.split(".")[0] == "pathlib"):
            return TypeDesc(self.name, name=dotted)
        return None

    def boundary(self, t: TypeDesc, depth: int) -> list[Any]:
        return [Construct(t.name, (s,)) for s in _BOUNDARY]

    def random(self, t: TypeDesc, rng: Random, depth: int) -> Any:
        return Construct(t.name, (_random_path(rng),))

    def fits(self, v: Any, t: TypeDesc) -> bool:
        return isinstance(v, Construct) and not v.attr and len(v.args) == 1 and isinstance(v.args[0], str)

    def mutate(self, v: Any, t: TypeDesc | None, rt: TypeDesc, rng: Random, depth: int) -> Any:
        return Construct(v.callee, (_edit(v.args[0], rng),))


KINDS: tuple[Kind, ...] = (Path(),)
