"""Settings are spelled once (issues 27 and 30): the ``Settings`` dataclass of the server drives
validation, the camelCase keys and the defaults, and the client's package.json must say the same.
The defaults shown are the defaults used: where a setting overrides the engine, its default is the
engine's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_origin

import pytest

from coherence.engine.bounds import BOUNDS
from coherence.engine.config import CheckConfig
from coherence.lsp import settings as settings_mod
from coherence.lsp.settings import DEFAULTS, KINDS, SPEC, build_config, parse_settings, setting_key

PACKAGE_JSON = Path(__file__).resolve().parents[2] / "client-vscode" / "package.json"
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}


@pytest.fixture(scope="module")
def properties() -> dict:
    data = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    return data["contributes"]["configuration"]["properties"]


def test_package_json_has_exactly_the_settings_of_the_dataclass(properties):
    assert sorted(properties) == sorted(f"{settings_mod.SECTION}.{setting_key(name)}" for name in SPEC)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_each_setting_matches_package_json(properties, name):
    prop = properties[f"{settings_mod.SECTION}.{setting_key(name)}"]
    meta = SPEC[name].metadata
    kind = KINDS[name]
    default = getattr(DEFAULTS, name)
    if get_origin(kind) is tuple:
        assert prop["type"] == "array" and prop["items"] == {"type": "string"}
        assert prop["default"] == list(default)
    else:
        assert prop["type"] == JSON_TYPES[kind]
        assert prop["default"] == default and type(prop["default"]) in (kind, int)
    assert prop.get("enum", []) == list(meta["choices"])
    if meta["choices"]:
        assert len(prop.get("enumDescriptions", meta["choices"])) == len(meta["choices"])
    assert prop.get("minimum") == meta["minimum"]
    assert prop.get("maximum") == meta["maximum"]
    assert prop.get("exclusiveMinimum") == meta["above"]
    assert prop["scope"] == meta["scope"]
    assert prop.get("markdownDescription")


def test_defaults_that_override_the_engine_are_the_engine_defaults():
    engine = CheckConfig()
    overriding = {name: SPEC[name].metadata["engine"] for name in SPEC if SPEC[name].metadata["engine"]}
    assert overriding == {
        "temperature": "temperature",
        "samples": "samples",
        "inputs": "inputs",
        "callTimeout": "call_timeout",
        "markers": "mode",
    }
    for name, engine_name in overriding.items():
        assert getattr(DEFAULTS, name) == getattr(engine, engine_name), name
    assert DEFAULTS.callTimeout == 0.5  # package.json said 1.0 while 0.5 was in effect


def test_the_bounds_of_engine_settings_in_package_json_are_the_engines(properties):
    # Each engine setting's bounds are written once (engine.config.BOUNDS); the editor's maximum
    # stands in only where the engine has none.
    checked = []
    for name in SPEC:
        engine = SPEC[name].metadata["engine"]
        if engine not in BOUNDS:
            continue
        bounds, prop = BOUNDS[engine], properties[f"{settings_mod.SECTION}.{setting_key(name)}"]
        assert prop["type"] == JSON_TYPES[bounds.kind], name
        assert prop.get("minimum") == bounds.minimum, name
        assert prop.get("exclusiveMinimum") == bounds.above, name
        assert bounds.below is None, name  # package.json would need exclusiveMaximum
        assert prop.get("maximum") == (bounds.maximum if bounds.maximum is not None else bounds.editor_maximum), name
        checked.append(engine)
    assert sorted(checked) == ["call_timeout", "inputs", "samples", "temperature"]
    assert (BOUNDS["temperature"].minimum, BOUNDS["temperature"].maximum) == (0, 2)


def test_validation_comes_from_the_same_bounds():
    # The edges of each numeric range: inside is kept, outside falls back to the default.
    for name, kind in KINDS.items():
        meta = SPEC[name].metadata
        if kind not in (int, float):
            continue
        low = meta["minimum"] if meta["minimum"] is not None else meta["above"]
        high = meta["maximum"]
        assert parse_settings({name: high})[0].__getattribute__(name) == high
        assert parse_settings({name: high + 1})[1], name
        if meta["minimum"] is not None:
            assert parse_settings({name: low})[0].__getattribute__(name) == low
        assert parse_settings({name: low - 1})[1], name


def test_a_key_the_user_set_is_explicit_even_at_its_default_and_null_is_unset():
    settings, problems = parse_settings(
        {"samples": 10, "callTimeout": 0.5, "inputs": None, "runOn": "open", "trace": {"server": "off"}}
    )
    assert problems == []
    assert settings.explicit == {"samples", "callTimeout", "runOn"}
    assert parse_settings({"samples": "lots"})[0].explicit == frozenset()


def test_precedence_against_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.coherence]\nreplay = "r.jsonl"\nsamples = 20\ncall-timeout = 2.0\nexclude = ["a.py::f"]\n'
    )
    (tmp_path / "r.jsonl").write_text("")
    doc = str(tmp_path / "m.py")

    def config(raw: dict) -> CheckConfig:
        return build_config(parse_settings(raw)[0], doc, str(tmp_path), trusted=True).config

    assert (config({}).samples, config({}).call_timeout) == (20, 2.0)  # unset: the pyproject's
    assert (
        config({"samples": 10, "callTimeout": 0.5}).samples,
        config({"samples": 10, "callTimeout": 0.5}).call_timeout,
    ) == (10, 0.5)
    # The editor's exclude patterns add to the pyproject's.
    assert config({"exclude": ["b.py"]}).exclude == ("a.py::f", "b.py")
    assert config({}).exclude == ("a.py::f",)
