"""Code actions: "Check coherence", "Add counterexample as a regression test" and "Replace body
with the majority alternative" — each edit applied to the text and checked."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from .conftest import line_of


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        return starts[pos.line] + pos.character

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), key=lambda s: (s[0], s[1]), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def edits_by_uri(edit: types.WorkspaceEdit) -> tuple[dict[str, list[types.TextEdit]], list[str]]:
    """The text edits of a WorkspaceEdit per URI, and the URIs it creates."""
    out: dict[str, list[types.TextEdit]] = {}
    created: list[str] = []
    if edit.document_changes:
        for change in edit.document_changes:
            if isinstance(change, types.CreateFile):
                created.append(change.uri)
            elif isinstance(change, types.TextDocumentEdit):
                out.setdefault(change.text_document.uri, []).extend(change.edits)
    for uri, edits in (edit.changes or {}).items():
        out.setdefault(uri, []).extend(edits)
    return out, created


def path_of(uri: str) -> Path:
    return Path(uri.removeprefix("file://"))


async def actions_for(lsp, uri: str, name: str) -> dict[str, types.CodeAction]:
    line = line_of(lsp.texts[uri], f"def {name}")
    diags = [d for d in lsp.coherence_diagnostics(uri) if d.range.start.line == line]
    actions = await lsp.code_actions(uri, line + 2, diags)
    assert all(isinstance(a, types.CodeAction) for a in actions), actions
    return {a.title: a for a in actions}


async def test_check_coherence_action_runs_the_check(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    actions = await actions_for(lsp, uri, "is_palindrome")
    assert set(actions) == {"Check coherence"}  # coherent: nothing to fix
    check = actions["Check coherence"]
    assert check.edit is None and check.command.command == "coherence.checkFunction"
    results = await lsp.command(check.command.command, *check.command.arguments)
    assert [(r["name"], r["status"]) for r in results] == [("is_palindrome", "coherent")]
    # It ran with progress.
    assert any(any(isinstance(v, types.WorkDoneProgressEnd) for v in reports) for reports in lsp.client.progress_reports.values())

    # Outside any marked function: no actions.
    assert await lsp.code_actions(uri, 0) == []


async def test_add_counterexample_as_regression_test(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    actions = await actions_for(lsp, uri, "count_vowels")
    assert {"Check coherence", "Add counterexample as a regression test", "Replace body with the majority alternative"} <= set(actions)
    action = actions["Add counterexample as a regression test"]
    assert action.kind == types.CodeActionKind.QuickFix
    assert action.diagnostics and action.diagnostics[0].code == "incoherent"

    per_uri, created = edits_by_uri(action.edit)
    test_uri = (lsp.workspace / "test_textutils_coherence.py").as_uri()
    assert created == [test_uri] and list(per_uri) == [test_uri]
    content = apply_text_edits("", per_uri[test_uri])
    ast.parse(content)
    assert "from textutils import count_vowels" in content
    assert "def test_count_vowels_coherence_counterexample():" in content
    assert "result = count_vowels(" in content
    assert "assert result in (0, 1)  # decide which is right, then keep one" in content
    assert "yours: 0" in content and "9 of 9 alternatives: 1" in content

    # The generated test runs (and passes: both candidates are allowed until the user decides).
    path_of(test_uri).write_text(content)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path_of(test_uri).name], cwd=lsp.workspace, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr

    # With the file present, the action appends a second test (and no second import).
    again = (await actions_for(lsp, uri, "count_vowels"))["Add counterexample as a regression test"]
    per_uri, created = edits_by_uri(again.edit)
    assert created == []
    appended = apply_text_edits(content, per_uri[test_uri])
    ast.parse(appended)
    assert appended.startswith(content)
    assert appended.count("from textutils import count_vowels") == 1
    assert "def test_count_vowels_coherence_counterexample_2():" in appended


async def test_replace_body_with_the_majority_alternative(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    diag = lsp.coherence_diagnostics(uri, "incoherent")[0]
    assert diag.data["majority_code"]
    action = (await actions_for(lsp, uri, "count_vowels"))["Replace body with the majority alternative"]
    per_uri, created = edits_by_uri(action.edit)
    assert created == [] and list(per_uri) == [uri]
    before = lsp.texts[uri]
    after = apply_text_edits(before, per_uri[uri])
    tree = ast.parse(after)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "count_vowels")
    # Marker, signature and docstring kept; the body is the majority's.
    assert "# coherence\ndef count_vowels(s: str) -> int:\n" in after
    assert ast.get_docstring(fn).startswith("Count the vowels")
    assert 'return sum(1 for ch in s if ch in "aeiou")' not in after
    majority = ast.parse(diag.data["majority_code"])
    alt = next(n for n in majority.body if isinstance(n, ast.FunctionDef))
    assert ast.dump(ast.Module(body=fn.body[1:], type_ignores=[])) == ast.dump(ast.Module(body=[s for s in alt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))], type_ignores=[]))
    # Everything else is untouched.
    assert after.split("# coherence\ndef is_palindrome")[1] == before.split("# coherence\ndef is_palindrome")[1]

    # Saving the replaced body makes the function agree with the majority: trust goes up.
    lsp.change(uri, after)
    lsp.save(uri)
    await lsp.wait_for(
        lambda: [d for d in lsp.coherence_diagnostics(uri) if d.data["name"] == "count_vowels" and d.data["trust"] > diag.data["trust"]]
        or (lsp.client.statuses[-1]["checking"] == 0 and not any(d.data["name"] == "count_vowels" for d in lsp.coherence_diagnostics(uri))),
        "count_vowels to agree with the majority",
    )


async def test_replace_body_keeps_the_decorator(lsp):
    uri = lsp.open("intervals.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    actions = await actions_for(lsp, uri, "merge_intervals")
    action = actions.get("Replace body with the majority alternative")
    assert action is not None, list(actions)
    per_uri, _ = edits_by_uri(action.edit)
    after = apply_text_edits(lsp.texts[uri], per_uri[uri])
    ast.parse(after)
    assert "@generated\ndef merge_intervals(intervals: List[Tuple[int, int]]) -> List[Tuple[int, int]]:\n" in after
    assert "Merge overlapping closed intervals" in after
    assert "@generated\ndef dedupe(items: List[int]) -> List[int]:" in after


async def test_accept_this_disagreement_turns_the_warning_into_a_hint(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    diag = lsp.coherence_diagnostics(uri, "incoherent")[0]
    call = diag.data["counterexample"]["call"]
    actions = await actions_for(lsp, uri, "count_vowels")
    action = actions[f"Accept this disagreement as intended ({call})"]
    per_uri, created = edits_by_uri(action.edit)
    assert created == [] and list(per_uri) == [uri]
    before = lsp.texts[uri]
    after = apply_text_edits(before, per_uri[uri])
    # one comment line above the marker, nothing else changed
    assert after.replace(f"# coherence: accept {call}\n", "", 1) == before
    assert f"# coherence: accept {call}\n# coherence\ndef count_vowels" in after
    lsp.change(uri, after)
    lsp.save(uri)
    # the alternatives that count upper case are the accepted reading: no evidence left, a hint
    await lsp.wait_for(lambda: lsp.client.statuses[-1]["checking"] == 0 and not lsp.coherence_diagnostics(uri, "incoherent")
                       and lsp.client.statuses[-1].get("hint") == 1, "count_vowels to become a hint")
    assert f"Accept this disagreement as intended ({call})" not in await actions_for(lsp, uri, "count_vowels")
