"""What "Show alternatives" shows (pure functions on a result, no LSP types): your function beside
one representative of each behaviour cluster, with what each side returned on the counterexample
and how many programs behave that way.

An editor with a diff view (VS Code) renders the payload itself and steps through the clusters; the
others get the same comparison as one unified diff document.  Docstrings are left out of both
sides: alternatives rarely repeat yours, and the difference to read is in the code.
"""

from __future__ import annotations

import ast
import difflib
import textwrap

from coherence.engine import syntax
from coherence.engine.result import CheckResult


def view(result: CheckResult, function_source: str) -> dict | None:
    """The payload of ``coherence.showAlternatives``: ``yours`` and ``clusters`` (every cluster
    that holds an alternative and is not yours, largest first), each with its ``source``, its
    ``output`` on the counterexample, its ``size``, and the two header lines a view shows above
    it (``label``, ``shown``); None when there is no other cluster."""
    ce = result.counterexample
    others = [(i, c) for i, c in enumerate(result.clusters) if not c.yours and c.representative_source]
    if not others:
        return None
    mine = (
        result.clusters[result.user_cluster]
        if result.user_cluster is not None and result.user_cluster < len(result.clusters)
        else None
    )
    total = result.samples or sum(c.size for c in result.clusters)
    call = ce.call if ce is not None else None

    def shown(output: str | None) -> str:
        return f"{call} -> {output}" if call is not None and output is not None else ""

    yours_size = mine.size if mine is not None else 1
    yours_output = ce.yours if ce is not None else None
    clusters = []
    for at, (i, c) in enumerate(others, start=1):
        models = ", ".join(f"{m} ×{n}" for m, n in c.models.items())
        clusters.append(
            {
                "index": i,
                "size": c.size,
                "models": c.models,
                "source": _code(c.representative_source or ""),
                "output": c.output,
                "label": f"alternative {at} of {len(others)}: {c.size} of {total} programs"
                + (f" ({models})" if models else ""),
                "shown": shown(c.output),
            }
        )
    return {
        "name": result.name,
        "qualname": result.qualname or result.name,
        "call": call,
        "programs": total,
        "yours": {
            "source": _code(function_source),
            "output": yours_output,
            "size": yours_size,
            "label": f"yours: {yours_size} of {total} programs",
            "shown": shown(yours_output),
        },
        "clusters": clusters,
    }


def unified(payload: dict) -> str:
    """Every comparison as one unified diff, each headed by what both sides return on the
    counterexample and how many programs behave that way (for editors without a diff view)."""
    mine = payload["yours"]

    def header(side: dict) -> list[str]:
        return [f"# {side['label']}"] + ([f"#   {side['shown']}"] if side["shown"] else [])

    parts = [f"# coherence: alternatives to {payload['qualname']}", *header(mine)]
    for at, cluster in enumerate(payload["clusters"], start=1):
        parts += ["", *header(cluster)]
        diff = difflib.unified_diff(
            mine["source"].splitlines(), cluster["source"].splitlines(), "yours", f"alternative {at}", lineterm=""
        )
        parts += list(diff) or ["# (the same source)"]
    return "\n".join(parts) + "\n"


def _code(source: str) -> str:
    """``source`` dedented, without the docstrings of its functions and classes (a docstring
    that shares a line with other code stays)."""
    text = textwrap.dedent(source).strip("\n") + "\n"
    try:
        tree = syntax.parse(text)
    except SyntaxError:
        return text
    drop: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not body or len(body) < 2:
            continue
        doc = body[0]
        if (
            isinstance(doc, ast.Expr)
            and isinstance(doc.value, ast.Constant)
            and isinstance(doc.value.value, str)
            and doc.lineno > node.lineno
            and body[1].lineno > (doc.end_lineno or doc.lineno)
        ):
            drop.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    return "".join(line for n, line in enumerate(text.splitlines(keepends=True), start=1) if n not in drop)
