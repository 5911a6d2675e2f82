"""The key a check's result is stored and found under: the spec (samples), the body, the module
around it, the settings and what the user accepted, then the workspace's test files.

A key is ``<base>-<tests>``: a result for the same base and other test files (one was added,
changed or deleted) is stale, not lost: the editor shows it, says so, and checks again
(``same_function``)."""

from __future__ import annotations

import hashlib
import itertools
import re

from coherence.engine.config import CheckConfig
from coherence.engine.inputs.seeds.workspace import recent_tests_fingerprint
from coherence.engine.markers import find_targets
from coherence.engine.spec import Target


def results_key(target: Target, config: CheckConfig) -> str:
    """Results depend on the spec (samples), the body, the module around it, and the settings.

    "The module around it" leaves out the other marked functions this one does not mention, so
    editing one function does not re-run its unrelated neighbours.
    """
    return results_keys([target], config)[0]


def results_keys(targets: list[Target], config: CheckConfig, siblings: list[Target] | None = None) -> list[str]:
    """``results_key`` of each target; the module's own work (its marked functions, its lines)
    is done once per module, not once per function, and each function's share is linear in its
    own source: the language server keys every function of a document each time it parses it, and
    a document can hold thousands.  ``siblings``: every marked function of the targets' one
    module in ``config.mode``, when the caller already found them."""
    settings = repr(config)
    # the test files seed inputs and state worked examples: a result never outlives them fresh
    tests = recent_tests_fingerprint(config.workspace)
    modules: dict[tuple[str | None, str], _Module] = {}
    keys = []
    for target in targets:
        module = modules.get((target.module_source, target.path))
        if module is None:
            module = modules[(target.module_source, target.path)] = _Module(target, config.mode, siblings)
        # what the user accepted (comments, a baseline file) changes the verdict, so the key
        parts = [
            target.spec.spec_hash,
            target.body_hash,
            module.context_hash(target),
            settings,
            "\n".join(target.accept),
        ]
        keys.append(f"{hashlib.sha256('|'.join(parts).encode()).hexdigest()[:32]}-{tests}")
    return keys


def same_function(key: str) -> str:
    """The part of a results key before the test files: the same function, spec, module,
    settings and accepts."""
    return key.split("-", 1)[0]


def tests_part(key: str) -> str:
    """The test files' fingerprint a results key was made with."""
    return key.split("-", 1)[1] if "-" in key else ""


_WORD = re.compile(r"\w+")


class _Module:
    """A module's lines split into the marked functions' spans and the rest ("outside"), each
    hashed once: a function's context is the outside, its own span and the spans of the marked
    functions it names, with where each span sits among the outside lines."""

    def __init__(self, target: Target, mode: str, siblings: list[Target] | None = None):
        if siblings is None:
            try:
                siblings = find_targets(target.module_source, target.path, mode=mode)
            except SyntaxError:
                siblings = []
        self.lines = target.module_source.splitlines()
        self.spans = [(t.line, t.end_line) for t in siblings]
        self.by_name: dict[str, list[int]] = {}
        self.odd_names: list[tuple[int, str]] = []  # names that are not one run of word characters
        self.by_line: dict[int, int] = {}
        for i, t in enumerate(siblings):
            if _WORD.fullmatch(t.name):
                self.by_name.setdefault(t.name, []).append(i)
            else:
                self.odd_names.append((i, t.name))
            self.by_line.setdefault(t.line, i)
        depth = [0] * (len(self.lines) + 2)  # +1 at a span's first line, -1 after its last
        for line, end_line in self.spans:
            depth[max(line - 1, 0)] += 1
            depth[min(end_line, len(self.lines))] -= 1
        covered = list(itertools.accumulate(depth))
        outside = [text for text, c in zip(self.lines, covered) if c == 0]
        # the outside lines before each line: where a kept span goes among them
        self.before = list(itertools.accumulate((c == 0 for c in covered), initial=0))
        self.outside = hashlib.sha256("\n".join(outside).encode()).hexdigest()
        self._span_hashes: dict[int, str] = {}

    def _span(self, i: int) -> str:
        known = self._span_hashes.get(i)
        if known is None:
            line, end_line = self.spans[i]
            text = "\n".join(self.lines[line - 1 : end_line])
            known = self._span_hashes[i] = hashlib.sha256(text.encode()).hexdigest()
        return known

    def context_hash(self, target: Target) -> str:
        source = target.function_source
        kept = {i for word in set(_WORD.findall(source)) for i in self.by_name.get(word, ())}
        # The name as a whole word, for the rare name that is not an identifier's word run.
        kept.update(i for i, name in self.odd_names if re.search(rf"\b{re.escape(name)}\b", source))
        own = self.by_line.get(target.line)
        if own is not None:
            kept.add(own)
        parts = [self.outside]
        for i in sorted(kept, key=lambda i: self.spans[i]):
            line = self.spans[i][0]
            parts.append(f"{self.before[min(max(line - 1, 0), len(self.before) - 1)]}:{self._span(i)}")
        return hashlib.sha256("|".join(parts).encode()).hexdigest()
