"""The ``coherence/status`` notification ({checking, incoherent, coherent, skipped}, plus
nondeterministic, errors and failed (the latest check failed), ``sandbox``: which sandboxes the results ran in, and ``spentUsd`` /
``maxCostUsd``: the window's spending and its cap), sent whenever it changes.  The VS Code status bar shows it."""

from __future__ import annotations

from coherence.lsp.features import LanguageFeature
from coherence.lsp.state import DocumentState

METHOD = "coherence/status"


class StatusFeature(LanguageFeature):
    def __init__(self, ls):
        super().__init__(ls)
        self._last: dict | None = None

    def results_changed(self, uris: set[str]) -> None:
        self.send()

    def send(self, force: bool = False) -> None:
        docs = self.ls.scheduler.docs
        counted: dict = dict(counts(docs))
        ran_in = sandboxes(docs)
        if ran_in:
            counted["sandbox"] = ", ".join(ran_in)
        counted.update(self.ls.scheduler.budget.status())  # the window's spend, for the tooltip
        if counted == self._last and not force:
            return
        self._last = counted
        self.ls.protocol.notify(METHOD, dict(counted))


def sandboxes(docs: dict[str, DocumentState]) -> list[str]:
    """The sandboxes the shown results ran in (``bwrap+landlock+seccomp``, ...), for the status."""
    return sorted({r.sandbox for state in docs.values() for r in state.results.values() if r.sandbox})


def counts(docs: dict[str, DocumentState]) -> dict[str, int]:
    # "incoherent" counts every incoherent function; "warning", "information" and "hint" split
    # them by the verdict's severity, the one scale the CLI, SARIF and the diagnostics use.
    counts = {
        "checking": 0,
        "incoherent": 0,
        "warning": 0,
        "information": 0,
        "hint": 0,
        "coherent": 0,
        "skipped": 0,
        "nondeterministic": 0,
        "errors": 0,
        # functions whose latest check failed (their earlier finding, if any, still counted above)
        "failed": 0,
    }
    for state in docs.values():
        counts["checking"] += state.checking()
        for q in state.targets:
            if q in state.jobs:
                continue
            r = state.results.get(q)
            if r is None:
                continue
            if state.failure_beside(q) is not None:
                counts["failed"] += 1
            if r.status in ("incoherent", "coherent", "skipped", "nondeterministic"):
                counts[r.status] += 1
                if r.finding in ("warning", "information", "hint"):
                    counts[r.finding] += 1
            else:
                counts["errors"] += 1
    return counts
