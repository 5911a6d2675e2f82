"""The server's LSP handlers: one per method, each a few lines that hand the event to the
features (``ls.fan_out``) or to one feature's method."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from coherence.lsp import configuration
from coherence.lsp import settings as settings_mod
from coherence.lsp.editor_models import client_lends_models
from coherence.lsp.language_server import CONFIGURED_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from coherence.lsp.language_server import CoherenceLanguageServer


async def reload_settings(ls: CoherenceLanguageServer, pushed: Any, source: str) -> None:
    """The settings pulled again for the window and every folder (else those ``pushed`` in a
    didChangeConfiguration), applied; the features hear of a change."""
    pulled = await configuration.pull(ls)  # None when the client cannot answer
    if ls.stopping:
        return
    raw, folders = pulled if pulled is not None else (None, None)
    if pulled is None and isinstance(pushed, dict):
        raw = settings_mod.extract_section(pushed) or None
    if configuration.apply(ls, raw, folders=folders, source=source):
        ls.fan_out("settings_changed")
        ls.warm_up()


def register(server: CoherenceLanguageServer) -> None:

    @server.feature(types.INITIALIZE)
    def initialize(ls: CoherenceLanguageServer, params: types.InitializeParams) -> None:
        ls._init_settings = settings_mod.extract_section(params.initialization_options)
        ls.client_trust = settings_mod.client_trust(params.initialization_options)
        ls.client_raises_cap = settings_mod.client_flag(params.initialization_options, "raiseCostCap")
        ls.client_problem_actions = settings_mod.client_flag(params.initialization_options, "problemActions")
        ls.client_lends_models = client_lends_models(params.initialization_options, params.capabilities)
        ls.settings, problems = settings_mod.parse_settings(ls._init_settings)
        ls.init_problems = problems
        asyncio.get_running_loop().call_later(CONFIGURED_TIMEOUT_SECONDS, ls.configured.set)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CoherenceLanguageServer, params: types.InitializedParams) -> None:
        for p in ls.init_problems:
            ls.notify_problem(f"coherence: {p}")
        # a client may leave out any level of the capabilities
        workspace = ls.workspace_capabilities()
        dcc = workspace.did_change_configuration if workspace else None
        dynamic = bool(dcc and dcc.dynamic_registration)
        if dynamic:
            await ls.ask_client(
                ls.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id="coherence-configuration",
                                method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                register_options={"section": settings_mod.SECTION},
                            )
                        ]
                    )
                ),
                "registering for configuration changes",
            )
        try:
            pulled = await configuration.pull(ls)
            if ls.stopping:
                return
            if pulled is not None and configuration.apply(
                ls, pulled[0], folders=pulled[1], source="workspace/configuration"
            ):
                ls.fan_out("settings_changed")
        finally:
            ls.configured.set()
        # the first status after the checks waiting for the settings have made their jobs (they
        # resume first): a status saying "checking 0" must not arrive just before their results
        ls.refresh_status()
        ls.warm_up()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CoherenceLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        await reload_settings(ls, params.settings, "didChangeConfiguration")

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(
        ls: CoherenceLanguageServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        # pygls has updated ls.workspace's folders; a new folder's own settings are pulled
        if ls.supports_configuration():
            await reload_settings(ls, None, "didChangeWorkspaceFolders")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CoherenceLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if params.text_document.language_id not in ("python", "py", ""):
            return
        ls.last_uri = params.text_document.uri
        ls.fan_out("document_open", params)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CoherenceLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri not in ls.scheduler.docs:
            return
        ls.last_uri = params.text_document.uri
        ls.fan_out("document_change", params)

    @server.feature(types.TEXT_DOCUMENT_WILL_SAVE)
    def will_save(ls: CoherenceLanguageServer, params: types.WillSaveTextDocumentParams) -> None:
        # why the save comes (typed, or the editor's autosave), for the didSave that follows
        state = ls.scheduler.docs.get(params.text_document.uri)
        if state is not None:
            state.save_reason = params.reason

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: CoherenceLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri not in ls.scheduler.docs:
            return
        ls.last_uri = params.text_document.uri
        # a save says the text is probably settled: its checks wait only SAVE_SETTLE_SECONDS
        state = ls.scheduler.docs.get(params.text_document.uri)
        if state is not None:
            state.saved_at = asyncio.get_running_loop().time()
        ls.fan_out("document_save", params)
        if state is not None:
            state.save_reason = None

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CoherenceLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri not in ls.scheduler.docs:
            return
        ls.fan_out("document_close", params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: CoherenceLanguageServer, params: types.HoverParams) -> types.Hover | None:
        started = time.perf_counter()
        try:
            return ls.hover_feature.hover(params)
        finally:
            ls.hover_seconds.append(time.perf_counter() - started)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: CoherenceLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        if params.text_document.uri not in ls.scheduler.docs:
            return None
        return ls.code_lens_feature.code_lens(params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
    )
    def code_action(ls: CoherenceLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        return ls.code_actions_feature.code_actions(params)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: CoherenceLanguageServer, params: None) -> None:
        await ls.stop_work()
