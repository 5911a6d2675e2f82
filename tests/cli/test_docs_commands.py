"""The documentation cannot drift from the program: every command the README and
examples/README.md show that runs offline is run here, through the real command line and sandbox,
and the lines the documents show are compared with what it prints.

Pinned exactly (a change of wording or of the demo must update the documents):
- each result's location, name and verdict (``examples/textutils.py:5  count_vowels: warning``);
- the counterexample line and each side's line under it (``yours: 0``, ``9 of 9 alternatives: 1``);
- the PAC line of a coherent result and the summary line (``5 function(s): 3 warning, 2 coherent``);
- the figure lines (incoherence, clusters) in their own test, so a failure says which kind drifted;
- that each shown result names its sandbox (the name itself depends on the platform), and the
  seconds are not compared.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil

import pytest

from tests.cli.test_cli_newcomer import run_cli
from tests.conftest import EXAMPLES, REPO

README = REPO / "README.md"
EXAMPLES_README = EXAMPLES / "README.md"
CLI_PAGE = REPO / "docs" / "cli.md"
HEADER = re.compile(r"^(\S+:\d+  [\w.]+: \w+)")  # location, name and verdict
SIDE = re.compile(r"^(yours|\d+ of \d+ alternatives): ")


def fenced_blocks(text: str, lang: str = "") -> list[list[str]]:
    """The lines of every fenced block with the given info string ("" for output blocks)."""
    blocks: list[list[str]] = []
    current: list[str] = []
    inside = None
    for line in text.splitlines():
        if line.startswith("```"):
            if inside is None:
                inside, current = line[3:].strip(), []
            else:
                if inside == lang:
                    blocks.append(current)
                inside = None
        elif inside is not None:
            current.append(line)
    return blocks


def key_of(header: str) -> str:
    """``examples/textutils.py:5 count_vowels`` of a result's first line."""
    location, rest = header.split("  ", 1)
    return location + " " + rest.split(":", 1)[0]


def results_of(output: str) -> dict[str, list[str]]:
    """The report's lines per result, keyed by ``key_of`` its first line."""
    out: dict[str, list[str]] = {}
    key = None
    for line in output.splitlines():
        if HEADER.match(line):
            key = key_of(line)
            out[key] = [line]
        elif key and line.startswith("    "):
            out[key].append(line)
        else:
            key = None
    return out


@pytest.fixture(scope="module")
def demo() -> str:
    """``coherence check examples/`` from the repository's root, exactly as the README says."""
    proc = run_cli("check", "examples/", cwd=REPO)
    assert proc.returncode == 1, proc.stderr  # the README: three warnings make it exit 1
    return proc.stdout


def shown_results() -> list[list[str]]:
    """The README's output blocks cut into results (a result starts at its header line)."""
    blocks = fenced_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 3, "the README shows a result, a coherent result and the summary line"
    shown = []
    for block in blocks:
        for line in block:
            if HEADER.match(line):
                shown.append([line])
            elif shown and line.startswith("    "):
                shown[-1].append(line)
    return shown


@pytest.mark.slow
def test_readme_results_match_the_demo(demo):
    real = results_of(demo)
    shown = shown_results()
    assert len(shown) >= 2
    for result in shown:
        header = HEADER.match(result[0]).group(1)
        key = key_of(result[0])
        assert key in real, f"the README shows {key}, which the demo does not report"
        lines = real[key]
        assert HEADER.match(lines[0]).group(1) == header
        for line in result[1:]:
            text = line.strip()
            if text.startswith(("counterexample:", "no disagreement on")) or SIDE.match(text):
                assert text in [ln.strip() for ln in lines], (
                    f"{key}: the README shows {text!r}; the demo prints {lines}"
                )
            if "replay:" in text:  # the result's last line names its sandbox, as every real one does
                assert " · sandbox " in text, f"the README's {key} lacks the sandbox field"
                assert " · sandbox " in lines[-1], lines[-1]


@pytest.mark.slow
def test_readme_figures_match_the_demo(demo):
    real = results_of(demo)
    for result in shown_results():
        lines = [ln.strip() for ln in real[key_of(result[0])]]
        for line in result[1:]:
            text = line.strip()
            if text.startswith(("incoherence ", "clusters ")):
                assert text in lines, f"the README shows {text!r}; the demo prints {lines}"


@pytest.mark.slow
def test_readme_summary_line_is_the_demo_s(demo):
    summary = [ln for ln in demo.splitlines() if re.match(r"^\d+ function\(s\): ", ln)]
    shown = [ln for block in fenced_blocks(README.read_text(encoding="utf-8")) for ln in block]
    shown_summary = [ln for ln in shown if re.match(r"^\d+ function\(s\): ", ln)]
    assert shown_summary, "the README shows the summary line"
    assert shown_summary == summary


@pytest.mark.slow
def test_examples_readme_matches_the_demo(demo):
    """Its table: one row per function the demo reports, each coherent or not as it says, and
    every call it quotes is one the demo prints."""
    text = EXAMPLES_README.read_text(encoding="utf-8")
    rows = [r for r in text.splitlines() if r.startswith("| `")]
    real = {key.split()[-1]: lines for key, lines in results_of(demo).items()}
    assert len(rows) == len(real)
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        name = cells[0].strip("`")
        assert name in real, f"examples/README.md lists {name}, which the demo does not report"
        coherent = real[name][0].split(": ", 1)[1].startswith("coherent")
        assert cells[2].startswith("coherent") == coherent, (row, real[name][0])
    calls = re.findall(r"`([A-Za-z_][\w.]*\([^`]+\)(?:\.\w+\([^`]*\))?)`", text)
    assert calls, "examples/README.md quotes the counterexample it shows"
    for call in calls:
        assert call in demo, f"examples/README.md shows {call}; the demo never prints it"


def test_the_synopsis_lists_every_option_of_check():
    from coherence.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {a.option_strings[0] for a in sub.choices["check"]._actions if a.option_strings} - {"-h"}
    synopsis = next(
        b for b in fenced_blocks(CLI_PAGE.read_text(encoding="utf-8")) if b[0].startswith("coherence check")
    )
    check_lines = [synopsis[0]]
    for line in synopsis[1:]:
        if line.startswith("coherence "):  # the next command's synopsis
            break
        check_lines.append(line)
    shown = set(re.findall(r"\[(--[\w-]+)", "\n".join(check_lines)))
    assert options <= shown, f"docs/cli.md's synopsis lacks {sorted(options - shown)}"
    assert shown <= options, f"docs/cli.md's synopsis shows options check does not have: {sorted(shown - options)}"


@pytest.mark.slow
def test_the_dry_run_costs_what_the_cli_page_says(tmp_path):
    """docs/cli.md: ``coherence check examples/ --dry-run --model openai/gpt-4o-mini`` says what
    it would buy, with no API key and nothing sent (a fresh sample cache: nothing cached)."""
    page = CLI_PAGE.read_text(encoding="utf-8")
    said = re.search(r"--dry-run --model openai/gpt-4o-mini` says `([^`]+)`", " ".join(page.split()))
    assert said, "docs/cli.md shows the dry run's sentence"
    proc = run_cli(
        "check", "examples/", "--dry-run", "--model", "openai/gpt-4o-mini", "--cache-dir", tmp_path / "c", cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    assert said.group(1) in " ".join(proc.stdout.split())


@pytest.mark.slow
def test_a_repository_model_counts_once_trusted(tmp_path):
    """The README's "Configuring a model": a repository's own model is left out (exit 2, naming
    ``coherence trust``) until ``coherence trust .``, then it is used."""
    shown = [b for b in fenced_blocks(README.read_text(encoding="utf-8"), "toml") if b[0] == "# pyproject.toml"]
    assert shown, "the README shows a pyproject.toml with a model"
    project = tmp_path / "project"
    project.mkdir()
    for source in EXAMPLES.glob("*.py"):
        shutil.copy(source, project)
    (project / "pyproject.toml").write_text("\n".join(shown[0]) + "\n")
    cache = tmp_path / "cache"
    config_home = {"XDG_CONFIG_HOME": str(tmp_path / "config")}

    before = run_cli("check", ".", "--dry-run", "--cache-dir", cache, cwd=project, env=config_home)
    assert before.returncode == 2, before.stderr
    assert "coherence trust" in before.stderr

    trusted = run_cli("trust", ".", cwd=project, env=config_home)
    assert trusted.returncode == 0, trusted.stderr

    after = run_cli("check", ".", "--dry-run", "--cache-dir", cache, cwd=project, env=config_home)
    assert after.returncode == 0, after.stderr
    assert after.stdout.splitlines()[-1].startswith("openai/gpt-4o-mini: 5 function(s)"), after.stdout


@pytest.mark.slow
def test_a_baseline_silences_what_it_recorded(tmp_path):
    """docs/guide.md: ``--write-baseline`` records every current warning, and a later check
    reads it; a new disagreement still shows, but none of the recorded ones is a warning."""
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples)
    written = run_cli("check", "examples/", "--write-baseline", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    entries = json.loads((tmp_path / ".coherence-baseline.json").read_text())["entries"]
    assert {e["function"] for e in entries} == {"Cart.add", "merge_intervals", "count_vowels"}
    again = run_cli("check", "examples/", "--format", "json", cwd=tmp_path)
    results = {f["qualname"] or f["name"]: f for f in json.loads(again.stdout)["functions"]}
    for entry in entries:
        result = results[entry["function"]]
        shown_on = (result.get("counterexample") or {}).get("call")
        assert not (result["severity"] == "warning" and shown_on == entry["accept"]), result


def test_readme_links_reach_their_pages():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:docs|examples)/[^)#\s]+)(#[^)\s]+)?\)", text)
    assert links
    for target, anchor in links:
        path = REPO / target
        assert path.is_file(), f"README links to {target}, which does not exist"
        if anchor:
            assert "{ " + anchor + " }" in path.read_text(encoding="utf-8"), f"{target} has no anchor {anchor}"


def test_sarif_help_links_reach_a_readme_section():
    """Each SARIF rule's helpUri is the README's URL and a section anchor (as GitHub makes it from
    the heading): the section must exist."""
    from coherence.formats import RULE_HELP

    headings = [
        ln.lstrip("#").strip() for ln in README.read_text(encoding="utf-8").splitlines() if ln.startswith("## ")
    ]
    anchors = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
    for rule, (_, _, section) in RULE_HELP.items():
        assert section in anchors, f"SARIF rule {rule} links to README#{section}, which has no such section"
