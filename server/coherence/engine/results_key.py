"""The key a check's result is stored and found under: the spec (samples), the body, the module
around it, the settings and what the user accepted."""

from __future__ import annotations

import hashlib
import itertools
import re

from coherence.engine.config import CheckConfig
from coherence.engine.markers import find_targets
from coherence.engine.spec import Target


def results_key(target: Target, config: CheckConfig) -> str:
    """Results depend on the spec (samples), the body, the module around it, and the settings.

    "The module around it" leaves out the other marked functions this one does not mention, so
    editing one function does not re-run its unrelated neighbours.
    """
    return results_keys([target], config)[0]


def results_keys(targets: list[Target], config: CheckConfig) -> list[str]:
    """``results_key`` of each target; the module's own work (its marked functions, its lines)
    is done once per module, not once per function: the language server keys every function of a
    document each time it parses it, hover included."""
    settings = repr(config)
    modules: dict[tuple[str | None, str], tuple[list[str], list[tuple[int, int, str, bool]]]] = {}
    keys = []
    for target in targets:
        module = modules.get((target.module_source, target.path))
        if module is None:
            module = modules[(target.module_source, target.path)] = _module_facts(target, config.mode)
        # what the user accepted (comments, a baseline file) changes the verdict, so the key
        parts = [
            target.spec.spec_hash,
            target.body_hash,
            _context_hash(target, *module),
            settings,
            "\n".join(target.accept),
        ]
        keys.append(hashlib.sha256("|".join(parts).encode()).hexdigest()[:32])
    return keys


def _module_facts(target: Target, mode: str) -> tuple[list[str], list[tuple[int, int, str, bool]]]:
    """The module's lines, and each marked function's (first line, end line, name, whether
    the name is all word characters)."""
    try:
        siblings = find_targets(target.module_source, target.path, mode=mode)
    except SyntaxError:
        siblings = []
    return target.module_source.splitlines(), [
        (t.line, t.end_line, t.name, _WORD.fullmatch(t.name) is not None) for t in siblings
    ]


_WORD = re.compile(r"\w+")


def _context_hash(target: Target, lines: list[str], siblings: list[tuple[int, int, str, bool]]) -> str:
    source = target.function_source
    words = set(_WORD.findall(source))
    keep = bytearray(b"\x01") * len(lines)
    for line, end_line, name, wordy in siblings:
        if line == target.line:
            continue
        # The name as a whole word: for an identifier, one of the source's runs of word characters.
        if name in words if wordy else re.search(rf"\b{re.escape(name)}\b", source):
            continue
        span = keep[line - 1 : end_line]
        keep[line - 1 : end_line] = bytes(len(span))
    kept = "\n".join(itertools.compress(lines, keep))
    return hashlib.sha256(kept.encode()).hexdigest()
