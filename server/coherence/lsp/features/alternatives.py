"""Commands that help the user decide who is right:

* ``coherence.showAlternatives`` ``[uri, line, {"view": "client"}?]``: your function against one
  representative of each other behaviour cluster (``lsp.alternatives``).  It returns the payload;
  a client that renders it (VS Code's diff view) says so with ``{"view": "client"}``, any other
  gets the comparison as a unified diff document opened with ``window/showDocument``.
* ``coherence.showDocument`` ``[uri, line]``: opens a file at a line (the regression-test actions
  run it after their edit, so the user lands on the test they just added).
"""

from __future__ import annotations

import logging
import re
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types

from coherence.lsp import alternatives
from coherence.lsp.features import LanguageFeature
from coherence.lsp.features.commands import parse_location
from coherence.lsp.uris import path_to_uri

log = logging.getLogger(__name__)

SHOW_ALTERNATIVES = "coherence.showAlternatives"
SHOW_DOCUMENT = "coherence.showDocument"


class AlternativesFeature(LanguageFeature):
    _dir: Path | None = None  # where the unified diffs for editors without a diff view go

    def register(self) -> None:
        ls = self.ls

        @ls.command(SHOW_ALTERNATIVES)
        async def show_alternatives(ls, *args: Any):
            return await self.show_alternatives(*args)

        @ls.command(SHOW_DOCUMENT)
        async def show_document(ls, *args: Any):
            uri, line = parse_location(args)
            return await self.show_document(uri, line or 0) if uri else False

    def payload(self, uri: str, line: int) -> dict | None:
        state = self.ls.scheduler.refresh_parse(uri)
        target = state.target_at_line(line, body=True)
        if target is None:
            return None
        result = state.results.get(target.qualname or target.name)
        if result is None or result.spec_hash != target.spec.spec_hash:
            return None
        return alternatives.view(result, target.function_source)

    async def show_alternatives(self, *args: Any) -> dict | None:
        uri, line = parse_location(args)
        uri = uri or self.ls.last_uri
        if uri is None or line is None:
            self.ls.notify_problem(
                "coherence: put the cursor in a checked function to see its alternatives", once_key=None, level="info"
            )
            return None
        payload = self.payload(uri, line)
        if payload is None:
            self.ls.notify_problem(
                f"coherence: no alternatives to show at line {line + 1} (check the function first)",
                once_key=None,
                level="info",
            )
            return None
        client_view = len(args) > 2 and isinstance(args[2], dict) and args[2].get("view") == "client"
        if not client_view:
            path = self._write_diff(payload)
            if path is not None:
                await self.show_document(path_to_uri(str(path)), 0)
        return payload

    def _write_diff(self, payload: dict) -> Path | None:
        try:
            if self._dir is None:
                self._dir = Path(tempfile.mkdtemp(prefix="coherence-alternatives-"))
            path = self._dir / (re.sub(r"[^\w.]", "_", payload["qualname"]) + ".alternatives.diff")
            path.write_text(alternatives.unified(payload), encoding="utf-8")
            return path
        except OSError as exc:
            self.ls.notify_problem(f"coherence: could not write the alternatives diff: {exc}", level="warning")
            return None

    async def show_document(self, uri: str, line: int) -> bool:
        """``window/showDocument`` at ``line``; False when the client cannot (LSP < 3.16) or refuses."""
        window = getattr(self.ls.client_capabilities, "window", None)
        supported = bool(getattr(getattr(window, "show_document", None), "support", False))
        if not supported:  # say where it is instead (Neovim 0.7, eglot 1.9)
            where = unquote(uri.removeprefix("file://"))
            self.ls.show_info(f"coherence: open {where}" + (f" at line {line + 1}" if line else ""))
            return False
        at = types.Position(line=max(line, 0), character=0)
        try:
            answer = await self.ls.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=True, selection=types.Range(start=at, end=at))
            )
        except Exception as exc:  # noqa: BLE001 - a client that fails the request loses nothing
            log.info("showDocument %s failed: %s", uri, exc)
            return False
        return bool(getattr(answer, "success", False))
