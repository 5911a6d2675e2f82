"""``coherence.model = "editor"``: the real server asks its client for the samples with
``coherence/sample``.  The test client stands for VS Code's ``vscode.lm``: it answers from the
recorded corpus (../shared/corpus, skipped when absent) or with the errors the VS Code client
reports (no permission, no model, cancelled), or not at all."""

from __future__ import annotations

import asyncio
import gzip
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.support import CORPUS_DIR

from .conftest import EXAMPLES, TEST_SETTINGS

HUMANEVAL_GPT4O = CORPUS_DIR / "humaneval-gpt_4o.jsonl.gz"
LENDS = {"sampleRequest": True}


class EditorModels:
    """The client's side of ``coherence/sample``: ``answer(request)`` makes each reply; every
    request and every ``$/cancelRequest`` the client got is kept."""

    def __init__(self, client: Any, answer):
        self.requests: list[Any] = []
        self.cancelled: list[Any] = []
        self.answer = answer

        @client.feature("coherence/sample")
        async def sample(ls: Any, params: Any) -> Any:
            self.requests.append(params)
            try:
                return await self.answer(params)
            except asyncio.CancelledError:  # pygls cancels the handler on $/cancelRequest
                self.cancelled.append(params)
                raise


def prompt_of(request: Any) -> str:
    return "\n".join(m.content for m in request.messages)


def he0(body: str) -> str:
    """HumanEval/0 as a marked function of a module, with ``body`` for the user's implementation."""
    with gzip.open(HUMANEVAL_GPT4O, "rt") as fh:
        row = next(r for r in map(json.loads, fh) if r["entry_point"] == "has_close_elements")
    return (
        "from typing import List\n\n\n# coherence\ndef has_close_elements"
        + row["signature"]
        + ":"
        + row["description"].rstrip()
        + "\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
        + "\n"
    )


def corpus_answers():
    """Replies from the recorded gpt-4o candidates of the function the prompt asks for (the
    first is the user's: skipped), as the editor's model "corpus/gpt_4o"."""
    with gzip.open(HUMANEVAL_GPT4O, "rt") as fh:
        rows = {r["entry_point"]: r["candidates"][1:] for r in map(json.loads, fh)}

    async def answer(request: Any) -> dict:
        name = next(n for n in rows if f"function `{n}`" in prompt_of(request))
        return {"texts": [f"```python\n{c}\n```" for c in rows[name][: request.n]], "model": "corpus/gpt_4o"}

    return answer


# adjacent pairs only: wrong for an unsorted list ([1.0, 5.0, 1.1], 0.5)
BUGGY = "return any(abs(a - b) < threshold for a, b in zip(numbers, numbers[1:]))"


def warnings(lsp) -> list[str]:
    return [m.message for m in lsp.client.messages if m.type in (types.MessageType.Warning, types.MessageType.Error)]


@pytest.mark.corpus
@pytest.mark.skipif(not HUMANEVAL_GPT4O.exists(), reason="../shared/corpus absent")
async def test_samples_from_the_editors_model_make_a_diagnostic_and_a_refusal_keeps_it(start, workspace: Path):
    (workspace / "he0.py").write_text(he0(BUGGY), encoding="utf-8")
    lsp = await start({"model": "editor"}, options=LENDS)
    editor = EditorModels(lsp.client, corpus_answers())
    uri = lsp.open("he0.py")
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic"))[0]
    await lsp.wait_idle()
    assert d.data["model"] == "editor:corpus/gpt_4o" and d.data["samples"] == 10  # who answered
    (request,) = editor.requests
    assert request.n == 9 and request.temperature == 0.6 and request.family is None
    assert "def has_close_elements(" in prompt_of(request) and "zip(numbers" not in prompt_of(request)  # never the body
    hover = await lsp.hover(uri, d.range.start.line, d.range.start.character)
    assert hover is not None and "editor:corpus/gpt_4o" in hover.contents.value

    # The user then refuses the editor's consent question; a docstring edit needs new samples.
    async def refuse(request: Any) -> dict:
        return {"texts": [], "error": {"kind": "no_permission", "message": "the user declined"}}

    editor.answer = refuse
    lsp.change(uri, lsp.texts[uri].replace("Check if in given list", "Check whether in the given list"))
    lsp.save(uri)
    await lsp.wait_for(lambda: len(editor.requests) == 2, "the second request")
    await lsp.wait_for(lambda: any("did not let coherence" in m for m in warnings(lsp)), "the refusal")
    await lsp.wait_idle()
    (message,) = [m for m in warnings(lsp) if "did not let coherence" in m]
    assert "the user declined" in message and "Manage Language Model Access" in message
    # the last good result stays shown
    assert [x.code for x in lsp.coherence_diagnostics(uri)] == ["incoherent"]


async def test_a_client_that_cannot_lend_its_models_gets_a_clear_message(start):
    lsp = await start({"model": "editor"})  # no sampleRequest: Neovim, Emacs, an older extension
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: any("cannot lend them" in m for m in warnings(lsp)), "the message")
    await lsp.wait_idle()
    (message,) = [m for m in warnings(lsp) if "cannot lend them" in m]
    assert "coherence.model = 'editor'" in message and "coherence.replay" in message
    assert not lsp.coherence_diagnostics(uri)
    lenses = await lsp.code_lens(uri)
    assert lenses and all(lens.command.title.startswith("coherence: error — ") for lens in lenses)


async def test_no_such_model_is_one_message_naming_the_family(start):
    lsp = await start({"model": "editor/gpt-9"}, options=LENDS)

    async def none(request: Any) -> dict:
        return {"texts": [], "error": {"kind": "no_model", "message": "the editor offers: gpt-4o, claude-sonnet-4"}}

    editor = EditorModels(lsp.client, none)
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: warnings(lsp), "the message")
    await lsp.wait_idle()
    await asyncio.sleep(0.3)
    assert {r.family for r in editor.requests} == {"gpt-9"}
    (message,) = warnings(lsp)  # one message, however many functions asked
    assert "no chat model of the family 'gpt-9'" in message and "gpt-4o, claude-sonnet-4" in message
    assert not lsp.coherence_diagnostics(uri)


async def test_a_request_the_editor_cancels_is_a_cancelled_check(start):
    lsp = await start({"model": "editor"}, options=LENDS)

    async def cancelled(request: Any) -> dict:
        return {"texts": [], "error": {"kind": "cancelled", "message": "Canceled"}}

    editor = EditorModels(lsp.client, cancelled)
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: len(editor.requests) >= 2, "the requests")
    await lsp.wait_idle()
    await asyncio.sleep(0.3)
    assert not warnings(lsp) and not lsp.coherence_diagnostics(uri)  # nothing to fix: no message
    lenses = await lsp.code_lens(uri)
    assert not any("error" in (lens.command.title if lens.command else "") for lens in lenses)


async def test_an_editor_that_does_not_answer_in_time_has_its_request_cancelled(start, workspace: Path):
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "llm-timeout = 0.5\n")  # any deadline: the editor never answers
    lsp = await start({"model": "editor"}, options=LENDS)

    async def never(request: Any) -> dict:
        await asyncio.sleep(3600)
        return {}

    editor = EditorModels(lsp.client, never)
    lsp.open("textutils.py")
    await lsp.wait_for(
        lambda: any("did not answer within llm_timeout = 0.5 s" in m for m in warnings(lsp)), "the deadline"
    )
    await lsp.wait_for(lambda: len(editor.cancelled) == len(editor.requests) >= 1, "$/cancelRequest in the client")
    assert not [m for m in warnings(lsp) if "internal error" in m]


def recorded_answers(path: Path, model: str):
    """Replies from a recorded-samples file (the corpus schema) for the function the prompt asks for."""
    rows = {r["entry_point"]: r["candidates"] for r in map(json.loads, path.read_text().splitlines()) if r}

    async def answer(request: Any) -> dict:
        name = next(n for n in rows if f"function `{n}`" in prompt_of(request))
        return {"texts": [f"```python\n{c}\n```" for c in rows[name][: request.n]], "model": model}

    return answer


async def test_the_first_run_says_no_model_and_the_editors_model_then_checks(start, workspace: Path):
    from .test_failed_checks import record_problems
    from .test_settings import change_configuration

    # a project with no replay file and no model: the first run
    (workspace / "pyproject.toml").write_text("[tool.coherence]\ninputs = 200\ninput-budget = 60\n")
    lsp = await start(options={**LENDS, "problemActions": True})
    problems = record_problems(lsp)
    editor = EditorModels(lsp.client, recorded_answers(EXAMPLES / "recorded_samples.jsonl", "test/recorded"))
    uri = lsp.open("textutils.py")
    await lsp.wait_for(lambda: problems, "the no-model problem")
    # "model": the VS Code client offers "Use the editor's model" beside Open Settings
    assert [p.get("needs") for p in problems] == ["model"] and "no model configured" in problems[0]["message"]
    assert not editor.requests

    # what the offer writes; a cost cap below any priced check does not hold back the editor's quota
    change_configuration(lsp, {**TEST_SETTINGS, "model": "editor", "maxCostUsd": 0.000001})
    d = (await lsp.wait_for(lambda: lsp.coherence_diagnostics(uri, "incoherent"), "an incoherent diagnostic"))[0]
    await lsp.wait_idle()
    assert d.data["model"] == "editor:test/recorded" and len(editor.requests) == 2  # one per function
    assert not [m for m in lsp.client.messages if "cap" in m.message]
