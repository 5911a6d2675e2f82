"""The whole engine on real programs: examples/, the recorded corpus, and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig, load_project_config
from coherence.engine.execution.executor import Executor
from coherence.engine.inputs import Input
from coherence.engine.markers import find_targets
from coherence.engine.sampling.replay import ReplayProvider
from tests.conftest import EXAMPLES, corpus_check
from tests.support.sarif import valid_sarif
from tests.support.zygote import coherence_argv


def examples_checker(**overrides) -> Checker:
    cfg = load_project_config(EXAMPLES).merged(inputs=300, **overrides)
    return Checker(cfg)


class JobCounting(Executor):
    """The real executor, noting how many programs each job it started was given."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.jobs: list[int] = []  # programs per job started

    def prepare(self, module, programs, **kw):
        self.jobs.append(len(programs))
        return super().prepare(module, programs, **kw)


def counting(checker: Checker) -> tuple[Checker, JobCounting]:
    """``checker``'s configuration on a ``JobCounting`` executor."""
    config = checker.config
    executor = JobCounting(python=config.python, limits=checker.executor.limits, sandbox=config.sandbox)
    return Checker(config, executor=executor), executor


def job_counting_checker() -> tuple[Checker, JobCounting]:
    """``examples_checker()`` on a ``JobCounting`` executor."""
    return counting(examples_checker())


def target(path, name):
    source = (EXAMPLES / path).read_text()
    return next(t for t in find_targets(source, str(EXAMPLES / path)) if t.name == name)


async def test_incoherent_function_gets_a_shrunk_counterexample():
    result = await examples_checker().check(target("textutils.py", "count_vowels"))
    assert result.status == "incoherent"
    assert result.samples == 10 and result.inputs == 300
    assert 0 < result.incoherence <= 1 and result.trust < 1
    assert result.error_lower_bound == pytest.approx(result.incoherence / 2)
    ce = result.counterexample
    assert ce is not None
    # The bug is upper-case vowels; shrinking leaves a one-character upper-case vowel.
    arg = eval(ce.call[len("count_vowels") :])  # our own rendering
    assert len(arg) == 1 and arg in "AEIOU"
    assert ce.yours == "0" and ce.theirs == "1"
    assert ce.disagreeing == 9 and ce.total == 9
    assert result.cluster_sizes[result.user_cluster] == 1
    assert (result.majority_code and "lower" in result.majority_code) or "AEIOU" in result.majority_code
    # every cluster says whose it is, where its alternatives came from, what it returned on the
    # counterexample, and shows one alternative's source (--show-alternatives, the editor's diff)
    mine = result.clusters[result.user_cluster]
    assert mine.yours and mine.representative_source is None and mine.models == {} and mine.output == "0"
    rivals = [c for c in result.clusters if not c.yours]
    assert sum(c.size for c in rivals) == 9 and all(c.output == "1" for c in rivals)
    assert all("def count_vowels" in c.representative_source for c in rivals)
    assert sum(sum(c.models.values()) for c in rivals) == 9 and all(m == result.model for c in rivals for m in c.models)


async def test_shrinking_keeps_the_intervals_ordered_like_the_examples():
    """merge_intervals' examples hold ordered intervals: the counterexample does not shrink into
    [(1, 0), (0, 0)], which holds an interval a reader dismisses."""
    from coherence.engine.inputs.param_types import infer_types
    from coherence.engine.inputs.seeds import doctest_seeds
    from coherence.engine.stated.domain import Domain

    t = target("intervals.py", "merge_intervals")
    result = await examples_checker().check(t)
    assert result.status == "incoherent" and result.counterexample is not None
    arg = eval(result.counterexample.call[len("merge_intervals") :])
    assert all(a <= b for a, b in arg), result.counterexample.call
    assert Domain(t.spec, doctest_seeds(t.spec, t.module_source), infer_types).crossed(Input((arg,))) == []
    assert result.counterexample.yours != result.counterexample.theirs


async def test_coherent_function_gets_a_pac_bound():
    result = await examples_checker().check(target("textutils.py", "is_palindrome"))
    assert result.status == "coherent"
    assert result.incoherence == 0 and result.trust_raw == 1 and result.dsde == 0
    # trust is calibrated: the share of functions told nothing (severity none) at DSDE 0 that were
    # right, for a spec that shows worked examples (is_palindrome's docstring has two), one model
    from coherence.engine.calibration import calibrated_trust

    assert result.trust == calibrated_trust(0.0, True, "none", False)
    assert result.trust_map.startswith("none · spec with examples")
    assert calibrated_trust(0.0, True, "none", False) > calibrated_trust(0.0, False, "none", False) > 0.5
    assert 0.5 < result.trust <= 1 and result.severity == "none"
    assert result.cluster_sizes == [10]
    assert result.pac_bound == pytest.approx(1 - 0.05 ** (1 / result.inputs))
    assert result.counterexample is None


async def test_fewer_samples_uses_fewer_alternatives():
    result = await examples_checker(samples=4).check(target("intervals.py", "merge_intervals"))
    assert result.samples == 4
    assert sum(result.cluster_sizes) == 4


async def test_nondeterministic_function_is_not_called_incoherent(tmp_path):
    (tmp_path / "mod.py").write_text(
        textwrap.dedent(
            '''
            import random

            # coherence
            def roll(sides: int) -> int:
                """Roll a die with the given number of sides."""
                return random.randint(1, max(1, sides))
            '''
        )
    )
    replay = tmp_path / "samples.jsonl"
    alt = "import random\n\ndef roll(sides: int) -> int:\n    return random.randint(1, max(1, sides))\n"
    replay.write_text(json.dumps({"entry_point": "roll", "candidates": [alt] * 3}) + "\n")
    checker = Checker(CheckConfig(replay=str(replay), samples=4, inputs=100, workspace=str(tmp_path)))
    (t,) = find_targets((tmp_path / "mod.py").read_text(), str(tmp_path / "mod.py"))
    result = await checker.check(t)
    assert result.status == "nondeterministic"
    assert "two different results" in result.reason and "roll(" in result.reason


async def _check_against_nine(tmp_path, src: str, name: str, alternative: str):
    """Checks the one target of ``src`` against 9 copies of ``alternative`` (a replay file), on
    300 inputs, in the real sandbox."""
    replay = tmp_path / "s.jsonl"
    replay.write_text(json.dumps({"entry_point": name, "candidates": [alternative] * 9}) + "\n")
    (t,) = find_targets(src, str(tmp_path / "m.py"))
    return await Checker(CheckConfig(replay=str(replay), samples=10, inputs=300)).check(t)


async def test_the_counterexample_does_not_shrink_into_a_degenerate_call(tmp_path):
    """Yours splits on single spaces: it counts 1 word in '' and 3 in 'a  b', where every
    alternative counts 0 and 2.  The blank call is the one a reader dismisses (what is the word
    count of nothing?), so the counterexample keeps something in it."""
    src = '# coherence\ndef word_count(s: str) -> int:\n    """Number of words in s."""\n    return len(s.split(" "))\n'
    alt = "def word_count(s):\n    return len(s.split())\n"
    result = await _check_against_nine(tmp_path, src, "word_count", alt)
    assert result.severity == "warning", (result.status, result.evidence)
    arg = eval(result.counterexample.call[len("word_count") :])  # our own rendering
    assert arg.strip(), result.counterexample.call
    assert int(result.counterexample.yours) == int(result.counterexample.theirs) + 1


async def test_the_counterexample_does_not_shrink_into_an_empty_string_argument(tmp_path):
    """Yours counts non-overlapping occurrences, and 0 of the empty substring; every alternative
    counts overlapping ones, and len(text) + 1 of the empty one.  The empty substring is a
    convention (at most an information, ``verdict.judge``), so the warning's counterexample keeps
    a substring to look for: ('aaa', 'aa'), not ('aaa', '')."""
    src = (
        "# coherence\ndef occurrences(text: str, sub: str) -> int:\n"
        '    """How many times sub occurs in text, overlapping ones counted.\n\n'
        '    >>> occurrences("abcabc", "abc")\n    2\n    """\n'
        "    return text.count(sub) if sub else 0\n"
    )
    alt = "def occurrences(text, sub):\n    return sum(text.startswith(sub, i) for i in range(len(text) + 1))\n"
    result = await _check_against_nine(tmp_path, src, "occurrences", alt)
    assert result.severity == "warning", (result.status, result.evidence)
    _, sub = eval(result.counterexample.call[len("occurrences") :])  # our own rendering
    assert sub != "", result.counterexample.call
    assert int(result.counterexample.yours) < int(result.counterexample.theirs)


async def test_module_that_fails_to_load_is_an_error_not_a_verdict(tmp_path):
    src = "raise RuntimeError('import-time failure')\n\n# coherence\ndef f(x: int) -> int:\n    return x\n"
    replay = tmp_path / "s.jsonl"
    replay.write_text(json.dumps({"entry_point": "f", "candidates": ["def f(x):\n    return x\n"]}) + "\n")
    (t,) = find_targets(src, str(tmp_path / "m.py"))
    result = await Checker(CheckConfig(replay=str(replay), samples=2, inputs=20)).check(t)
    assert result.status == "error" and "import-time failure" in result.reason


async def test_an_alternative_that_hangs_is_dropped_not_the_inputs(tmp_path):
    """Three timeouts in a row end a program's run; the inputs it never reached would be left out
    for everyone, so an alternative that hangs on the smallest inputs goes instead, and says so."""
    src = '# coherence\ndef double(x: int) -> int:\n    """Twice x."""\n    return 2 * x\n'
    replay = tmp_path / "s.jsonl"
    alts = [
        "def double(x):\n    return x + x\n",
        "def double(x):\n    while True:\n        pass\n",
        "def double(x):\n    return x * 2\n",
    ]
    replay.write_text(json.dumps({"entry_point": "double", "candidates": alts}) + "\n")
    (t,) = find_targets(src, str(tmp_path / "m.py"))
    # (two alternatives remain: enough for this test, below the default min_alternatives of 3)
    result = await Checker(
        CheckConfig(replay=str(replay), samples=4, inputs=200, call_timeout=0.2, min_alternatives=2)
    ).check(t)
    assert result.status == "coherent", (result.status, result.reason)
    assert result.samples == 3 and result.inputs == 200 and result.too_slow == 1
    assert "1 dropped: too slow (reached 3 of 200 inputs in time)" in result.sampling


async def test_when_most_alternatives_are_slow_the_inputs_go_not_the_programs(tmp_path):
    src = '# coherence\ndef double(x: int) -> int:\n    """Twice x."""\n    return 2 * x\n'
    replay = tmp_path / "s.jsonl"
    # three brute-force alternatives: fine on one-digit x, too slow from about x = 10
    slow = "def double(x):\n    n = 0\n    for _ in range(abs(x) * 10 ** 6):\n        n += 2\n    return (n if x >= 0 else -n) // 10 ** 6\n"
    replay.write_text(json.dumps({"entry_point": "double", "candidates": [slow] * 3}) + "\n")
    (t,) = find_targets(src, str(tmp_path / "m.py"))
    result = await Checker(CheckConfig(replay=str(replay), samples=4, inputs=300, call_timeout=0.2)).check(t)
    assert result.samples == 4 and result.too_slow == 0
    assert 0 < result.inputs < 300 and result.inputs_over_budget == 300 - result.inputs
    assert sum(result.cluster_sizes) == 4


def _runs(*rows: str):
    """Rows of per-input marks: '.' finished, 'T' timed out, '-' never reached (out of budget)."""
    import numpy as np

    reached = np.array([[c != "-" for c in r] for r in rows])
    finished = np.array([[c == "." for c in r] for r in rows])
    return reached, finished


def test_an_alternative_that_hangs_where_the_others_finish_is_too_slow():
    from coherence.engine.verdict.scoring import too_slow

    assert too_slow(*_runs("." * 20, "TTT" + "-" * 17, "." * 20, "." * 18 + "--")) == [1]


def test_where_equally_slow_alternatives_stop_is_noise_not_a_reason_to_drop_them():
    from coherence.engine.verdict.scoring import too_slow

    # What CI saw from three identical brute-force alternatives next to a fast user function:
    # they stopped after 5, 6 and 22 inputs. The first two gave up on inputs that only the user's
    # function finished, so it is the inputs that are too big.
    user = "." * 30
    assert too_slow(*_runs(user, "..TTT" + "-" * 25, "...TTT" + "-" * 24, "." * 4 + "T." * 7 + "..TT" + "-" * 8)) == []
    # against fast alternatives the same run is too slow
    assert too_slow(*_runs(user, "..TTT" + "-" * 25, user, user)) == [1]


async def test_skipped_function_reports_reason_without_sampling():
    (t,) = find_targets("# coherence\nasync def f(x):\n    return x\n", "m.py")
    # No model and no replay: a skipped function must not even need one.
    result = await Checker(CheckConfig()).check(t)
    assert result.status == "skipped" and "async" in result.reason


@pytest.mark.corpus
async def test_corpus_task_with_disagreeing_samples_is_incoherent(corpus_dir):
    t, checker = corpus_check(corpus_dir, "HumanEval/104", samples=10, inputs=300)
    result = await checker.check(t)
    assert result.status == "incoherent"
    assert result.counterexample is not None and result.counterexample.call.startswith("unique_digits(")
    assert result.counterexample.yours != result.counterexample.theirs


@pytest.mark.corpus
async def test_corpus_task_whose_samples_agree_is_coherent(corpus_dir):
    t, checker = corpus_check(corpus_dir, "HumanEval/0", samples=10, inputs=300)
    result = await checker.check(t)
    assert result.status == "coherent"
    assert result.pac_bound is not None and result.pac_bound < 0.011


def run_cli(*args, cwd=None, env=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ("COHERENCE_MODEL", "COHERENCE_API_BASE")}
    full_env.update(env or {})
    return subprocess.run(
        [*coherence_argv(full_env), *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=300
    )


def test_cli_json_has_every_documented_field():
    proc = run_cli("check", str(EXAMPLES / "textutils.py"), "--format", "json", "--inputs", "200")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    entries = {e["name"]: e for e in doc["functions"]}
    required = {
        "name",
        "path",
        "line",
        "status",
        "samples",
        "inputs",
        "incoherence",
        "disagreement",
        "dsde",
        "sde",
        "trust",
        "clusters",
        "counterexample",
        "pac_bound",
        "cost_usd",
        "seconds",
    }
    for entry in entries.values():
        assert required <= set(entry)
    assert entries["count_vowels"]["status"] == "incoherent"
    assert set(entries["count_vowels"]["counterexample"]) >= {"call", "yours", "alternatives"}
    assert entries["is_palindrome"]["status"] == "coherent" and entries["is_palindrome"]["counterexample"] is None


def test_cli_sarif_is_valid_2_1_0():
    proc = run_cli("check", str(EXAMPLES / "textutils.py"), "--format", "sarif", "--inputs", "200", cwd=EXAMPLES)
    assert proc.returncode == 1, proc.stderr
    doc = valid_sarif(proc.stdout)
    run = doc["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    (res,) = run["results"]  # only the incoherent function is a finding
    assert res["ruleId"] in rule_ids and rule_ids[res["ruleIndex"]] == res["ruleId"]
    loc = res["locations"][0]["physicalLocation"]
    assert (
        loc["artifactLocation"]["uri"] == "examples/textutils.py"
    )  # from the git top level, as code scanning reads it
    assert loc["region"]["startLine"] >= 1
    assert "count_vowels(" in res["message"]["text"]


def test_cli_without_model_explains_how_to_configure(tmp_path):
    (tmp_path / "m.py").write_text("# coherence\ndef f(x: int) -> int:\n    return x\n")
    proc = run_cli("check", str(tmp_path / "m.py"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "--model" in proc.stderr and "--replay" in proc.stderr


def test_cli_exit_zero_when_nothing_is_incoherent(tmp_path):
    source = (EXAMPLES / "textutils.py").read_text()
    coherent_only = source[source.index("# coherence\ndef is_palindrome") :]
    (tmp_path / "pal.py").write_text(coherent_only)
    proc = run_cli(
        "check",
        str(tmp_path / "pal.py"),
        "--inputs",
        "100",
        "--replay",
        str(EXAMPLES / "recorded_samples.jsonl"),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "is_palindrome: coherent" in proc.stdout


def test_cli_usage_errors_exit_2(tmp_path):
    assert run_cli("check", str(tmp_path / "missing.py")).returncode == 2
    assert run_cli("check", str(EXAMPLES), "--samples", "1").returncode == 2


def test_results_key_ignores_unrelated_neighbours_only():
    from coherence.engine.results_key import results_key

    src = textwrap.dedent(
        """
        # coherence
        def a(x: int) -> int:
            return b(x) + 1

        # coherence
        def b(x: int) -> int:
            return x * 2

        # coherence
        def c(x: int) -> int:
            return x - 1
        """
    )
    cfg = CheckConfig()

    def keys(source):
        return {t.name: results_key(t, cfg) for t in find_targets(source, "m.py")}

    before = keys(src)
    after_c = keys(src.replace("return x - 1", "return x - 2"))
    after_b = keys(src.replace("return x * 2", "return x * 3"))
    assert after_c["a"] == before["a"] and after_c["b"] == before["b"] and after_c["c"] != before["c"]
    # a calls b, so editing b re-runs a.
    assert after_b["a"] != before["a"] and after_b["c"] == before["c"]
    assert keys(src)["a"] != results_key(find_targets(src, "m.py")[0], cfg.merged(samples=5))


def test_results_keys_of_a_module_match_each_functions_key_and_read_whole_names():
    from coherence.engine.results_key import results_key, results_keys

    # "mid·dot" is an identifier that is not all word characters (the middle dot is not one);
    # "bb" in c is not a mention of b, and "mid·dot" in d is one of mid·dot.
    src = textwrap.dedent(
        """
        # coherence
        def b(x: int) -> int:
            return x * 2

        # coherence
        def mid·dot(x: int) -> int:
            return x + 7

        # coherence
        def c(x: int) -> int:
            bb = x
            return bb - 1

        # coherence
        def d(x: int) -> int:
            return mid·dot(x) - 1
        """
    )
    cfg = CheckConfig()

    def keys(source):
        targets = find_targets(source, "m.py")
        batch = results_keys(targets, cfg)
        assert batch == [results_key(t, cfg) for t in targets]
        return dict(zip((t.name for t in targets), batch))

    before = keys(src)
    after_b = keys(src.replace("return x * 2", "return x * 3"))
    after_mid = keys(src.replace("return x + 7", "return x + 8"))
    assert after_b["c"] == before["c"] and after_b["d"] == before["d"] and after_b["b"] != before["b"]
    assert after_mid["d"] != before["d"] and after_mid["c"] == before["c"]


class _SlowReplay(ReplayProvider):
    """The examples' recorded samples, answered only once the checker holds inputs for the spec
    (or after 20 s): a check that built its inputs only after sampling would take the 20 s."""

    checker: Checker | None = None
    saw_inputs = False

    async def generate(self, spec, count):
        import asyncio

        for _ in range(400):
            if any(key[0] == spec.spec_hash for key in self.checker._inputs_cache):
                self.saw_inputs = True
                break
            await asyncio.sleep(0.05)
        return await super().generate(spec, count)


async def test_inputs_are_built_while_the_llm_answers():
    cfg = load_project_config(EXAMPLES).merged(inputs=300)
    provider = _SlowReplay(EXAMPLES / "recorded_samples.jsonl")
    checker = Checker(cfg, provider=provider)
    provider.checker = checker
    result = await checker.check(target("textutils.py", "count_vowels"))
    assert provider.saw_inputs
    assert result.status == "incoherent" and result.inputs == 300


def test_overlapping_checks_of_one_spec_share_one_generation(monkeypatch):
    import threading

    import coherence.engine.check as check_module

    calls = []
    real = check_module.generate_inputs

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(check_module, "generate_inputs", counted)
    checker = examples_checker()
    t = target("textutils.py", "count_vowels")
    results = []
    threads = [threading.Thread(target=lambda: results.append(checker._inputs_for(t))) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1
    assert len(results) == 4 and all(r is results[0] for r in results) and len(results[0][0]) == 300


ROUND_DOWN = '''
# coherence
def round_down(n: int) -> int:
    """The largest multiple of 10 that is not above n.

    >>> round_down(25)
    20
    >>> round_down(7)
    0
    >>> round_down(130)
    130
    """
    return n - n % 10
'''
FLOOR = "def round_down(n):\n    return n // 10 * 10\n"
TOWARD_ZERO = "def round_down(n):\n    return n // 10 * 10 if n >= 0 else -((-n) // 10) * 10\n"
CAPPED = "def round_down(n):\n    if n >= 1000:\n        return n\n    return n // 10 * 10 if n >= 0 else -((-n) // 10) * 10\n"


async def _replayed_result(tmp_path, source, name, alternatives):
    """The check of the one marked function in ``source``, against ``alternatives``."""
    (tmp_path / "mod.py").write_text(source)
    replay = tmp_path / "samples.jsonl"
    replay.write_text(json.dumps({"entry_point": name, "candidates": alternatives}) + "\n")
    checker = Checker(
        CheckConfig(replay=str(replay), samples=len(alternatives) + 1, inputs=300, workspace=str(tmp_path))
    )
    (t,) = find_targets(source, str(tmp_path / "mod.py"))
    return await checker.check(t)


async def _round_down_result(tmp_path, alternatives):
    return await _replayed_result(tmp_path, ROUND_DOWN, "round_down", alternatives)


async def test_disagreement_only_outside_the_examples_domain_is_said_so(tmp_path):
    # Every example's n is >= 0; the alternatives differ only on how negatives round.
    result = await _round_down_result(tmp_path, [FLOOR, TOWARD_ZERO, TOWARD_ZERO])
    assert result.status == "incoherent"
    assert "negative" in result.outside_domain
    assert eval(result.counterexample.call[len("round_down") :]) < 0  # our own rendering
    from coherence.formats import describe, json_entry
    from coherence.lsp.render import diagnostic_message

    assert json_entry(result)["outside_domain"] == result.outside_domain
    assert any("outside the stated domain" in line for line in describe(result))
    assert "outside the stated domain" in diagnostic_message(result)
    # a hint (code lens only, no Problems entry), whatever the trust: no evidence against yours
    from coherence.lsp.render import diagnostic_severity

    assert result.severity == "hint" and "outside the stated domain" in result.evidence["why"]
    assert diagnostic_severity(result) is None


async def test_the_counterexample_comes_from_inside_the_domain_when_it_can(tmp_path):
    # CAPPED also differs on n >= 1000 (inside the examples' domain), and on negatives.
    result = await _round_down_result(tmp_path, [FLOOR, CAPPED, CAPPED])
    assert result.status == "incoherent"
    assert not result.outside_domain
    assert eval(result.counterexample.call[len("round_down") :]) >= 1000


COUNT_DIGITS = '''
# coherence
def count_digits(n: int) -> int:
    """Given a positive integer n, how many decimal digits it has.

    >>> count_digits(7)
    1
    """
    return len(str(n))
'''
DIGITS_LOOP = "def count_digits(n):\n    c = 0\n    while n > 0:\n        c += 1\n        n //= 10\n    return c\n"  # 0 for n <= 0
DIGITS_OFF_FROM_100 = "def count_digits(n):\n    return len(str(n)) + (n >= 100)\n"


async def _count_digits_result(tmp_path, alternatives, source=COUNT_DIGITS):
    return await _replayed_result(tmp_path, source, "count_digits", alternatives)


async def test_disagreement_only_where_the_docstring_rules_the_input_out_is_said_so(tmp_path):
    # "Given a positive integer n": the alternatives differ from yours only at n <= 0.
    result = await _count_digits_result(tmp_path, [DIGITS_LOOP, DIGITS_LOOP])
    assert result.status == "incoherent"
    assert eval(result.counterexample.call[len("count_digits") :]) <= 0  # our own rendering
    assert "your docstring says n is positive" in result.outside_domain
    assert result.domain == ["n is positive (your docstring says so)"]
    # without the statement, one example shows no domain: the same disagreement is not set apart
    plain = COUNT_DIGITS.replace("Given a positive integer n, how", "How")
    result = await _count_digits_result(tmp_path, [DIGITS_LOOP, DIGITS_LOOP], source=plain)
    assert result.status == "incoherent" and not result.outside_domain


async def test_the_counterexample_comes_from_inside_what_the_docstring_states(tmp_path):
    # The largest cluster differs from yours only at n <= 0; another one at n >= 100, where the
    # docstring allows n: that is the disagreement shown.
    result = await _count_digits_result(tmp_path, [DIGITS_LOOP, DIGITS_LOOP, DIGITS_LOOP, DIGITS_OFF_FROM_100])
    assert result.status == "incoherent"
    assert not result.outside_domain
    assert eval(result.counterexample.call[len("count_digits") :]) >= 100


def test_the_domain_is_asked_only_of_inputs_the_programs_disagree_on():
    import numpy as np

    from coherence.engine.inputs.generate import generate_inputs
    from coherence.engine.inputs.param_types import infer_types
    from coherence.engine.stated.domain import Domain
    from coherence.engine.verdict.scoring import inside_mask

    (t,) = find_targets(ROUND_DOWN, "mod.py")
    inputs = generate_inputs(t.spec, 200, module_source=ROUND_DOWN)
    domain = Domain(t.spec, inputs, infer_types)
    full = np.array([domain.contains(i) for i in inputs])
    assert full.any() and not full.all()  # the examples say n >= 0; mutants go below
    disagree = np.array([i.args[0] < 0 or i.args[0] % 7 == 0 for i in inputs])
    inside = inside_mask(domain, inputs, disagree)
    assert (inside == (full & disagree)).all()


async def test_scoring_runs_off_the_event_loop(tmp_path, monkeypatch):
    # Grouping outcomes within float tolerance took HumanEval/130 (long float lists) 0.4-0.75 s:
    # the language server runs checks on its event loop, which must stay free for hover.
    import asyncio

    import coherence.engine.verdict.decide as decide_module
    import coherence.engine.verdict.scoring as scoring_module

    seen = []

    def on_loop() -> bool:
        try:
            asyncio.get_running_loop()
            return True
        except RuntimeError:
            return False

    def spy(fn):
        def wrapped(*args, **kwargs):
            seen.append((fn.__name__, on_loop()))
            return fn(*args, **kwargs)

        return wrapped

    for name in ("outcome_ids", "score", "inside_mask"):
        monkeypatch.setattr(scoring_module, name, spy(getattr(scoring_module, name)))
    monkeypatch.setattr(decide_module, "judge_scored", spy(decide_module.judge_scored))
    result = await _round_down_result(tmp_path, [FLOOR, TOWARD_ZERO, TOWARD_ZERO])
    assert result.status == "incoherent" and result.outside_domain
    assert {name for name, _ in seen} == {"outcome_ids", "score", "inside_mask", "judge_scored"}
    assert not any(loop for _, loop in seen), seen


async def test_a_check_cancelled_while_its_inputs_are_made_gives_its_started_workers_back():
    # The workers start before the inputs are ready (Executor.prepare).  A check that ends in
    # between never runs them, and must neither leave them waiting nor kill them.
    import asyncio
    import threading

    from coherence.engine.errors import CheckCancelled
    from coherence.engine.execution.pool import POOL
    from tests.support.processes import ProcessWatch

    checker = examples_checker()
    fn = target("textutils.py", "is_palindrome")
    await checker.check(fn)  # the pool's workers are up; this check's inputs are cached now
    checker._inputs_cache.clear()
    cancel = threading.Event()
    seen = []

    def progress(message, fraction):
        seen.append(message)
        if "generating inputs" in message:
            cancel.set()

    with ProcessWatch() as watch:
        idle = POOL.idle_count()
        with pytest.raises(CheckCancelled):
            await checker.check(fn, progress=progress, cancel=cancel)
        for _ in range(100):  # the started jobs end in the background
            if POOL.idle_count() == idle:
                break
            await asyncio.sleep(0.05)
        assert POOL.idle_count() == idle  # given back, not killed
        result = await checker.check(fn)
    assert any("generating inputs" in m for m in seen) and result.status == "coherent"
    assert set(watch.survivors()) <= POOL.pids()


async def test_a_check_cancelled_while_its_workers_start_gives_them_back_once_started():
    # A task cancelled while Executor.prepare runs in its thread: the start goes on, and what it
    # started is given up in the background instead of waiting for inputs that never come.
    import asyncio

    from coherence.engine.execution.pool import POOL
    from coherence.engine.sampling import sample_alternatives

    checker = examples_checker()
    fn = target("textutils.py", "is_palindrome")
    await checker.check(fn)  # the pool's workers are up
    samples = await sample_alternatives(fn.spec, 9, checker.provider, checker.cache)
    workers = [w for w in POOL._all if w.alive()]
    jobs = sum(w.jobs for w in workers)
    task = None

    def progress(message, fraction):
        if "sampling" in message:
            task.cancel()  # lands on the check's next await: the workers' start

    task = asyncio.ensure_future(checker.check(fn, progress=progress, samples=samples))
    with pytest.raises(asyncio.CancelledError):
        await task
    # the start goes on (the main run and the re-run, on the two idle workers), then both jobs
    # end and their workers are back in the pool, each with one more job done
    for _ in range(200):
        if sum(w.jobs for w in workers) == jobs + 2 and POOL.idle_count() == len(workers):
            break
        await asyncio.sleep(0.05)
    assert sum(w.jobs for w in workers) == jobs + 2
    assert all(w.alive() for w in workers) and POOL.idle_count() == len(workers)


TWICE = '''# coherence
def twice(n: int) -> int:
    """Twice n."""
    return 2 * n if n < 10 else 2 * n + 1
'''
TWICE_RIGHT = "def twice(n):\n    return 2 * n\n"
# right from 3 up, and alone in what it returns below 3
TWICE_ODD_BELOW_3 = "def twice(n):\n    return 2 * n if n >= 3 else -1\n"
TWICE_LIKE_YOURS = "def twice(n):\n    return 2 * n if n < 10 else 2 * n + 1\n"


async def test_the_counterexample_keeps_the_bloc_the_verdict_rests_on(tmp_path):
    # 7 of 9 alternatives outvote yours from n = 10 up.  The rival the verdict names (the first of
    # them) also disagrees with yours below 3, alone: shrinking yours against it alone would end at
    # twice(0) (yours 0, it -1), where one alternative disagrees and the bloc is gone.
    alternatives = [TWICE_ODD_BELOW_3] + [TWICE_RIGHT] * 6 + [TWICE_LIKE_YOURS] * 2
    result = await _replayed_result(tmp_path, TWICE, "twice", alternatives)
    assert result.severity == "warning"
    ce = result.counterexample
    n = eval(ce.call[len("twice") :])  # our own rendering
    assert n >= 10, ce.call
    assert ce.disagreeing == 7 and ce.total == 9


@pytest.mark.parametrize(("path", "name"), [("intervals.py", "merge_intervals"), ("cart.py", "add")])
async def test_a_recheck_shrinks_to_the_same_counterexample_without_running_its_candidates(path, name):
    """A re-check of an unchanged function (its inputs cached) finds the counterexample the check
    before found, from what the programs gave then: the shrinker starts no job."""
    checker, executor = job_counting_checker()
    first = await checker.check(target(path, name))
    assert first.status == "incoherent" and first.counterexample is not None
    assert first.counterexample.shrunk_from  # it did shrink: the re-check has something to save
    executor.jobs.clear()
    again = await checker.check(target(path, name))
    assert again.counterexample == first.counterexample and again.severity == first.severity
    assert executor.jobs == [1]  # the main run's job alone, of yours alone (the rows kept)


async def test_an_edited_body_runs_only_itself_on_the_last_shrinks_inputs():
    """After a body edit the alternatives' outcomes on the shrinker's inputs still hold (nothing
    else in the module names the function): yours alone runs them, beside scoring, and the
    shrink that follows runs nothing and ends where it did."""
    checker, executor = job_counting_checker()
    source = (EXAMPLES / "textutils.py").read_text()
    first = await checker.check(find_targets(source, str(EXAMPLES / "textutils.py"))[0])
    assert first.counterexample is not None and first.counterexample.shrunk_from
    assert 2 in executor.jobs  # the first shrink ran yours and the rival
    executor.jobs.clear()
    edited = source.replace('ch in "aeiou")', 'ch in "aeiou") + 0')
    assert edited != source
    again = await checker.check(find_targets(edited, str(EXAMPLES / "textutils.py"))[0])
    assert again.counterexample == first.counterexample
    assert executor.jobs == [1, 1]  # the main run and the shrink's inputs: yours alone
    assert "ahead" in again.extra["timings"]


@pytest.mark.parametrize(
    "edit",
    [
        'ch in "aeiou") + 0',  # the same function: the last shrink's path is taken again
        'ch in "aeiou") + (s.count("A") if len(s) == 2 else 0)',  # yours now differs on inputs the shrink read
    ],
)
async def test_a_body_edit_shrinks_where_a_fresh_checker_would(edit):
    """What is kept from the checks before (outcomes, shrink paths) never changes where a shrink
    ends: an edited body's counterexample is the one a checker that kept nothing finds."""
    source = (EXAMPLES / "textutils.py").read_text()
    edited = source.replace('ch in "aeiou")', edit)
    assert edited != source
    path = str(EXAMPLES / "textutils.py")
    checker = examples_checker()
    await checker.check(find_targets(source, path)[0])
    kept = await checker.check(find_targets(edited, path)[0])
    fresh = await examples_checker().check(find_targets(edited, path)[0])
    assert kept.counterexample == fresh.counterexample and kept.severity == fresh.severity
