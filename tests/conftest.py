"""Shared fixtures: where the recorded corpus lives, and skipping cleanly when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
CORPUS = Path(os.environ.get("COHERENCE_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.fixture
def corpus_dir() -> Path:
    if not (CORPUS / "README.md").is_file():
        pytest.skip(f"recorded corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    d = tmp_path / "cache"
    d.mkdir()
    return d
