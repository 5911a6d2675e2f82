"""Corpus fixtures for the eval tests: skipped cleanly when ../shared/corpus is absent."""

import os
from pathlib import Path

import pytest

from coherence.eval.corpus import load_samples, load_tasks
from tests.support import CORPUS_DIR

CORPUS = Path(os.environ.get("COHERENCE_CORPUS", CORPUS_DIR))


def _need(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"recorded corpus not found at {CORPUS}")
    return path


@pytest.fixture(scope="session")
def corpus_path():
    return _need


@pytest.fixture(scope="session")
def humaneval_tasks():
    return load_tasks(_need("humaneval-tasks.jsonl.gz"))


@pytest.fixture(scope="session")
def mbpp_tasks():
    return load_tasks(_need("mbpp-sanitized-tasks.jsonl.gz"))


@pytest.fixture(scope="session")
def humaneval_samples():
    return load_samples(_need("humaneval-gpt_4o.jsonl.gz"))


@pytest.fixture(scope="session")
def mbpp_samples():
    return load_samples(_need("mbpp-gpt_4o.jsonl.gz"))
