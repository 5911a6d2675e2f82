"""When checks run (setting ``runOn``): ``save`` checks on save; ``open`` on open and on save;
``change`` while typing (debounced) and on save; ``manual`` only from a command.  An autosave (the
editor saving after a delay or on a focus change, as its willSave says) checks like a save, except
that a function whose check needs new samples (its spec changed) waits until the document has
been still for ``scheduler.SPEC_SETTLE_SECONDS``: body edits use the cached samples at once, and a
spec typed with pauses buys one batch, once it is done.  Opening a file
never starts a check unless ``runOn`` is ``open``: it shows the results already computed for its
functions (the results cache, keyed by content), which costs nothing.  A new edit cancels the
document's checks in flight; closing a document forgets it."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from coherence.engine.inputs.seeds.workspace import is_test_file
from coherence.lsp.features import LanguageFeature


class CheckingFeature(LanguageFeature):
    def document_open(self, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        self.ls.scheduler.state(uri, open_=True)
        if self.ls.settings.runOn == "open":
            self.ls.run_task(self.ls.scheduler.check_document(uri, reason="open"), name=f"check {uri}")
        else:
            self.ls.scheduler.refresh_parse(uri)  # the cached results of its functions, if any
            self.ls.refresh(uri)

    def document_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        sched = self.ls.scheduler
        state = sched.state(uri, open_=True)
        state.version = params.text_document.version
        state.changed_at = asyncio.get_running_loop().time()
        cancelled = sched.cancel(uri, reason=f"superseded by version {params.text_document.version}")
        if self.ls.settings.runOn == "change":
            sched.debounce(uri, self.ls.settings.debounceMs / 1000)
        elif cancelled:
            sched.refresh_parse(uri)
            self.ls.refresh(uri)

    def document_save(self, params: types.DidSaveTextDocumentParams) -> None:
        if self.ls.settings.runOn == "manual":
            return
        uri = params.text_document.uri
        state = self.ls.scheduler.docs.get(uri)
        if state is not None and state.path and is_test_file(state.path):
            self._tests_changed(uri)
        autosave = state is not None and state.autosaved
        self.ls.scheduler.cancel_debounce(uri)
        self.ls.run_task(
            self.ls.scheduler.check_document(uri, reason="autosave" if autosave else "save"), name=f"check {uri}"
        )

    def _tests_changed(self, saved: str) -> None:
        """A workspace test file was saved: the other open documents' results keys are made
        again, so a result that predates it is shown stale and checked again."""
        from coherence.engine.inputs.seeds.workspace import forget_recent

        forget_recent()
        sched = self.ls.scheduler
        for uri, state in list(sched.docs.items()):
            if uri != saved and state.open:
                state.parsed_text_hash = None  # the same text, keyed again
                sched.refresh_parse(uri)
                self.ls.refresh(uri)

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self.ls.scheduler.close(params.text_document.uri)
        self.ls.refresh_status()

    def settings_changed(self) -> None:
        sched = self.ls.scheduler
        for uri, state in list(sched.docs.items()):
            if not state.open:
                continue
            if self.ls.settings.runOn == "open":
                self.ls.run_task(sched.check_document(uri, reason="settings"), name=f"check {uri}")
            else:  # a settings change is no save: show what is cached under the new settings
                sched.refresh_parse(uri)
                self.ls.refresh(uri)
