"""Reading settings: TOML files (never skipped, errors name the file and line), the layers (the
user's file, COHERENCE_* variables, the nearest [tool.coherence], overrides), and which of a
repository's settings are believed (the trust store)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from coherence.engine.config import USER_ONLY, CheckConfig, load_project_config
from coherence.engine.errors import ConfigurationError
from coherence.engine.resolve import ConfigResolver, stack
from coherence.engine.trust import TrustStore, table_digest


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def resolver(tmp_path: Path, overrides=None, *, trust=None, env=None) -> ConfigResolver:
    return ConfigResolver(overrides, trust=trust, user_dir=tmp_path / "user", env=env or {})


HOSTILE = """[tool.coherence]
samples = 4
inputs = 50
replay = "samples.jsonl"
model = "openai/evil"
models = ["openai/evil-too api_base=http://203.0.113.9/v1"]
api_base = "http://203.0.113.9/v1"
python = "tools/py"
sandbox = "guard"
cache-dir = "cache"
workspace = "/"
"""


def test_every_python_reads_pyproject(tmp_path):
    """3.10 has no tomllib: the file is read with tomli, never skipped (this test runs under every
    interpreter .ci/run tests with)."""
    write(tmp_path / "pyproject.toml", '[tool.coherence]\nsamples = 7\nreplay = "r.jsonl"\n')
    cfg = load_project_config(tmp_path)
    assert (cfg.samples, cfg.replay) == (7, str(tmp_path / "r.jsonl"))
    assert sys.version_info >= (3, 11) or "tomli" in sys.modules


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path):
    bad = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.coherence]\nsamples = = 3\n')
    with pytest.raises(ConfigurationError) as err:
        load_project_config(tmp_path / "m.py")
    assert str(bad) in str(err.value) and "line 5" in str(err.value)


def test_a_broken_pyproject_without_our_table_is_not_skipped_either(tmp_path):
    write(tmp_path / "pyproject.toml", "[project\n")
    with pytest.raises(ConfigurationError, match="line 1"):
        load_project_config(tmp_path)


@pytest.mark.parametrize(
    "line, message",
    [
        ("samples = 'ten'", "samples should be an integer, got 'ten'"),
        ("samples = true", "samples should be an integer"),
        ("temperature = 'hot'", "temperature should be a number"),
        ("replay = 3", "replay should be a string"),
        ("sampels = 3", "unknown setting [tool.coherence] 'sampels'"),
    ],
)
def test_a_bad_value_is_named_with_its_file(tmp_path, line, message):
    write(tmp_path / "pyproject.toml", f"[tool.coherence]\n{line}\n")
    with pytest.raises(ConfigurationError) as err:
        load_project_config(tmp_path)
    assert message in str(err.value) and str(tmp_path / "pyproject.toml") in str(err.value)


def test_integers_are_accepted_where_numbers_are_wanted(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.coherence]\ntemperature = 1\nprogram-budget = 2\n")
    cfg = load_project_config(tmp_path)
    assert (cfg.temperature, cfg.program_budget) == (1.0, 2.0)


def test_each_file_uses_the_config_nearest_to_it(tmp_path):
    """As ruff does: a pyproject.toml without [tool.coherence] is passed over, and a folder's own
    config wins over the root's for the files below it."""
    write(tmp_path / "pyproject.toml", "[tool.coherence]\nsamples = 5\n")
    write(tmp_path / "sub" / "pyproject.toml", "[tool.coherence]\nsamples = 8\ninputs = 30\n")
    write(tmp_path / "plain" / "pyproject.toml", "[project]\nname = 'plain'\n")
    r = resolver(tmp_path)
    assert r.for_path(tmp_path / "a.py").config.samples == 5
    sub = r.for_path(tmp_path / "sub" / "deep" / "b.py").config
    assert (sub.samples, sub.inputs, sub.workspace) == (8, 30, str(tmp_path / "sub"))
    plain = r.for_path(tmp_path / "plain" / "c.py")
    assert plain.config.samples == 5 and plain.project.path == tmp_path / "pyproject.toml"


def test_the_workspace_defaults_to_the_nearest_project_root(tmp_path):
    write(tmp_path / "proj" / "pyproject.toml", "[project]\nname = 'p'\n")
    r = resolver(tmp_path)
    assert r.for_path(tmp_path / "proj" / "pkg" / "m.py").config.workspace == str(tmp_path / "proj")
    assert r.for_path(tmp_path / "elsewhere.py").config.workspace in (None, str(Path("/")))


def test_the_users_file_and_environment_are_layered_under_the_project(tmp_path):
    write(tmp_path / "user" / "config.toml", 'model = "openai/mine"\nsamples = 6\ncache-dir = "~/c"\n')
    write(tmp_path / "repo" / "pyproject.toml", "[tool.coherence]\nsamples = 4\n")
    r = resolver(tmp_path, env={"COHERENCE_API_BASE": "http://localhost:1/v1", "COHERENCE_SANDBOX": "guard"})
    cfg = r.for_path(tmp_path / "repo" / "m.py").config
    assert (cfg.model, cfg.api_base, cfg.samples, cfg.sandbox) == ("openai/mine", "http://localhost:1/v1", 4, "guard")
    assert cfg.cache_dir == str(Path("~/c").expanduser())


def test_a_broken_user_file_is_an_error_naming_it(tmp_path):
    user = write(tmp_path / "user" / "config.toml", "samples = [\n")
    with pytest.raises(ConfigurationError) as err:
        resolver(tmp_path)
    assert str(user) in str(err.value)


def test_naming_a_model_or_replay_replaces_the_provider_below():
    """A key is never sent to an api_base chosen for another model."""
    user = {"model": "ollama/q", "api_base": "http://localhost:11434"}
    assert stack([user, {"model": "openai/gpt-4o-mini"}]) == {"model": "openai/gpt-4o-mini"}
    assert stack([user, {"replay": "/r.jsonl"}]) == {"replay": "/r.jsonl"}
    assert stack([user, {"api_base": "http://other"}]) == {"model": "ollama/q", "api_base": "http://other"}
    assert stack([user, {"samples": 4}, {"model": None}]) == {**user, "samples": 4}


def test_an_untrusted_repository_keeps_its_harmless_settings_and_loses_the_others(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "pyproject.toml", HOSTILE)
    r = resolver(tmp_path, {"api_base": "http://127.0.0.1:9/v1"})
    got = r.for_path(repo / "m.py")
    cfg = got.config
    assert (cfg.samples, cfg.inputs, cfg.replay) == (4, 50, str(repo / "samples.jsonl"))
    assert (cfg.model, cfg.models, cfg.api_base) == (None, (), "http://127.0.0.1:9/v1")
    assert (cfg.python, cfg.sandbox, cfg.cache_dir, cfg.workspace) == (None, "auto", None, str(repo))
    assert got.trust == "untrusted"
    # the user gave the api_base: refusing the repository's changed nothing there
    assert set(got.refused) == {"model", "models", "python", "sandbox", "cache_dir", "workspace"}
    assert got.notice.count("\n") == 0
    for word in (
        "python",
        "sandbox",
        "cache_dir",
        "workspace",
        str(repo / "pyproject.toml"),
        f"coherence trust {repo}",
    ):
        assert word in got.notice


def test_a_model_the_user_names_replaces_the_repositorys_replay(tmp_path):
    write(tmp_path / "repo" / "pyproject.toml", HOSTILE)
    cfg = resolver(tmp_path, {"model": "openai/mine"}).for_path(tmp_path / "repo").config
    assert (cfg.model, cfg.api_base, cfg.replay, cfg.samples) == ("openai/mine", None, None, 4)


def test_every_user_only_setting_is_refused_from_an_untrusted_repository(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "pyproject.toml", HOSTILE.replace('replay = "samples.jsonl"\n', ""))
    got = resolver(tmp_path).for_path(repo)
    assert set(got.refused) == set(USER_ONLY)
    assert got.config.model is None and got.config.api_base is None


def test_a_replay_file_outside_the_repository_needs_trust(tmp_path):
    repo = tmp_path / "repo"
    (tmp_path / "secret").write_text("not yours\n")
    write(repo / "pyproject.toml", '[tool.coherence]\nreplay = "../secret"\n')
    got = resolver(tmp_path).for_path(repo)
    assert got.config.replay is None and got.refused == ("replay",)
    assert f"replay (outside {repo})" in got.notice
    # a symlink inside the repository that leads out of it is outside too
    (repo / "link.jsonl").symlink_to(tmp_path / "secret")
    write(repo / "pyproject.toml", '[tool.coherence]\nreplay = "link.jsonl"\n')
    assert resolver(tmp_path).for_path(repo).config.replay is None
    assert resolver(tmp_path, trust=True).for_path(repo).config.replay == str(tmp_path / "secret")


def test_trust_is_per_config_and_lapses_when_its_table_changes(tmp_path):
    repo = tmp_path / "repo"
    pyproject = write(repo / "pyproject.toml", HOSTILE)
    store = TrustStore(tmp_path / "user" / "trusted.json")
    r = resolver(tmp_path)
    project = r.locate(repo)[0]
    store.grant(pyproject, project.digest)
    got = resolver(tmp_path).for_path(repo / "m.py")
    assert got.trust == "trusted" and got.refused == () and got.notice is None
    assert (got.config.model, got.config.python, got.config.workspace) == (
        "openai/evil",
        str(repo / "tools" / "py"),
        "/",
    )
    # a change outside [tool.coherence] keeps the grant; a change inside withdraws it
    pyproject.write_text("[project]\nname = 'x'\n\n" + HOSTILE)
    assert resolver(tmp_path).for_path(repo).trust == "trusted"
    pyproject.write_text(HOSTILE.replace("openai/evil", "openai/eviler"))
    got = resolver(tmp_path).for_path(repo)
    assert got.trust == "changed" and got.config.model is None
    assert "changed since you trusted it" in got.notice
    assert store.revoke([pyproject])[0].config == str(pyproject)
    assert resolver(tmp_path).for_path(repo).trust == "untrusted"


def test_the_digest_ignores_formatting_and_order():
    assert table_digest({"a": 1, "b": [1, 2]}) == table_digest({"b": [1, 2], "a": 1})
    assert table_digest({"a": 1}) != table_digest({"a": 2})


def test_a_damaged_trust_store_trusts_nothing_and_says_so(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "pyproject.toml", HOSTILE)
    store = write(tmp_path / "user" / "trusted.json", "{not json")
    got = resolver(tmp_path).for_path(repo)
    assert got.trust == "untrusted" and got.config.model is None
    assert str(store) in got.notice and "damaged" in got.notice
    with pytest.raises(ConfigurationError, match="damaged"):
        TrustStore(store).grant(repo / "pyproject.toml", "0" * 64)
    assert store.read_text() == "{not json"  # never overwritten behind the user's back


def test_the_store_is_written_whole_and_private(tmp_path):
    path = tmp_path / "cfg" / "trusted.json"
    store = TrustStore(path)
    store.grant(tmp_path / "a" / "pyproject.toml", "1" * 64)
    store.grant(tmp_path / "b" / "pyproject.toml", "2" * 64)
    store.grant(tmp_path / "a" / "pyproject.toml", "3" * 64)  # again: replaces the first
    data = json.loads(path.read_text())
    assert [(g["config"], g["sha256"][0]) for g in data["trusted"]] == [
        (str(tmp_path / "b" / "pyproject.toml"), "2"),
        (str(tmp_path / "a" / "pyproject.toml"), "3"),
    ]
    assert path.stat().st_mode & 0o077 == 0
    assert [p.name for p in path.parent.iterdir()] == ["trusted.json"]


def test_trust_from_the_front_end_overrides_the_store(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "pyproject.toml", HOSTILE)
    assert resolver(tmp_path, trust=True).for_path(repo).config.model == "openai/evil"
    untrusted = resolver(tmp_path, trust=False).for_path(repo)
    assert untrusted.config.model is None and "model" in untrusted.refused


def test_the_users_own_file_may_set_everything(tmp_path):
    write(
        tmp_path / "user" / "config.toml",
        'python = "/usr/bin/python3"\nsandbox = "guard"\napi_base = "http://localhost:8000/v1"\nmodel = "openai/local"\n',
    )
    cfg = resolver(tmp_path).for_path(tmp_path / "m.py").config
    assert (cfg.python, cfg.sandbox, cfg.api_base, cfg.model) == (
        "/usr/bin/python3",
        "guard",
        "http://localhost:8000/v1",
        "openai/local",
    )
    assert CheckConfig().merged(**{"sandbox": cfg.sandbox}).validated().sandbox == "guard"


def test_an_error_at_the_end_of_the_file_says_which_line_that_is(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.coherence]\nsamples = 3\ninputs = [\n")
    with pytest.raises(ConfigurationError, match=r"end of document\) \(line 3\)"):
        load_project_config(tmp_path)


@pytest.mark.parametrize("name", ["run_budget", "tail_budget"])
def test_a_negative_budget_is_refused_and_zero_turns_it_off(name):
    with pytest.raises(ConfigurationError, match=rf"{name} must be at least 0 \(0: no"):
        CheckConfig(**{name: -1.0}).validated()
    assert getattr(CheckConfig(**{name: 0.0}).validated(), name) == 0.0
