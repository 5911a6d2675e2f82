"""The editor window's spending on samples against its cap (``coherence.maxCostUsd``, else the
pyproject's ``max_cost_usd``).

The server keeps the window's running total (what each check's samples cost, litellm's prices).
Before a check starts, its samples are priced (``engine/sampling/cost``: cached and replayed
samples cost nothing); a check that would take the total past the cap is not started: its function
shows why, and the user is asked once whether to raise the cap.  Checks in flight hold their
estimate, so two checks started together cannot both pass a cap only one of them fits under.

Raising the cap: a client that says it can (``initializationOptions`` ``{"raiseCostCap": true}``:
the VS Code client) is asked to write ``coherence.maxCostUsd`` (``coherence/raiseCostCap``; the
server never writes the user's files), so the raise survives a restart.  Other editors get the
raise for the server's lifetime, and the question says so.  Either way the refused documents are
checked at once; a later change of the setting is the user's word and ends a lifetime raise.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from coherence.engine.check import Checker
    from coherence.engine.config import CheckConfig
    from coherence.lsp.language_server import CoherenceLanguageServer
    from coherence.lsp.settings import Settings
    from coherence.lsp.state import Job

log = logging.getLogger(__name__)

RAISE = "Raise the cap to ${:.2f}"
KEEP = "Keep it"
RAISE_REQUEST = "coherence/raiseCostCap"


def money(usd: float) -> str:
    """Dollars to 4 decimals, or to 2 significant digits when smaller than that (a cap of
    $0.000001 is not "$0.0000")."""
    if 0 < abs(usd) < 0.0001:
        return f"${usd:.{1 - math.floor(math.log10(abs(usd)))}f}"
    return f"${usd:.4f}"


class WindowBudget:
    def __init__(self, ls: CoherenceLanguageServer):
        self.ls = ls
        self.spent = 0.0
        self.raised_to: float | None = None  # the cap the user raised it to in this window
        self._held: dict[int, float] = {}  # estimates of the checks in flight, by id(job)
        self._refused: set[str] = set()  # documents with a function refused since the last ask
        self._asking = False

    def cap(self, config: CheckConfig | None = None) -> float | None:
        cap = self.ls.settings.maxCostUsd or (config.max_cost_usd if config is not None else None)
        if cap is not None and self.raised_to is not None:
            cap = max(cap, self.raised_to)
        return cap

    def committed(self) -> float:
        return self.spent + sum(self._held.values())

    async def admit(self, job: Job, checker: Checker) -> str:
        """Why ``job`` must not start ("" when it may); when it may, its estimate is held until
        ``settle``."""
        cap = self.cap(checker.config)
        provider = checker.provider
        if cap is None or job.target.skip_reason or not getattr(provider, "cacheable", False):
            return ""  # no cap, nothing to sample, or a replay file: nothing is bought
        if not getattr(provider, "billed", True):
            return ""  # the editor's model: its quota, not this cap
        from coherence.engine.sampling.cost import estimate_provider

        cfg = checker.config
        est = await asyncio.to_thread(
            estimate_provider,
            checker.provider,
            [job.target],
            samples=cfg.samples,
            temperature=cfg.temperature,
            cache=checker.cache,
        )
        price, committed = est.usd, self.committed()
        if price == 0 or (price is None and committed < cap) or (price is not None and committed + price <= cap):
            self._held[id(job)] = price or 0.0
            return ""
        self._refused.add(job.uri)
        spent = f"this window has spent {money(self.spent)} of its {money(cap)} cap (coherence.maxCostUsd)"
        # the reason as the result carries it: the diagnostic says "<name> was not checked: …",
        # the lens "skipped — …", the question "not checked: …"
        if price is None:
            why = f"{spent}, and the price of {est.model} is unknown"
        else:
            why = f"its samples would cost about {money(price)}; {spent}"
        self._offer_raise(cap, committed + (price or 0.0), why)
        return why

    def settle(self, job: Job, cost_usd: float) -> None:
        """``job`` ended (however it ended): its estimate is released, its real cost counted."""
        self._held.pop(id(job), None)
        if cost_usd and math.isfinite(cost_usd):
            self.spent += cost_usd
            self.ls.refresh_status()

    def status(self) -> dict:
        # the editor's cap, else a pyproject's (that of the first configuration in use)
        checkers = self.ls.scheduler.checkers()
        cap = self.cap(checkers[0].config if checkers else None)
        return {"spentUsd": round(self.spent, 6), **({"maxCostUsd": cap} if cap else {})}

    def _offer_raise(self, cap: float, needed: float, why: str) -> None:
        """Ask once (while the question is open) whether to raise the cap; the documents refused
        meanwhile are checked again when the user says yes."""
        if self._asking or self.ls.stopping:
            return
        self._asking = True
        new_cap = math.ceil(max(2 * cap, needed * 1.25) * 100) / 100
        self.ls.run_task(self._ask(new_cap, why), name="raise the cost cap")

    def settings_changed(self, old: Settings, new: Settings) -> None:
        """The user changed the cap (in the settings): that is their word, and ends a lifetime raise."""
        if old.maxCostUsd != new.maxCostUsd:
            self.raised_to = None
            self.ls.refresh_status()

    async def _ask(self, new_cap: float, why: str) -> None:
        writes = self.ls.client_raises_cap
        how = (
            "Raise the cap (written to coherence.maxCostUsd in the workspace settings)?"
            if writes
            else "Raise the cap for as long as the server runs (this editor cannot write the setting), "
            "or set coherence.maxCostUsd."
        )
        try:
            raise_it = RAISE.format(new_cap)
            answer = await self.ls.ask_client(
                self.ls.window_show_message_request_async(
                    types.ShowMessageRequestParams(
                        type=types.MessageType.Warning,
                        message=f"coherence: not checked: {why}. {how}",
                        actions=[types.MessageActionItem(title=raise_it), types.MessageActionItem(title=KEEP)],
                    )
                ),
                "asking to raise the cost cap",
                timeout=3600,
            )
        finally:
            self._asking = False
        refused, self._refused = self._refused, set()
        if answer is None or getattr(answer, "title", None) != raise_it:
            return
        # in effect at once, whatever the client does with the setting (its change, when it comes
        # back through workspace/configuration, says the same)
        self.raised_to = new_cap
        log.info("the window's cost cap is raised to $%.2f", new_cap)
        self.ls.refresh_status()
        for uri in refused:
            self.ls.run_task(self.ls.scheduler.check_document(uri, reason="cap raised"), name=f"check {uri}")
        if writes:
            await self._write_setting(new_cap)

    async def _write_setting(self, new_cap: float) -> None:
        """Ask the client to write coherence.maxCostUsd; when it cannot, the raise lasts as long
        as the server, and the user is told."""
        reply = await self.ls.ask_client(
            self.ls.protocol.send_request_async(RAISE_REQUEST, {"maxCostUsd": new_cap}),
            "asking the client to write coherence.maxCostUsd",
            timeout=60,
        )
        written = reply.get("written") if isinstance(reply, dict) else getattr(reply, "written", None)
        if written is True:
            log.info("the client wrote coherence.maxCostUsd = %s", new_cap)
            return
        error = reply.get("error") if isinstance(reply, dict) else getattr(reply, "error", None)
        self.ls.notify_problem(
            f"coherence: the editor could not write coherence.maxCostUsd ({error or 'no answer'}); "
            f"the cap is ${new_cap:.2f} for as long as the server runs",
            once_key=None,
        )
