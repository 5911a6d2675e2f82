"""A code lens above each marked function with its one-line status; clicking it re-checks."""

from __future__ import annotations

from lsprotocol import types

from coherence.lsp.features import LanguageFeature
from coherence.lsp.render import lens_title

CHECK_FUNCTION = "coherence.checkFunction"


class CodeLensFeature(LanguageFeature):
    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        state = self.ls.scheduler.refresh_parse(uri)
        lines = self.ls.document_lines(state)
        lenses = []
        for q, target in state.targets.items():
            result = state.results.get(q)
            checking = q in state.jobs
            if result is None and not checking and state.config_error:
                title = "coherence: error — " + state.config_error.removeprefix("coherence: ")
                title = title if len(title) <= 160 else title[:159] + "…"
            else:
                title = lens_title(
                    result,
                    checking=checking,
                    stale=result is not None and not checking and not state.is_fresh(q),
                    failure=state.failure_beside(q),
                    stale_why=state.stale_reason(q),
                )
            line = target.name_line - 1
            lenses.append(
                types.CodeLens(
                    range=self.ls.name_range(lines, line, target.column, len(target.name)),
                    command=types.Command(title=title, command=CHECK_FUNCTION, arguments=[uri, line]),
                )
            )
        return lenses

    def results_changed(self, uris: set[str]) -> None:
        self.ls.request_code_lens_refresh()
