"""Fixtures of the hostile-code suite: the sandbox mode, and a fresh machine per test (canary
files, a secret in a stand-in server's environment and in ours, loopback listeners)."""

from __future__ import annotations

import pytest

from tests.hostile.harness import Machine, bwrap_ok

# The language-server fixtures (a real ``python -m coherence serve`` under pytest-lsp).
from tests.lsp.conftest import start  # noqa: F401


@pytest.fixture
def zygote():
    """No forked servers here: the server's own process is part of what these tests watch."""
    return None


# The default run keeps the guard (it works on every machine, and bwrap adds its layers on top of
# the same guards); the bubblewrap runs are marked slow, and CI runs them.
@pytest.fixture(params=["guard", pytest.param("bwrap", marks=pytest.mark.slow)])
def mode(request) -> str:
    if request.param == "bwrap" and not bwrap_ok():
        pytest.skip("bubblewrap does not work here")
    return request.param


@pytest.fixture
def machine(monkeypatch):
    m = Machine.create()
    # the key is set in the server's (our) environment too: generated code must not see it
    monkeypatch.setenv("OPENAI_API_KEY", m.secret)
    monkeypatch.setenv("ANTHROPIC_API_KEY", m.secret)
    monkeypatch.setenv("COHERENCE_CANARY_TOKEN", m.secret)
    monkeypatch.setenv("LC_OPENAI_API_KEY", m.secret)  # a locale-looking name is no pass
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def client_name() -> str:
    return "vscode"  # one client is enough here; tests/lsp covers both


@pytest.fixture
def workspace(machine):
    return machine.ws  # the language server's workspace is the machine's (canary-checked) one
