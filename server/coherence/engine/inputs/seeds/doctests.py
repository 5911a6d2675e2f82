"""Seeds from the docstring: its doctest examples and prose such as ``x = 3``."""

from __future__ import annotations

import ast
import doctest
import re
from typing import Any

from coherence.engine import syntax
from coherence.engine.inputs.seeds.expressions import Harvester, Unsupported, allowed_names, literalish
from coherence.engine.inputs.seeds.module_names import module_names
from coherence.engine.inputs.values import Input
from coherence.engine.spec import Spec
from coherence.engine.stated.examples import balanced_call

_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)\s?(.*)$")


def _examples(doc: str) -> list[str]:
    try:
        return [ex.source for ex in doctest.DocTestParser().get_examples(doc)]
    except ValueError:
        pass
    out: list[str] = []
    for line in doc.splitlines():
        m = _PROMPT.match(line)
        if not m:
            continue
        if m.group(1) == "..." and out:
            out[-1] += "\n" + m.group(2)
        elif m.group(1) == ">>>":
            out.append(m.group(2))
    return out


def doctest_seeds(spec: Spec, module_source: str | None = None) -> list[Input]:
    """Calls of ``spec.name`` in the docstring's ``>>>`` examples (with the names those examples
    assign or import), then literal calls written inline in its prose (``f(3) == 5``,
    ``f([1, 2]) ➞ 3``)."""
    doc = spec.docstring
    if not doc:
        return []
    allowed = allowed_names(spec, module_source)
    known = module_names(module_source)
    out: list[Input] = []
    env: dict[str, ast.AST] = {}
    h = Harvester(spec, "", "doctest", allowed)  # one for all examples: they share names
    for src in _examples(doc):
        try:
            tree = syntax.parse(src)
        except (SyntaxError, ValueError):
            continue
        h.source = src
        for st in tree.body:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                h.note_import(st, env, known)
                continue
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            h.harvest(st, env)
            h.note_assign(st, env)
    out.extend(h.found)
    # Inline examples in prose: literal arguments only.
    prompt_free = "\n".join(ln for ln in doc.splitlines() if not _PROMPT.match(ln))
    for m in re.finditer(r"(?<![\w.])" + re.escape(spec.name) + r"\s*\(", prompt_free):
        text = balanced_call(prompt_free, m.start())
        if not text:
            continue
        try:
            node = syntax.parse(text.replace("\n", " "), mode="eval").body
        except (SyntaxError, ValueError):
            continue
        h = Harvester(spec, text, "doctest", allowed, require_literal=True)
        h.harvest(node, {})
        out.extend(h.found)
    out.extend(_prose_assignments(spec, prompt_free))
    return out


def _literal_prefix(text: str) -> tuple[Any, bool]:
    """The longest prefix of ``text`` that is a literal (not ending in a bare comma)."""
    cuts = [m.start() for m in re.finditer(r"[,\s)]", text)] + [len(text)]
    for j in sorted(set(cuts), reverse=True):
        cand = text[:j].rstrip()
        if not cand or cand.endswith(","):
            continue
        try:
            node = syntax.parse(cand, mode="eval").body
        except (SyntaxError, ValueError):
            continue
        if isinstance(node, ast.Tuple) and not cand.lstrip().startswith("("):
            continue  # ``1, 2`` without brackets: ambiguous
        try:
            return literalish(node), True
        except Unsupported:
            continue
    return None, False


def _prose_assignments(spec: Spec, text: str) -> list[Input]:
    """Examples written as assignments to the parameters in prose: ``For lst = [1,2,3] the output
    should be 14``, ``Input: arr = [-3, -4, 5], k = 3``, ``For s = "abcde", c = "ae"``.  A line
    that assigns every required parameter is one example."""
    params = [p for p in spec.params if p.kind not in ("var_positional", "var_keyword")]
    if not params:
        return []
    names = {p.name for p in params}
    required = {p.name for p in params if p.default is None}
    rx = re.compile(
        r"(?<![\w.])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\s*=(?!=)\s*"
    )
    out: list[Input] = []
    for line in text.splitlines():
        found: dict[str, Any] = {}
        for m in rx.finditer(line):
            v, ok = _literal_prefix(line[m.end() :].strip()[:2000])
            if ok and m.group(1) not in found:
                found[m.group(1)] = v
        if not found or not required <= set(found):
            continue
        args: list[Any] = []
        kwargs: list[tuple[str, Any]] = []
        for p in params:
            if p.name not in found:
                continue  # a defaulted parameter left out: later ones go by keyword
            if p.kind == "keyword_only" or len(args) < [q.name for q in params].index(p.name):
                kwargs.append((p.name, found[p.name]))
            else:
                args.append(found[p.name])
        out.append(Input(tuple(args), tuple(kwargs), origin="doctest"))
    return out
