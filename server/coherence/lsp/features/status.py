"""The ``coherence/status`` notification ({checking, incoherent, coherent, skipped}, plus
nondeterministic and errors, and ``sandbox``: which sandboxes the results ran in), sent whenever
it changes.  The VS Code status bar shows it."""

from __future__ import annotations

from coherence.lsp.features import LanguageFeature

METHOD = "coherence/status"


class StatusFeature(LanguageFeature):
    def __init__(self, ls):
        super().__init__(ls)
        self._last: dict | None = None

    def results_changed(self, uris: set[str]) -> None:
        self.send()

    def send(self, force: bool = False) -> None:
        counts: dict = dict(self.ls.scheduler.counts())
        sandboxes = self.ls.scheduler.sandboxes()
        if sandboxes:
            counts["sandbox"] = ", ".join(sandboxes)
        if counts == self._last and not force:
            return
        self._last = counts
        self.ls.protocol.notify(METHOD, dict(counts))
