"""The prompt that asks an LLM for one alternative implementation, and reading its reply.

The prompt shows the Spec only (``Spec.header()`` and ``Spec.context``), never the user's body:
an alternative must be an independent reading of the same specification.  The module context
carries the module's constants, so credential-looking strings in it (and in the docstring) are
redacted before the prompt leaves the machine (``engine/redact.py``); ``coherence prompt
FILE::NAME`` prints exactly what would be sent.

``extract_program`` turns one reply into a ``Sample``: the program source that defines the
function, with the model's demo code (``if __name__ == "__main__":`` blocks, top-level prints,
asserts and calls of the function) removed, because it would run when the program is loaded.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from coherence.engine import syntax
from coherence.engine.redact import redact
from coherence.engine.spec import Spec

# Bump when the prompt or the extraction changes in a way that makes cached samples stale.
PROMPT_VERSION = "1"

SAMPLE_STATUSES = ("ok", "no_code", "syntax_error", "missing_function", "other_language")


@dataclass(frozen=True)
class Sample:
    """One reply of the model, read.

    ``code`` is the program source defining the function (``None`` unless ``status == "ok"``),
    ``raw`` the reply text as received, ``status`` one of ``ok | no_code | syntax_error |
    missing_function | other_language`` and ``detail`` a short human-readable note (what went
    wrong or what was stripped).
    """

    code: str | None
    raw: str
    status: str
    detail: str = ""
    model: str = ""  # the model that wrote it (a panel mixes several); "" when unknown

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.code is not None


SYSTEM_PROMPT = (
    "You are an expert Python programmer. You are given the signature and docstring of one "
    "Python function, plus the module it lives in. Write one complete, correct implementation "
    "of that function, following the docstring exactly. Handle edge cases the docstring implies. "
    "Reply with a single ```python code block and nothing else is required."
)

_INSTRUCTIONS = """\
Write the {what} with exactly this signature and behaviour:

```python
{header}
```

Rules:
- Reply with ONE ```python code block containing {contents}.
- Keep exactly this name and signature ({kind} `{name}{signature}`).
- Include any imports and {helpers} your implementation needs.
{context_rule}- Do not write tests, example usage, print statements or an `if __name__ == "__main__":` block.
- Do not read input from stdin, write files or access the network."""

_CONTEXT_BLOCK = """\
The function lives in a module that already contains the following (imports, constants, classes \
and other functions, shown without their bodies where long). It is loaded before your code runs:

```python
{context}
```

"""


def build_messages(spec: Spec) -> list[dict[str, Any]]:
    """System + user messages asking for ONE implementation of exactly ``spec.header()``."""
    context = (spec.context or "").strip("\n")
    user = ""
    if context.strip():
        user += _CONTEXT_BLOCK.format(context=context)
        context_rule = (
            "- You may use the imports, constants, classes and functions of the module above; do not redefine them.\n"
        )
    else:
        context_rule = ""
    if spec.owner:
        what = f"method `{spec.name}` of class `{spec.owner}`"
        contents = (
            f"only the complete method `{spec.name}` (its `def`, not the rest of the class: the class already exists)"
        )
        helpers = "module-level helper functions"
    else:
        what, contents, helpers = (
            f"function `{spec.name}`",
            f"the complete implementation of `{spec.name}`",
            "helper functions",
        )
    user += _INSTRUCTIONS.format(
        what=what,
        contents=contents,
        helpers=helpers,
        name=spec.name,
        header=spec.header(),
        signature=spec.signature,
        kind="async def" if spec.is_async else "def",
        context_rule=context_rule,
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": redact(user)},  # (a module's API_KEY = "sk-..." goes nowhere)
    ]


# ---------------------------------------------------------------------------------------------
# Reading replies
# ---------------------------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.#-]*)[^\n]*$", re.MULTILINE)
_PY_TAGS = {"", "python", "py", "python3", "py3", "pycon", "ipython", "python2"}
# A reasoning model's thinking, when the provider leaves it at the head of the reply
# (DeepSeek-R1, Qwen and others served raw): drafts in it are not the answer.  An unclosed one (a
# reply cut short while thinking) runs to the end.  Only at the head: a "<think>" further on may
# be a string in the code.
_THINKING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
_END_MARKER = re.compile(r"^[ \t]*#\s*End of (?:the )?python code\.?[ \t]*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class _Block:
    text: str
    tree: ast.Module | None
    error: str = ""


def _fenced_blocks(reply: str) -> list[str]:
    """The contents of the python (or untagged) fenced blocks, in order.  An unclosed last fence
    (a truncated reply) counts as a block running to the end of the reply."""
    blocks: list[str] = []
    pos = 0
    while True:
        m = _FENCE_OPEN.search(reply, pos)
        if m is None:
            break
        fence, tag = m.group(1), m.group(2).lower()
        start = m.end() + 1
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        c = close.search(reply, start)
        body = reply[start : c.start()] if c else reply[start:]
        if tag in _PY_TAGS:
            blocks.append(body)
        if c is None:
            break
        pos = c.end()
    return blocks


def _other_fence_tags(reply: str) -> list[str]:
    """The language tags of fenced blocks that are not Python (``javascript``, ``ts``, ...)."""
    tags: list[str] = []
    pos = 0
    while True:
        m = _FENCE_OPEN.search(reply, pos)
        if m is None:
            return tags
        fence, tag = m.group(1), m.group(2).lower()
        if tag not in _PY_TAGS and tag not in tags:
            tags.append(tag)
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        c = close.search(reply, m.end() + 1)
        if c is None:
            return tags
        pos = c.end()


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _END_MARKER.sub("", text)
    # Blocks indented as a whole (inside a list item, say) are dedented.
    return textwrap.dedent(text).strip("\n") + "\n"


def _parse(text: str) -> _Block:
    cleaned = _clean(text)
    try:
        return _Block(cleaned, syntax.parse(cleaned))
    except SyntaxError as e:
        return _Block(cleaned, None, f"line {e.lineno}: {e.msg}")
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, absurd nesting
        return _Block(cleaned, None, str(e) or type(e).__name__)


@functools.lru_cache(maxsize=512)  # every check asks it of each cached sample again
def defines_function(code: str | None, name: str, owner: str | None = None) -> bool:
    """Whether ``code`` parses and defines ``name`` at module level (as a def or an assignment),
    or, for a method of ``owner``, inside a ``class owner:`` of its own."""
    if not code:
        return False
    try:
        tree = syntax.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return _defines(tree, name, owner)


def _defines(tree: ast.Module, name: str, owner: str | None = None) -> bool:
    for node in tree.body:
        if (
            owner is not None
            and isinstance(node, ast.ClassDef)
            and node.name == owner
            and any(
                isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name for item in node.body
            )
        ):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
            and node.value is not None
        ):
            return True
    return False


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If):
        return False
    t = node.test
    if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
        sides = [t.left, t.comparators[0]]
        names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
        consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
        return bool(names and consts)
    return False


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _calls(node: ast.AST, names: set[str]) -> bool:
    """Whether ``node`` calls one of ``names`` when it runs (calls inside nested function,
    lambda or class bodies do not count: they run later, if ever)."""
    stack = [node]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Name) and f.id in names:
                return True
        for child in ast.iter_child_nodes(sub):
            if not isinstance(child, _SCOPES):
                stack.append(child)
    return False


_DEFINING = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
)


def _is_demo(node: ast.stmt, name: str, method: bool = False) -> str | None:
    """Why a top-level statement is demo code that must not run at load time, or None."""
    if _is_main_guard(node):
        return "__main__ block"
    if isinstance(node, _DEFINING):
        return None
    if method and isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
        return "top-level call"  # ``Counter().add(3)``: a method is only ever called on an object
    if isinstance(node, ast.Assert):
        return "top-level assert"
    if isinstance(node, ast.Expr):
        if isinstance(node.value, ast.Constant):
            return None  # a docstring or stray string
        if _calls(node, {"print", "input", "exit", "quit"}):
            return "top-level print"
    if _calls(node, {name}):
        return f"top-level call of {name}"
    if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncWith)) and _calls(node, {"print", "input"}):
        return "top-level demo loop"
    return None


def _strip_demos(block: _Block, name: str, method: bool = False) -> tuple[str, list[str]]:
    """The block's text without its demo statements (line-based, comments kept)."""
    assert block.tree is not None
    drop: list[tuple[int, int]] = []
    reasons: list[str] = []
    for node in block.tree.body:
        why = _is_demo(node, name, method)
        if why:
            drop.append((node.lineno, node.end_lineno or node.lineno))
            reasons.append(why)
    if not drop:
        return block.text, []
    lines = block.text.splitlines()
    keep = [ln for i, ln in enumerate(lines, start=1) if not any(a <= i <= b for a, b in drop)]
    text = "\n".join(keep).strip("\n") + "\n"
    # Drop the comment lines left dangling at the end (``# Example usage:``).
    out = text.rstrip().splitlines()
    while out and (not out[-1].strip() or out[-1].lstrip().startswith("#")):
        out.pop()
    text = "\n".join(out) + "\n"
    try:
        syntax.parse(text)
    except SyntaxError:  # a statement shared a line with another (``x = 1; print(x)``)
        tree = ast.Module(body=[n for n in block.tree.body if not _is_demo(n, name, method)], type_ignores=[])
        text = ast.unparse(tree) + "\n"
    return text, sorted(set(reasons))


def _support_only(block: _Block, name: str) -> str:
    """From a block that does not define ``name``: its imports, defs, classes and constants."""
    assert block.tree is not None
    keep: list[tuple[int, int]] = []
    for node in block.tree.body:
        if isinstance(node, _DEFINING) or (
            isinstance(node, (ast.Assign, ast.AnnAssign)) and not _calls(node, {name, "print"})
        ):
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            keep.append((start, node.end_lineno or node.lineno))
    lines = block.text.splitlines()
    parts = ["\n".join(lines[a - 1 : b]) for a, b in keep]
    return "\n".join(parts).strip("\n")


def _looks_like_code_for(text: str, name: str) -> bool:
    return re.search(rf"\b(?:async\s+)?def\s+{re.escape(name)}\s*\(", text) is not None


def extract_program(reply: str, name: str, owner: str | None = None) -> Sample:
    """Read one reply: the program defining ``name``, or why there is none.

    Picks the fenced python block that defines ``name`` (the last one when several do); helper
    blocks that only define imports/functions/classes/constants are kept in front of it.  Without
    fences, the whole reply is used if it parses.  ``if __name__ == "__main__":`` blocks, demo
    prints/asserts/calls and the corpus' ``# End of python code`` marker are stripped; so is a
    reasoning model's ``<think>…</think>`` at the head of the reply.
    """
    raw = reply if isinstance(reply, str) else ("" if reply is None else str(reply))
    if not raw.strip():
        return Sample(None, raw, "no_code", "empty reply")
    # Windows line endings would hide a closing fence ("```\r"); the thinking is not the answer.
    text = _THINKING.sub("", raw.replace("\r\n", "\n").replace("\r", "\n"))
    if not text.strip():
        return Sample(None, raw, "no_code", "the reply is all thinking, no answer")

    fenced = _fenced_blocks(text)
    if fenced:
        blocks = [_parse(b) for b in fenced if b.strip()]
    else:
        others = _other_fence_tags(text)
        if others:
            return Sample(None, raw, "other_language", f"a {', '.join(others[:3])} block, not Python")
        blocks = [_parse(text)]
        if blocks[0].tree is None and not _looks_like_code_for(text, name):
            return Sample(None, raw, "no_code", "no code block in the reply")
    if not blocks:
        return Sample(None, raw, "no_code", "empty code block")

    main = [b for b in blocks if b.tree is not None and _defines(b.tree, name, owner)]
    if main:
        chosen = main[-1]
        code, stripped = _strip_demos(chosen, name, owner is not None)
        helpers = [
            _support_only(b, name)
            for b in blocks
            if b is not chosen and b.tree is not None and not _defines(b.tree, name, owner)
        ]
        helpers = [h for h in helpers if h.strip()]
        if helpers:
            code = "\n\n".join(helpers) + "\n\n\n" + code
            try:
                syntax.parse(code)
            except SyntaxError:  # pragma: no cover - parts parsed on their own
                code, _ = _strip_demos(chosen, name, owner is not None)
                helpers = []
        detail = ""
        notes = []
        if stripped:
            notes.append("stripped " + ", ".join(stripped))
        if helpers:
            notes.append(f"kept helpers from {len(helpers)} other block(s)")
        if len(main) > 1:
            notes.append(f"{len(main)} blocks define {name}; used the last")
        detail = "; ".join(notes)
        return Sample(code, raw, "ok", detail)

    broken = [b for b in blocks if b.tree is None]
    broken_with_def = [b for b in broken if _looks_like_code_for(b.text, name)]
    if broken_with_def:
        return Sample(None, raw, "syntax_error", f"syntax error, {broken_with_def[-1].error}")
    parsed = [b for b in blocks if b.tree is not None]
    top_level = [n for b in parsed for n in b.tree.body]  # type: ignore[union-attr]
    if not fenced and parsed and not any(isinstance(n, (*_DEFINING, ast.Assign)) for n in top_level):
        return Sample(None, raw, "no_code", "no code block in the reply")
    if parsed:
        defined = sorted(
            {
                n.name
                for b in parsed
                for n in b.tree.body  # type: ignore[union-attr]
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            }
        )
        what = f" (defines {', '.join(defined[:5])})" if defined else ""
        return Sample(None, raw, "missing_function", f"the code does not define {name}{what}")
    return Sample(None, raw, "syntax_error", f"syntax error, {broken[-1].error}")
