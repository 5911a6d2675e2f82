"""Seeds from the workspace's test files: calls of the function, and ``pytest.mark.parametrize``
rows, read with ``ast`` (never run)."""

from __future__ import annotations

import ast
import hashlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from coherence.engine import syntax
from coherence.engine.inputs.seeds.expressions import Harvester, allowed_names
from coherence.engine.inputs.seeds.module_names import module_names
from coherence.engine.inputs.values import Input
from coherence.engine.markers import read_source
from coherence.engine.spec import Spec
from coherence.engine.stated.examples import StatedExample

log = logging.getLogger(__name__)

# Test-file scan limits.
MAX_TEST_FILES = 300
MAX_TEST_BYTES = 4_000_000
MAX_FILE_BYTES = 400_000
MAX_TEST_SEEDS = 400
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "site-packages",
    "dist-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".eggs",
    "build",
    "dist",
    "venv",
    ".venv",
    "env",
    ".env",
    "virtualenv",
    ".idea",
    ".vscode",
}


def _is_test_name(filename: str, folders: Sequence[str]) -> bool:
    """A Python file named as a test, or in a ``tests``/``test`` folder."""
    if not filename.endswith(".py"):
        return False
    in_tests = any(p in ("tests", "test") for p in folders)
    return in_tests or filename.startswith("test_") or filename.endswith("_test.py") or filename == "conftest.py"


def _test_files(root: Path, deadline: float) -> list[Path]:
    found: list[Path] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not d.startswith(".")
            and not d.endswith(".egg-info")
            and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
        )
        rel_parts = Path(dirpath).relative_to(root).parts
        for fn in sorted(filenames):
            if not _is_test_name(fn, rel_parts):
                continue
            p = Path(dirpath) / fn
            try:
                size = p.stat().st_size
            except OSError:
                continue
            if size > MAX_FILE_BYTES or total + size > MAX_TEST_BYTES:
                continue
            total += size
            found.append(p)
            if len(found) >= MAX_TEST_FILES:
                return found
        if time.monotonic() > deadline:
            break
    return found


def _parametrize_rows(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, ast.AST]]:
    """``@pytest.mark.parametrize`` rows of a test function (their cartesian product)."""
    rows: list[dict[str, ast.AST]] = [{}]
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, (ast.Attribute, ast.Name))):
            continue
        name = dec.func.attr if isinstance(dec.func, ast.Attribute) else dec.func.id
        if name != "parametrize" or len(dec.args) < 2:
            continue
        names_node, values_node = dec.args[0], dec.args[1]
        try:
            names = syntax.literal_eval(names_node)
        except (ValueError, SyntaxError):
            continue
        if isinstance(names, str):
            names = [x.strip() for x in names.split(",") if x.strip()]
        if not isinstance(values_node, (ast.List, ast.Tuple)):
            continue
        new_rows: list[dict[str, ast.AST]] = []
        for elt in values_node.elts[:100]:
            if isinstance(elt, ast.Call) and getattr(elt.func, "attr", getattr(elt.func, "id", "")) == "param":
                vals = list(elt.args)
            elif len(names) == 1:
                vals = [elt]
            elif isinstance(elt, (ast.Tuple, ast.List)):
                vals = list(elt.elts)
            else:
                continue
            if len(vals) != len(names):
                continue
            row = dict(zip(names, vals))
            for r in rows:
                new_rows.append({**r, **row})
        rows = new_rows[:200] or rows
    return rows


def _file_seeds(spec: Spec, text: str, allowed: Callable[[str], bool], known: set[str] | None) -> list[Input]:
    try:
        tree = syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    h = Harvester(spec, text, "test", allowed)

    def block(body: list[ast.stmt], env: dict[str, ast.AST], top: bool) -> None:
        for st in body:
            if len(h.found) > MAX_TEST_SEEDS:
                return
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                h.note_import(st, env, known)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if st.name == spec.name and top:
                    continue
                for row in _parametrize_rows(st)[:100]:
                    block(st.body, {**env, **row}, False)
            elif isinstance(st, ast.ClassDef):
                block(st.body, dict(env), False)
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                h.harvest(st.iter, env)
                items = _iter_items(st.iter, env)
                if items is not None and isinstance(st.target, (ast.Name, ast.Tuple)):
                    for item in items[:50]:
                        sub = dict(env)
                        if _bind_target(st.target, item, sub):
                            block(st.body, sub, False)
                else:
                    block(st.body, dict(env), False)
                block(st.orelse, env, False)
            elif isinstance(st, (ast.If, ast.While)):
                h.harvest(st.test, env)
                block(st.body, env, False)
                block(st.orelse, env, False)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                for it in st.items:
                    h.harvest(it.context_expr, env)
                block(st.body, env, False)
            elif isinstance(st, ast.Try):
                block(st.body, env, False)
                for hd in st.handlers:
                    block(hd.body, env, False)
                block(st.orelse, env, False)
                block(st.finalbody, env, False)
            else:
                h.harvest(st, env)
                h.note_assign(st, env)

    block(tree.body, {}, True)
    return h.found


def _iter_items(node: ast.AST, env: dict[str, ast.AST]) -> list[ast.AST] | None:
    if isinstance(node, ast.Name) and node.id in env:
        node = env[node.id]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    return None


def _bind_target(target: ast.AST, item: ast.AST, env: dict[str, ast.AST]) -> bool:
    if isinstance(target, ast.Name):
        env[target.id] = item
        return True
    if isinstance(target, ast.Tuple) and isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == len(target.elts):
        return all(_bind_target(t, v, env) for t, v in zip(target.elts, item.elts))
    return False


def workspace_seeds(
    spec: Spec, workspace: str | Path | None, module_source: str | None = None, deadline: float | None = None
) -> list[Input]:
    """Calls ``name(...)`` / ``module.name(...)`` in the workspace's test files (``test_*.py``,
    ``*_test.py``, ``conftest.py``, anything under ``tests/``), including the rows of
    ``pytest.mark.parametrize`` and loops over literal lists.  Files that do not parse are skipped."""
    if workspace is None:
        return []
    root = Path(workspace)
    if not root.is_dir():
        return []
    deadline = deadline if deadline is not None else time.monotonic() + 1.0
    allowed = allowed_names(spec, module_source)
    known = module_names(module_source)
    out: list[Input] = []
    for path in _test_files(root, deadline):
        if time.monotonic() > deadline or len(out) >= MAX_TEST_SEEDS:
            break
        try:
            try:
                text = read_source(path)  # a latin-1 test file's strings are seeds too
            except (SyntaxError, UnicodeDecodeError):  # a wrong coding line: what reads still counts
                text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        if spec.name not in text:
            continue
        try:
            out.extend(_file_seeds(spec, text, allowed, known))
        except Exception:  # a repository's test file is data: one that trips the reader is skipped
            log.debug("no seeds from %s", path, exc_info=True)
    return out[:MAX_TEST_SEEDS]


def asserted_examples(spec: Spec, workspace: str | Path | None, deadline: float | None = None) -> list[StatedExample]:
    """The workspace tests' worked examples of the function: ``assert name(<literals>) ==
    <literal>`` (either side), read with ``ast`` (never run).  A test states what the function
    gives as plainly as a docstring's example does, and is judged as one
    (``verdict.stated``): a test yours fails is evidence against yours, never for it."""
    if workspace is None or spec.owner or not Path(workspace).is_dir():
        return []
    deadline = deadline if deadline is not None else time.monotonic() + 1.0
    out: list[StatedExample] = []
    for path in _test_files(Path(workspace), deadline):
        if time.monotonic() > deadline:
            break
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if spec.name not in text:
            continue
        try:
            tree = syntax.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare)):
                continue
            test = node.test
            if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
                continue
            for call, stated in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                example = _asserted(spec.name, text, call, stated)
                if example is not None:
                    out.append(example)
                    break
    return out


def _asserted(name: str, text: str, call: ast.AST, stated: ast.AST) -> StatedExample | None:
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name):
        return None
    try:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            syntax.literal_eval(arg)
        value = syntax.literal_eval(stated)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    written, expected = ast.get_source_segment(text, call), ast.get_source_segment(text, stated)
    if written is None or expected is None:
        return None
    return StatedExample(call=written, expected=expected, value=value)


def tests_state(workspace: str | Path | None) -> dict[str, str]:
    """Each workspace test file's size and modification time, by its path under the workspace."""
    if workspace is None or not Path(workspace).is_dir():
        return {}
    root = Path(workspace)
    state: dict[str, str] = {}
    for path in _test_files(root, time.monotonic() + 1.0):
        try:
            st = path.stat()
        except OSError:
            continue
        state[str(path)] = f"{st.st_size}\0{st.st_mtime_ns}"
    return state


def fingerprint_of(state: dict[str, str]) -> str:
    """``tests_fingerprint`` of a ``tests_state``."""
    if not state:
        return ""
    return hashlib.sha256("\n".join(f"{p}\0{v}" for p, v in state.items()).encode()).hexdigest()[:16]


def tests_fingerprint(workspace: str | Path | None) -> str:
    """What the workspace's test files are now (each one's path, size and modification time):
    inputs and worked examples read from them are kept only while it stays the same, so a check
    never rests on a test file that is gone or changed."""
    return fingerprint_of(tests_state(workspace))


# tests_state of each workspace lately read, for callers that ask on every parse (results keys),
# and the states behind recent fingerprints (to say which test file a stale result predates)
_RECENT: dict[str, tuple[float, str]] = {}
_STATES: dict[str, dict[str, str]] = {}
RECENT_SECONDS = 2.0


def recent_tests_fingerprint(workspace: str | Path | None) -> str:
    """``tests_fingerprint``, walked at most once every ``RECENT_SECONDS`` per workspace (see
    ``forget_recent`` for a test file known to have changed): the language server keys every
    marked function of a document at each parse, and a walk per keystroke would cost more than
    the parse."""
    if workspace is None:
        return ""
    now = time.monotonic()
    key = str(workspace)
    seen = _RECENT.get(key)
    if seen is not None and now - seen[0] < RECENT_SECONDS:
        return seen[1]
    state = tests_state(workspace)
    fingerprint = fingerprint_of(state)
    if len(_RECENT) > 64:  # a server with many roots over a long session
        _RECENT.clear()
    if len(_STATES) > 256:
        _STATES.clear()
    _RECENT[key] = (now, fingerprint)
    _STATES[fingerprint] = state
    return fingerprint


def is_test_file(path: str | Path) -> bool:
    """Whether a Python file is one the workspace's tests are read from (``_test_files``)."""
    p = Path(path)
    return _is_test_name(p.name, p.parts[:-1])


def forget_recent(workspace: str | Path | None = None) -> None:
    """Walk the test files again on the next ``recent_tests_fingerprint`` (of ``workspace``, or
    of every workspace): one of them was just saved."""
    if workspace is None:
        _RECENT.clear()
    else:
        _RECENT.pop(str(workspace), None)


def tests_changed_since(fingerprint: str, workspace: str | Path | None) -> list[str]:
    """The test files (paths relative to ``workspace``) added, changed or deleted since the
    workspace's tests had ``fingerprint``, as far as this process saw that state; [] when it
    did not."""
    before = _STATES.get(fingerprint)
    if before is None or workspace is None:
        return []
    now = tests_state(workspace)
    changed = sorted(p for p in set(before) | set(now) if before.get(p) != now.get(p))
    out = []
    for p in changed:
        try:
            out.append(str(Path(p).relative_to(Path(workspace))))
        except ValueError:
            out.append(p)
    return out
