"""Render check results as text for people, JSON for scripts, SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from coherence import __version__
from coherence.engine.redact import display, redact_tree
from coherence.engine.result import CheckResult

RULES = {
    # the level of an incoherent result follows its severity (``SARIF_LEVEL``)
    "incoherent": ("COH001", "incoherent", "Alternative implementations of this function disagree with it", "warning"),
    "nondeterministic": ("COH002", "nondeterministic", "This function gives different results for the same input", "note"),
    "skipped": ("COH003", "skipped", "This function was not checked", "note"),
    "error": ("COH004", "check-error", "This function could not be checked", "note"),
}


SARIF_LEVEL = {"warning": "warning", "information": "note", "hint": "none", "none": "none"}


def json_entry(r: CheckResult) -> dict:
    ce = r.counterexample
    return {
        "name": r.name,
        "qualname": r.qualname,
        "path": r.path,
        "line": r.line,
        "column": r.column,
        "status": r.status,
        "severity": r.severity,
        # what the severity rests on: the bloc of alternatives against yours on the counterexample
        "evidence": r.evidence or None,
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
        "trust_raw": r.trust_raw,
        "clusters": [asdict(c) for c in r.clusters],
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
        # the stated domain (preconditions, examples, your assume), and why the counterexample
        # lies outside it (null when inside: it lies outside only when no disagreement is inside)
        "domain": r.domain,
        "outside_domain": r.outside_domain or None,
        "accepted": r.accepted,
        "pac_bound": r.pac_bound,
        "delta": r.delta,
        "model": r.model,
        "sampling": r.sampling,
        "sandbox": r.sandbox,
        "cost_usd": r.cost_usd,
        "cost_by_model": r.cost_by_model,
        "seconds": round(r.seconds, 3),
    }


def to_json(results: list[CheckResult]) -> str:
    # (json.dumps escapes every control and non-ASCII character; redaction is left to do)
    return json.dumps({"functions": [redact_tree(json_entry(r)) for r in results]}, indent=2)


def describe(r: CheckResult) -> list[str]:
    """The lines a person reads about one function: the verdict and its evidence first."""
    where = f"{r.path}:{r.line}"
    name = r.qualname or r.name
    if r.status in ("skipped", "error"):
        return [f"{where}  {name}: {r.status} — {r.reason}"]
    ce = r.counterexample
    if r.status == "incoherent":
        head = f"{where}  {name}: {r.severity}"
        if ce is not None:
            head += f" · {r.evidence_line()}"
        head += f" · trust {r.trust:.2f}"
    else:
        head = f"{where}  {name}: {r.status}, trust {r.trust:.2f}"
    lines = [head]
    why = (r.evidence or {}).get("why")
    if r.status == "incoherent" and r.severity == "hint" and why:
        lines.append(f"    only a hint: {why}")
    if r.status == "nondeterministic":
        lines.append(f"    {r.reason}")
    if ce is not None:
        lines.append(f"    counterexample: {ce.call}")
        lines.append(f"      yours: {ce.yours}")
        for alt in ce.alternatives:
            lines.append(f"      {alt.count} of {ce.total} alternatives: {alt.output}")
    if r.outside_domain:
        lines.append(f"    every disagreement is on inputs outside the stated domain: {r.outside_domain}")
    if r.accepted:
        lines.append(f"    accepted as intended: {', '.join(r.accepted)}")
    clusters = " + ".join(f"{c.size} (yours)" if c.yours else str(c.size) for c in r.clusters)
    lines.append(
        f"    incoherence {r.incoherence:.3f} (95% CI {r.incoherence_interval[0]:.3f}–{r.incoherence_interval[1]:.3f}) · "
        f"disagreement with yours {r.disagreement:.3f} · error ≥ {r.error_lower_bound:.3f}"
        if r.incoherence_interval
        else f"    incoherence {r.incoherence:.3f}"
    )
    if r.pac_bound is not None:
        lines.append(f"    no disagreement on {r.inputs} inputs: incoherence ≤ {r.pac_bound:.4f} with {1 - r.delta:.0%} confidence")
    lines.append(f"    clusters {clusters} · DSDE {r.dsde:.3f} · SDE {r.sde:.3f}")
    if r.panel_line():
        lines.append(f"    differ from yours, by model: {r.panel_line()}")
    cost = f" · ${r.cost_usd:.4f}" if r.cost_usd else ""
    if r.cost_split():
        cost += f" ({r.cost_split()})"
    lines.append(f"    {r.samples} samples × {r.inputs} inputs · {r.sampling} · {r.model}{cost} · {r.seconds:.2f}s")
    return lines


def summary_line(results: list[CheckResult]) -> str:
    """``5 function(s): 2 warning, 1 information, 2 coherent``: incoherent results counted by
    severity (the same severity the exit code, SARIF and the editor use), the rest by status."""
    counts: dict[str, int] = {}
    for r in results:
        key = r.severity if r.status == "incoherent" else r.status
        counts[key] = counts.get(key, 0) + 1
    order = ["warning", "information", "hint", "coherent", "nondeterministic", "skipped", "error"]
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    return f"{len(results)} function(s): {', '.join(parts) or 'no marked functions'}"


def to_text(results: list[CheckResult]) -> str:
    out: list[str] = []
    for r in results:
        out.extend(display(line) for line in describe(r))  # values are data: no escapes, no secrets
    out.append("\n" + summary_line(results))
    return "\n".join(out)


def sarif_message(r: CheckResult) -> str:
    if r.status == "incoherent":
        ce = r.counterexample
        detail = f": {ce.summary()}" if ce else ""
        return f"{r.qualname or r.name}: {r.severity}, trust {r.trust:.2f}, incoherence {r.incoherence:.3f}{detail}"
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
        if r.status == "coherent" or (r.status == "incoherent" and r.severity in ("hint", "none")):
            continue  # a hint is for the editor's code lens, not a code-scanning alert
        rid, _, _, level = RULES[r.status]
        if r.status == "incoherent":
            level = SARIF_LEVEL[r.severity]
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
            "properties": {
                **{k: v for k, v in json_entry(r).items() if k in ("severity", "trust", "incoherence", "dsde", "sde", "samples", "inputs")},
                "clusters": r.cluster_sizes,  # sizes only: the alternatives' sources stay out of code scanning
            },
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
