"""The ``coherence/status`` notification ({checking, incoherent, coherent, skipped}, plus
nondeterministic and errors), sent whenever the counts over the open documents change.  The VS Code
status bar shows it."""

from __future__ import annotations

from coherence.lsp.features import LanguageFeature

METHOD = "coherence/status"


class StatusFeature(LanguageFeature):
    def __init__(self, ls):
        super().__init__(ls)
        self._last: dict[str, int] | None = None

    def results_changed(self, uris: set[str]) -> None:
        self.send()

    def send(self, force: bool = False) -> None:
        counts = self.ls.scheduler.counts()
        if counts == self._last and not force:
            return
        self._last = counts
        self.ls.protocol.notify(METHOD, dict(counts))
