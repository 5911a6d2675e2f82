"""A code comment cites a figure by the docs page and anchor that hold it
(``see docs/results.md#empty-strings``); every such citation must reach an existing anchor."""

from __future__ import annotations

import re

from tests.conftest import REPO

CITATION = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+))?")


def anchors(page: str) -> set[str]:
    text = (REPO / "docs" / page).read_text(encoding="utf-8")
    return set(re.findall(r"\{ #([\w-]+) \}", text))


def test_every_citation_in_the_code_reaches_its_anchor():
    cited = 0
    for path in sorted((REPO / "server").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in CITATION.findall(line):
                cited += 1
                where = f"{path.relative_to(REPO)}:{number}"
                assert (REPO / "docs" / page).is_file(), f"{where} cites docs/{page}, which does not exist"
                if anchor:
                    assert anchor in anchors(page), f"{where} cites docs/{page}#{anchor}, which has no such anchor"
    assert cited >= 8  # the engine's comments cite the results page (a pattern that finds none is broken)
