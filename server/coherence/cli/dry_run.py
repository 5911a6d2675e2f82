"""``coherence check --dry-run``: what a check would ask for and cost, with nothing sent."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coherence.cli.exits import EXIT_OK
from coherence.cli.work import Work
from coherence.engine.redact import display, redact_tree
from coherence.engine.result import CheckResult
from coherence.engine.spec import Target


@dataclass
class _Listing:
    """What a dry run prints: a line and a JSON entry per function (put in source order at the
    end) and per model."""

    lines: list[str] = field(default_factory=list)
    totals: list[str] = field(default_factory=list)
    doc: dict[str, list] = field(default_factory=lambda: {"functions": [], "models": []})

    def function(self, line: str, entry: dict) -> None:
        self.lines.append(line)
        self.doc["functions"].append(entry)

    def model(self, total: str, entry: dict) -> None:
        self.totals.append(total)
        self.doc["models"].append(entry)

    def in_source_order(self, work: Work) -> None:
        order = {str(path): i for i, path in enumerate(dict.fromkeys(_item_path(item) for item in work.items))}
        where = [(order[str(f["path"])], f["line"]) for f in self.doc["functions"]]
        self.lines = [line for _, line in sorted(zip(where, self.lines), key=lambda pair: pair[0])]
        self.doc["functions"] = [f for _, f in sorted(zip(where, self.doc["functions"]), key=lambda pair: pair[0])]

    def print(self, fmt: str) -> None:
        import json

        if fmt == "json":
            print(json.dumps(redact_tree(self.doc), indent=2))
        else:
            for line in self.lines + self.totals:
                print(display(line))


def _item_path(item: Target | tuple[CheckResult, int]) -> str:
    return item.path if isinstance(item, Target) else item[0].path


def dry_run(work: Work, checker_for: Callable[[Path], Any], fmt: str = "text") -> int:
    """``check --dry-run``: each function, the samples it would request after the cache, and per
    model what they would cost (litellm's price map).  Nothing is sent and nothing runs.  As JSON
    (``--format json``), each function carries its spec hash: the sample cache's key, which the
    GitHub action keys its cache by."""
    listing = _Listing()
    for checker, targets in _by_checker(work, checker_for, listing).values():
        if getattr(checker.provider, "cacheable", False):
            _estimated(checker, targets, listing)
        else:  # a replay file
            _replayed(checker, targets, listing)
    listing.in_source_order(work)
    listing.print(fmt)
    print("coherence: dry run, nothing was sent and nothing ran", file=sys.stderr)
    return EXIT_OK


def _by_checker(work: Work, checker_for, listing: _Listing) -> dict[int, tuple[Any, list[Target]]]:
    """The targets to sample, by checker; what is known without one (an unreadable file, a skipped
    function) goes in ``listing`` as it is."""
    by_checker: dict[int, tuple[Any, list[Target]]] = {}
    for item in work.items:
        if not isinstance(item, Target):
            r = item[0]
            listing.function(
                f"{r.path}:{r.line}  {r.qualname}: {r.status} — {r.reason}",
                {"path": r.path, "line": r.line, "qualname": r.qualname, "status": r.status, "reason": r.reason},
            )
        elif item.skip_reason:
            listing.function(
                f"{item.path}:{item.name_line}  {item.qualname}: skipped — {item.skip_reason}",
                {
                    "path": item.path,
                    "line": item.name_line,
                    "qualname": item.qualname,
                    "status": "skipped",
                    "reason": item.skip_reason,
                },
            )
        else:
            checker = checker_for(Path(item.path))
            by_checker.setdefault(id(checker), (checker, []))[1].append(item)
    return by_checker


def _replayed(checker, targets: list[Target], listing: _Listing) -> None:
    """Targets whose samples come from a replay file: nothing is bought."""
    model = checker.provider.model
    for t in targets:
        listing.function(
            f"{t.path}:{t.name_line}  {t.qualname}: {checker.config.samples - 1} recorded samples (replay)",
            {
                "path": t.path,
                "line": t.name_line,
                "qualname": t.qualname,
                "spec_hash": t.spec.spec_hash,
                "model": model,
                "requested": 0,
                "cached": 0,
            },
        )
    listing.model(
        f"{model}: {len(targets)} function(s) from recorded samples: nothing is bought, $0",
        {"model": model, "functions": len(targets), "requested": 0, "usd": 0.0},
    )


def _estimated(checker, targets: list[Target], listing: _Listing) -> None:
    """Targets sampled from a model: what they would request after the cache, and its price."""
    from coherence.engine.sampling.cost import estimate

    cfg, provider = checker.config, checker.provider
    est = estimate(
        targets,
        provider.model,
        count=cfg.samples - 1,
        cache=checker.cache,
        temperature=cfg.temperature,
        supports_n=provider.supports_n() if hasattr(provider, "supports_n") else None,
    )
    for t, f in zip(targets, est.functions):
        listing.function(
            f"{f.path}:{f.line}  {f.qualname}: {f.requested} sample(s) to request, {f.cached} cached "
            f"· {f.requests} request(s), ~{f.prompt_tokens} prompt + ~{f.completion_tokens} completion tokens",
            {**asdict(f), "spec_hash": t.spec.spec_hash, "model": est.model},
        )
    limit = f" · max_cost_usd ${cfg.max_cost_usd:g}" if cfg.max_cost_usd is not None else ""
    listing.model(
        f"{est.model}: {len(est.functions)} function(s), {est.requested} sample(s) to request, {est.cached} cached, "
        f"~{est.prompt_tokens} prompt + ~{est.completion_tokens} completion tokens: {est.price_text()}{limit}",
        {
            "model": est.model,
            "functions": len(est.functions),
            "requested": est.requested,
            "cached": est.cached,
            "prompt_tokens": est.prompt_tokens,
            "completion_tokens": est.completion_tokens,
            "usd": est.usd,
            "note": est.note or None,
            "max_cost_usd": cfg.max_cost_usd,
        },
    )
