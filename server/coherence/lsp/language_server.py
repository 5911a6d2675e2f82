"""The coherence language server (pygls 2); ``server.serve()`` runs it over stdio.

One handler per LSP method (``handlers``), fanning out to the features (``features/``).  Background work runs in
tasks started with ``run_task``, which keeps a strong reference to each until it ends.

Two pygls behaviours are worked around here:
* every notification leaves its handler's future in ``_request_futures`` forever, and progress
  tokens are never dropped: ``CoherenceProtocol`` (``protocol``) forgets finished handler futures, and
  ``progress.BatchProgress`` removes its token when it ends;
* shutting down with tasks in flight (pygls#606): our tasks are cancelled and awaited before the
  event loop closes, stdin is read by a daemon thread (``transport``: a blocked read cannot hold the process),
  and a watchdog ends the process if a thread still hangs after ``exit``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from coherence import __version__
from coherence.engine.redact import escape, redact
from coherence.lsp import settings as settings_mod
from coherence.lsp import transport
from coherence.lsp.features import LanguageFeature
from coherence.lsp.features.alternatives import AlternativesFeature
from coherence.lsp.features.checking import CheckingFeature
from coherence.lsp.features.code_actions import CodeActionsFeature
from coherence.lsp.features.code_lens import CodeLensFeature
from coherence.lsp.features.commands import CommandsFeature
from coherence.lsp.features.diagnostics import DiagnosticsFeature
from coherence.lsp.features.hover import HoverFeature
from coherence.lsp.features.status import StatusFeature
from coherence.lsp.features.workspace import WorkspaceFeature
from coherence.lsp.protocol import CoherenceProtocol
from coherence.lsp.render import client_column
from coherence.lsp.scheduler import Scheduler
from coherence.lsp.state import DocumentState
from coherence.lsp.uris import uri_to_path

log = logging.getLogger(__name__)

EXIT_GRACE_SECONDS = 10.0
CONFIGURED_TIMEOUT_SECONDS = 15.0
_ONCE = object()
_LENS_REFRESH_AGAIN_S = 0.75
PROBLEM_NOTIFICATION = "coherence/problem"  # {message, level}: a toast with Open Settings, Show Output  # the follow-up code-lens refresh (see _schedule_lens_refresh_again)


def _clean(message: str) -> str:
    """A message for the editor's pop-ups and output channel, and the server's log: redacted and
    escaped like every report (it can quote what generated code did: a worker's traceback, a
    value), keeping its line breaks."""
    return escape(redact(message), keep="\n\t")


class CoherenceLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "coherence",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=CoherenceProtocol,
        )
        # the window's settings: those of the first workspace folder (window-scoped ones such as
        # runOn and maxCostUsd are read from here only)
        self.settings = settings_mod.DEFAULTS
        # each workspace folder's settings (path -> Settings), pulled with its scopeUri: enable,
        # exclude and what makes a document's CheckConfig are read for the document's folder
        self.folder_settings: dict[str, settings_mod.Settings] = {}
        self._init_settings: dict = {}
        # set once the settings are pulled after ``initialized``: no check starts before, so a
        # document opened meanwhile is not checked under the init options (another folder's)
        self.configured = asyncio.Event()
        self.init_problems: list[str] = []  # bad values in initializationOptions, shown once initialized
        self.client_trust: bool | None = None  # the editor's workspace trust, when the client says
        # the client writes coherence.maxCostUsd when the user raises the cap (the VS Code client)
        self.client_raises_cap = False
        # the client shows ``coherence/problem`` with Open Settings and Show Output (the VS Code client)
        self.client_problem_actions = False
        # the client answers ``coherence/sample`` from the editor's chat models (``editor_models``)
        self.client_lends_models = False
        self.scheduler = Scheduler(self)
        self.checking = CheckingFeature(self)
        self.diagnostics = DiagnosticsFeature(self)
        self.hover_feature = HoverFeature(self)
        self.code_lens_feature = CodeLensFeature(self)
        self.code_actions_feature = CodeActionsFeature(self)
        self.commands = CommandsFeature(self)
        self.alternatives = AlternativesFeature(self)
        self.status = StatusFeature(self)
        self.workspace_checks = WorkspaceFeature(self)
        self.features: list[LanguageFeature] = [
            self.checking,
            self.diagnostics,
            self.hover_feature,
            self.code_lens_feature,
            self.code_actions_feature,
            self.commands,
            self.alternatives,
            self.status,
            self.workspace_checks,
        ]
        self._tasks: set[asyncio.Task] = set()
        self._shown: set[Any] = set()
        self._dirty: set[str] = set()
        self._flush_pending = False
        self._lens_refresh_wanted = False
        self._lens_again: asyncio.TimerHandle | None = None  # see _schedule_lens_refresh_again
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping = False
        self.exit_code = 1
        self.last_uri: str | None = None
        self.hover_seconds: deque[float] = deque(maxlen=1000)  # time in the hover handler (serverStats)

    # -- fan out ----------------------------------------------------------------------------
    def fan_out(self, hook: str, *args: Any) -> None:
        for feature in self.features:
            try:
                getattr(feature, hook)(*args)
            except Exception:  # one feature's bug must not stop the others
                log.exception("%s.%s failed", type(feature).__name__, hook)

    # -- tasks ------------------------------------------------------------------------------
    def run_task(self, coro: Coroutine, *, name: str | None = None) -> asyncio.Task:
        """Start ``coro`` as a task and keep a strong reference to it until it ends."""
        task = asyncio.ensure_future(coro)
        if name:
            try:
                task.set_name(name)
            except AttributeError:
                pass
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and not self.stopping:
            log.error("background task %s failed", task.get_name(), exc_info=exc)

    def call_soon(self, fn, *args) -> None:
        """Run ``fn`` on the event loop (directly when already on it)."""
        loop = self.loop
        if loop is None:
            fn(*args)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            fn(*args)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(fn, *args)

    # -- refreshing the client --------------------------------------------------------------
    def refresh(self, uri: str) -> None:
        """Results or checks of ``uri`` changed: republish (coalesced, on the next loop turn)."""
        self._dirty.add(uri)
        self._schedule_flush()

    def refresh_status(self) -> None:
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_pending or self.stopping:
            return
        self._flush_pending = True
        try:
            asyncio.get_running_loop().call_soon(self._flush)
        except RuntimeError:
            self._flush_pending = False
            self._flush()

    def _flush(self) -> None:
        self._flush_pending = False
        if self.stopping:
            return
        dirty, self._dirty = self._dirty, set()
        if dirty:
            self.fan_out("results_changed", dirty)
        else:
            self.status.send()
        if self._lens_refresh_wanted:
            self._lens_refresh_wanted = False
            if self._send_lens_refresh():
                self._schedule_lens_refresh_again()

    def _schedule_lens_refresh_again(self) -> None:
        # VS Code drops a refresh that lands just before its editor loses focus: a refresh only
        # schedules a lens request after a debounce, and a blur cancels the scheduled request
        # (codelensController: onDidBlurEditorText -> cancel).  A save followed by the cost-cap
        # question was seen to leave a refused check's lens at "coherence: checking…" (e2e, CI
        # on 9dea19e and c5612d0).  One more refresh a little after the *latest* one costs a lens
        # request: the timer is re-armed by every refresh, since a follow-up armed by an earlier
        # one can fire inside the same window (docs/results.md#lens-refresh).
        if self.stopping:
            return
        if self._lens_again is not None:
            self._lens_again.cancel()
        try:
            self._lens_again = asyncio.get_running_loop().call_later(_LENS_REFRESH_AGAIN_S, self._lens_refresh_again)
        except RuntimeError:
            self._lens_again = None

    def _lens_refresh_again(self) -> None:
        self._lens_again = None
        if not self.stopping:
            self._send_lens_refresh()

    def _send_lens_refresh(self) -> bool:
        """``workspace/codeLens/refresh``, when the client supports it; whether it was sent."""
        if not self._client_lens_refresh():
            return False
        self.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)
        return True

    def request_code_lens_refresh(self) -> None:
        self._lens_refresh_wanted = True

    def workspace_capabilities(self) -> types.WorkspaceClientCapabilities | None:
        """The client's workspace capabilities: None before ``initialize`` or when left out (a
        client may leave out any level)."""
        try:
            return self.client_capabilities.workspace
        except AttributeError:  # not initialized
            return None

    def _client_lens_refresh(self) -> bool:
        ws = self.workspace_capabilities()
        cl = ws.code_lens if ws else None
        return bool(cl and cl.refresh_support)

    # -- messages ---------------------------------------------------------------------------
    def notify_problem(
        self,
        message: str,
        once_key: Any = _ONCE,
        level: str = "warning",
        *,
        actions: bool = False,
        needs: str | None = None,
    ) -> None:
        """Show ``message`` once per distinct problem (``once_key``, default the message itself;
        None shows it every time) and log it.  With ``actions`` (a problem the user fixes in the
        settings), a client that says it can shows it with Open Settings and Show Output; ``needs``
        ("llm": litellm is not installed) tells such a client what its server lacks."""
        key = message if once_key is _ONCE else once_key
        message = _clean(message)
        kind = {"error": types.MessageType.Error, "warning": types.MessageType.Warning}.get(
            level, types.MessageType.Info
        )
        log.warning("%s", message) if kind != types.MessageType.Info else log.info("%s", message)
        if self.stopping:
            return
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001
            pass
        if key is not None and key in self._shown:
            return
        if key is not None:
            self._shown.add(key)
        if actions and self.client_problem_actions:
            self.protocol.notify(
                PROBLEM_NOTIFICATION, {"message": message, "level": level, **({"needs": needs} if needs else {})}
            )
            return
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def show_info(self, message: str) -> None:
        if not self.stopping:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=_clean(message)))

    def report_server_error(self, error: Exception, source) -> None:
        log.error("server error (%s): %s", getattr(source, "__name__", source), _clean(str(error)))
        if self.stopping or source.__name__ == "FeatureRequestError":
            return
        self.notify_problem(
            f"coherence: internal error: {error}",
            once_key=("internal", type(error).__name__, str(error)),
            level="error",
        )

    # -- documents and positions ------------------------------------------------------------
    def position_encoding(self):
        try:
            return self.workspace.position_encoding
        except RuntimeError:
            return None

    def document_lines(self, state: DocumentState) -> list[str]:
        doc = self.workspace.text_documents.get(unquote(state.uri))
        if doc is not None:
            return list(doc.lines)
        for t in state.targets.values():
            return t.module_source.splitlines(keepends=True)
        return []

    def client_len(self, text: str) -> int:
        return client_column(text, len(text), self.position_encoding())

    def name_range(self, lines: list[str], line: int, column: int, length: int) -> types.Range:
        line = max(0, line)
        text = lines[line] if line < len(lines) else ""
        enc = self.position_encoding()
        start = client_column(text, column, enc)
        end = client_column(text, column + length, enc)
        return types.Range(
            start=types.Position(line=line, character=start), end=types.Position(line=line, character=end)
        )

    def workspace_roots(self) -> list[str]:
        roots: list[str] = []
        try:
            ws = self.workspace
        except RuntimeError:
            return roots
        for folder in (ws.folders or {}).values():
            p = uri_to_path(folder.uri)
            if p and p not in roots:
                roots.append(p)
        if not roots and ws.root_path:
            roots.append(ws.root_path)
        return roots

    def workspace_root(self, path: str | None = None) -> str | None:
        """The workspace folder holding ``path`` (the deepest one), else the first folder."""
        roots = self.workspace_roots()
        if path:
            p = Path(path).resolve()
            holding = [r for r in roots if p.is_relative_to(Path(r).resolve())]
            if holding:
                return max(holding, key=len)
        return roots[0] if roots else None

    def clear_sample_caches(self) -> int:
        """Clear the SQLite sample cache of every configuration in use (or the default one)."""
        from coherence.engine.sampling.cache import SampleCache

        dirs: set[str | None] = set()
        for checker in self.scheduler.checkers():
            dirs.add(checker.config.cache_dir)
        if not dirs:
            dirs.add(
                settings_mod.resolve_path(self.settings.cacheDir, self.workspace_root())
                if self.settings.cacheDir
                else None
            )
        n = 0
        for d in dirs:
            try:
                cache = SampleCache(d)
                cache.clear()
                cache.close()
                n += 1
            except Exception:
                log.exception("clearing the sample cache %s failed", d)
        for checker in self.scheduler.checkers():
            live = getattr(checker, "_cache", None)
            if live is not None:
                try:
                    live.clear()
                except Exception:  # noqa: BLE001
                    pass
        return n

    def warm_up(self) -> None:
        """With a model configured, import litellm (seconds) in a thread before the first check."""
        from coherence.engine.sampling.editor import is_editor_model
        from coherence.engine.sampling.quiet_litellm import import_litellm, litellm_installed

        # without litellm (the llm extra) the first check says so, through the failure's own path;
        # the editor's models need none
        model = self.settings.model and not is_editor_model(self.settings.model)
        wanted = (model or self.settings.models) and "litellm" not in sys.modules
        if wanted and litellm_installed() and not self.stopping:
            self.run_task(asyncio.to_thread(import_litellm), name="import litellm")

    # -- settings ----------------------------------------------------------------------------
    def settings_for(self, path: str | None) -> settings_mod.Settings:
        """The settings of the workspace folder holding ``path`` (the window's outside them)."""
        if not self.folder_settings or not path:
            return self.settings
        root = self.workspace_root(path)
        return self.folder_settings.get(root, self.settings) if root else self.settings

    async def wait_configured(self) -> None:
        """Until the settings are pulled after ``initialized`` (briefly: the pull times out; a
        client that never sends ``initialized`` waits CONFIGURED_TIMEOUT_SECONDS after
        ``initialize``).  A plain wait: the checks resume on the loop's next turn after ``set``,
        before a status flush scheduled after it."""
        if not self.configured.is_set():
            await self.configured.wait()

    def enabled_anywhere(self) -> bool:
        """Whether some workspace folder (or the window, without folders) has coherence.enable."""
        return self.settings.enable or any(s.enable for s in self.folder_settings.values())

    def supports_configuration(self) -> bool:
        ws = self.workspace_capabilities()
        return bool(ws and ws.configuration)

    async def ask_client(self, request: Awaitable, what: str, timeout: float = 10) -> Any:
        """The client's answer to a request, or None when it fails or times out.  A client that
        goes away before it answers ends the server, and asyncio then cancels the handler that
        waits here: that is no error (pygls would log the cancellation with a traceback)."""
        if self.stopping:
            if asyncio.iscoroutine(request):
                request.close()  # never awaited, and never to be
            return None
        try:
            return await asyncio.wait_for(request, timeout=timeout)
        except asyncio.CancelledError:
            if self.stopping:
                return None
            raise
        except Exception as exc:  # noqa: BLE001
            log.info("%s failed: %s", what, exc)
            return None

    # -- stdio ------------------------------------------------------------------------------
    def start_io(self, stdin=None, stdout=None) -> None:
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve(stdin or sys.stdin.buffer, self._stop_event))
        except BrokenPipeError:
            log.error("the connection to the client is lost")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.stopping = True
            _start_watchdog(self.exit_code)

    async def _serve(self, stdin, stop: threading.Event) -> None:
        self.loop = asyncio.get_running_loop()
        code = 1
        try:
            await transport.serve(stdin, self.protocol, stop)
            code = 0 if self.protocol._shutdown else 1
            log.info("the client closed the connection")
        except SystemExit as exc:  # pygls' exit handler
            code = exc.code if isinstance(exc.code, int) else (0 if self.protocol._shutdown else 1)
        finally:
            self.exit_code = code
            await self.stop_work()

    async def stop_work(self) -> None:
        """Cancel every check and wait (briefly) for the tasks to end: no traceback at exit."""
        self.stopping = True
        self.scheduler.cancel_everything()
        try:
            await asyncio.wait_for(asyncio.to_thread(self.scheduler.close_checkers), timeout=5)
        except Exception:
            log.debug("closing the checkers timed out", exc_info=True)
        tasks = [t for t in self._tasks if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)


def _start_watchdog(code: int) -> None:
    def watchdog() -> None:

        time.sleep(EXIT_GRACE_SECONDS)
        try:
            sys.stderr.write("coherence: a worker thread did not stop in time; exiting\n")
            sys.stderr.flush()
        finally:
            os._exit(code)

    threading.Thread(target=watchdog, name="coherence-exit-watchdog", daemon=True).start()


def create_server() -> CoherenceLanguageServer:
    from coherence.lsp import handlers

    server = CoherenceLanguageServer()
    handlers.register(server)
    server.commands.register()
    server.alternatives.register()
    return server


__all__ = ["CoherenceLanguageServer", "CoherenceProtocol", "create_server"]
