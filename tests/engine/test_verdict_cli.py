"""The verdicts of the probe module (tests/probes: hand-written alternatives, replayed) through
the real command line: severity in the JSON, the exit code's --fail-on, SARIF levels, and the
baseline round trip."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.sarif import valid_sarif
from tests.support.zygote import coherence_argv

PROBES = Path(__file__).resolve().parents[1] / "probes"


def run(args, cwd):
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [*coherence_argv(env), "check", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    d = tmp_path_factory.mktemp("probes")
    for name in ("verdicts.py", "samples.jsonl", "pyproject.toml"):
        shutil.copy(PROBES / name, d / name)
    return d


@pytest.fixture(scope="module")
def verdicts(probes):
    proc = run(["verdicts.py", "--format", "json"], probes)
    assert proc.returncode == 1, proc.stderr
    return {f["qualname"]: f for f in json.loads(proc.stdout)["functions"]}


def test_a_wrong_function_outvoted_is_a_warning(verdicts):
    f = verdicts["is_leap"]
    assert f["severity"] == "warning"
    assert f["evidence"]["bloc"] == 8 and f["evidence"]["alternatives"] == 9
    assert f["counterexample"]["yours"] == "False" and f["counterexample"]["theirs"] == "True"
    # every alternative's outcome, grouped; the one that sides with yours is marked as such
    assert f["counterexample"]["alternatives"] == [
        {"output": "True", "count": 8, "agrees": False},
        {"output": "False", "count": 1, "agrees": True},
    ]
    # shrunk toward the examples' magnitudes (2024, 2023), not toward 0
    assert f["counterexample"]["call"] == "is_leap(2000)"
    # trust is calibrated, and the raw 1 - DSDE stays beside it
    assert f["trust_raw"] == pytest.approx(1 - f["dsde"])


def test_a_stated_precondition_makes_disagreement_outside_it_a_hint(verdicts):
    for name, rule in (("clamp", "lo <= hi"), ("median", "len(xs) > 0")):
        f = verdicts[name]
        assert f["severity"] == "hint", name
        assert any(rule in d for d in f["domain"]), f["domain"]
        assert rule in f["outside_domain"]


def test_a_precondition_stated_in_words_or_as_a_raises_entry_is_the_domain(verdicts):
    # "lo must be less than or equal to hi"; "Raises: ValueError: If xs is empty." (yours raises
    # there as documented, 6 of 9 alternatives return None): without reading them, both were warnings
    for name, rule, said in (
        ("limit", "lo <= hi", "lo must be less than or equal to hi."),
        ("largest", "len(xs) > 0", "ValueError: If xs is empty."),
    ):
        f = verdicts[name]
        assert f["severity"] == "hint", name
        assert any(rule in d and said in d for d in f["domain"]), f["domain"]
        assert rule in f["outside_domain"]


def test_a_split_spec_with_yours_in_the_majority_is_information(verdicts):
    f = verdicts["halve"]
    assert f["severity"] == "information"
    assert f["evidence"]["agree"] == 6 and f["evidence"]["bloc"] == 3


def test_a_function_that_contradicts_its_docstring_example_is_a_warning(verdicts):
    # only 3 of 9 alternatives side against yours (no outvoting bloc), but they give the result
    # the docstring's own example states, and yours does not
    f = verdicts["word_count"]
    assert f["severity"] == "warning" and f["evidence"]["kind"] == "example"
    assert f["evidence"]["bloc"] == 3 and f["evidence"]["agree"] == 6
    ce = f["counterexample"]
    assert ce["call"] == 'word_count("a  b")' and ce["yours"] == "3" and ce["theirs"] == "2" and ce["stated"] == "2"


def test_a_coherent_function_that_contradicts_its_docstring_example_is_information(verdicts):
    # every program agrees (seconds // 60), and none gives the 3 the docstring states for 150 s:
    # the example or every sample is wrong, and the user is told which call to look at
    f = verdicts["minutes"]
    assert f["status"] == "coherent"
    assert f["severity"] == "information" and f["evidence"]["kind"] == "example" and f["evidence"]["bloc"] == 0
    ce = f["counterexample"]
    assert ce["call"] == "minutes(150)" and ce["yours"] == "2" and ce["stated"] == "3"


def test_alternatives_that_contradict_the_docstring_example_have_no_vote(verdicts):
    # 6 of 9 alternatives outvote yours with a - b, but they give -1 for distance(2, 5) where the
    # docstring says 3: without their votes, the rest agree with yours
    f = verdicts["distance"]
    assert f["severity"] == "hint" and "contradict the docstring" in f["evidence"]["why"]


def test_an_example_the_alternatives_special_case_is_information(verdicts):
    # 6 of 9 alternatives give the docstring's (wrong) 15.0, each by an `if` for that very list;
    # the other 3 agree with yours.  The example is suspect, not evidence against yours, and the
    # six that follow it have no vote near it (they return 15.0 on every ordering of the list)
    f = verdicts["middle"]
    assert f["severity"] == "information" and f["evidence"]["kind"] == "example"
    assert "special-casing its input" in f["evidence"]["why"] and f["evidence"]["special_cased"] is True
    ce = f["counterexample"]
    assert ce["call"] == "middle([-10, 4, 6, 1000, 10, 20])" and ce["yours"] == "8.0" and ce["stated"] == "15.0"
    # the hover says why it is no warning, as the text report does (test_fail_on_...)
    from coherence.engine.result import CheckResult
    from coherence.lsp.render import hover_markdown

    hover = hover_markdown(CheckResult.from_dict(f)).replace("\\", "")
    assert "Only information: your function contradicts the docstring's example, and alternatives reproduce" in hover


def test_a_bloc_only_on_an_empty_string_argument_is_information(verdicts):
    # 6 of 9 alternatives count the empty substring len(text) + 1 times, yours and 3 others 0:
    # a convention the docstring does not settle, so the evidence is shown, as information
    f = verdicts["occurrences"]
    assert f["severity"] == "information" and f["evidence"]["bloc"] == 6 and f["evidence"]["agree"] == 3
    assert "empty string argument" in f["evidence"]["why"]
    _, sub = eval(f["counterexample"]["call"][len("occurrences") :])  # our own rendering
    assert sub == "" and f["counterexample"]["yours"] == "0"


def test_exception_type_only_differences_are_no_warning(verdicts):
    # median([]): every program raises there, with three different types
    f = verdicts["median"]
    assert f["counterexample"]["call"] == "median([])"
    assert f["severity"] == "hint"


def test_an_accept_comment_turns_that_disagreement_into_a_hint(verdicts):
    f = verdicts["clamp_accepted"]
    assert f["accepted"] == ["clamp_accepted(0, 0, -1)"]
    assert f["severity"] == "hint" and "accepted" in f["evidence"]["why"]


def test_fail_on_and_the_summary_use_the_same_severity(probes):
    text = run(["verdicts.py"], probes)
    assert text.returncode == 1
    assert "12 function(s): 2 warning, 4 information, 6 hint" in text.stdout
    assert (
        "only information: your function contradicts the docstring's example, and alternatives reproduce it only by special-casing its input"
        in text.stdout
    )
    assert run(["verdicts.py", "--fail-on", "never"], probes).returncode == 0
    # without is_leap's warning, information does not fail the default, but fails --fail-on information
    src = (probes / "verdicts.py").read_text()
    no_leap = probes / "no_leap.py"
    no_leap.write_text(
        src.replace("# coherence\ndef is_leap", "def is_leap").replace("# coherence\ndef word_count", "def word_count")
    )
    assert run(["no_leap.py"], probes).returncode == 0
    assert run(["no_leap.py", "--fail-on", "information"], probes).returncode == 1


def test_sarif_levels_follow_the_severity(probes):
    proc = run(["verdicts.py", "--format", "sarif"], probes)
    levels = {r["message"]["text"].split(":")[0]: r["level"] for r in valid_sarif(proc.stdout)["runs"][0]["results"]}
    assert levels == {
        "is_leap": "warning",
        "halve": "note",
        "word_count": "warning",
        "minutes": "note",
        "middle": "note",
        "occurrences": "note",
    }
    rules = {r["message"]["text"].split(":")[0]: r["ruleId"] for r in valid_sarif(proc.stdout)["runs"][0]["results"]}
    assert rules["minutes"] == "COH005" and rules["halve"] == "COH001"


def test_a_baseline_accepts_current_findings_and_a_new_one_still_shows(probes, tmp_path):
    for name in ("verdicts.py", "samples.jsonl", "pyproject.toml"):
        shutil.copy(probes / name, tmp_path / name)
    wrote = run(["verdicts.py", "--write-baseline"], tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    baseline = json.loads((tmp_path / ".coherence-baseline.json").read_text())
    assert {e["function"] for e in baseline["entries"]} == {
        "is_leap",
        "halve",
        "word_count",
        "minutes",
        "middle",
        "occurrences",
    }
    again = run(["verdicts.py", "--format", "json"], tmp_path)
    assert again.returncode == 0, again.stdout
    sev = {f["qualname"]: f["severity"] for f in json.loads(again.stdout)["functions"]}
    assert sev["is_leap"] == "hint" and sev["halve"] == "hint" and sev["word_count"] == "hint"
    assert sev["minutes"] == "none" and sev["middle"] == "hint" and sev["occurrences"] == "hint"
    # a changed docstring is a new spec: its entry no longer applies
    src = (tmp_path / "verdicts.py").read_text()
    (tmp_path / "verdicts.py").write_text(src.replace("Whether year is a leap year", "Whether the year is a leap year"))
    changed = run(["verdicts.py", "--format", "json"], tmp_path)
    assert changed.returncode == 1
    assert {f["qualname"]: f["severity"] for f in json.loads(changed.stdout)["functions"]}["is_leap"] == "warning"


def test_the_generated_decorator_coherence_ships_runs_and_states_the_domain(tmp_path):
    # the user guide's "@generated(assume=...)", imported from coherence: it loads in the sandbox (it
    # is a no-op at run time) and its assume is read from the source
    (tmp_path / "mod.py").write_text(
        "from coherence import generated\n\n\n"
        '@generated(assume="lo <= hi")\n'
        "def clamp(x: int, lo: int, hi: int) -> int:\n"
        '    """Clamp x into [lo, hi].\n\n    >>> clamp(5, 0, 3)\n    3\n    """\n'
        "    return max(lo, min(x, hi))\n"
    )
    clamp = next(line for line in (PROBES / "samples.jsonl").read_text().splitlines() if '"clamp"' in line)
    (tmp_path / "samples.jsonl").write_text(clamp + "\n")
    (tmp_path / "pyproject.toml").write_text('[tool.coherence]\nreplay = "samples.jsonl"\ninputs = 200\n')
    proc = run(["mod.py", "--format", "json"], tmp_path)
    f = json.loads(proc.stdout)["functions"][0]
    assert f["status"] == "incoherent", f
    assert f["severity"] == "hint" and any("lo <= hi" in d for d in f["domain"]), f
