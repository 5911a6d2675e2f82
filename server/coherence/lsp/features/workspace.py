"""Check Workspace, after saying what it would cost.

``coherence.estimateWorkspace`` counts the workspace's marked functions, those with a cached result
(free: nothing runs), and for the others the samples each checker would request after the sample
cache and their price from litellm's map (``engine/sampling/cost``; recorded samples cost $0 and
say so).  ``coherence.checkWorkspace`` asks the editor first (``window/showMessageRequest``,
Continue / Cancel) when the run would request samples; the VS Code client shows the estimate in a
modal itself, whatever it costs, and passes ``{"confirmed": true}``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import unquote

from lsprotocol import types

from coherence.engine.errors import ConfigurationError
from coherence.lsp.budget import money
from coherence.lsp.features import LanguageFeature
from coherence.lsp.parsing import FileProblem
from coherence.lsp.progress import BatchProgress
from coherence.lsp.uris import uri_to_path

log = logging.getLogger(__name__)

CONTINUE = "Continue"
CANCEL = "Cancel"


def _confirmed(args: tuple[Any, ...]) -> bool:
    return bool(args) and isinstance(args[0], dict) and args[0].get("confirmed") is True


class WorkspaceFeature(LanguageFeature):
    def uris(self) -> list[str]:
        """The workspace's Python files, and the open documents outside it, but for those of a
        folder where coherence.enable is false."""
        sched = self.ls.scheduler
        uris = sched.workspace_files()
        for uri, state in sched.docs.items():
            if uri not in uris and state.open:
                uris.append(uri)
        return [u for u in uris if self.ls.settings_for(uri_to_path(u)).enable]

    async def estimate(self) -> dict:
        """What checking the workspace would request and cost now; ``message`` says it in a sentence."""
        sched = self.ls.scheduler
        uris = self.uris()
        known = set(sched.docs)
        try:
            return await self._estimate(uris)
        finally:
            # the files read only to be counted are forgotten: their saved results must not reach
            # the status bar's counts as if they had been checked
            for uri in set(sched.docs) - known:
                state = sched.docs[uri]
                if not state.open and not state.jobs:
                    del sched.docs[uri]

    async def _estimate(self, uris: list[str]) -> dict:
        sched = self.ls.scheduler
        functions = cached_results = 0
        files: set[str] = set()
        groups: dict[int, tuple[Any, list]] = {}
        for uri in uris:
            try:
                state = sched.refresh_parse(uri)
                config = sched.config_for(state) if state.targets and not state.file_problem else None
            except (FileProblem, ConfigurationError):
                continue
            if config is None:
                continue
            checker = sched.checker_for(config)
            for q, target in state.targets.items():
                functions += 1
                files.add(uri)
                key = state.current_keys.get(q)
                if target.skip_reason or (key is not None and sched.cache.get(key) is not None):
                    cached_results += 1
                    continue
                groups.setdefault(id(checker), (checker, []))[1].append(target)
        from coherence.engine.sampling.cost import estimate_provider

        models: list[dict] = []
        for checker, targets in groups.values():
            await sched.ready(checker)
            cfg = checker.config
            est = await asyncio.to_thread(
                estimate_provider,
                checker.provider,
                targets,
                samples=cfg.samples,
                temperature=cfg.temperature,
                cache=checker.cache,
            )
            replay = not getattr(checker.provider, "cacheable", False)
            models.append(
                {
                    "model": est.model,
                    "functions": len(targets),
                    "requested": 0 if replay else est.requested,
                    "cached": 0 if replay else est.cached,
                    "usd": est.usd,
                    "replay": replay,
                    "note": est.note,
                }
            )
        to_check = sum(m["functions"] for m in models)
        priced = [m["usd"] for m in models]
        usd = None if None in priced else sum(u for u in priced if u is not None)
        out = {
            "files": len(files),
            "functions": functions,
            "cachedResults": cached_results,
            "toCheck": to_check,
            "samples": sum(m["requested"] for m in models),
            "cachedSamples": sum(m["cached"] for m in models),
            "usd": usd,
            "models": models,
            **self.ls.scheduler.budget.status(),
        }
        out["message"] = describe(out)
        return out

    async def check(self, *args: Any) -> dict:
        if not self.ls.enabled_anywhere():
            from coherence.lsp.scheduler import DISABLED

            self.ls.notify_problem(DISABLED, once_key=None, level="info")
            return {"files": 0, "functions": 0, "counts": {}}
        if not _confirmed(args):
            est = await self.estimate()
            if est["samples"] and not await self._ask(est["message"]):
                return {"cancelled": True, "estimate": est}
        return await self._check_all()

    async def _ask(self, message: str) -> bool:
        answer = await self.ls.ask_client(
            self.ls.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Warning,
                    message=message,
                    actions=[types.MessageActionItem(title=CONTINUE), types.MessageActionItem(title=CANCEL)],
                )
            ),
            "asking to confirm Check Workspace",
            timeout=3600,
        )
        return getattr(answer, "title", None) == CONTINUE

    async def _check_all(self) -> dict:
        sched = self.ls.scheduler
        uris = self.uris()
        open_uris = {u for u, s in sched.docs.items() if s.open}
        for uri in uris:
            sched.state(uri, open_=uri in open_uris)
        # the files with marked functions, as the estimate counted them ("3 files", then "checking 3 files")
        marked = sum(1 for uri in uris if _has_targets(sched, uri))
        progress = BatchProgress(
            self.ls,
            f"coherence: checking {marked} file{'s' if marked != 1 else ''}",
            len(uris),
            on_cancel=lambda: [sched.cancel(u, reason="cancelled") for u in uris],
        )
        progress.start()

        async def one(uri: str) -> list:
            try:
                return await sched.check_document(uri, reason="workspace", own_progress=False)
            finally:
                progress.finish_one(uri)
                progress.report("", f"checked {unquote(uri.rsplit('/', 1)[-1])}", 0.0)

        try:
            batches = await asyncio.gather(*(one(uri) for uri in uris), return_exceptions=True)
        finally:
            progress.end("done")
        counts: dict[str, int] = {}
        files = 0
        for uri, batch in zip(uris, batches):
            if isinstance(batch, BaseException):
                log.warning("checking %s failed: %s", uri, batch)
                continue
            if batch:
                files += 1
            for r in batch:
                counts[r.status] = counts.get(r.status, 0) + 1
        return {"files": files, "functions": sum(counts.values()), "counts": counts}


def _has_targets(sched, uri: str) -> bool:
    try:
        state = sched.refresh_parse(uri)
    except FileProblem:
        return False
    return bool(state.targets) and not state.file_problem


def describe(est: dict) -> str:
    """``Check 12 functions in 5 files? 3 have cached results (free). 9 to check: 81 samples to
    request from openai/gpt-4o-mini, about $0.0123 (litellm's prices).``"""
    n, files = est["functions"], est["files"]
    parts = [f"coherence: check {n} function{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''}?"]
    if est["cachedResults"]:
        parts.append(f"{est['cachedResults']} have cached results (free, nothing runs).")
    for m in est["models"]:
        if m["replay"]:
            parts.append(f"{m['functions']} to check from recorded samples ({m['model']}): nothing is bought, $0.")
            continue
        price = money(m["usd"]) if m["usd"] is not None else "price unknown"
        cached = f" ({m['cached']} cached, free)" if m["cached"] else ""
        parts.append(
            f"{m['functions']} to check: {m['requested']} sample{'s' if m['requested'] != 1 else ''} to request "
            f"from {m['model']}{cached}, about {price} (litellm's prices)."
        )
    if est["usd"] is not None and len(est["models"]) > 1:
        parts.append(f"In all about {money(est['usd'])}.")
    if est.get("maxCostUsd"):
        parts.append(f"This window has spent {money(est['spentUsd'])} of its {money(est['maxCostUsd'])} cap.")
    return " ".join(parts)
