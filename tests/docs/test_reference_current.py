"""docs/reference.md is generated from the code (scripts/gen_reference.py): it must be current,
and it must carry every setting the code defines."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

from coherence.engine.config import USER_ONLY, CheckConfig
from tests.conftest import REPO

PAGE = REPO / "docs" / "reference.md"


def test_the_reference_page_is_what_the_generator_writes():
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_reference.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_every_setting_and_editor_setting_has_a_row():
    page = PAGE.read_text(encoding="utf-8")
    for field in dataclasses.fields(CheckConfig):
        assert f"| `{field.name}` |" in page
    for name in USER_ONLY:
        assert f"`COHERENCE_{name.upper()}`" in page
    package = json.loads((REPO / "client-vscode" / "package.json").read_text(encoding="utf-8"))
    for name in package["contributes"]["configuration"]["properties"]:
        assert f"| `{name}` |" in page
