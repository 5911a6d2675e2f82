"""workspace/executeCommand: check function / file (the workspace: ``workspace.py``), clear the
cache, show the last result (its fields and its text as Markdown).

Arguments are accepted in the forms clients send: ``[uri, line]`` (code lens, code actions),
``[{"uri": ..., "position": {"line": ..., "character": ...}}]`` (the VS Code palette) or
``[{"uri": ..., "line": ...}]``; with none, the most recently used document.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from coherence.lsp.features import LanguageFeature
from coherence.lsp.render import failure_markdown, hover_markdown
from coherence.lsp.state import DocumentState, result_json

log = logging.getLogger(__name__)

CHECK_FUNCTION = "coherence.checkFunction"
CHECK_FILE = "coherence.checkFile"
CHECK_WORKSPACE = "coherence.checkWorkspace"  # features/workspace.py: asks first when it would buy samples
ESTIMATE_WORKSPACE = "coherence.estimateWorkspace"  # what Check Workspace would request and cost
CLEAR_CACHE = "coherence.clearCache"
SHOW_LAST_RESULT = "coherence.showLastResult"
SERVER_STATS = "coherence.serverStats"  # bookkeeping sizes, for tests and bug reports
ALL = (CHECK_FUNCTION, CHECK_FILE, CHECK_WORKSPACE, ESTIMATE_WORKSPACE, CLEAR_CACHE, SHOW_LAST_RESULT, SERVER_STATS)


def parse_location(args: tuple[Any, ...]) -> tuple[str | None, int | None]:
    """(uri, 0-based line) from command arguments in any of the accepted forms."""
    if not args:
        return None, None
    first = args[0]
    uri: str | None = None
    line: Any = None
    if isinstance(first, dict):
        uri = first.get("uri")
        if uri is None and isinstance(first.get("textDocument"), dict):
            uri = first["textDocument"].get("uri")
        line = first.get("line")
        pos = first.get("position")
        if line is None and isinstance(pos, dict):
            line = pos.get("line")
    elif isinstance(first, str):
        uri = first
        if len(args) > 1:
            second = args[1]
            if isinstance(second, dict):
                line = second.get("line")
            else:
                line = second
    if isinstance(line, bool) or not isinstance(line, (int, float)):
        line = None
    return (uri if isinstance(uri, str) else None), (int(line) if line is not None else None)


def _rss_kb() -> int | None:
    """The server's resident memory (VmRSS, kB), or None where /proc is missing."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _percentiles(seconds) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    if not ms:
        return {"n": 0}
    pick = lambda q: round(ms[min(len(ms) - 1, int(q * len(ms)))], 2)  # noqa: E731
    return {"n": len(ms), "p50": pick(0.5), "p99": pick(0.99), "max": round(ms[-1], 2)}


class CommandsFeature(LanguageFeature):
    def register(self) -> None:
        ls = self.ls

        @ls.command(CHECK_FUNCTION)
        async def check_function(ls, *args: Any):
            return await self.check_function(*args)

        @ls.command(CHECK_FILE)
        async def check_file(ls, *args: Any):
            return await self.check_file(*args)

        @ls.command(CHECK_WORKSPACE)
        async def check_workspace(ls, *args: Any):
            return await ls.workspace_checks.check(*args)

        @ls.command(ESTIMATE_WORKSPACE)
        async def estimate_workspace(ls, *args: Any):
            return await ls.workspace_checks.estimate()

        @ls.command(CLEAR_CACHE)
        async def clear_cache(ls, *args: Any):
            return await self.clear_cache()

        @ls.command(SHOW_LAST_RESULT)
        def show_last_result(ls, *args: Any):
            return self.show_last_result(*args)

        @ls.command(SERVER_STATS)
        def server_stats(ls, *args: Any):
            return self.server_stats()

    def _uri(self, uri: str | None) -> str | None:
        return uri or self.ls.last_uri

    async def check_function(self, *args: Any) -> list[dict]:
        uri, line = parse_location(args)
        uri = self._uri(uri)
        if uri is None:
            self.ls.notify_problem("coherence: open a Python file to check", once_key=None, level="info")
            return []
        sched = self.ls.scheduler
        state = sched.refresh_parse(uri)
        qualnames = None
        if line is not None:
            target = state.target_at_line(line, body=True)
            if target is None:
                self.ls.notify_problem(f"coherence: no marked function at line {line + 1}", once_key=None, level="info")
                return []
            qualnames = [target.qualname or target.name]
        results = await sched.check_document(uri, force=True, qualnames=qualnames, reason="command")
        return [result_json(r) for r in results]

    async def check_file(self, *args: Any) -> list[dict]:
        uri, _ = parse_location(args)
        uri = self._uri(uri)
        if uri is None:
            self.ls.notify_problem("coherence: open a Python file to check", once_key=None, level="info")
            return []
        results = await self.ls.scheduler.check_document(uri, force=True, reason="command")
        return [result_json(r) for r in results]

    async def clear_cache(self) -> dict:
        n = self.ls.scheduler.cache.clear()
        cleared_samples = await asyncio.to_thread(self.ls.clear_sample_caches)
        self.ls.show_info(f"coherence: cleared {n} cached result(s) and the sample cache")
        return {"results": n, "sampleCaches": cleared_samples}

    def server_stats(self) -> dict:
        sched = self.ls.scheduler
        return {
            "requestFutures": len(self.ls.protocol._request_futures),
            "progressTokens": len(self.ls.work_done_progress.tokens),
            "tasks": len(self.ls._tasks),
            "documents": len(sched.docs),
            "jobs": sum(len(s.jobs) for s in sched.docs.values()),
            "jobList": [
                f"{j.qualname} v{j.version} started={j.started} urgent={j.urgent} cancelled={j.cancel.is_set()}"
                for s in sched.docs.values()
                for j in s.jobs.values()
            ],
            "urgentPending": sched._urgent,
            "cachedResults": len(sched.cache),
            "checkers": len(sched.checkers()),
            "pid": os.getpid(),
            "rssKB": _rss_kb(),
            "hoverHandlerMs": _percentiles(self.ls.hover_seconds),
            **sched.stats,
        }

    def show_last_result(self, *args: Any) -> dict | None:
        """The result (its fields, and ``markdown``: the hover's text, for a client to show as a
        document) of the function at ``[uri, line]``, of every function of ``[uri]``
        (``{"functions": [...]}``), or with no arguments the latest one checked."""
        uri, line = parse_location(args)
        sched = self.ls.scheduler
        if uri is None:
            if sched.last_checked is None:
                return None
            uri, q = sched.last_checked
            state = sched.docs.get(uri)
            return _shown(state, q) if state else None
        state = sched.refresh_parse(uri)
        if line is None:
            return {"functions": [shown for q in state.targets if (shown := _shown(state, q)) is not None]}
        target = state.target_at_line(line, body=True)
        if target is None:
            return None
        return _shown(state, target.qualname or target.name)


def _shown(state: DocumentState, qualname: str) -> dict | None:
    r = state.results.get(qualname)
    if r is None:
        return None
    markdown = hover_markdown(r, stale=not state.is_fresh(qualname))
    failure = state.failure_beside(qualname)
    if failure is not None:
        markdown = f"{failure_markdown(r, failure)}\n\n{markdown}"
    return {**result_json(r), "markdown": markdown}
