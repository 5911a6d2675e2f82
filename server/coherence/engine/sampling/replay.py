"""Replaying recorded samples instead of asking an LLM.

A replay file uses the schema of ``../shared/corpus`` (one JSON object per line, ``.jsonl`` or
``.jsonl.gz``)::

    {"entry_point": "has_close_elements", "task_id": "HumanEval/0", "model": "gpt_4o",
     "temperature": 0.6, "candidates": ["<python source>", ...], ...}

The first line whose ``entry_point`` equals the function's name is used (or, with ``task_id``,
the line with that task id).  Candidates are code blocks that end with ``# End of python code``
and may carry demos; they go through ``extract_program`` like live replies.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import zlib
from pathlib import Path
from typing import Any

from coherence.engine.errors import ConfigurationError, SamplingError
from coherence.engine.sampling.prompt import Sample, extract_program
from coherence.engine.sampling.provider import ProviderReply
from coherence.engine.spec import Spec

_EXTRACTED_MAX = 8192
# A replay file may come with a repository: a few KB of gzip can decompress to gigabytes, or to
# one line with no end.  Recorded corpora fit well within these (docs/results.md#stored-sizes).
MAX_REPLAY_BYTES = 128 * 1024 * 1024
MAX_REPLAY_LINE = 8 * 1024 * 1024

# What a line must hold; other keys (task_id, model, temperature, ...) are optional and free.
LINE_SCHEMA = {
    "type": "object",
    "required": ["entry_point", "candidates"],
    "properties": {
        "entry_point": {"type": "string", "minLength": 1},
        "candidates": {"type": "array", "items": {"type": "string"}},
    },
}
_JSON_TYPES = {
    "dict": "an object",
    "list": "a list",
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "true/false",
    "NoneType": "null",
}


@functools.lru_cache(maxsize=1)
def _validator() -> Any:  # a jsonschema validator (jsonschema is optional, not type-checked here)
    import jsonschema  # only replay files need it

    return jsonschema.Draft202012Validator(LINE_SCHEMA)


def schema_problem(obj: Any) -> str | None:
    """What is wrong with one line of a replay file, in words (None when nothing is).  The
    candidates themselves are code and never quoted: they can be long."""
    error = min(_validator().iter_errors(obj), key=lambda e: (len(e.path), str(list(e.path))), default=None)
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path).lstrip(".")
    got = _JSON_TYPES.get(type(error.instance).__name__, type(error.instance).__name__)
    if error.validator == "required":
        missing = next(k for k in error.validator_value if k not in error.instance)
        return f"no '{missing}' key"
    if error.validator == "type":
        want = {"array": "a list", "object": "an object", "string": "a string"}[error.validator_value]
        return f"'{where}' is {got}, expected {want}" if where else f"the line is {got}, expected an object"
    return f"'{where}': {error.message[:120]}"


class ReplayProvider:
    """Serves recorded candidates.  ``skip`` drops the first k candidates of every task (the eval
    uses candidate 0 as "the user's function").  Not cacheable: the file is the cache."""

    cacheable = False

    def __init__(
        self,
        path: str | Path,
        *,
        skip: int = 0,
        task_id: str | int | None = None,
        temperature: float | None = None,
    ) -> None:
        p = Path(path).expanduser()
        if not p.is_file():
            raise ConfigurationError(
                f"Replay file {p} does not exist. Pass a recorded-samples file (.jsonl or "
                ".jsonl.gz, one task per line with 'entry_point' and 'candidates')."
            )
        self.path = p
        self.skip = max(0, int(skip))
        self.task_id = task_id
        self._entries: list[dict[str, Any]] | None = None
        self._extracted: dict[tuple[Any, ...], Sample] = {}  # see _read
        self._temperature = temperature
        self.model = f"replay:{p.name}"

    @property
    def temperature(self) -> float:
        if self._temperature is None:
            entries = self._load()
            t = entries[0].get("temperature") if entries else None
            self._temperature = float(t) if isinstance(t, (int, float)) else 0.0
        return self._temperature

    def _load(self) -> list[dict[str, Any]]:
        if self._entries is not None:
            return self._entries
        opener = gzip.open if self.path.name.endswith(".gz") else open
        entries: list[dict[str, Any]] = []
        total = 0
        try:
            with opener(self.path, "rb") as fh:
                for lineno in itertools.count(1):
                    raw = fh.readline(MAX_REPLAY_LINE + 1)
                    if not raw:
                        break
                    total += len(raw)
                    if len(raw) > MAX_REPLAY_LINE:
                        raise ConfigurationError(
                            f"Replay file {self.path}, line {lineno}, is longer than {MAX_REPLAY_LINE // 2**20} MB; "
                            "the file is not read."
                        )
                    if total > MAX_REPLAY_BYTES:
                        raise ConfigurationError(
                            f"Replay file {self.path} holds more than {MAX_REPLAY_BYTES // 2**20} MB"
                            + (" once decompressed" if opener is gzip.open else "")
                            + "; the file is not read."
                        )
                    line = raw.decode("utf-8")
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except RecursionError as e:
                        raise ConfigurationError(f"Replay file {self.path}, line {lineno}, nests too deeply.") from e
                    except json.JSONDecodeError as e:
                        raise ConfigurationError(
                            f"Replay file {self.path}, line {lineno}, is not JSON: {e.msg}."
                        ) from e
                    problem = schema_problem(obj)
                    if problem:
                        raise ConfigurationError(
                            f"Replay file {self.path}, line {lineno}: {problem}. Each line is one "
                            'task: {"entry_point": "name", "candidates": ["<python source>", ...]}.'
                        )
                    entries.append(obj)
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
            raise ConfigurationError(f"Replay file {self.path} cannot be read: {e}.") from e
        self._entries = entries
        return entries

    def _entry(self, name: str) -> dict[str, Any] | None:
        for e in self._load():
            if self.task_id is not None:
                if str(e.get("task_id")) == str(self.task_id):
                    return e
            elif e.get("entry_point") == name:
                return e
        return None

    def candidates_for(self, name: str) -> list[str]:
        """All recorded candidates for ``name`` (before ``skip``); SamplingError if none."""
        e = self._entry(name)
        if e is None:
            which = f"task {self.task_id!r}" if self.task_id is not None else f"'{name}'"
            raise SamplingError(
                f"The replay file {self.path.name} has no recorded samples for {which} "
                f"(no line with entry_point '{name}').",
                kind="missing",  # this function's, not the run's: the others can go on
            )
        return list(e["candidates"])  # a list of strings: _load checked every line

    def entry_points(self) -> list[str]:
        return [e["entry_point"] for e in self._load()]

    async def generate(self, spec: Spec, count: int) -> ProviderReply:
        if count <= 0:
            return ProviderReply()
        cands = self.candidates_for(spec.name)[self.skip : self.skip + count]
        return ProviderReply(samples=[self._read(c, spec.name, spec.owner) for c in cands])

    def _read(self, candidate: str, name: str, owner: str | None) -> Sample:
        """``extract_program``, once per candidate: the file does not change, every check of a
        function reads the same candidates again, and reading one parses it (a fifth of the
        language server's CPU in a re-check, which runs beside the input generation)."""
        key = (candidate, name, owner)
        sample = self._extracted.get(key)
        if sample is None:
            if len(self._extracted) >= _EXTRACTED_MAX:
                self._extracted.clear()
            sample = self._extracted[key] = extract_program(candidate, name, owner)
        return sample

    def __repr__(self) -> str:
        return f"ReplayProvider({str(self.path)!r}, skip={self.skip})"
