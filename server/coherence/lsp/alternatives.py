"""What "Show alternatives" shows (pure functions on a result, no LSP types): your function beside
one representative of each behaviour cluster, with what each side returned on the counterexample
and how many programs behave that way.

An editor with a diff view (VS Code) renders the payload itself and steps through the clusters; the
others get the same comparison as one unified diff document.
"""

from __future__ import annotations

import difflib
import textwrap

from coherence.engine.result import CheckResult


def view(result: CheckResult, function_source: str) -> dict | None:
    """The payload of ``coherence.showAlternatives``: ``yours`` and ``clusters`` (every cluster
    that holds an alternative and is not yours, largest first), or None when there is none."""
    ce = result.counterexample
    others = [(i, c) for i, c in enumerate(result.clusters) if not c.yours and c.representative_source]
    if not others:
        return None
    mine = result.clusters[result.user_cluster] if result.user_cluster is not None and result.user_cluster < len(result.clusters) else None
    return {
        "name": result.name,
        "qualname": result.qualname or result.name,
        "call": ce.call if ce is not None else None,
        "programs": result.samples,
        "yours": {
            "source": textwrap.dedent(function_source).strip("\n") + "\n",
            "output": ce.yours if ce is not None else None,
            "size": mine.size if mine is not None else 1,
        },
        "clusters": [
            {
                "index": i,
                "size": c.size,
                "models": c.models,
                "source": textwrap.dedent(c.representative_source or "").strip("\n") + "\n",
                "output": c.output,
            }
            for i, c in others
        ],
    }


def side_label(payload: dict, cluster: dict | None) -> str:
    """``yours: 1 of 10 programs`` / ``cluster 2 of 3: 9 of 10 programs (gpt-4o-mini ×9)``."""
    total = payload["programs"] or sum(c["size"] for c in payload["clusters"]) + payload["yours"]["size"]
    if cluster is None:
        return f"yours: {payload['yours']['size']} of {total} programs"
    at = payload["clusters"].index(cluster) + 1
    models = ", ".join(f"{m} ×{n}" for m, n in cluster["models"].items())
    return f"alternative {at} of {len(payload['clusters'])}: {cluster['size']} of {total} programs" + (f" ({models})" if models else "")


def output_line(payload: dict, output: str | None) -> str:
    """``count_vowels('A') -> 1``, or "" without a counterexample or an output on it."""
    if payload["call"] is None or output is None:
        return ""
    return f"{payload['call']} -> {output}"


def unified(payload: dict) -> str:
    """Every comparison as one unified diff, each headed by what both sides return on the
    counterexample and how many programs behave that way (for editors without a diff view)."""
    mine = payload["yours"]
    parts = [f"# coherence: alternatives to {payload['qualname']}", f"# {side_label(payload, None)}"]
    if output_line(payload, mine["output"]):
        parts.append(f"#   {output_line(payload, mine['output'])}")
    for cluster in payload["clusters"]:
        parts += ["", f"# {side_label(payload, cluster)}"]
        if output_line(payload, cluster["output"]):
            parts.append(f"#   {output_line(payload, cluster['output'])}")
        at = payload["clusters"].index(cluster) + 1
        diff = difflib.unified_diff(mine["source"].splitlines(), cluster["source"].splitlines(), "yours", f"alternative {at}", lineterm="")
        parts += list(diff) or ["# (the same source)"]
    return "\n".join(parts) + "\n"
