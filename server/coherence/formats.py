"""Render check results as text for people, JSON for scripts, SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import ast
import difflib
import json
import textwrap
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from coherence import __version__
from coherence.engine import syntax
from coherence.engine.redact import display, redact_tree
from coherence.engine.result import CheckResult

# Where a code-scanning user reads what a rule means (the driver's informationUri, each rule's
# helpUri points at its README section; tests/cli/test_docs_commands.py checks that it exists).
PROJECT_URL = "https://github.com/coherence-dev/coherence"

RULES = {
    # the level of an incoherent result follows its severity (``SARIF_LEVEL``)
    "incoherent": ("COH001", "incoherent", "Alternative implementations of this function disagree with it", "warning"),
    "nondeterministic": (
        "COH002",
        "nondeterministic",
        "This function gives different results for the same input",
        "note",
    ),
    "skipped": ("COH003", "skipped", "This function was not checked", "note"),
    # a function that could not be checked fails the run (exit 1): an error, as code scanning counts it
    "error": ("COH004", "check-error", "This function could not be checked", "error"),
    "docstring": (
        "COH005",
        "contradicts-docstring",
        "This function and every alternative contradict a worked example of its docstring",
        "note",
    ),
}

# (full description, help in markdown, README section): what a code-scanning alert's reader needs
RULE_HELP = {
    "incoherent": (
        "An LLM wrote several independent implementations of this function from its signature and "
        "docstring; run on the same inputs in a sandbox, they disagree with yours. A warning means a "
        "bloc of alternatives outvotes yours on an input inside the stated domain; a note means a "
        "sizeable bloc returns something else without outvoting it.",
        "Alternative implementations, written from this function's signature and docstring alone, "
        "disagree with it on the **counterexample** in the message.\n\n"
        "- Run the call from the message and decide who is right.\n"
        "- If the docstring is ambiguous, state the intended behaviour in it (or add an example), "
        "so that alternatives follow it.\n"
        "- If yours is intended, add `# coherence: accept CALL` on the function, or record the "
        "finding in a baseline (`coherence check --write-baseline`).\n\n"
        "`coherence check --show-alternatives FILE` prints the alternatives and a diff against yours.",
        "what-a-result-says",
    ),
    "nondeterministic": (
        "The function returned two different results for the same input in the sandbox, so its "
        "outputs cannot be compared with the alternatives'.",
        "The function gave two different results for the same call (see the message). Make it "
        "deterministic (seed the randomness, do not depend on time or global state), or remove the "
        "`# coherence` marker.",
        "what-a-result-says",
    ),
    "skipped": (
        "The function is marked for checking but coherence did not check it; the message says why.",
        "The function was not checked; the message gives the reason (for example a signature "
        "coherence cannot generate inputs for).",
        "marking-functions",
    ),
    "error": (
        "The function could not be checked: the file does not parse, the LLM or the replay file "
        "gave no usable alternative, or the sandbox could not load the module.",
        "The function could not be checked; the message gives the reason. A syntax error or an "
        "unreadable file fails CI on purpose: code that was not checked does not pass.",
        "continuous-integration",
    ),
    "docstring": (
        "Every alternative implementation agrees with this function, and none of them gives the "
        "result a worked example of the docstring states: the example is wrong, or every sample "
        "shares the same misreading.",
        "This function, and every alternative written from its docstring, contradicts one of the "
        "docstring's worked examples (see the message).\n\n"
        "- Run the example's call and decide which is right: the docstring or the code.\n"
        "- Fix the example, or the function; or accept it with `# coherence: accept CALL`.",
        "what-a-result-says",
    ),
}


def rule_of(r: CheckResult) -> str:
    """The SARIF rule of a result: its status, or "docstring" for a coherent function that
    contradicts its docstring's worked example."""
    return "docstring" if r.contradicts_docstring else r.status


SARIF_LEVEL = {"warning": "warning", "information": "note", "hint": "none", "none": "none"}


def repository_root(path: str | Path) -> Path | None:
    """The git top level holding ``path`` (a ``.git`` folder, or a worktree's ``.git`` file), found
    without running git.  Code scanning places results relative to it, and ignores
    ``originalUriBaseIds`` (github/codeql-action#2215)."""
    p = Path(path).resolve()
    for d in (p, *p.parents):
        if (d / ".git").exists():
            return d
    return None


def sarif_root(results: list[CheckResult], fallback: str | Path | None) -> Path:
    """What every URI is relative to: the git top level of the checked files (else of the
    current folder); outside git, ``fallback`` (the project's folder), else the current folder."""
    starts: list[str | Path] = [*(r.path for r in results[:1]), Path.cwd()]
    for start in starts:
        top = repository_root(start)
        if top is not None:
            return top
    return Path(fallback).resolve() if fallback else Path.cwd().resolve()


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
        # the calibration cell trust was read from: severity · spec stratum · panel
        "trust_map": r.trust_map or None,
        "clusters": [asdict(c) for c in r.clusters],
        "user_cluster": r.user_cluster,
        "counterexample": None
        if ce is None
        else {
            "call": ce.call,
            "yours": ce.yours,
            "theirs": ce.theirs,
            "alternatives": [{"output": a.output, "count": a.count, "agrees": a.agrees} for a in ce.alternatives],
            "disagreeing": ce.disagreeing,
            "total": ce.total,
            "shrunk_from": ce.shrunk_from,
            "stated": ce.stated,
            "mutation": ce.mutation,
            "yours_message": ce.yours_message,
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


def to_json(results: list[CheckResult], notifications: Sequence[tuple[str, str]] = ()) -> str:
    """``{"functions": [...]}``, with ``"notifications"`` (level and message) when the run had
    something to say about itself: an interruption, the LLM failing for every function."""
    # (json.dumps escapes every control and non-ASCII character; redaction is left to do)
    doc: dict = {"functions": [redact_tree(json_entry(r)) for r in results]}
    if notifications:
        doc["notifications"] = [{"level": level, "message": display(text)} for level, text in notifications]
    return json.dumps(doc, indent=2)


def describe(r: CheckResult) -> list[str]:
    """The lines a person reads about one function: the verdict and its evidence first."""
    where = f"{r.path}:{r.line}"
    name = r.qualname or r.name
    if r.status in ("skipped", "error"):
        return [f"{where}  {name}: {r.status} — {r.reason}"]
    ce = r.counterexample
    # the evidence and what each side gives first, then what it says in numbers
    head = f"{where}  {name}: {r.finding or r.status}"
    if r.finding and ce is not None:
        head += f" · {r.evidence_and_values()}"
    if r.trust is not None:
        head += f" · {r.trust_in_words()}"
    lines = [head]
    why = (r.evidence or {}).get("why")
    if r.status == "incoherent" and r.severity == "hint" and why:
        lines.append(f"    only a hint: {why}")
    elif r.severity == "information" and why:  # why it is no warning: the example may be what is wrong
        lines.append(f"    only information: {why}")
    elif r.severity == "warning" and why:  # a panel's warning that the whole-models term let through
        lines.append(f"    from the panel: {why}")
    if r.status == "nondeterministic":
        lines.append(f"    {r.reason}")
    if ce is not None:
        lines.append(f"    counterexample: {ce.call}")
        lines.extend(f"      {row}" for row in ce.rows())
    if r.outside_domain:
        lines.append(f"    every disagreement is on inputs outside the stated domain: {r.outside_domain}")
    if r.accepted:
        lines.append(f"    accepted as intended: {', '.join(r.accepted)}")
    clusters = " + ".join(f"{c.size} (yours)" if c.yours else str(c.size) for c in r.clusters)
    # Where no input shows a disagreement, the bound below is the interval (the Hoeffding one,
    # 0.043 wide at n = 1000, would contradict it), and an error bound of 0 says nothing: as the hover.
    if r.incoherence_interval and r.incoherence:
        lo, hi = r.incoherence_interval
        lines.append(
            f"    incoherence {r.incoherence:.3f} ({1 - r.delta:.0%} CI {lo:.3f}–{hi:.3f}) · "
            f"disagreement with yours {r.disagreement:.3f} · error ≥ {r.error_lower_bound:.3f}"
        )
    elif r.disagreement is not None:
        lines.append(f"    incoherence {r.incoherence:.3f} · disagreement with yours {r.disagreement:.3f}")
    else:
        lines.append(f"    incoherence {r.incoherence:.3f}")
    if r.pac_bound is not None:
        lines.append(
            f"    no disagreement on {r.inputs} inputs: incoherence ≤ {r.pac_bound:.4f} with {1 - r.delta:.0%} confidence"
        )
    lines.append(f"    clusters {clusters} · DSDE {r.dsde:.3f} · SDE {r.sde:.3f}")
    if r.panel_line():
        lines.append(f"    differ from yours, by model: {r.panel_line()}")
    cost = f" · ${r.cost_usd:.4f}" if r.cost_usd else ""
    if r.cost_split():
        cost += f" ({r.cost_split()})"
    sandbox = f" · sandbox {r.sandbox}" if r.sandbox else ""
    lines.append(
        f"    {r.samples} samples × {r.inputs} inputs · {r.sampling} · {r.model}{cost}{sandbox} · {r.seconds:.2f}s"
    )
    return lines


def summary_line(results: list[CheckResult]) -> str:
    """``5 function(s): 2 warning, 1 information, 2 coherent``: incoherent results counted by
    severity (the same severity the exit code, SARIF and the editor use), the rest by status."""
    counts: dict[str, int] = {}
    for r in results:
        key = r.finding if r.finding else r.status
        counts[key] = counts.get(key, 0) + 1
    order = ["warning", "information", "hint", "coherent", "nondeterministic", "skipped", "error"]
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    return f"{len(results)} function(s): {', '.join(parts) or 'no marked functions'}"


def alternatives_lines(r: CheckResult, yours: str | None) -> list[str]:
    """``--show-alternatives``: each cluster's representative alternative, its output on the
    counterexample, and a unified diff of it against the user's function ``yours``."""
    if not r.clusters:
        return []
    ce = r.counterexample
    lines = [f"    alternatives, by behaviour ({len(r.clusters)} cluster(s), largest first):"]
    for i, c in enumerate(r.clusters, start=1):
        alts = c.size - 1 if c.yours else c.size
        who = ", ".join(k if len(c.models) == 1 else f"{v} {k}" for k, v in c.models.items())
        head = f"      cluster {i}{' (yours)' if c.yours else ''}: {alts} alternative(s)" + (
            f" from {who}" if who else ""
        )
        if ce is not None and c.output is not None:
            head += f" · {ce.call} -> {c.output}"
        lines.append(head)
        if c.representative_source is None:
            lines.append("        (only your function behaves this way)")
            continue
        if yours is None:
            lines.extend("        " + ln for ln in c.representative_source.rstrip("\n").splitlines())
            continue
        diff = difflib.unified_diff(
            _code_lines(yours), _code_lines(c.representative_source), "yours", f"alternative (cluster {i})", lineterm=""
        )
        lines.extend("        " + ln for ln in diff)
    return lines


def _code_lines(source: str) -> list[str]:
    """A function's lines as the diff compares them: dedented (a method), without its docstring
    (the alternatives were written from it and leave it out: it would fill every diff)."""
    source = textwrap.dedent(source).rstrip("\n")
    lines = source.splitlines()
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return lines
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is not None and ast.get_docstring(fn, clean=False) is not None:
        doc = fn.body[0]
        del lines[doc.lineno - 1 : doc.end_lineno]
    return lines


def to_text(
    results: list[CheckResult], alternatives: dict[tuple[str, str], str] | None = None, notes: Sequence[str] = ()
) -> str:
    """The report for people; with ``alternatives`` (the user's function source by (path,
    qualname)), each result's clusters are shown too (``--show-alternatives``); ``notes`` (an
    interruption) come before the summary line."""
    out: list[str] = []
    for r in results:
        lines = describe(r)
        if alternatives is not None:
            lines += alternatives_lines(r, alternatives.get((r.path, r.qualname or r.name)))
        out.extend(display(line) for line in lines)  # values are data: no escapes, no secrets
    out.extend(display(f"\n{note}") for note in notes)
    out.append("\n" + summary_line(results))
    return "\n".join(out)


def sarif_message(r: CheckResult) -> str:
    if r.contradicts_docstring and r.counterexample is not None:
        return f"{r.qualname or r.name}: {r.finding}, {r.evidence_line()}"
    if r.status == "incoherent":
        ce = r.counterexample
        detail = f": {ce.summary()}" if ce else ""
        return f"{r.qualname or r.name}: {r.severity}, trust {r.trust:.2f}, incoherence {r.incoherence:.3f}{detail}"
    return f"{r.qualname or r.name}: {r.status}: {r.reason}"


def sarif_rule(status: str) -> dict:
    rid, name, text, level = RULES[status]
    full, markdown, section = RULE_HELP[status]
    return {
        "id": rid,
        "name": name,
        "shortDescription": {"text": text},
        "fullDescription": {"text": full},
        "help": {"text": markdown.replace("`", "").replace("**", ""), "markdown": markdown},
        "helpUri": f"{PROJECT_URL}#{section}",
        "defaultConfiguration": {"level": level},
    }


def sarif_level(r: CheckResult, fail_on: str = "warning") -> str:
    """A result's level, in step with the exit status: what fails the run (``--fail-on``) is at
    least a warning, and a function that could not be checked is an error."""
    from coherence.engine.verdict import at_least

    level = RULES[rule_of(r)][3]
    if r.finding:
        level = SARIF_LEVEL[r.finding]
        if fail_on != "never" and at_least(r.finding, fail_on) and level in ("note", "none"):
            level = "warning"
    return level


def invocation(notifications: Sequence[tuple[str, str]], exit_status: int | None) -> dict:
    """The run as SARIF sees it: whether it ran to its end (exit 0 or 1: its findings are
    complete), how it exited, and what it said about itself."""
    entry: dict = {"executionSuccessful": exit_status in (None, 0, 1)}
    if exit_status is not None:
        entry["exitCode"] = exit_status
    if notifications:
        entry["toolExecutionNotifications"] = [
            {"level": level, "message": {"text": display(text)}} for level, text in notifications
        ]
    return entry


def to_sarif(
    results: list[CheckResult],
    root: str | Path | None = None,
    *,
    fail_on: str = "warning",
    notifications: Sequence[tuple[str, str]] = (),
    exit_status: int | None = None,
) -> str:
    """SARIF 2.1.0 for code scanning.  URIs are relative to the repository's git top level
    (``sarif_root``; ``root`` is the fallback outside git); a file outside it gets a file: URI.
    Levels follow the exit status (``sarif_level``); the run's own messages (an interruption, the
    LLM failing) are its invocation's notifications, with the exit status."""
    root_path = sarif_root(results, root)
    sarif_results = []
    for r in results:
        if (r.status == "coherent" and not r.finding) or r.finding in ("hint", "none"):
            continue  # a hint is for the editor's code lens, not a code-scanning alert
        rule = rule_of(r)
        rid = RULES[rule][0]
        level = sarif_level(r, fail_on)
        p = Path(r.path)
        try:
            uri = p.resolve().relative_to(root_path).as_posix()
        except ValueError:
            uri = p.resolve().as_uri()
        entry = {
            "ruleId": rid,
            "ruleIndex": list(RULES).index(rule),
            "level": level,
            "message": {"text": display(sarif_message(r))},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}
                        if not uri.startswith("file:")
                        else {"uri": uri},
                        "region": {"startLine": max(1, r.line), "startColumn": r.column + 1},
                    },
                    "logicalLocations": [{"fullyQualifiedName": r.qualname or r.name, "kind": "function"}],
                }
            ],
            "partialFingerprints": {"coherenceFunction/v1": f"{uri}:{r.qualname or r.name}"},
            "properties": {
                **{
                    k: v
                    for k, v in json_entry(r).items()
                    if k in ("severity", "trust", "incoherence", "dsde", "sde", "samples", "inputs")
                },
                "clusters": r.cluster_sizes,  # sizes only: the alternatives' sources stay out of code scanning
                "sandbox": r.sandbox,  # which sandbox ran the generated code
            },
        }
        sarif_results.append(entry)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "coherence",
                        "version": __version__,
                        "informationUri": PROJECT_URL,
                        "rules": [sarif_rule(status) for status in RULES],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root_path.as_uri() + "/"}},
                "invocations": [invocation(notifications, exit_status)],
                "results": sarif_results,
                # which sandbox ran the generated code (every one, when functions differ)
                "properties": {"sandbox": ", ".join(sorted({r.sandbox for r in results if r.sandbox}))},
            }
        ],
    }
    return json.dumps(doc, indent=2)
