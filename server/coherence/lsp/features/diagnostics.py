"""Diagnostics: one per checked function that is incoherent, nondeterministic, skipped or could
not be checked, on the function's name.  Coherent functions get none."""

from __future__ import annotations

from lsprotocol import types

from coherence.engine.redact import display
from coherence.engine.result import CheckResult
from coherence.lsp.features import LanguageFeature
from coherence.lsp.render import client_column, diagnostic_message, diagnostic_severity, failed_note
from coherence.lsp.state import DocumentState, result_json

SOURCE = "coherence"
CODES = {
    "incoherent": "incoherent",
    "nondeterministic": "nondeterministic",
    "skipped": "skipped",
    "error": "check-error",
    "coherent": "contradicts-docstring",  # the only coherent result with a diagnostic
}


class DiagnosticsFeature(LanguageFeature):
    def results_changed(self, uris: set[str]) -> None:
        for uri in uris:
            state = self.ls.scheduler.docs.get(uri)
            if state is not None:
                self.publish(state)
                self.announce(state)

    def announce(self, state: DocumentState) -> None:
        """Partial samples (LLM requests that failed) and a rebuilt sample cache: one message
        per distinct problem (shown once, logged once per result); hover and lens keep the
        details."""
        for result in state.results.values():
            if getattr(result, "_announced", False):
                continue
            result._announced = True  # type: ignore[attr-defined]
            problem = result.sampling_problem
            if problem:
                self.ls.notify_problem(
                    problem, once_key=("partial-sampling", result.model, result.sampling_problem_kind)
                )
            for notice in result.notices:
                self.ls.notify_problem(f"coherence: {notice}", once_key=("cache-notice", notice))

    def document_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    def publish(self, state: DocumentState) -> None:
        diagnostics = self.diagnostics(state)
        version = state.version if state.open else None
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=state.uri, diagnostics=diagnostics, version=version)
        )
        state.last_published = diagnostics

    def diagnostics(self, state: DocumentState) -> list[types.Diagnostic]:
        lines = self.ls.document_lines(state)
        out: list[types.Diagnostic] = []
        for q, result in state.results.items():
            level = diagnostic_severity(result)
            if level is None or result.config_error:
                continue
            target = state.targets.get(q)
            line = (target.name_line if target else result.line) - 1
            col = target.column if target else result.column
            name = result.name
            severity = types.DiagnosticSeverity(level)
            message = diagnostic_message(result)
            failure = state.failure_beside(q)
            if failure is not None:  # the finding stands; the check that failed is said beside it
                message += f" ({display(failed_note(result, failure))})"
            stale_why = state.stale_reason(q)
            if stale_why:
                rechecks = self.ls.settings_for(state.path).runOn != "manual"  # see Scheduler.recheck_stale
                message += f" ({display(stale_why)}; re-checking)" if rechecks else f" ({display(stale_why)})"
            out.append(
                types.Diagnostic(
                    range=self.ls.name_range(lines, line, col, len(name)),
                    message=message,
                    severity=severity,
                    source=SOURCE,
                    code=CODES.get(result.status, "check-error"),
                    data=result_json(result),
                )
            )
        if state.syntax_error is not None:
            line, msg = state.syntax_error
            suffix = "; showing the results of the last version that parsed" if state.results else ""
            out.append(
                self._file_note(
                    lines,
                    line - 1,
                    f"coherence: not checked while the file has a syntax error (line {line}: {msg}){suffix}",
                    "syntax-error",
                )
            )
        elif state.file_problem:
            out.append(self._file_note(lines, 0, f"coherence: {state.file_problem}", "skipped"))
        return out

    def _file_note(self, lines: list[str], line: int, message: str, code: str) -> types.Diagnostic:
        line = max(0, min(line, max(0, len(lines) - 1)))
        text = lines[line] if line < len(lines) else ""
        end = client_column(text, len(text.rstrip("\r\n")), self.ls.position_encoding())
        return types.Diagnostic(
            range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line, character=end)
            ),
            message=message,
            severity=types.DiagnosticSeverity.Information,
            source=SOURCE,
            code=code,
        )


def result_of_diagnostic(diagnostic: types.Diagnostic) -> CheckResult | None:
    data = diagnostic.data
    if diagnostic.source != SOURCE or not isinstance(data, dict):
        return None
    try:
        return CheckResult.from_dict(data)
    except Exception:  # noqa: BLE001
        return None
