"""Code actions on a marked function.  These are the only ways the server changes a file:

* "Check coherence": runs the check now (a command, with progress);
* "Show alternatives": your function beside each other behaviour cluster's (a command,
  ``features.alternatives``);
* "Add counterexample as a regression test expecting yours (0)" / "... expecting theirs (1)":
  a pytest test in test_<module>_coherence.py next to the module (created or appended) that pins
  the chosen side's outcome, then the file opened at it; neither is offered once either exists;
* "Replace body with the majority alternative": only when the user's function is in a minority;
  applied at once, as one edit the editor's undo takes back (an annotation that needs no
  confirmation: VS Code's refactor preview would show it unticked, and Apply would apply nothing);
* "Accept this disagreement as intended": a ``# coherence: accept <call>`` comment above the
  function (``engine.check``: the alternatives that disagree with yours on that call are another
  reading of the spec, no longer evidence against yours).
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types

from coherence.lsp import edits
from coherence.lsp.features import LanguageFeature
from coherence.lsp.features.alternatives import SHOW_ALTERNATIVES, SHOW_DOCUMENT
from coherence.lsp.features.diagnostics import SOURCE
from coherence.lsp.uris import path_to_uri

log = logging.getLogger(__name__)

CHECK_FUNCTION = "coherence.checkFunction"
KIND_QUICKFIX = types.CodeActionKind.QuickFix
KIND_REWRITE = types.CodeActionKind.RefactorRewrite
REPLACE_BODY = "coherence.replaceBody"  # the change annotation of "Replace body"


class CodeActionsFeature(LanguageFeature):
    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        if uri not in self.ls.scheduler.docs:
            return None
        state = self.ls.scheduler.refresh_parse(uri)
        target = state.target_at_line(params.range.start.line, body=True) or state.target_at_line(
            params.range.end.line, body=True
        )
        if target is None:
            return None
        q = target.qualname or target.name
        only = params.context.only
        diagnostics = [
            d for d in params.context.diagnostics if d.source == SOURCE and d.range.start.line == target.name_line - 1
        ]
        actions: list[types.CodeAction] = []

        def wanted(kind: str | None) -> bool:
            if not only:
                return True
            if kind is None:
                return False
            return any(kind == k or kind.startswith(f"{k}.") for k in only)

        if wanted(None) or not only:
            actions.append(
                types.CodeAction(
                    title="Check coherence",
                    command=types.Command(
                        title="Check coherence", command=CHECK_FUNCTION, arguments=[uri, target.name_line - 1]
                    ),
                )
            )
        result = state.results.get(q)
        if result is None or target.skip_reason:
            return actions
        same_spec = result.spec_hash == target.spec.spec_hash

        if (
            same_spec
            and wanted(KIND_QUICKFIX)
            and any(c.representative_source and not c.yours for c in result.clusters)
        ):
            args = [uri, target.name_line - 1]
            actions.append(
                types.CodeAction(
                    title="Show alternatives",
                    kind=KIND_QUICKFIX,
                    diagnostics=diagnostics or None,
                    command=types.Command(title="Show alternatives", command=SHOW_ALTERNATIVES, arguments=args),
                )
            )

        if result.counterexample is not None and same_spec and wanted(KIND_QUICKFIX):
            actions += self._regression_test_actions(state.path, target, result, diagnostics)

        ce = result.counterexample
        if (
            result.status == "incoherent"
            and result.severity in ("warning", "information")
            and ce is not None
            and same_spec
            and ce.call not in target.accept
            and wanted(KIND_QUICKFIX)
        ):
            edit = self._accept_edit(uri, target, ce.call)
            if edit is not None:
                actions.append(
                    types.CodeAction(
                        title=f"Accept this disagreement as intended ({ce.call})",
                        kind=KIND_QUICKFIX,
                        diagnostics=diagnostics or None,
                        edit=edit,
                    )
                )

        if self._minority(result) and result.majority_code and same_spec and wanted(KIND_QUICKFIX):
            edit = self._replace_body_edit(uri, target, result.majority_code, result)
            if edit is not None:
                actions.append(
                    types.CodeAction(
                        title="Replace body with the majority alternative",
                        kind=KIND_QUICKFIX,
                        diagnostics=diagnostics or None,
                        edit=edit,
                    )
                )
        return actions

    @staticmethod
    def _minority(result) -> bool:
        if result.status != "incoherent" or result.user_cluster is None or not result.clusters:
            return False
        sizes = result.cluster_sizes
        return sizes[result.user_cluster] < max(sizes)

    # -- edits ------------------------------------------------------------------------------
    def _workspace_edit(self) -> types.WorkspaceEditClientCapabilities | None:
        ws = self.ls.workspace_capabilities()
        return ws.workspace_edit if ws else None

    def _supports_document_changes(self) -> bool:
        # Resource operations only travel in documentChanges: a client that lists them (Neovim
        # 0.7 does, without the documentChanges flag) reads documentChanges.
        we = self._workspace_edit()
        return bool(we and (we.document_changes or we.resource_operations))

    def _supports_create(self) -> bool:
        we = self._workspace_edit()
        ops = (we.resource_operations or []) if we else []
        return any(getattr(op, "value", op) == "create" for op in ops)

    def _text_edits(self, lines_source: str, changes: list[edits.Change]) -> list[types.TextEdit]:
        lines = lines_source.splitlines(keepends=True)
        out = []
        for ch in changes:
            start = types.Position(line=ch.start, character=0)
            if ch.end >= len(lines) and ch.end > ch.start:
                # Replace through the end of the file (the last line may lack a newline).
                last = lines[-1] if lines else ""
                end = types.Position(line=len(lines) - 1, character=self.ls.client_len(last.rstrip("\r\n")))
                text = ch.text if last.endswith(("\n", "\r")) else ch.text.rstrip("\r\n")
                out.append(types.TextEdit(range=types.Range(start=start, end=end), new_text=text))
                continue
            if ch.start >= len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
                last = lines[-1]
                pos = types.Position(line=len(lines) - 1, character=self.ls.client_len(last))
                out.append(types.TextEdit(range=types.Range(start=pos, end=pos), new_text=ch.text))
                continue
            end = types.Position(line=ch.end, character=0)
            out.append(types.TextEdit(range=types.Range(start=start, end=end), new_text=ch.text))
        return out

    def _document_edit(
        self, uri: str, source: str, changes: list[edits.Change], version: int | None
    ) -> types.WorkspaceEdit:
        text_edits = self._text_edits(source, changes)
        if self._supports_document_changes():
            return types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                        edits=text_edits,
                    )
                ]
            )
        return types.WorkspaceEdit(changes={uri: text_edits})

    def _regression_test_actions(self, module_path: str | None, target, result, diagnostics) -> list[types.CodeAction]:
        """One action per side whose outcome a test can pin; none once a pinned test for this
        counterexample is in the test file (the user has decided)."""
        if module_path is None:
            return []
        test_path = Path(module_path).parent / edits.test_module_name(module_path)
        test_uri = path_to_uri(str(test_path))
        open_doc = self.ls.workspace.text_documents.get(unquote(test_uri))
        existing: str | None
        version = None
        if open_doc is not None:
            existing, version = open_doc.source, open_doc.version
        elif test_path.is_file():
            try:
                existing = test_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return []
        else:
            existing = None
        if edits.pinned_tests(result, existing):
            return []
        ce = result.counterexample
        out = []
        for side, shown in (("yours", ce.yours), ("theirs", ce.theirs)):
            made = edits.regression_test(result, module_path, target.module_source, side)
            if made is None:
                continue
            import_line, test_source = made
            if existing is None:
                if not (self._supports_document_changes() and self._supports_create()):
                    continue
                content = edits.new_test_file(import_line, test_source, module_path)
                edit = types.WorkspaceEdit(
                    document_changes=[
                        types.CreateFile(uri=test_uri, options=types.CreateFileOptions(ignore_if_exists=True)),
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=test_uri, version=None),
                            edits=[
                                types.TextEdit(
                                    range=types.Range(
                                        start=types.Position(line=0, character=0),
                                        end=types.Position(line=0, character=0),
                                    ),
                                    new_text=content,
                                )
                            ],
                        ),
                    ]
                )
            else:
                changes = edits.append_to_test_file(existing, import_line, test_source)
                content = edits.apply_changes(existing, changes)
                edit = self._document_edit(test_uri, existing, changes, version)
            test_line = content.splitlines().index(test_source.splitlines()[0])
            title = f"Add counterexample as a regression test expecting {side}{_shown_value(shown)}"
            out.append(
                types.CodeAction(
                    title=title,
                    kind=KIND_QUICKFIX,
                    diagnostics=diagnostics or None,
                    edit=edit,
                    command=types.Command(
                        title="Open the test", command=SHOW_DOCUMENT, arguments=[test_uri, test_line]
                    ),
                )
            )
        return out

    def _accept_edit(self, uri: str, target, call: str) -> types.WorkspaceEdit | None:
        """A ``# coherence: accept <call>`` line above the function's header (its decorators and the
        comments right above them), at its indentation.  A call spanning lines is not one comment line: no action."""
        doc = self.ls.workspace.text_documents.get(unquote(uri))
        if doc is None or "\n" in call or "\r" in call:
            return None
        lines = doc.source.splitlines()
        first = target.line - 1
        if not 0 <= first < len(lines):
            return None
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1  # above the comments that lead into it (its "# coherence" marker)
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        change = edits.Change(first, first, f"{indent}# coherence: accept {call}\n")
        return self._document_edit(uri, doc.source, [change], doc.version)

    def _replace_body_edit(self, uri: str, target, alternative: str, result) -> types.WorkspaceEdit | None:
        doc = self.ls.workspace.text_documents.get(unquote(uri))
        if doc is None:
            return None
        source = doc.source
        try:
            changes = edits.replace_body(source, target.name, target.name_line, alternative)
        except Exception:  # an odd alternative must not break the code action request
            log.exception("building the replacement of %s failed", target.name)
            return None
        if not changes:
            return None
        if not (self._supports_document_changes() and self._supports_annotations()):
            return self._document_edit(uri, source, changes, doc.version)
        # Labelled (the editor's undo names it), applied without a preview.
        majority = max(result.clusters, key=lambda c: c.size)
        annotation = types.ChangeAnnotation(
            label="Replace body with the majority alternative",
            needs_confirmation=False,
            description=f"{majority.size} of {result.samples} programs behave like it",
        )
        text_edits = [
            types.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=REPLACE_BODY)
            for e in self._text_edits(source, changes)
        ]
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                    edits=text_edits,
                )
            ],
            change_annotations={REPLACE_BODY: annotation},
        )

    def _supports_annotations(self) -> bool:
        we = self._workspace_edit()
        return bool(we and we.change_annotation_support is not None)


def _shown_value(rendered: str, limit: int = 40) -> str:
    """`` (0)`` after a title, or nothing for a value too long to show whole: a menu item is
    plain text (no backticks), and a value cut in the middle would misquote it."""
    return f" ({rendered})" if len(rendered) <= limit and "\n" not in rendered else ""
