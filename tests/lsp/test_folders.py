"""A multi-root workspace (issue 30): ``coherence.enable`` and ``exclude`` are read per workspace
folder (one ``workspace/configuration`` item per folder, with its scopeUri), so a folder where the
user turned coherence off gets no checks while the other is checked.  The real server with the
recorded VS Code client (Neovim 0.7 has no ``workspace/configuration``: its settings are the
window's); the LLM is the replay file of examples/."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import copy_examples, line_of

QUIET_SECONDS = 1.0


@pytest.fixture
def second(tmp_path: Path, client_name: str) -> Path:
    if client_name != "vscode":
        pytest.skip(f"{client_name} has no workspace/configuration: no per-folder settings to read")
    return copy_examples(tmp_path / "second")


async def test_a_folder_with_enable_false_gets_no_checks_and_the_other_does(start, workspace, second):
    lsp = await start(folders=[second], scoped={workspace: {"enable": False}, second: {"enable": True}})
    off = lsp.open("textutils.py")
    on = lsp.open(str(second / "textutils.py"))
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(on, "incoherent"), "the check in the enabled folder")
    await lsp.wait_idle()
    assert lsp.coherence_diagnostics(off) == [] and await lsp.code_lens(off) == []
    assert await lsp.code_lens(on)  # the enabled folder's functions have their lenses
    assert await lsp.command("coherence.checkFile", off) == []
    stats = await lsp.command("coherence.serverStats")
    assert stats["checksQueued"] == 2  # textutils.py's two functions, in the enabled folder only
    # Check Workspace counts the enabled folder's files alone
    est = await lsp.command("coherence.estimateWorkspace")
    assert est["functions"] >= 3 and est["files"] == 3, est

    # The user turns it on in the first folder too: its open document is checked (runOn "open").
    lsp.client.set_configuration({"enable": True}, section="coherence", scope_uri=workspace.as_uri())
    lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(off, "incoherent"), "the check once the folder is enabled")
    both = await lsp.command("coherence.estimateWorkspace")
    assert both["functions"] == 2 * est["functions"] and both["files"] == 6, both


async def test_exclude_is_read_per_folder(start, workspace, second):
    lsp = await start(folders=[second], scoped={second: {"exclude": ["textutils.py::count_vowels"]}})
    first = lsp.open("textutils.py")
    other = lsp.open(str(second / "textutils.py"))
    await lsp.wait_for(
        lambda: lsp.coherence_diagnostics(first, "incoherent"), "count_vowels checked in the first folder"
    )
    await lsp.wait_idle()
    await asyncio.sleep(QUIET_SECONDS)
    # the second folder leaves count_vowels out: no diagnostic, and its one lens is is_palindrome's
    assert lsp.coherence_diagnostics(other, "incoherent") == []
    lenses = await lsp.code_lens(other)
    assert [lens.command.arguments[1] for lens in lenses if lens.command] == [
        line_of(lsp.texts[other], "def is_palindrome")
    ]
    assert len(await lsp.code_lens(first)) == 2


async def test_a_folder_added_later_has_its_own_settings_read(start, workspace, second):
    # the first folder (the window) is off; the folder added later is on
    lsp = await start(scoped={workspace: {"enable": False}, second: {"enable": True}})
    lsp.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=second.as_uri(), name="second")], removed=[]
            )
        )
    )
    uri = lsp.open(str(second / "textutils.py"))
    await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "the check in the added folder")
