"""Text shown in the editor for a result: diagnostic messages, hover markdown, code lens titles."""

from __future__ import annotations

import re
import time

from coherence.engine.frequency import in_words
from coherence.engine.redact import display, escape, redact
from coherence.engine.result import CheckResult


def _trust(r: CheckResult) -> str:
    return f"trust {r.trust:.2f}" if r.trust is not None else "trust ?"


def alternatives_disagreeing(r: CheckResult) -> tuple[int, int]:
    """(alternatives outside the user's cluster, alternatives compared)."""
    total = max(0, r.samples - 1)
    if r.user_cluster is None or not r.clusters or r.user_cluster >= len(r.clusters):
        return 0, total
    same = r.clusters[r.user_cluster].size - 1  # the user's function is in its own cluster
    return max(0, total - same), total


def partial_sampling(r: CheckResult) -> str:
    """``"7 of 10 samples; 3 failed: rate limited (429)"`` when samples are missing, else ""."""
    return r.sampling if r.sampling and "; " in r.sampling else ""


# LSP DiagnosticSeverity of each verdict severity; a hint gets no diagnostic (code lens only).
LSP_SEVERITY = {"warning": 2, "information": 3}


def diagnostic_severity(r: CheckResult) -> int | None:
    """The LSP severity of a result's diagnostic, from the engine's verdict (``r.severity``);
    None when it gets none: coherent (unless it contradicts its docstring), or an incoherent
    function whose verdict is only a hint."""
    if r.status in ("coherent", "incoherent"):
        return LSP_SEVERITY.get(r.finding)
    return 3  # nondeterministic, skipped, error: information


def diagnostic_message(r: CheckResult) -> str:
    """What the editor shows as plain text: values are data, so redacted and escaped."""
    return display(_diagnostic_message(r))


def _diagnostic_message(r: CheckResult) -> str:
    if r.contradicts_docstring:
        return f"{r.evidence_line()} ({_trust(r)})"
    if r.status == "incoherent":
        ce = r.counterexample
        partial = f" · {partial_sampling(r)}" if partial_sampling(r) else ""
        where = f" · only on inputs outside the stated domain ({r.outside_domain})" if r.outside_domain else ""
        if ce is not None and ce.stated is not None:  # the evidence line already says both
            return f"{r.evidence_line()} ({_trust(r)}){partial}"
        if ce is not None:
            return f"{r.evidence_line()}: yours {ce.yours}, theirs {ce.theirs} ({_trust(r)}){where}{partial}"
        k, total = alternatives_disagreeing(r)
        return f"{k} of {total} alternative implementations behave differently from yours ({_trust(r)}, incoherence {r.incoherence or 0:.3f}){partial}"
    if r.status == "nondeterministic":
        return f"{r.name} is nondeterministic, so it was not compared: {r.reason}"
    if r.status == "skipped":
        return f"{r.name} was not checked: {r.reason}"
    return f"{r.name} could not be checked: {r.reason}"


def lens_title(
    r: CheckResult | None,
    *,
    checking: bool,
    stale: bool = False,
    failure: CheckResult | None = None,
    stale_why: str | None = None,
) -> str:
    if checking:
        return "coherence: checking…"
    if r is None:
        return "coherence: not checked · click to check"
    if r.status in ("coherent", "incoherent") and r.accepted and r.finding in ("", "hint"):
        # what the user accepted, not the disagreement worded as evidence against their code
        title = f"coherence: accepted as intended: {', '.join(r.accepted)}"
    elif r.status in ("coherent", "incoherent"):
        title = f"coherence: {r.finding} · {r.headline()}" if r.finding else f"coherence: {r.headline()}"
        if partial_sampling(r):
            title += f" · {partial_sampling(r)}"
    elif r.status == "skipped":
        title = f"coherence: skipped — {r.reason}"
    elif r.status == "nondeterministic":
        title = f"coherence: nondeterministic — {r.reason}"
    else:
        title = f"coherence: error — {r.reason}"
    if stale_why:
        title += f" ({stale_why})"
    elif stale:
        title += " (earlier version)"
    if failure is not None and r is not None:
        title += f" · {failed_note(r, failure)}"
    return _one_line(title, 160)


def _one_line(text: str, limit: int) -> str:
    text = display(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _code(text: str) -> str:
    """Inline code that nothing in ``text`` can close: the fence is one backtick longer than its
    longest run of backticks (CommonMark), and a space inside each end, which CommonMark strips,
    when the text starts or ends with a backtick or a space."""
    text = display(text)
    fence = "`" * (max(map(len, _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_BACKTICKS = re.compile("`+")
# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaped, none of them
# starts a link, an image, HTML, emphasis or a heading.
_MARKUP = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")


def _text(text: str) -> str:
    """Plain text in the hover's markdown: redacted, escaped, and never markup."""
    return _MARKUP.sub(r"\\\1", display(text))


def _block(code: str) -> str:
    """A fenced block of Python that no line of ``code`` can close (a longer fence than any run
    of backticks in it); control and bidi characters escaped, line breaks and tabs kept."""
    code = escape(redact(code), keep="\n\t")
    fence = "`" * max(3, max(map(len, _BACKTICKS.findall(code)), default=0) + 1)
    return f"{fence}python\n{code}\n{fence}"


def failed_note(kept: CheckResult, failure: CheckResult | None = None) -> str:
    """``"last checked 10:42; this check failed: <why>"``: said beside a finding that a failed
    check left standing (without ``failure``: the first half only)."""
    when = time.strftime("%H:%M", time.localtime(kept.checked_at)) if kept.checked_at else "earlier"
    note = f"last checked {when}"
    if failure is not None:
        note += f"; this check failed: {failure.reason.removeprefix('coherence: ')}"
    return note


def failure_markdown(kept: CheckResult, failure: CheckResult) -> str:
    """The hover's line under a finding that a failed check left standing."""
    return f"**{_text(failed_note(kept, failure).capitalize())}**"


def _ago(ts: float) -> str:
    if not ts:
        return "?"
    secs = max(0, time.time() - ts)
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    if secs < 60:
        return f"{when} ({int(secs)} s ago)"
    if secs < 3600:
        return f"{when} ({int(secs // 60)} min ago)"
    return when


def hover_markdown(r: CheckResult, *, stale: bool = False, checking: bool = False, stale_why: str | None = None) -> str:
    """The hover: verdict, the evidence and the counterexample's values first, then the figures,
    in few lines (VS Code's hover is 250 px high); the alternatives' code is behind Show alternatives."""
    lines: list[str] = []
    verdict = r.finding or r.status
    lines.append(f"**coherence** · {_code(r.qualname or r.name)} · **{verdict}**")
    ce = r.counterexample
    if r.finding and ce is not None:
        # the evidence first: who disagrees, on what, and what each side gives
        lines.append("")
        lines.append(f"{r.evidence_line().replace(ce.call, _code(ce.call))}")
    if ce is not None and r.status not in ("skipped", "error"):
        lines.append("")
        lines.append(f"counterexample: {_code(ce.call)}")
        lines.append("")
        lines.extend(f"- {row}" for row in ce.rows(_code, _text, shrunk=True))
    why = (r.evidence or {}).get("why")
    if r.status == "incoherent" and r.severity == "hint" and why:
        lines.append("")
        lines.append(f"_Only a hint: {why}._")
    elif r.severity == "information" and why:
        lines.append("")
        lines.append(f"_Only information: {why}._")
    elif r.severity == "warning" and why:
        lines.append("")
        lines.append(f"_From the panel: {why}._")
    if stale_why:
        lines.append("")
        lines.append(f"_This result was {_text(stale_why)}." + (" Checking again…_" if checking else "_"))
    elif stale:
        lines.append("")
        lines.append(
            "_This result is for an earlier version of the function._" + (" Checking the new one…" if checking else "")
        )
    elif checking:
        lines.append("")
        lines.append("_Checking again…_")
    if r.status in ("skipped", "error") or (r.status == "nondeterministic" and r.incoherence is None):
        lines.append("")
        lines.append(_text(r.reason or r.status))
        return "\n".join(lines)
    if r.status == "nondeterministic":
        lines.append("")
        lines.append(_text(r.reason))
    if r.outside_domain:
        lines.append("")
        lines.append(f"Every disagreement is on inputs outside the stated domain: {_text(r.outside_domain)}.")
    if r.accepted:
        lines.append("")
        lines.append(f"Accepted as intended: {', '.join(_code(c) for c in r.accepted)}.")

    lines.append("")
    # then what the evidence says in numbers: trust in words first
    if r.trust is not None:
        lines.append(f"**trust {r.trust:.2f}**: {in_words(r.trust)}.")
        lines.append("")
    if r.incoherence is not None:
        inc = f"incoherence {r.incoherence:.3f}"
        if r.incoherence_interval and r.incoherence > 0:
            lo, hi = r.incoherence_interval
            inc += f" (Hoeffding {1 - r.delta:.0%} interval {lo:.3f}–{hi:.3f})"
        if r.pac_bound is not None and not r.incoherence:
            inc += f" · no disagreement on {r.inputs} inputs: incoherence ≤ {r.pac_bound:.4f} with {1 - r.delta:.0%} confidence"
        parts = [inc]
        if r.disagreement is not None:
            parts.append(f"disagreement with yours {r.disagreement:.3f}")
        if r.error_lower_bound is not None and r.incoherence:
            parts.append(f"error ≥ {r.error_lower_bound:.3f}")
        lines.append(" · ".join(parts))
        lines.append("")
    if r.clusters:
        clusters = ", ".join(f"{c.size} (yours)" if c.yours else str(c.size) for c in r.clusters)
        extra = f" · DSDE {r.dsde:.3f} · SDE {r.sde:.3f}" if r.dsde is not None and r.sde is not None else ""
        lines.append(f"clusters of equal behaviour: {clusters}{extra}")
        lines.append("")
        if r.panel_line():  # a panel: which models' alternatives stand against yours
            k, total = alternatives_disagreeing(r)
            lines.append(f"{k} of {total} disagree: {_text(r.panel_line())}")
            lines.append("")
    cost = f" · ${r.cost_usd:.4f}" if r.cost_usd else " · $0"
    if r.cost_split():
        cost += f" ({_text(r.cost_split())})"
    model = r.model or "?"
    lines.append(
        f"{r.samples} samples × {r.inputs} inputs · model {_code(model)}{cost} · checked {_ago(r.checked_at)} in {r.seconds:.1f} s"
    )
    if partial_sampling(r):  # only when samples are missing: "9 of 9" says nothing
        lines.append("")
        lines.append(f"_{_text(partial_sampling(r))}_")
    if r.disagreeing_code:
        lines.append("")
        lines.append("_Their code: Show alternatives (Ctrl+.)_")
    return "\n".join(lines)


def client_column(line_text: str, column: int, encoding: str | None) -> int:
    """A character column as the client counts it (UTF-16 code units unless negotiated)."""
    prefix = line_text[:column]
    if prefix.isascii():
        return column
    enc = str(getattr(encoding, "value", encoding) or "utf-16").lower()
    if enc.endswith("utf-8"):
        return len(prefix.encode("utf-8", "surrogatepass"))
    if enc.endswith("utf-32"):
        return column
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2
