"""End-to-end fixtures for the language server: a real ``python -m coherence serve`` subprocess
driven by pytest-lsp's client, the real engine and sandbox, and the LLM replaced only by the
replay setting on examples/recorded_samples.jsonl.

Every test runs once per recorded client (``clients/``: VS Code 1.65.2, and Neovim 0.7.2 in the
slow run), on a fresh copy of examples/ so code actions and saves never touch the repository.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

import pytest
import pytest_asyncio
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CLIENTS = Path(__file__).resolve().parent / "clients"
CLIENT_FILES = {"vscode": "visual_studio_code_v1.65.2.json", "neovim": "neovim_v0.7.2.json"}
TIMEOUT = float(os.environ.get("COHERENCE_LSP_TEST_TIMEOUT", "60"))

# Small n keeps each check well under a second with the replayed samples; runOn "open" because
# most tests start from opening a file (test_run_on.py covers the default, "save").
TEST_SETTINGS = {"inputs": 200, "runOn": "open"}


# Both cached: decoding a client's capabilities, and cattrs building its hooks for each message
# type, were repeated for every server a test starts, and no test or client changes either.
@functools.cache
def client_params(name: str) -> tuple[types.ClientCapabilities, types.ClientInfo]:
    data = json.loads((CLIENTS / CLIENT_FILES[name]).read_text())
    params = get_converter().structure(
        {"capabilities": data["capabilities"], "clientInfo": data["clientInfo"]}, types.InitializeParams
    )
    return params.capabilities, params.client_info


@functools.cache
def converter():
    """pygls' converter, with lsprotocol 2025.0.0's Command | CodeAction hook fixed: it decodes
    every object with a ``command`` key as a Command, so a CodeAction carrying a command breaks."""
    conv = default_converter()

    def code_action_hook(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return conv.structure(obj, types.Command)
        return conv.structure(obj, types.CodeAction)

    conv.register_structure_hook(Union[types.Command, types.CodeAction], code_action_hook)  # noqa: UP007 - the key lsprotocol's converter looks up
    return conv


def make_client(answer_registrations: bool = True) -> LanguageClient:
    """A test client; with ``answer_registrations=False`` it answers the server's
    ``client/registerCapability`` only once ``registration_answer`` is set (``registration_asked``
    is set when it is asked)."""
    client = LanguageClient(converter_factory=converter)

    def publish_diagnostics(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        ls.diagnostics[params.uri] = params.diagnostics
        ls.diagnostic_log.append(params)  # type: ignore[attr-defined]

    register_lsp_features(
        client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish_diagnostics}
    )
    client.statuses = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]
    client.lens_refreshes = 0  # type: ignore[attr-defined]
    client.lens_refresh_times = []  # type: ignore[attr-defined]  # time.monotonic() of each
    client.diagnostic_log = []  # type: ignore[attr-defined]

    @client.feature("coherence/status")
    def status(ls: LanguageClient, params: Any) -> None:
        ls.statuses.append(params._asdict() if hasattr(params, "_asdict") else dict(params))  # type: ignore[attr-defined]

    client.registration_asked = asyncio.Event()  # type: ignore[attr-defined]
    client.registration_answer = asyncio.Event()  # type: ignore[attr-defined]
    if answer_registrations:
        client.registration_answer.set()  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    async def register_capability(ls: LanguageClient, params: types.RegistrationParams) -> None:
        ls.registration_asked.set()  # type: ignore[attr-defined]
        await ls.registration_answer.wait()  # type: ignore[attr-defined]
        ls.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(ls: LanguageClient, params: None) -> None:
        ls.lens_refreshes += 1  # type: ignore[attr-defined]
        ls.lens_refresh_times.append(time.monotonic())  # type: ignore[attr-defined]

    return client


class Session:
    """A started server with helpers to edit documents and wait for what the server sends."""

    def __init__(self, client: LanguageClient, workspace: Path, client_name: str):
        self.client = client
        self.workspace = workspace
        self.client_name = client_name
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.closed = False
        self.stderr_path: Path | None = None

    async def shutdown(self) -> int | None:
        """shutdown + exit; returns the server's exit code."""
        self.closed = True
        await asyncio.wait_for(self.client.shutdown_session(), timeout=30)
        server = self.client._server
        returncode = server.returncode if server is not None else None
        await self.client.stop()
        return returncode

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path and self.stderr_path.exists() else ""

    def uri(self, rel: str) -> str:
        return (self.workspace / rel).as_uri()

    def open(self, rel: str, text: str | None = None) -> str:
        uri = self.uri(rel)
        if text is None:
            text = (self.workspace / rel).read_text(encoding="utf-8")
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    def save(self, uri: str, *, write: bool = True) -> None:
        if write:
            Path(uri.removeprefix("file://")).write_text(self.texts[uri], encoding="utf-8")
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        return list(self.client.diagnostics.get(uri, ()))

    def coherence_diagnostics(self, uri: str, code: str | None = None) -> list[types.Diagnostic]:
        return [d for d in self.diagnostics(uri) if d.source == "coherence" and (code is None or d.code == code)]

    async def wait_for(self, predicate: Callable[[], Any], what: str, timeout: float = TIMEOUT) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if loop.time() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{await self.describe()}")
            if self.client.error is not None:
                raise AssertionError(f"client error while waiting for {what}: {self.client.error}")
            await asyncio.sleep(0.02)

    async def describe(self) -> str:
        """What the client saw and the server holds, for failure messages."""
        try:
            stats = await asyncio.wait_for(self.command("coherence.serverStats"), 10)
        except Exception as exc:
            stats = f"(serverStats failed: {exc!r})"
        progress = [
            f"{getattr(r, 'kind', '?')}: {getattr(r, 'message', '')}"
            for reports in self.client.progress_reports.values()
            for r in reports
        ][-8:]
        return (
            f"statuses: {self.client.statuses[-3:]}\nmessages: {[m.message for m in self.client.messages]}\n"
            f"progress: {progress}\ndiagnostics: { {u: [d.message for d in ds] for u, ds in self.client.diagnostics.items()} }\nserver: {stats}"
        )

    async def wait_idle(self, what: str = "the server to finish checking", timeout: float = TIMEOUT) -> dict:
        """Wait until the last status says nothing is being checked."""
        return await self.wait_for(
            lambda: self.client.statuses and self.client.statuses[-1]["checking"] == 0 and self.client.statuses[-1],
            what,
            timeout,
        )

    async def command(self, command: str, *arguments: Any) -> Any:
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))
        )

    async def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )

    async def code_lens(self, uri: str) -> list[types.CodeLens]:
        return list(
            await self.client.text_document_code_lens_async(
                types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            or []
        )

    async def code_actions(
        self, uri: str, line: int, diagnostics: list[types.Diagnostic] | None = None
    ) -> list[types.CodeAction | types.Command]:
        rng = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0))
        return list(
            await self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=rng,
                    context=types.CodeActionContext(diagnostics=diagnostics or []),
                )
            )
            or []
        )


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines()):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in text")


def server_env(tmp_path: Path) -> dict[str, str]:
    # pytest-lsp replaces the whole environment: start from ours.
    env = dict(os.environ)
    env.update(
        {
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HF_HUB_OFFLINE": "1",
            "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
            "PYTHONPATH": os.pathsep.join([str(REPO / "server"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.pop("COHERENCE_MODEL", None)
    env.pop("COHERENCE_API_BASE", None)
    return env


def copy_examples(ws: Path) -> Path:
    """A copy of examples/ whose input generation is not cut short by a loaded machine: the
    engine's input generator stops at a wall-clock budget (2 s), so on a busy CI box it could
    make different inputs (and results) from run to run."""
    shutil.copytree(EXAMPLES, ws, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "test_*_coherence.py"))
    pyproject = ws / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().rstrip("\n") + "\ninput-budget = 60\n")
    return ws


def editor_env(tmp_path: Path, ws: Path, out: Path) -> dict[str, str]:
    """The environment of a real editor driven headless (Neovim, Emacs): the server's interpreter
    and this checkout's server on its path, the workspace and the report file its script reads, and
    caches, state and home kept under ``tmp_path``."""
    env = dict(os.environ)
    env.update(
        {
            "COHERENCE_PY": sys.executable,
            "COHERENCE_WS": str(ws),
            "COHERENCE_OUT": str(out),
            "HOME": str(tmp_path / "home"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "PYTHONPATH": os.pathsep.join([str(REPO / "server"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
    )
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_examples(tmp_path / "ws")


# The default run drives the server as VS Code only; the same tests as Neovim are marked slow and
# run in CI, since both clients reach the same server code.
@pytest.fixture(params=[pytest.param("neovim", marks=pytest.mark.slow), "vscode"])
def client_name(request) -> str:
    return request.param


@pytest_asyncio.fixture
async def start(
    client_name: str, workspace: Path, tmp_path: Path, zygote: Callable[[dict], list[str] | None] | None, request
):
    """``await start(settings=..., options_style=...)`` starts a server and initializes it as
    the parametrized client would.  ``folders``: more workspace folders after ``workspace``;
    ``scoped``: the "coherence" section the client answers for a folder (by its path), as VS Code
    does for a folder's own settings; ``options``: more top-level ``initializationOptions``.

    The server is forked from this worker's zygote, already imported, unless the test is marked
    ``fresh_server`` (its subject is the server's process or its imports) or its environment
    changes what Python imports."""
    fresh = request.node.get_closest_marker("fresh_server") is not None
    sessions: list[Session] = []

    async def _start(
        settings: dict | None = None,
        *,
        options_style: str = "settings",
        configuration: dict | None = None,
        name: str | None = None,
        capture_stderr: bool = False,
        env: dict[str, str] | None = None,
        answer_registrations: bool = True,
        folders: list[Path] = (),  # type: ignore[assignment]
        scoped: dict[Path, dict] | None = None,
        options: dict | None = None,
    ) -> Session:
        cname = name or client_name
        full_env = {**server_env(tmp_path), **(env or {})}
        forked = None if fresh or zygote is None else zygote(full_env)
        command = [*forked, "serve"] if forked else [sys.executable, "-m", "coherence", "serve"]
        stderr_path = tmp_path / f"server-stderr-{len(sessions)}.txt"
        if capture_stderr:
            command = ["/bin/sh", "-c", f'exec {shlex.join(command)} 2>"{stderr_path}"']
        config = ClientServerConfig(
            server_command=command,
            client_factory=functools.partial(make_client, answer_registrations),
            server_env=full_env,
        )
        client = await config.start()
        if configuration is not None:
            client.set_configuration(configuration, section="coherence")
        for folder, section in (scoped or {}).items():
            client.set_configuration(section, section="coherence", scope_uri=folder.as_uri())
        merged = {**TEST_SETTINGS, "cacheDir": str(tmp_path / "cache"), **(settings or {})}
        init: Any = {"settings": merged} if options_style == "settings" else merged
        init.update(options or {})
        capabilities, info = client_params(cname)
        await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                client_info=info,
                root_uri=workspace.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name) for folder in [workspace, *folders]
                ],
                initialization_options=init,
            )
        )
        session = Session(client, workspace, cname)
        session.stderr_path = stderr_path if capture_stderr else None
        sessions.append(session)
        return session

    yield _start
    for s in sessions:
        if s.closed:
            continue
        try:
            await asyncio.wait_for(s.client.shutdown_session(), timeout=30)
        finally:
            await s.client.stop()


@pytest_asyncio.fixture
async def lsp(start) -> Session:
    return await start()
