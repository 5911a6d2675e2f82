"""Shared fixtures: where the recorded corpus lives, and skipping cleanly when it is absent."""

from __future__ import annotations

import atexit
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Under PYTHONDONTWRITEBYTECODE (set in some CI images and sandboxes) every process the suite starts
# (each xdist worker, server and CLI) compiles this tree again, and pytest rewrites every test
# module again: keep their bytecode in the ignored __pycache__ folders, as Python does by default.
# The sandbox sets its own environment, so generated code still writes none.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    sys.dont_write_bytecode = False
# The user's own coherence settings and trust store live in XDG_CONFIG_HOME: every test, and every
# process a test starts, gets an empty one instead, so what a developer configured changes nothing.
_CONFIG_HOME = tempfile.mkdtemp(prefix="coherence-tests-config-")
os.environ["XDG_CONFIG_HOME"] = _CONFIG_HOME
atexit.register(shutil.rmtree, _CONFIG_HOME, True)

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
CORPUS = Path(os.environ.get("COHERENCE_CORPUS", REPO.parent / "shared" / "corpus"))


# COHERENCE_TEST_CPU=FILE appends a line per test to FILE: its CPU seconds (this process's, and
# those of the processes it started and waited for), node id, wall seconds, start (Unix time) and
# xdist worker.  On a shared machine wall times say more about the load than the test, and the
# starts show how the workers' queues ran out (benchmarks/suite_durations.py reads it).
_CPU_LOG = os.environ.get("COHERENCE_TEST_CPU")


def _cpu_seconds() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before, start = (_cpu_seconds(), time.time()) if _CPU_LOG else (0.0, 0.0)
    yield
    if _CPU_LOG:
        wall, worker = time.time() - start, os.environ.get("PYTEST_XDIST_WORKER", "-")
        with open(_CPU_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{_cpu_seconds() - before:.3f}\t{item.nodeid}\t{wall:.3f}\t{start:.3f}\t{worker}\n")


@pytest.fixture
def zygote():
    """How a test starts ``python -m coherence``: forked from a pre-imported one (tests/support/zygote.py)."""
    from tests.support.zygote import forked_command

    return forked_command


@pytest.fixture
def corpus_dir() -> Path:
    if not (CORPUS / "README.md").is_file():
        pytest.skip(f"recorded corpus not found at {CORPUS}")
    return CORPUS


def corpus_check(corpus_dir: Path, task_id: str, *, samples: int, inputs: int):
    """A recorded gpt-4o HumanEval task: its candidate 0 as the user's function (a ``Target``),
    and a ``Checker`` that replays the other candidates as the alternatives."""
    import gzip
    import json

    from coherence.engine.check import Checker
    from coherence.engine.config import CheckConfig
    from coherence.engine.markers import target_for
    from coherence.engine.sampling.replay import ReplayProvider

    path = corpus_dir / "humaneval-gpt_4o.jsonl.gz"
    with gzip.open(path, "rt") as fh:
        row = next(json.loads(line) for line in fh if f'"{task_id}"' in line)
    filename = task_id.replace("HumanEval/", "he") + ".py"
    target = target_for(row["candidates"][0], row["entry_point"], filename, docstring=row["description"])
    return target, Checker(CheckConfig(samples=samples, inputs=inputs), provider=ReplayProvider(path, skip=1))


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    d = tmp_path / "cache"
    d.mkdir()
    return d
