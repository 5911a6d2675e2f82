"""A panel of models (issue 31): ``models`` in the settings, the alternatives spread over two
OpenAI-compatible loopback servers (two ports, each serving another model's recorded candidates)
through litellm's real HTTP path, each model's own cache rows, and one member failing."""

from __future__ import annotations

import gzip
import json

import pytest

from coherence.cli.plan import model_options
from coherence.engine.check import Checker
from coherence.engine.config import CheckConfig, PanelMember, parse_models, settings_from_table
from coherence.engine.errors import ConfigurationError
from coherence.engine.markers import target_for
from coherence.engine.resolve import ConfigResolver
from coherence.engine.sampling import extract_program
from coherence.engine.sampling.panel import provider_key, split_counts
from coherence.formats import describe, to_json
from coherence.lsp.render import hover_markdown
from coherence.lsp.settings import build_config, parse_settings
from tests.support import CORPUS_DIR
from tests.support.openai_loopback import LoopbackServer, corpus_responder, rate_limited

TASK = "HumanEval/1"  # separate_paren_groups: llama's first candidate fails the benchmark's tests


def test_split_counts_add_up_and_follow_the_shares():
    assert split_counts(9, [1, 1, 1]) == [3, 3, 3]
    assert split_counts(9, [2, 1]) == [6, 3]
    assert split_counts(10, [1, 1, 1]) == [4, 3, 3]
    assert split_counts(9, [1] * 7) == [2, 2, 1, 1, 1, 1, 1]
    assert split_counts(0, [1, 1]) == [0, 0]


def test_members_of_one_provider_share_a_rate_limit():
    assert provider_key("openai/a", "http://h:1/v1/") == provider_key("openai/b", "http://h:1/v1")
    assert provider_key("openai/a", "http://h:1/v1") != provider_key("openai/a", "http://h:2/v1")
    assert provider_key("anthropic/x", None) != provider_key("openai/x", None)


def test_models_setting_from_toml_cli_and_editor(tmp_path):
    values = settings_from_table(
        {
            "models": [
                "openai/a share=2 api_base=http://127.0.0.1:9/v1",
                {"model": "anthropic/b", "api-base": "http://x"},
            ]
        },
        tmp_path / "pyproject.toml",
    )
    assert values["models"] == (
        PanelMember("openai/a", 2.0, "http://127.0.0.1:9/v1"),
        PanelMember("anthropic/b", 1.0, "http://x"),
    )
    for bad in (["openai/a share=0"], ["openai/a colour=red"], [{"share": 2}], ["a", "a"], [3]):
        with pytest.raises(ConfigurationError):
            settings_from_table({"models": bad}, tmp_path / "pyproject.toml")
    # --model once is the one model; twice, or with a share, a panel
    assert model_options(["openai/a"]) == ("openai/a", None)
    assert model_options(["openai/a", "openai/b share=3"]) == (
        None,
        (PanelMember("openai/a"), PanelMember("openai/b", 3.0)),
    )
    settings, problems = parse_settings({"models": ["openai/a", "openai/b share=2"]})
    assert not problems
    config = build_config(settings, None, str(tmp_path), trusted=True).config
    assert config.models == parse_models("openai/a, openai/b share=2")


def test_a_repository_cannot_choose_the_panel_without_trust(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.coherence]\nmodels = ["openai/evil api_base=http://attacker.invalid/v1"]\nsamples = 4\n'
    )
    untrusted = ConfigResolver(trust=False, user_dir=tmp_path / "user", env={}).for_path(tmp_path)
    assert untrusted.config.models == () and "models" in untrusted.refused and untrusted.config.samples == 4
    trusted = ConfigResolver(trust=True, user_dir=tmp_path / "user", env={}).for_path(tmp_path)
    assert [m.api_base for m in trusted.config.models] == ["http://attacker.invalid/v1"]
    # a layer naming one model replaces a lower layer's panel (the provider is taken as a unit)
    both = ConfigResolver({"model": "openai/mine"}, trust=True, user_dir=tmp_path / "user", env={}).for_path(tmp_path)
    assert both.config.models == () and both.config.model == "openai/mine"
    # the user's environment may name a panel (comma-separated)
    env = ConfigResolver(
        user_dir=tmp_path / "user", env={"COHERENCE_MODELS": "openai/a, openai/b share=2"}
    ).without_project()
    assert env.config.models == (PanelMember("openai/a"), PanelMember("openai/b", 2.0))


# ---------------------------------------------------------------------------------------------
# two loopback servers, two models
# ---------------------------------------------------------------------------------------------


def _corpus_task(model: str) -> dict:
    path = CORPUS_DIR / f"humaneval-{model}.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"recorded corpus not found: {path}")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return next(e for e in map(json.loads, fh) if e["task_id"] == TASK)


def _recorded(tmp_path, model: str):
    """The model's recorded candidates of TASK as a one-line samples file (for corpus_responder)."""
    path = tmp_path / f"{model}.jsonl"
    path.write_text(json.dumps(_corpus_task(model)) + "\n")
    return path


@pytest.fixture
def target():
    task = _corpus_task("llama_3_1_8b_instruct")
    code = extract_program(task["candidates"][0], task["entry_point"]).code
    return target_for(code, task["entry_point"], "parens.py", docstring=task["description"])


@pytest.fixture
def servers(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    a = LoopbackServer(responder=corpus_responder(_recorded(tmp_path, "claude_sonnet_4"))).start()
    b = LoopbackServer(responder=corpus_responder(_recorded(tmp_path, "gemini_2_5_pro"))).start()
    yield a, b
    a.stop()
    b.stop()


def _config(tmp_path, *members: PanelMember, samples: int = 10) -> CheckConfig:
    return CheckConfig(models=members, samples=samples, inputs=300, cache_dir=str(tmp_path / "cache"), call_timeout=1.0)


async def test_a_panel_spreads_the_alternatives_and_says_who_wrote_each_cluster(tmp_path, servers, target):
    a, b = servers
    claude = PanelMember("openai/claude-loopback", api_base=a.url)
    gemini = PanelMember("openai/gemini-loopback", api_base=b.url)
    result = await Checker(_config(tmp_path, claude, gemini)).check(target)

    assert result.status == "incoherent" and result.severity == "warning", (
        result.status,
        result.reason,
        result.severity,
    )
    assert result.samples == 10 and result.sampling == "9 of 9 alternatives"
    # 9 alternatives over two equal shares: 5 and 4, each from its own server
    written = {}
    for c in result.clusters:
        for m, k in c.models.items():
            written[m] = written.get(m, 0) + k
    assert written == {claude.model: 5, gemini.model: 4}
    assert [r.model for r in a.chat_requests] == ["claude-loopback"] and [r.model for r in b.chat_requests] == [
        "gemini-loopback"
    ]
    # every alternative stands against llama's bug, and the result says from which model each came
    assert result.panel_line() == f"5 of 5 from {claude.model}, 4 of 4 from {gemini.model}"
    assert set(result.cost_by_model) == {claude.model, gemini.model}
    # the same, where people read it: the hover, the text report, the JSON
    hover = hover_markdown(result).replace("\\", "")  # markdown escapes aside
    assert "9 of 9 disagree: 5 of 5 from openai/claude-loopback, 4 of 4 from openai/gemini-loopback" in hover, hover
    assert f"differ from yours, by model: {result.panel_line()}" in "\n".join(describe(result))
    entry = json.loads(to_json([result]))["functions"][0]
    assert {m for c in entry["clusters"] for m in c["models"]} == {claude.model, gemini.model}
    assert sum(sum(c["models"].values()) for c in entry["clusters"]) == 9
    assert result.cost_usd == sum(result.cost_by_model.values())

    # Each member's samples are cached under its own model: the same panel asks nobody again,
    # and a panel of one of them reuses what that member already has.
    before = (a.request_count, b.request_count)
    again = await Checker(_config(tmp_path, claude, gemini)).check(target)
    assert (a.request_count, b.request_count) == before and again.clusters == result.clusters
    alone = await Checker(_config(tmp_path, claude, samples=6)).check(target)
    assert a.request_count == before[0] and alone.samples == 6


async def test_one_member_rate_limited_lowers_the_count_and_is_named(tmp_path, servers, target):
    a, _ = servers
    with LoopbackServer(then=rate_limited(retry_after=3600)) as down:
        claude = PanelMember("openai/claude-loopback", api_base=a.url)
        broken = PanelMember("openai/down-loopback", api_base=down.url)
        result = await Checker(_config(tmp_path, claude, broken)).check(target)
        assert down.request_count >= 1  # it was asked, and said no
    assert result.status == "incoherent"  # the check stands on the member that answered
    assert result.samples == 6 and result.sampling.startswith("6 of 10 samples; 4 failed: rate limited")
    problem = result.sampling_problem
    assert broken.model in problem and "4 of 4 failed" in problem and claude.model not in problem.split("panel;")[1]
    assert {m for c in result.clusters for m in c.models} == {claude.model}


# ---------------------------------------------------------------------------------------------
# the verdict's panel term
# ---------------------------------------------------------------------------------------------


def test_a_whole_model_backing_yours_makes_it_a_hint_in_a_panel_only():
    import numpy as np

    from coherence.engine.verdict import judge

    # yours (row 0) and claude's 3 alternatives return 1 on input 0; the 6 others return 2
    labels = np.array([[0, 0]] + [[0, 0]] * 3 + [[1, 0]] * 6)
    raised = np.zeros_like(labels, dtype=bool)
    panel = ["yours"] + ["claude"] * 3 + ["gemini"] * 3 + ["deepseek"] * 3
    assert judge(labels, raised).severity == "warning"  # 6 of 9 against, 3 with yours
    backed = judge(labels, raised, models=panel, model_backs="hint")
    assert backed.severity == "hint" and "one model of the panel agrees with yours" in backed.why
    assert judge(labels, raised, models=panel, model_backs="information").severity == "information"
    # one model wrote them all: the same verdict as without the term
    assert judge(labels, raised, models=["yours"] + ["gpt"] * 9, model_backs="hint").severity == "warning"
    # a model split between the sides backs nothing
    split = ["yours", "claude", "claude", "gemini"] + ["claude", "gemini", "gemini", "deepseek", "deepseek", "deepseek"]
    assert judge(labels, raised, models=split, model_backs="hint").severity == "warning"


def test_a_bloc_must_come_from_models_that_hold_most_of_the_panel():
    import numpy as np

    from coherence.engine.verdict import PANEL_HELD_SHARE, judge

    # on input 0: claude's and gemini's 6 alternatives return 1, deepseek's 3 return 2, yours 0
    labels = np.array([[0, 0]] + [[1, 0]] * 6 + [[2, 0]] * 3)
    raised = np.zeros_like(labels, dtype=bool)
    panel = ["yours"] + ["claude"] * 3 + ["gemini"] * 3 + ["deepseek"] * 3
    assert judge(labels, raised, models=panel).severity == "warning"  # 6 of 9 in one bloc
    # the bloc's two models hold 6 of 9 alternatives: a third of the panel reads the spec another way
    split = judge(labels, raised, models=panel, held_share=PANEL_HELD_SHARE)
    assert split.severity == "hint" and "too few of the panel's models" in split.why
    # one model wrote all nine: the share is all of them, and the verdict is as without the term
    assert judge(labels, raised, models=["yours"] + ["gpt"] * 9, held_share=PANEL_HELD_SHARE).severity == "warning"
    # seven models (2, 2, 1, 1, 1, 1, 1): two single ones reading otherwise leave 7 of 9 in the bloc's models
    seven = ["yours", "a", "a", "b", "b", "c", "d", "e", "f", "g"]
    labels7 = np.array([[0, 0]] + [[1, 0]] * 7 + [[2, 0]] * 2)
    assert judge(labels7, raised, models=seven, held_share=PANEL_HELD_SHARE).severity == "warning"
    # ... a model of two and a single one (3 of 9) do not
    labels6 = np.array([[0, 0]] + [[1, 0]] * 6 + [[2, 0]] * 3)
    seven_split = ["yours", "a", "a", "c", "d", "e", "f", "b", "b", "g"]
    assert judge(labels6, raised, models=seven_split).severity == "warning"
    assert judge(labels6, raised, models=seven_split, held_share=PANEL_HELD_SHARE).severity == "hint"
    # a member whose every sample crashes on every input is left out of the count: it does not
    # silence the two models that answered
    crashed = labels.copy()
    crashed[7:] = -1
    crashed_raised = crashed < 0
    assert judge(crashed, crashed_raised, models=panel, held_share=PANEL_HELD_SHARE).severity == "warning"


def test_an_example_only_one_model_of_the_panel_reproduces_is_information():
    from coherence.engine.verdict import PANEL_HELD_SHARE, from_examples

    # yours contradicts example 0; the 3 alternatives of one model reproduce it, the 6 others
    # agree with yours (median's docstring example, which is itself wrong)
    support = [True] * 3 + [False] * 6
    checked = [(0, False, support, [not s for s in support])]
    panel = ["yours"] + ["gpt"] * 3 + ["claude"] * 3 + ["gemini"] * 3
    assert from_examples(checked, 9).severity == "warning"  # one model: the rule as it was
    assert from_examples(checked, 9, models=["yours"] + ["gpt"] * 9, held_share=PANEL_HELD_SHARE).severity == "warning"
    split = from_examples(checked, 9, models=panel, held_share=PANEL_HELD_SHARE)
    assert split.severity == "information" and "only some of the panel's models" in split.why
    # ... and the six that agree with yours keep their votes (they lose them to an example the
    # panel's models reproduce together, or yours gives)
    from coherence.engine.verdict.stated import discredited

    assert discredited(checked) == set(range(4, 10))
    assert discredited(checked, panel, PANEL_HELD_SHARE) == set()
    # one alternative of each model reproduces it: agreement across models, a warning
    across = [True, False, False] * 3
    checked = [(0, False, across, [not s for s in across])]
    assert from_examples(checked, 9, models=panel, held_share=PANEL_HELD_SHARE).severity == "warning"
    assert discredited(checked, panel, PANEL_HELD_SHARE) == {1 + j for j, gives in enumerate(across) if not gives}


def test_a_broken_member_is_left_out_of_the_examples_count_as_of_the_blocs():
    """The held share is one count for ``judge`` and the docstring's examples: a member whose
    every sample raised on every input (``voters``) holds none of the panel."""
    import numpy as np

    from coherence.engine.verdict import PANEL_HELD_SHARE, from_examples, held_by, panel_backs, voters
    from coherence.engine.verdict.stated import discredited

    panel = ["yours"] + ["gpt"] * 3 + ["claude"] * 3 + ["gemini"] * 3
    raised = np.zeros((10, 4), dtype=bool)
    raised[7:] = True  # gemini's three samples crash on every input
    assert voters(panel, raised) == {"gpt", "claude"}
    assert held_by(panel, {"gpt", "claude"}) == 6 / 9
    assert held_by(panel, {"gpt", "claude"}, voters(panel, raised)) == 1.0
    # gpt and claude reproduce the example; yours and gemini's crashing samples do not give it
    support = [True] * 6 + [False] * 3
    checked = [(0, False, support, [False] * 9)]
    assert not panel_backs(support, panel, PANEL_HELD_SHARE)
    assert panel_backs(support, panel, PANEL_HELD_SHARE, voters(panel, raised))
    assert from_examples(checked, 9, models=panel, held_share=PANEL_HELD_SHARE).severity == "information"
    with_vote = voters(panel, raised)
    assert (
        from_examples(checked, 9, models=panel, held_share=PANEL_HELD_SHARE, with_vote=with_vote).severity == "warning"
    )
    assert discredited(checked, panel, PANEL_HELD_SHARE, with_vote) == {7, 8, 9}
    # no member crashed: everyone votes, and 6 of 9 is short of three quarters
    assert voters(panel, np.zeros((10, 4), dtype=bool)) == {"gpt", "claude", "gemini"}


async def test_the_check_passes_who_wrote_each_row_to_the_verdict(tmp_path, monkeypatch):
    """Yours, and all 3 alternatives of one model, add 1; the 6 of another add 2.  From one model
    that is a warning (6 of 9 against yours, 3 with it); from a panel, a whole model reads the spec
    as you do, and it is a hint."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    from tests.support.openai_loopback import code_reply

    yours, theirs = "def bump(x: int) -> int:\n    return x + 1\n", "def bump(x: int) -> int:\n    return x + 2\n"
    target = target_for(yours, "bump", "bump.py", docstring="Return x bumped.")
    with (
        LoopbackServer([code_reply(yours)]) as a,
        LoopbackServer([code_reply(theirs)]) as b,
        LoopbackServer([code_reply(yours), code_reply(theirs), code_reply(theirs)]) as one,
    ):
        panel = await Checker(
            _config(tmp_path, PanelMember("openai/a", 1, a.url), PanelMember("openai/b", 2, b.url))
        ).check(target)
        alone = await Checker(
            CheckConfig(
                model="openai/one",
                api_base=one.url,
                samples=10,
                inputs=300,
                cache_dir=str(tmp_path / "cache"),
                call_timeout=1.0,
            )
        ).check(target)
    assert alone.status == panel.status == "incoherent"
    assert [c.size for c in alone.clusters] == [6, 4] and alone.severity == "warning"
    assert panel.panel_line() == "6 of 6 from openai/b, 0 of 3 from openai/a"
    assert panel.severity == "hint" and "one model of the panel" in panel.evidence["why"]


async def test_the_check_asks_agreement_across_the_panels_models(tmp_path, monkeypatch):
    """Two of three models (6 of 9 alternatives) add 2 where yours adds 1; the third model adds
    3, or splits.  From one model, 6 of 9 against yours is a warning.  From this panel, it is a
    warning while each of the two models is whole against yours (``PANEL_WHOLE_MODELS``), and a
    hint that says one model in three reads the spec another way once one of them splits."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    from tests.support.openai_loopback import code_reply

    def bump(k: int) -> str:
        return f"def bump(x: int) -> int:\n    return x + {k}\n"

    target = target_for(bump(1), "bump", "bump.py", docstring="Return x bumped.")
    with (
        LoopbackServer([code_reply(bump(2))]) as a,
        LoopbackServer([code_reply(bump(2))]) as b,
        LoopbackServer([code_reply(bump(3))]) as c,
    ):
        members = [PanelMember(f"openai/{n}", 1, s.url) for n, s in (("a", a), ("b", b), ("c", c))]
        result = await Checker(_config(tmp_path, *members)).check(target)
    assert result.status == "incoherent"
    assert sorted(c.size for c in result.clusters) == [1, 3, 6]
    assert result.severity == "warning" and "two or more of the panel's models" in result.evidence["why"]
    with (
        LoopbackServer([code_reply(bump(2))]) as a,
        LoopbackServer([code_reply(bump(2)), code_reply(bump(2)), code_reply(bump(4))]) as b,
        LoopbackServer([code_reply(bump(3))]) as c,
    ):
        members = [PanelMember(f"openai/{n}", 1, s.url) for n, s in (("a", a), ("b", b), ("c", c))]
        split = await Checker(_config(tmp_path / "split", *members)).check(target)
    assert sorted(c.size for c in split.clusters) == [1, 1, 3, 5]
    assert split.severity == "hint" and "too few of the panel's models" in split.evidence["why"]
