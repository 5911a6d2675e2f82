"""Code actions: "Check coherence", "Show alternatives", "Add counterexample as a regression test
expecting yours/theirs" and "Replace body with the majority alternative" — each edit applied to
the text and checked, each pinned test run with pytest."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from tests.support.zygote import coherence_argv

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

    spans = sorted(
        ((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits),
        key=lambda s: (s[0], s[1]),
        reverse=True,
    )
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
    assert any(
        any(isinstance(v, types.WorkDoneProgressEnd) for v in reports)
        for reports in lsp.client.progress_reports.values()
    )

    # Outside any marked function: no actions.
    assert await lsp.code_actions(uri, 0) == []


def run_pytest(workspace: Path, test_file: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file],
        cwd=workspace,
        # the written test needs plain pytest; this venv's plugins (hypothesis, pytest-lsp) cost seconds to load
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_add_counterexample_as_a_regression_test_pinning_either_side(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    actions = await actions_for(lsp, uri, "count_vowels")
    mine_title = "Add counterexample as a regression test expecting yours (0)"
    theirs_title = "Add counterexample as a regression test expecting theirs (1)"
    assert {"Check coherence", mine_title, theirs_title, "Replace body with the majority alternative"} <= set(
        actions
    ), list(actions)
    assert not any(t == "Add counterexample as a regression test" for t in actions)
    test_uri = (lsp.workspace / "test_textutils_coherence.py").as_uri()
    contents = {}
    for side, title in (("yours", mine_title), ("theirs", theirs_title)):
        action = actions[title]
        assert action.kind == types.CodeActionKind.QuickFix
        assert action.diagnostics and action.diagnostics[0].code == "incoherent"
        per_uri, created = edits_by_uri(action.edit)
        assert created == [test_uri] and list(per_uri) == [test_uri]
        content = apply_text_edits("", per_uri[test_uri])
        ast.parse(content)
        assert "from textutils import count_vowels" in content
        assert "in (" not in content  # one value, not "either"
        assert f"    assert result == {0 if side == 'yours' else 1}\n" in content
        # after the edit, the command opens the file at the test
        assert action.command.command == "coherence.showDocument"
        shown_uri, line = action.command.arguments
        assert shown_uri == test_uri and content.splitlines()[line].startswith(f"def test_count_vowels_expects_{side}_")
        contents[side] = content

    # The test fails on the side it rejects: pinning theirs fails on the unfixed function.
    path_of(test_uri).write_text(contents["theirs"])
    run = run_pytest(lsp.workspace, path_of(test_uri).name)
    assert run.returncode == 1 and "assert 0 == 1" in run.stdout, run.stdout + run.stderr
    path_of(test_uri).write_text(contents["yours"])
    run = run_pytest(lsp.workspace, path_of(test_uri).name)
    assert run.returncode == 0, run.stdout + run.stderr

    # Run the action's command: the client is asked to show the test file at the test.
    action = actions[mine_title]
    assert await lsp.command(action.command.command, *action.command.arguments) is (lsp.client_name == "vscode")
    if lsp.client_name == "vscode":
        shown = lsp.client.shown_documents[-1]
        assert shown.uri == test_uri and shown.selection.start.line == action.command.arguments[1] and shown.take_focus

    # With the test in the file, neither action is offered again (the user has decided).
    again = await actions_for(lsp, uri, "count_vowels")
    assert not any(t.startswith("Add counterexample as a regression test") for t in again), list(again)


async def test_show_alternatives_returns_each_cluster_beside_yours(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    action = (await actions_for(lsp, uri, "count_vowels"))["Show alternatives"]
    assert action.edit is None and action.command.command == "coherence.showAlternatives"
    shown_before = len(lsp.client.shown_documents)
    view = await lsp.command(action.command.command, *action.command.arguments, {"view": "client"})
    assert len(lsp.client.shown_documents) == shown_before  # the client renders it itself
    assert view["call"] == "count_vowels('A')" and view["programs"] == 10
    assert view["yours"]["output"] == "0" and view["yours"]["size"] == 1
    # the code to compare, without the docstring the alternatives do not repeat
    assert (
        view["yours"]["source"] == 'def count_vowels(s: str) -> int:\n    return sum(1 for ch in s if ch in "aeiou")\n'
    )
    sizes = [c["size"] for c in view["clusters"]]
    assert sizes == sorted(sizes, reverse=True) and sum(sizes) == 9, view["clusters"]
    largest = view["clusters"][0]
    assert (
        largest["output"] == "1"
        and "def count_vowels" in largest["source"]
        and sum(largest["models"].values()) == largest["size"]
    )

    # A client without a diff view of its own gets a unified diff document.
    view2 = await lsp.command(action.command.command, *action.command.arguments)
    assert view2 == view
    if lsp.client_name == "vscode":
        diff = lsp.client.shown_documents[-1]
        text = path_of(diff.uri).read_text()
        assert diff.uri.endswith("count_vowels.alternatives.diff")
        assert "# yours: 1 of 10 programs\n#   count_vowels('A') -> 0\n" in text
        assert (
            f"# alternative 1 of {len(sizes)}: {largest['size']} of 10 programs" in text
            and "#   count_vowels('A') -> 1" in text
        )
        assert "--- yours\n+++ alternative 1\n" in text

    # Not in a marked function: nothing to show, and the server says so.
    assert await lsp.command("coherence.showAlternatives", uri, 0) is None


async def test_replace_body_with_the_majority_alternative(lsp):
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic")
    await lsp.wait_idle()
    diag = lsp.coherence_diagnostics(uri, "incoherent")[0]
    assert diag.data["majority_code"]
    action = (await actions_for(lsp, uri, "count_vowels"))["Replace body with the majority alternative"]
    per_uri, created = edits_by_uri(action.edit)
    assert created == [] and list(per_uri) == [uri]
    if lsp.client_name == "vscode":  # it supports change annotations: labelled, applied with no preview
        [annotation] = action.edit.change_annotations.values()
        # VS Code shows an edit that needs confirmation unticked in its refactor preview: Apply applied nothing
        assert not annotation.needs_confirmation
        assert annotation.label == "Replace body with the majority alternative"
        assert all(isinstance(e, types.AnnotatedTextEdit) for e in per_uri[uri])
    else:
        assert action.edit.change_annotations is None
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
    assert ast.dump(ast.Module(body=fn.body[1:], type_ignores=[])) == ast.dump(
        ast.Module(
            body=[s for s in alt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))],
            type_ignores=[],
        )
    )
    # Everything else is untouched.
    assert after.split("# coherence\ndef is_palindrome")[1] == before.split("# coherence\ndef is_palindrome")[1]

    # Saving the replaced body makes the function agree with the majority: trust goes up.
    lsp.change(uri, after)
    lsp.save(uri)
    await lsp.wait_for(
        lambda: (
            [
                d
                for d in lsp.coherence_diagnostics(uri)
                if d.data["name"] == "count_vowels" and d.data["trust"] > diag.data["trust"]
            ]
            or (
                lsp.client.statuses[-1]["checking"] == 0
                and not any(d.data["name"] == "count_vowels" for d in lsp.coherence_diagnostics(uri))
            )
        ),
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
    await lsp.wait_for(
        lambda: (
            lsp.client.statuses[-1]["checking"] == 0
            and not lsp.coherence_diagnostics(uri, "incoherent")
            and lsp.client.statuses[-1].get("hint") == 1
        ),
        "count_vowels to become a hint",
    )
    assert f"Accept this disagreement as intended ({call})" not in await actions_for(lsp, uri, "count_vowels")


async def test_a_baseline_file_accepts_its_disagreements_in_the_editor_too(start, workspace):
    # `coherence check --write-baseline` records count_vowels' finding; the editor reads the same
    # file (the nearest .coherence-baseline.json up to the workspace root) and shows a hint only
    env = {**__import__("os").environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    wrote = subprocess.run(
        [*coherence_argv(env), "check", "textutils.py", "--write-baseline"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert wrote.returncode == 0, wrote.stderr
    assert "count_vowels" in (workspace / ".coherence-baseline.json").read_text()
    lsp = await start()
    uri = lsp.open("textutils.py")
    await lsp.wait_for(
        lambda: (
            lsp.client.statuses
            and lsp.client.statuses[-1]["checking"] == 0
            and lsp.client.statuses[-1].get("hint", 0) >= 1
        ),
        "count_vowels to be checked",
    )
    assert not lsp.coherence_diagnostics(uri, "incoherent")
