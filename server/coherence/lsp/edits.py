"""The text of the two edits the server offers (pure functions on source text, no LSP types):

* a pytest regression test from a counterexample that pins one side's outcome (yours, or the
  alternatives'), once the user has decided which is right;
* the function's body replaced by the majority alternative's, keeping the user's decorators,
  marker, signature and docstring, and adding the imports the alternative needs.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import io
import keyword
import re
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

from coherence.engine import syntax
from coherence.engine.result import CheckResult

_EXC = re.compile(
    r"^(?:raises?\s+|raised\s+|raise\s+|!)?((?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Interrupt|Timeout|Warning|StopIteration)|Timeout|Crash\(\w*\)|MemoryError|RecursionError)\b"
)


@dataclass(frozen=True)
class Change:
    """Replace lines ``[start, end)`` (0-based, whole lines) with ``text``; ``start == end``
    inserts before line ``start``."""

    start: int
    end: int
    text: str


# -- regression test ---------------------------------------------------------------------------


def test_module_name(module_path: str) -> str:
    return f"test_{Path(module_path).stem}_coherence.py"


def import_path(module_path: str) -> str:
    """Dotted name the module is imported by from a test next to it (pytest's rootdir logic:
    walk up while the folder is a package)."""
    p = Path(module_path)
    parts = [p.stem]
    d = p.parent
    while (d / "__init__.py").is_file() and d.parent != d:
        parts.insert(0, d.name)
        d = d.parent
    return ".".join(parts)


def _literal(rendered: str) -> str | None:
    try:
        value = syntax.literal_eval(rendered)
    except Exception:  # noqa: BLE001 - anything that is not a literal
        return None
    return repr(value)


def _exception(rendered: str) -> str | None:
    m = _EXC.match(rendered.strip())
    return m.group(1) if m else None


def _module_names(module_source: str) -> set[str]:
    """Names bound at the top level of the module (defined or imported)."""
    try:
        tree = syntax.parse(module_source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name != "*":
                    names.add((a.asname or a.name).split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
    return names


def _call_names(call: str) -> list[str]:
    try:
        tree = syntax.parse(call, mode="eval")
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in out:
            out.append(node.id)
    return out


SIDES = ("yours", "theirs")


def pinned_test_name(result: CheckResult, side: str) -> str | None:
    """The name of the test that pins ``side``'s outcome on the result's counterexample: the same
    for the same function, call and side, so an action can see that its test exists."""
    ce = result.counterexample
    if ce is None:
        return None
    digest = hashlib.sha1(ce.call.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return re.sub(r"\W", "_", f"test_{result.name}_expects_{side}_{digest}")


def pinned_tests(result: CheckResult, existing: str | None) -> list[str]:
    """The sides whose pinned test for this counterexample is already in ``existing``."""
    if not existing:
        return []
    defined = set(re.findall(r"^def (\w+)\(", existing, re.MULTILINE))
    return [side for side in SIDES if pinned_test_name(result, side) in defined]


def regression_test(result: CheckResult, module_path: str, module_source: str, side: str) -> tuple[str, str] | None:
    """(import line, test function source) of a test that pins ``side``'s outcome (``yours`` or
    ``theirs``) on the result's counterexample: it passes on a function that behaves like that
    side there and fails on one that behaves like the other.  None without a counterexample, or
    when that side's outcome cannot be pinned (a timeout, a crash, an output cut short)."""
    ce = result.counterexample
    if ce is None or side not in SIDES:
        return None
    module = import_path(module_path)
    defined = _module_names(module_source)
    top = (result.qualname or result.name).split(".")[0]  # a method's class: the call is Owner().name(...)
    needed = [n for n in _call_names(ce.call) if n == top or (n in defined and not hasattr(builtins, n))]
    if top not in needed:
        needed.insert(0, top)
    import_line = f"from {module} import {', '.join(needed)}"

    kept, rejected = (ce.yours, ce.theirs) if side == "yours" else (ce.theirs, ce.yours)
    body = _method_test_body(ce.call, kept) or _call_test_body(ce.call, kept)
    if body is None:
        return None
    doc = [
        f'"""coherence: implementations of {result.name} disagree on this input; this test keeps {side}.',
        "",
        f"yours: {ce.yours}",
    ]
    for alt in ce.alternatives:
        doc.append(alt.shown(ce.total))
    doc += ["", f"Rejected: {rejected}", '"""']
    doc = doc[:1] + [line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') for line in doc[1:-1]] + doc[-1:]
    name = pinned_test_name(result, side)
    lines = [f"def {name}():"] + ["    " + ln if ln else "" for ln in doc + body]
    return import_line, "\n".join(lines) + "\n"


def _call_test_body(call: str, rendered: str) -> list[str] | None:
    """Lines that check ``call`` gives ``rendered``: its value, the exception it raises, or (with
    no literal form) its printed form."""
    if rendered.endswith("…") or " (and changes its " in rendered:
        return None  # cut short, or an argument it changes: not a value to pin
    lit = _literal(rendered)
    if lit is not None:
        return [f"result = {call}", f"assert result == {lit}"]
    exc = _exception(rendered.removeprefix("raises "))
    if exc is not None:
        if exc in ("Timeout", "MemoryError", "RecursionError") or exc.startswith("Crash"):
            return None  # what the sandbox saw, not what a test can reproduce
        exc_name = exc.split("(")[0].split(".")[-1]
        return [
            "try:",
            f"    result = {call}",
            "except Exception as exc:",
            f"    assert type(exc).__name__ == {exc_name!r}, exc",
            "else:",
            f'    raise AssertionError(f"expected {exc_name}, got {{result!r}}")',
        ]
    return ["result = " + call, f"assert repr(result) == {rendered!r}"]


_METHOD_CALL = re.compile(r"^([A-Za-z_]\w*)\(\)\.([A-Za-z_]\w*)\(")
_LEAVES = re.compile(r"^(.*) \(and leaves the object (?:as (.*)|unchanged)\)$", re.S)


def _method_test_body(call: str, rendered: str) -> list[str] | None:
    """For ``Owner().name(...)``: lines that check what the call returns and the state it leaves
    the object in, when the outcome renders as literals; None otherwise."""
    m = _METHOD_CALL.match(call)
    if m is None:
        return None
    owner = m.group(1)
    left = _LEAVES.match(rendered)
    if left and left.group(2) is not None:
        value, state = left.group(1), _state_literal(left.group(2), owner)
    else:
        value, state = (left.group(1) if left else rendered), f"vars({owner}())"
    lit = _literal(value)
    if lit is None or state is None:
        return None
    return [
        f"obj = {owner}()",
        f"result = obj.{call[len(owner) + 3 :]}",
        f"assert (result, vars(obj)) == ({lit}, {state})",
    ]


def _state_literal(rendered: str, owner: str) -> str | None:
    """``Owner(a=1, b=[2])`` (an object as outcomes render it) as the source of its ``vars()``."""
    try:
        node = syntax.parse(rendered, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == owner and not node.args):
        return None
    try:
        return repr({kw.arg: syntax.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None})
    except Exception:  # noqa: BLE001 - a field that is not a literal
        return None


def new_test_file(import_line: str, test_source: str, module_path: str) -> str:
    header = f'"""Regression tests from coherence counterexamples of {Path(module_path).name}."""\n\n'
    return f"{header}{import_line}\n\n\n{test_source}"


def append_to_test_file(existing: str, import_line: str, test_source: str) -> list[Change]:
    """Changes that add the import (if missing) and append the test to an existing file."""
    lines = existing.splitlines(keepends=True)
    nl = "\r\n" if "\r\n" in existing else "\n"
    changes: list[Change] = []
    if import_line not in existing:
        at = _import_insertion_line(existing)
        changes.append(Change(at, at, import_line + nl))
    tail = "" if existing.endswith(("\n", "\r")) or not existing else nl
    text = tail + nl + nl + test_source.replace("\n", nl)
    changes.append(Change(len(lines), len(lines), text))
    return changes


def _import_insertion_line(source: str) -> int:
    """0-based line before which a new import goes: after the module's last top-level import
    that precedes other code, else after the docstring and ``__future__`` imports, else 0."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return 0
    at = 0
    for i, node in enumerate(tree.body):
        is_doc = (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        if is_doc or isinstance(node, (ast.Import, ast.ImportFrom)):
            at = node.end_lineno or node.lineno
        else:
            break
    return at


# -- replace the body ----------------------------------------------------------------------------


def _find_def(tree: ast.Module, name: str, line: int | None = None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def of ``name`` (on ``line`` if given): module level first, then in a class body (a
    method, or an alternative that wrote out the whole class)."""
    fallback = None
    members = [item for node in tree.body if isinstance(node, ast.ClassDef) for item in node.body]
    for node in list(tree.body) + members:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            if line is None or node.lineno == line:
                return node
            fallback = fallback or node
    return fallback


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _first_line(stmt: ast.stmt) -> int:
    decos = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decos])


def _def_comment(line: str) -> str:
    if "#" not in line:
        return ""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return ""
    return " ".join(t.string for t in toks if t.type == tokenize.COMMENT)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _body_source(alt: ast.FunctionDef | ast.AsyncFunctionDef, alt_lines: list[str]) -> list[str]:
    """The alternative's body statements (docstring dropped), dedented, as lines."""
    stmts = [s for i, s in enumerate(alt.body) if not (i == 0 and _is_docstring(s))]
    if not stmts:
        return ["pass"]
    start = _first_line(stmts[0])
    if start > alt.lineno and all(_first_line(s) > alt.lineno for s in stmts):
        # Keep comments just above the first statement (after the docstring or the header).
        floor = (alt.body[0].end_lineno or alt.lineno) if len(stmts) < len(alt.body) else alt.lineno
        while start - 1 > floor and alt_lines[start - 2].strip().startswith("#"):
            start -= 1
        chunk = alt_lines[start - 1 : alt.end_lineno]
        text = textwrap.dedent("\n".join(chunk))
        return text.splitlines()
    return "\n".join(ast.unparse(s) for s in stmts).splitlines()


def replace_body(source: str, name: str, name_line: int, alternative: str) -> list[Change] | None:
    """Changes that replace function ``name`` (defined on ``name_line``) with the alternative's
    implementation.  None when the alternative or the function cannot be found."""
    try:
        tree = syntax.parse(source)
        alt_tree = syntax.parse(alternative)
    except SyntaxError:
        return None
    node = _find_def(tree, name, name_line)
    alt = _find_def(alt_tree, name)
    if node is None or alt is None or node.end_lineno is None or alt.end_lineno is None:
        return None
    lines = source.splitlines()
    alt_lines = alternative.splitlines()
    nl = "\r\n" if "\r\n" in source else "\n"

    body = node.body
    has_doc = bool(body) and _is_docstring(body[0])
    same_signature = ast.dump(node.args) == ast.dump(alt.args) and type(node) is type(alt)
    one_liner = _first_line(body[0]) == node.lineno
    def_indent = _indent_of(lines[node.lineno - 1])
    if not one_liner:
        body_indent = _indent_of(lines[_first_line(body[0]) - 1]) or def_indent + "    "
    else:
        body_indent = def_indent + "    "
    new_body = [(body_indent + ln) if ln.strip() else "" for ln in _body_source(alt, alt_lines)]

    changes: list[Change] = []
    if same_signature and not one_liner:
        # Keep the user's header and docstring; replace the statements after them.
        start = (body[0].end_lineno or body[0].lineno) + 1 if has_doc else _first_line(body[0])
        if has_doc and len(body) == 1:
            start = (body[0].end_lineno or body[0].lineno) + 1
        changes.append(Change(start - 1, node.end_lineno, nl.join(new_body) + nl))
    else:
        # Different signature or a one-line def: take the alternative's header, keep the
        # user's decorators (above node.lineno), marker comment and docstring.
        alt_body_start = _first_line(alt.body[0])
        if alt_body_start > alt.lineno:
            header = textwrap.dedent("\n".join(alt_lines[alt.lineno - 1 : alt_body_start - 1])).splitlines()
        else:
            head = alt_lines[alt.lineno - 1]
            colon = _header_colon(head)
            header = (
                [head[: colon + 1].strip()] if colon is not None else [f"def {name}{ast.unparse(alt.args).join('()')}:"]
            )
        header = [def_indent + ln for ln in header if ln.strip()]
        comment = _def_comment(lines[node.lineno - 1])
        if comment and comment not in header[0]:
            header[0] = header[0] + "  " + comment
        doc: list[str] = []
        if has_doc and not one_liner:
            doc = lines[body[0].lineno - 1 : body[0].end_lineno]
        elif has_doc:
            doc = [body_indent + ast.unparse(body[0])]
        changes.append(Change(node.lineno - 1, node.end_lineno, nl.join(header + doc + new_body) + nl))

    # Imports the alternative needs and the module lacks; helpers it defines that the module lacks.
    have = _module_names(source)
    have_imports = {ast.dump(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))}
    imports: list[str] = []
    helpers: list[str] = []
    for stmt in alt_tree.body:
        if stmt is alt:
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if ast.dump(stmt) in have_imports:
                continue
            bound = [(a.asname or a.name).split(".")[0] for a in stmt.names]
            if bound and all(b in have for b in bound):
                continue
            imports.append(ast.unparse(stmt))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name not in have and stmt.name != name:
                helpers.append("\n".join(alt_lines[_first_line(stmt) - 1 : stmt.end_lineno]))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            names = {
                n.id
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                for n in ast.walk(t)
                if isinstance(n, ast.Name)
            }
            if names and not names & have:
                helpers.append(ast.unparse(stmt))
    # An alternative that wrote out the whole class: the methods it added go in after this one.
    alt_cls = next((c for c in alt_tree.body if isinstance(c, ast.ClassDef) and any(i is alt for i in c.body)), None)
    user_cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and any(i is node for i in c.body)), None)
    if alt_cls is not None and user_cls is not None:
        have_members = {i.name for i in user_cls.body if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef))}
        extra = [
            textwrap.indent(textwrap.dedent("\n".join(alt_lines[_first_line(i) - 1 : i.end_lineno])), def_indent)
            for i in alt_cls.body
            if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef)) and i is not alt and i.name not in have_members
        ]
        if extra:
            changes[0] = Change(
                changes[0].start,
                changes[0].end,
                changes[0].text + nl + (nl + nl).join(x.replace("\n", nl) for x in extra) + nl,
            )
    if helpers and not def_indent:
        changes[0] = Change(
            changes[0].start,
            changes[0].end,
            changes[0].text + nl + nl + (nl + nl + nl).join(h.replace("\n", nl) for h in helpers) + nl,
        )
    elif helpers and user_cls is not None:  # a method's module-level helpers go above its class
        at = _first_line(user_cls) - 1
        changes.append(Change(at, at, (nl + nl + nl).join(h.replace("\n", nl) for h in helpers) + nl + nl + nl))
    if imports:
        at = _import_insertion_line(source)
        if at > node.lineno - 1:
            at = 0
        text = nl.join(imports) + nl
        if at == 0 and lines and not lines[0].startswith(("import ", "from ")):
            text += nl
        changes.insert(0, Change(at, at, text))
    return changes


def _header_colon(line: str) -> int | None:
    """Index of the colon that ends a one-line def header (not one inside brackets/strings)."""
    depth = 0
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0 and line[:i].lstrip().startswith(("def ", "async def ")) and ")" in line[:i]:
            return i
    return None


def apply_changes(source: str, changes: list[Change]) -> str:
    """The text after ``changes`` (for tests and previews); changes must not overlap."""
    lines = source.splitlines(keepends=True)
    for ch in sorted(changes, key=lambda c: (c.start, c.end), reverse=True):
        lines[ch.start : ch.end] = [ch.text] if ch.text else []
    return "".join(lines)


def is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)
