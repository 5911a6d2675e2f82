"""Render check results as text for people, JSON for scripts, SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from pathlib import Path

from coherence import __version__
from coherence.engine.redact import display, redact_tree
from coherence.engine.result import CheckResult

RULES = {
    "incoherent": ("COH001", "incoherent", "Alternative implementations of this function disagree with it", "warning"),
    "nondeterministic": ("COH002", "nondeterministic", "This function gives different results for the same input", "note"),
    "skipped": ("COH003", "skipped", "This function was not checked", "note"),
    "error": ("COH004", "check-error", "This function could not be checked", "note"),
}


def json_entry(r: CheckResult) -> dict:
    ce = r.counterexample
    return {
        "name": r.name,
        "qualname": r.qualname,
        "path": r.path,
        "line": r.line,
        "column": r.column,
        "status": r.status,
        "reason": r.reason,
        "samples": r.samples,
        "inputs": r.inputs,
        "incoherence": r.incoherence,
        "incoherence_interval": r.incoherence_interval,
        "disagreement": r.disagreement,
        "error_lower_bound": r.error_lower_bound,
        "dsde": r.dsde,
        "sde": r.sde,
        "trust": r.trust,
        "clusters": r.clusters,
        "user_cluster": r.user_cluster,
        "counterexample": None
        if ce is None
        else {
            "call": ce.call,
            "yours": ce.yours,
            "theirs": ce.theirs,
            "alternatives": [{"output": a.output, "count": a.count} for a in ce.alternatives],
            "disagreeing": ce.disagreeing,
            "total": ce.total,
            "shrunk_from": ce.shrunk_from,
        },
        # why every disagreeing input lies outside the docstring's examples' domain, or null
        "outside_domain": r.extra.get("outside_domain") or None,
        "pac_bound": r.pac_bound,
        "delta": r.delta,
        "model": r.model,
        "sampling": r.sampling,
        "sandbox": r.sandbox,
        "cost_usd": r.cost_usd,
        "seconds": round(r.seconds, 3),
    }


def to_json(results: list[CheckResult]) -> str:
    # (json.dumps escapes every control and non-ASCII character; redaction is left to do)
    return json.dumps({"functions": [redact_tree(json_entry(r)) for r in results]}, indent=2)


def describe(r: CheckResult) -> list[str]:
    """The lines a person reads about one function."""
    where = f"{r.path}:{r.line}"
    if r.status in ("skipped", "error"):
        return [f"{where}  {r.qualname or r.name}: {r.status} — {r.reason}"]
    head = f"{where}  {r.qualname or r.name}: {r.status}, trust {r.trust:.2f}"
    lines = [head]
    clusters = " + ".join(str(c) if i != r.user_cluster else f"{c} (yours)" for i, c in enumerate(r.clusters))
    lines.append(
        f"    incoherence {r.incoherence:.3f} (95% CI {r.incoherence_interval[0]:.3f}–{r.incoherence_interval[1]:.3f}) · "
        f"disagreement with yours {r.disagreement:.3f} · error ≥ {r.error_lower_bound:.3f}"
        if r.incoherence_interval
        else f"    incoherence {r.incoherence:.3f}"
    )
    if r.pac_bound is not None:
        lines.append(f"    no disagreement on {r.inputs} inputs: incoherence ≤ {r.pac_bound:.4f} with {1 - r.delta:.0%} confidence")
    lines.append(f"    clusters {clusters} · DSDE {r.dsde:.3f} · SDE {r.sde:.3f}")
    if r.status == "nondeterministic":
        lines.append(f"    {r.reason}")
    ce = r.counterexample
    if ce is not None:
        lines.append(f"    counterexample: {ce.call}")
        lines.append(f"      yours: {ce.yours}")
        for alt in ce.alternatives:
            lines.append(f"      {alt.count} of {ce.total} alternatives: {alt.output}")
    if r.extra.get("outside_domain"):
        lines.append(f"    every disagreement is on inputs outside what your docstring describes: {r.extra['outside_domain']}")
    cost = f" · ${r.cost_usd:.4f}" if r.cost_usd else ""
    lines.append(f"    {r.samples} samples × {r.inputs} inputs · {r.sampling} · {r.model}{cost} · {r.seconds:.2f}s")
    return lines


def to_text(results: list[CheckResult]) -> str:
    out: list[str] = []
    for r in results:
        out.extend(display(line) for line in describe(r))  # values are data: no escapes, no secrets
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no marked functions"
    out.append(f"\n{len(results)} function(s): {summary}")
    return "\n".join(out)


def sarif_message(r: CheckResult) -> str:
    if r.status == "incoherent":
        ce = r.counterexample
        detail = f": {ce.summary()}" if ce else ""
        return f"{r.name}: trust {r.trust:.2f}, incoherence {r.incoherence:.3f}{detail}"
    return f"{r.name}: {r.status}: {r.reason}"


def to_sarif(results: list[CheckResult], root: str | Path | None = None) -> str:
    root_path = Path(root).resolve() if root else Path.cwd().resolve()
    rules = [
        {
            "id": rid,
            "name": name,
            "shortDescription": {"text": text},
            "defaultConfiguration": {"level": level},
        }
        for rid, name, text, level in RULES.values()
    ]
    sarif_results = []
    for r in results:
        if r.status == "coherent":
            continue
        rid, _, _, level = RULES[r.status]
        p = Path(r.path)
        try:
            uri = p.resolve().relative_to(root_path).as_posix()
        except ValueError:
            uri = p.resolve().as_uri()
        entry = {
            "ruleId": rid,
            "ruleIndex": list(RULES).index(r.status),
            "level": level,
            "message": {"text": display(sarif_message(r))},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"} if not uri.startswith("file:") else {"uri": uri},
                        "region": {"startLine": max(1, r.line), "startColumn": r.column + 1},
                    }
                }
            ],
            "partialFingerprints": {"coherenceFunction/v1": f"{uri}:{r.qualname or r.name}"},
            "properties": {k: v for k, v in json_entry(r).items() if k in ("trust", "incoherence", "dsde", "sde", "samples", "inputs", "clusters")},
        }
        sarif_results.append(entry)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "coherence", "version": __version__, "rules": rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root_path.as_uri() + "/"}},
                "results": sarif_results,
            }
        ],
    }
    return json.dumps(doc, indent=2)
