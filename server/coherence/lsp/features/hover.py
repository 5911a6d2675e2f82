"""Hover on a checked function's def line: the stored result, rendered.  No work is done here
beyond re-parsing a document that changed since it was last parsed."""

from __future__ import annotations

from lsprotocol import types

from coherence.lsp.features import LanguageFeature
from coherence.lsp.render import failure_markdown, hover_markdown


class HoverFeature(LanguageFeature):
    def hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        if uri not in self.ls.scheduler.docs:
            return None
        state = self.ls.scheduler.refresh_parse(uri)
        target = state.target_at_line(params.position.line)
        if target is None:
            return None
        q = target.qualname or target.name
        result = state.results.get(q)
        checking = q in state.jobs
        if result is None:
            if not checking:
                return None
            value = f"**coherence** · `{q}` · checking…"
        else:
            value = hover_markdown(
                result, stale=not state.is_fresh(q), checking=checking, stale_why=state.stale_reason(q)
            )
            failure = state.failure_beside(q)
            if failure is not None:
                value = f"{failure_markdown(result, failure)}\n\n{value}"
        lines = self.ls.document_lines(state)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
            range=self.ls.name_range(lines, target.name_line - 1, target.column, len(target.name)),
        )
