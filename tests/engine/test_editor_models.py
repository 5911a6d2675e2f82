"""The editor's chat models as a provider (``model = "editor"``): what is sent, how replies are
read, and how the editor's errors map onto litellm's failure kinds.  The transport stands for the
editor's ``vscode.lm``; it answers from the recorded corpus (../shared/corpus, skipped when
absent) or with the errors a client reports."""

from __future__ import annotations

import asyncio
import gzip
import json
import textwrap
from typing import Any

import pytest

from coherence.engine.errors import CheckCancelled, ConfigurationError, SamplingError
from coherence.engine.sampling import SampleCache, build_messages, make_provider, sample_alternatives
from coherence.engine.sampling.cost import estimate_provider
from coherence.engine.sampling.editor import EditorProvider, family_of, is_editor_model
from coherence.engine.spec import Spec
from tests.support import CORPUS_DIR

HUMANEVAL_GPT4O = CORPUS_DIR / "humaneval-gpt_4o.jsonl.gz"
needs_corpus = pytest.mark.skipif(not HUMANEVAL_GPT4O.exists(), reason="../shared/corpus absent")

SPEC = Spec("double", "(x: int) -> int", (), "int", "Return twice x.")
GOOD = "```python\ndef double(x: int) -> int:\n    return 2 * x\n```"


def answering(*answers: Any):
    """A transport answering each request with the next of ``answers``; it records the requests."""
    requests: list[dict[str, Any]] = []
    queue = list(answers)

    async def transport(request: dict[str, Any]) -> Any:
        requests.append(request)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return transport, requests


def test_editor_model_names():
    assert is_editor_model("editor") and is_editor_model(" editor/gpt-4o ")
    assert not is_editor_model("editor/") and not is_editor_model("openai/editor") and not is_editor_model(None)
    assert family_of("editor/gpt-4o") == "gpt-4o" and family_of("editor") is None


async def test_the_request_is_litellms_prompt_and_temperature():
    transport, requests = answering({"texts": [GOOD, GOOD], "model": "test/fake-1"})
    provider = EditorProvider("editor/fake", transport, temperature=0.8)
    reply = await provider.generate(SPEC, 2)
    (request,) = requests
    assert request == {
        "messages": build_messages(SPEC),
        "n": 2,
        "temperature": 0.8,
        "family": "fake",
        "function": "double",
    }
    assert [s.ok for s in reply.samples] == [True, True] and not reply.failures
    # the result names the model that answered; the cache key stays the configured name
    assert reply.model == "editor:test/fake-1" and {s.model for s in reply.samples} == {"editor:test/fake-1"}
    assert provider.model == "editor/fake" and reply.cost_usd == 0


async def test_replies_without_code_are_samples_that_failed_to_parse():
    transport, _ = answering({"texts": [GOOD, "Sorry, I can't help with that."], "model": "test/fake-1"})
    reply = await EditorProvider("editor", transport).generate(SPEC, 2)
    assert [s.status for s in reply.samples] == ["ok", "no_code"]


@pytest.mark.parametrize(
    ("kind", "error_kind", "words"),
    [
        ("no_permission", "auth", "did not let coherence use its chat model"),
        ("no_model", "config", "has no chat model of the family 'gpt-9'"),
        ("unsupported", "config", "no Language Model API"),
    ],
)
async def test_what_the_user_must_fix_stops_the_check_with_a_message(kind, error_kind, words):
    transport, _ = answering({"texts": [], "error": {"kind": kind, "message": "said the editor"}})
    with pytest.raises(SamplingError) as err:
        await EditorProvider("editor/gpt-9", transport).generate(SPEC, 3)
    assert err.value.kind == error_kind and words in str(err.value) and "said the editor" in str(err.value)


async def test_a_rate_limit_is_litellms_rate_limit():
    transport, _ = answering({"texts": [], "error": {"kind": "rate_limit", "message": "quota exceeded"}})
    with pytest.raises(SamplingError) as err:
        await sample_alternatives(SPEC, 4, EditorProvider("editor", transport))
    assert err.value.kind == "rate_limit"
    assert "4× rate limited (429)" in str(err.value) and "from editor" in str(err.value)


async def test_a_partial_answer_keeps_what_came_and_names_the_rest():
    transport, _ = answering({"texts": [GOOD], "model": "m", "error": {"kind": "rate_limit", "message": "quota"}})
    result = await sample_alternatives(SPEC, 3, EditorProvider("editor", transport))
    assert len(result.valid) == 1 and result.failures == ["rate limited (429)"] * 2 and result.model == "editor:m"


async def test_a_cancelled_request_cancels_the_check():
    transport, _ = answering({"texts": [], "error": {"kind": "cancelled", "message": "the user cancelled"}})
    with pytest.raises(CheckCancelled):
        await EditorProvider("editor", transport).generate(SPEC, 2)


async def test_an_error_reply_to_the_request_is_a_provider_failure():
    transport, _ = answering(RuntimeError("the client's handler threw"))
    with pytest.raises(SamplingError) as err:
        await sample_alternatives(SPEC, 2, EditorProvider("editor", transport))
    assert "the client's handler threw" in str(err.value) and err.value.kind == "provider"


async def test_an_editor_that_never_answers_meets_the_deadline_and_the_request_is_cancelled():
    cancelled = asyncio.Event()

    async def transport(request: dict[str, Any]) -> Any:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(SamplingError) as err:
        await EditorProvider("editor", transport, deadline=0.2).generate(SPEC, 2)
    assert err.value.kind == "deadline" and "llm_timeout = 0.2 s" in str(err.value)
    assert cancelled.is_set()


def test_outside_an_editor_the_editor_model_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match="only the VS Code extension can reach"):
        make_provider(model="editor")
    from coherence.engine.config import PanelMember

    with pytest.raises(ConfigurationError, match="cannot be a member of a panel"):
        make_provider(model=None, models=[PanelMember("editor", 1.0, None)], editor=answering({})[0])
    provider = make_provider(model="editor/gpt-4o", editor=answering({})[0], temperature=0.3, timeout=7)
    assert isinstance(provider, EditorProvider) and provider.temperature == 0.3 and provider.deadline == 7


def test_the_editors_samples_are_not_priced(tmp_path):
    from coherence.engine.markers import target_for

    target = target_for("def double(x: int) -> int:\n    'Return twice x.'\n    return x + x\n", "double", "d.py")
    est = estimate_provider(
        EditorProvider("editor", answering({})[0]), [target], samples=5, temperature=0.6, cache=SampleCache(tmp_path)
    )
    assert est.usd == 0.0 and est.requested == 4 and "editor" in est.note


def _humaneval(name: str) -> tuple[Spec, list[str]]:
    with gzip.open(HUMANEVAL_GPT4O, "rt") as fh:
        row = next(r for r in map(json.loads, fh) if r["entry_point"] == name)
    doc = textwrap.dedent(row["description"]).strip().strip('"').strip()
    return Spec(name, row["signature"], (), None, doc, context="from typing import List"), row["candidates"]


@pytest.mark.corpus
@needs_corpus
async def test_samples_from_the_corpus_through_the_editor_are_cached(tmp_path):
    spec, candidates = _humaneval("has_close_elements")
    transport, requests = answering({"texts": candidates[1:10], "model": "corpus/gpt_4o"})
    cache = SampleCache(tmp_path)
    provider = EditorProvider("editor", transport)
    first = await sample_alternatives(spec, 9, provider, cache)
    assert len(first.valid) == 9 and first.model == "editor:corpus/gpt_4o"
    again = await sample_alternatives(spec, 9, provider, cache)
    assert again.from_cache == 9 and len(requests) == 1
    assert [s.code for s in again.valid] == [s.code for s in first.valid]
