"""What the server knows about each document: its marked functions (from the last version that
parsed), the result shown for each, and the checks in flight.  Plus the content-addressed results
cache shared by all documents."""

from __future__ import annotations

import asyncio
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from coherence.engine.redact import redact_tree
from coherence.engine.result import CheckResult
from coherence.engine.spec import Target
from coherence.lsp.result_store import ResultStore

MAX_FILE_BYTES = 1_000_000


@dataclass
class Job:
    """One function being checked for one document version."""

    uri: str
    qualname: str
    key: str
    version: int | None
    target: Target
    cancel: threading.Event = field(default_factory=threading.Event)
    task: asyncio.Task | None = None
    started: bool = False
    forced: bool = False
    # started by an autosave: if it needs new samples, it waits until the document has been
    # still for SPEC_SETTLE_SECONDS (an edit in between cancels it)
    autosave: bool = False
    # Urgent: the function itself changed (or was asked for).  Background: only its module or the
    # settings changed; it waits until no urgent check is pending, so an edited function gets the
    # machine to itself.
    urgent: bool = True
    finished: bool = False


@dataclass
class DocumentState:
    uri: str
    path: str | None
    open: bool = True
    version: int | None = None
    # From the last version that parsed: marked functions by qualname, in source order.
    targets: dict[str, Target] = field(default_factory=dict)
    parsed_version: int | None = None
    parsed_text_hash: int | None = None
    syntax_error: tuple[int, str] | None = None  # (1-based line, message) of the current text
    # Results shown, by qualname (may be from an earlier version of the function until the next
    # check replaces them), with the results-cache key each was computed for.
    results: dict[str, CheckResult] = field(default_factory=dict)
    result_keys: dict[str, str] = field(default_factory=dict)
    # Why a result shown is stale though its function is unchanged ("checked before
    # tests/test_x.py changed"): the workspace's test files changed since, and a check is coming.
    stale_why: dict[str, str] = field(default_factory=dict)
    current_keys: dict[str, str] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    # A function's latest check that failed (no key, provider down, timeout, cost cap) while an
    # earlier finding stays shown: a finding is only ever replaced by another finding.
    failed: dict[str, CheckResult] = field(default_factory=dict)
    # Why the whole file is not checked (too large, not UTF-8, configuration problem).
    file_problem: str | None = None
    config_error: str | None = None
    last_published: list | None = None
    parsing: asyncio.Task | None = None  # a large document's analysis on a thread (parsing.py)
    changed_at: float = 0.0  # loop time of the last didChange
    saved_at: float = float("-inf")  # loop time of the last didSave
    # the reason of the willSave before the coming didSave (None: the client sent none)
    save_reason: int | None = None

    @property
    def autosaved(self) -> bool:
        """Whether the save being handled is the editor's autosave (after a delay, or on focus
        change), not one the user asked for."""
        return self.save_reason in (
            types.TextDocumentSaveReason.AfterDelay,
            types.TextDocumentSaveReason.FocusOut,
        )

    def target_at_line(self, line0: int, *, body: bool = False) -> Target | None:
        """The function whose def (decorators to the name line; with ``body`` the whole
        function) covers the 0-based ``line0``."""
        line = line0 + 1
        for t in self.targets.values():
            last = t.end_line if body else t.name_line
            # The marker comment may sit on the line above the first decorator.
            if t.line - 1 <= line <= last:
                if line == t.line - 1 and not body:
                    continue
                return t
        return None

    def show(self, qualname: str, result: CheckResult, key: str) -> None:
        """Show ``result`` (a finding) for the function, in place of any earlier one."""
        self.results[qualname] = result
        self.result_keys[qualname] = key
        self.failed.pop(qualname, None)
        self.stale_why.pop(qualname, None)

    def show_stale(self, qualname: str, result: CheckResult, key: str, why: str) -> None:
        """Show ``result``, made for other workspace test files, saying ``why`` it is stale."""
        self.show(qualname, result, key)
        self.stale_why[qualname] = why

    def stale_reason(self, qualname: str) -> str | None:
        """Why the result shown is stale, when only the workspace's test files changed since."""
        return self.stale_why.get(qualname) if not self.is_fresh(qualname) else None

    def show_failure(self, qualname: str, failure: CheckResult, key: str) -> bool:
        """A check that found nothing: kept beside the finding shown, if any (True), else shown
        itself (False, and the next finding replaces it)."""
        shown = self.results.get(qualname)
        if shown is not None and is_finding(shown) and self.failed.get(qualname) is not shown:
            self.failed[qualname] = failure
            return True
        self.results[qualname] = failure
        self.result_keys[qualname] = key
        self.failed[qualname] = failure  # it is its own failure: nothing older to keep
        return False

    def failure_beside(self, qualname: str) -> CheckResult | None:
        """The failed check shown beside the function's standing finding, if any."""
        failure = self.failed.get(qualname)
        return failure if failure is not None and self.results.get(qualname) is not failure else None

    def is_fresh(self, qualname: str) -> bool:
        key = self.current_keys.get(qualname)
        return key is not None and self.result_keys.get(qualname) == key

    def checking(self) -> int:
        return sum(1 for j in self.jobs.values() if not j.cancel.is_set())


FINDINGS = ("coherent", "incoherent", "nondeterministic", "skipped")


def is_finding(result: CheckResult) -> bool:
    """Whether a result says something about the function (not: the check could not run)."""
    return result.status in FINDINGS and not result.extra.get("refused")


class ResultCache:
    """Results by ``results_key`` (spec, body, module and settings): LRU, bounded, in front of an
    optional ``ResultStore`` on disk (results survive a restart).  ``on_notice`` gets the store's
    sentences for the user (a damaged file rebuilt)."""

    def __init__(self, limit: int = 4000, store: ResultStore | None = None, on_notice: Any = None):
        self.limit = limit
        self._items: OrderedDict[str, CheckResult] = OrderedDict()
        self._newest: dict[str, str] = {}  # same_function(key) -> the key last remembered for it
        self.store = store
        self.on_notice = on_notice

    def get(self, key: str) -> CheckResult | None:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        elif self.store is not None:
            item = self.store.load(key)
            self._notices()
            if item is not None:
                self._remember(key, item)
        return item

    def newest_before(self, key: str) -> tuple[str, CheckResult] | None:
        """The newest result for the same function with other workspace test files than ``key``
        says (``results_key.same_function``), and its key: stale, shown until a check replaces it."""
        from coherence.engine.results_key import same_function

        function = same_function(key)
        other = self._newest.get(function)
        if other is not None and other != key and other in self._items:
            return other, self._items[other]
        if self.store is not None:
            found = self.store.load_newest(function + "-", key)
            self._notices()
            return found
        return None

    def put(self, key: str, result: CheckResult) -> None:
        self._remember(key, result)
        if self.store is not None:
            self.store.save(key, result)
            self._notices()

    def _remember(self, key: str, result: CheckResult) -> None:
        from coherence.engine.results_key import same_function

        self._items[key] = result
        self._items.move_to_end(key)
        self._newest[same_function(key)] = key
        while len(self._items) > self.limit:
            gone, _ = self._items.popitem(last=False)
            if self._newest.get(same_function(gone)) == gone:
                del self._newest[same_function(gone)]

    def _notices(self) -> None:
        assert self.store is not None
        for notice in self.store.take_notices():
            if self.on_notice is not None:
                self.on_notice(notice)

    def use_store(self, store: ResultStore | None) -> None:
        """Save to (and read from) ``store`` from now on, closing the previous one."""
        if self.store is not None and self.store is not store:
            self.store.close()
        self.store = store

    def clear(self) -> int:
        n = len(self._items)
        self._items.clear()
        self._newest.clear()
        if self.store is not None:
            n = max(n, len(self.store))
            self.store.clear()
        return n

    def __len__(self) -> int:
        return len(self._items)


def jsonable(value: Any) -> Any:
    """A copy that ``json.dumps`` turns into valid JSON (no NaN/Infinity, only plain types)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        try:
            return jsonable(value.item())
        except Exception:  # noqa: BLE001
            pass
    return str(value)


def result_json(result: CheckResult) -> dict:
    """The result as the client gets it (commands, a diagnostic's data): credentials redacted."""
    return redact_tree(jsonable(result.to_dict()))
