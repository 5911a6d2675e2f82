"""Reading the recorded corpus: samples files and benchmark task files (JSONL or JSONL.gz).

Samples (one task per line)::

    {"benchmark": "HumanEval" | "MBPP", "model": "gpt_4o", "temperature": 0.6,
     "task_id": "HumanEval/1" | 2, "entry_point": "...", "signature": "(...)",
     "description": "...", "candidates": ["<python source>", ...]}

Task files: HumanEval's (``task_id, prompt, entry_point, canonical_solution, test``) or sanitized
MBPP's (``task_id, prompt, code, test_imports, test_list``).  Task ids are compared as strings
(MBPP's are integers in both files).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HUMANEVAL, MBPP = "HumanEval", "MBPP"


class CorpusError(Exception):
    """A corpus or task file is missing, unreadable, or not in the expected schema."""


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise CorpusError(f"{p} does not exist")
    opener = gzip.open if p.name.endswith(".gz") else open
    try:
        with opener(p, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorpusError(f"{p}, line {lineno}: not JSON ({exc.msg})") from exc
                if isinstance(obj, dict):
                    yield obj
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{p} cannot be read: {exc}") from exc


def task_key(task_id: Any) -> str:
    return str(task_id)


def safe_name(task_id: Any) -> str:
    """``HumanEval/12`` -> ``HumanEval_12`` (file names, module names)."""
    return re.sub(r"\W", "_", str(task_id))


def normalize_benchmark(name: str | None) -> str | None:
    if not name:
        return None
    low = name.lower()
    if low.startswith("humaneval"):
        return HUMANEVAL
    if low.startswith("mbpp"):
        return MBPP
    return name


@dataclass
class SampleTask:
    benchmark: str
    model: str
    temperature: float | None
    task_id: Any
    entry_point: str
    signature: str
    description: str
    candidates: list[str]
    # ``--panel``: the model of each candidate (None: all are ``model``'s) and the panel's name
    origins: list[str] | None = None
    panel: str = ""

    @property
    def key(self) -> str:
        return task_key(self.task_id)


@dataclass
class BenchmarkTask:
    benchmark: str
    task_id: Any
    prompt: str
    entry_point: str | None = None
    canonical_solution: str | None = None  # HumanEval
    test: str | None = None  # HumanEval: defines check(candidate)
    code: str | None = None  # MBPP reference solution
    test_imports: list[str] = field(default_factory=list)  # MBPP
    test_list: list[str] = field(default_factory=list)  # MBPP

    @property
    def key(self) -> str:
        return task_key(self.task_id)

    @property
    def reference(self) -> str:
        """The reference solution as a standalone program."""
        if self.benchmark == HUMANEVAL:
            return (self.prompt or "") + (self.canonical_solution or "")
        return self.code or ""


def load_samples(path: str | Path) -> list[SampleTask]:
    out: list[SampleTask] = []
    for i, row in enumerate(read_jsonl(path)):
        try:
            cands = [c if isinstance(c, str) else "" for c in row.get("candidates") or []]
            out.append(
                SampleTask(
                    benchmark=normalize_benchmark(row.get("benchmark")) or _guess_benchmark(path, row),
                    model=str(row.get("model") or _guess_model(path)),
                    temperature=row.get("temperature"),
                    task_id=row["task_id"],
                    entry_point=str(row["entry_point"]),
                    signature=str(row.get("signature") or ""),
                    description=str(row.get("description") or ""),
                    candidates=cands,
                )
            )
        except KeyError as exc:
            raise CorpusError(f"{path}, task {i + 1}: missing field {exc}") from exc
    if not out:
        raise CorpusError(f"{path} holds no tasks")
    return out


def load_tasks(path: str | Path) -> dict[str, BenchmarkTask]:
    out: dict[str, BenchmarkTask] = {}
    for row in read_jsonl(path):
        if "canonical_solution" in row and "test" in row:
            t = BenchmarkTask(
                benchmark=HUMANEVAL,
                task_id=row["task_id"],
                prompt=row.get("prompt", ""),
                entry_point=row.get("entry_point"),
                canonical_solution=row["canonical_solution"],
                test=row["test"],
            )
        elif "test_list" in row and "code" in row:
            t = BenchmarkTask(
                benchmark=MBPP,
                task_id=row["task_id"],
                prompt=row.get("prompt") or row.get("text") or "",
                code=row["code"],
                test_imports=list(row.get("test_imports") or []),
                test_list=list(row["test_list"]),
            )
        else:
            raise CorpusError(
                f"{path}: a line is neither a HumanEval task (canonical_solution, test) nor an MBPP task (code, test_list)"
            )
        out[t.key] = t
    if not out:
        raise CorpusError(f"{path} holds no tasks")
    return out


def _guess_benchmark(path: str | Path, row: dict) -> str:
    name = Path(path).name.lower()
    if "humaneval" in name or str(row.get("task_id", "")).startswith("HumanEval"):
        return HUMANEVAL
    if "mbpp" in name:
        return MBPP
    raise CorpusError(f"{path}: cannot tell the benchmark (no 'benchmark' field)")


def _guess_model(path: str | Path) -> str:
    stem = Path(path).name.split(".")[0]
    return stem.split("-", 1)[1] if "-" in stem else stem


def paper_log_for(samples_path: str | Path, benchmark: str, model: str, temperature: float | None) -> Path | None:
    """The paper's per-task log next to a corpus file: ``difftrust-logs/<Bench>-<model>_temp<t>.json``."""
    temp = 0.6 if temperature is None else temperature
    p = Path(samples_path).resolve().parent / "difftrust-logs" / f"{benchmark}-{model}_temp{temp}.json"
    return p if p.is_file() else None


def load_paper_log(path: str | Path) -> dict[str, dict]:
    """``task_id -> {"Dis": ..., "Err": ...}`` from a difftrust log; rows may repeat (the last
    complete row wins; a failed row never replaces a complete one)."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path} cannot be read: {exc}") from exc
    out: dict[str, dict] = {}
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or "task_id" not in row:
            continue
        key = task_key(row["task_id"])
        if "Dis" in row and "Err" in row:
            out[key] = {"Dis": float(row["Dis"]), "Err": float(row["Err"])}
        elif key not in out:
            out[key] = {"failed": str(row.get("Failed", "failed"))}
    return out
