"""The markers as the user writes them: ``# coherence`` (or ``# coherence: off``) comments on or
above a ``def``, decorators named ``...generated``, and the ``# coherence: assume ...`` /
``# coherence: accept ...`` statements.  Comments are found with ``tokenize``, so a ``#`` inside
a string is not one.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize

MARKER_COMMENT = re.compile(r"#\s*coherence\b(?!\s*:\s*(?:off|ignore|skip))", re.IGNORECASE)
OFF_COMMENT = re.compile(r"#\s*coherence\s*:\s*(?:off|ignore|skip)\b", re.IGNORECASE)


def is_marked(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], mode: str) -> bool:
    if mode == "docstring":
        return ast.get_docstring(node) is not None
    for dec in node.decorator_list:
        if decorator_name(dec).endswith("generated"):
            return True
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    candidates = {node.lineno, first - 1, node.lineno - 1}
    return any(1 <= ln <= len(lines) and MARKER_COMMENT.search(_comment_part(lines[ln - 1])) for ln in candidates)


def is_off(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> bool:
    """``# coherence: off`` (or ``ignore``, ``skip``) where a marker would go: never checked."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    for ln in {node.lineno, first - 1, node.lineno - 1}:
        if 1 <= ln <= len(lines) and OFF_COMMENT.search(_comment_part(lines[ln - 1])):
            return True
    return False


def _comment_part(line: str) -> str:
    # Only the comment counts: a string literal "# coherence" on the def line must not mark it.
    if "#" not in line:
        return ""
    return _tokenized_comment(line)


@functools.lru_cache(maxsize=4096)
def _tokenized_comment(line: str) -> str:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return line[line.index("#") :]
    return " ".join(t.string for t in toks if t.type == tokenize.COMMENT)


# "# coherence: assume lo <= hi", "# coherence: accept clamp(0, 1, 0)" on the def line, the lines
# of its decorators, or the line above them.
_STATEMENT_COMMENT = re.compile(r"#\s*coherence\s*:\s*(assume|accept)\s+(.+?)\s*$", re.IGNORECASE)


def user_statements(
    node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The preconditions (``assume``) and accepted calls (``accept``) the user wrote for this
    function: a marker decorator's ``assume=`` argument (a string or a list of strings) and
    ``# coherence: assume ...`` / ``# coherence: accept ...`` comments around its header."""
    assume: list[str] = []
    accept: list[str] = []
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and decorator_name(dec).endswith("generated"):
            for kw in dec.keywords:
                if kw.arg in ("assume", "accept"):
                    values = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
                    texts = [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
                    (assume if kw.arg == "assume" else accept).extend(texts)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    # the comment block right above the header, the decorators and the def line
    start = first - 1
    while start >= 1 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    for ln in range(start + 1, node.lineno + 1):
        if 1 <= ln <= len(lines) and "#" in lines[ln - 1]:
            m = _STATEMENT_COMMENT.search(_comment_part(lines[ln - 1]))
            if m:
                (assume if m.group(1).lower() == "assume" else accept).append(m.group(2))
    return tuple(assume), tuple(accept)


def decorator_name(dec: ast.expr) -> str:
    if isinstance(dec, ast.Call):
        dec = dec.func
    parts = []
    while isinstance(dec, ast.Attribute):
        parts.append(dec.attr)
        dec = dec.value
    if isinstance(dec, ast.Name):
        parts.append(dec.id)
    return ".".join(reversed(parts))
