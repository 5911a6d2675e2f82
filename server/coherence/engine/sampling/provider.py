"""Providers of alternative implementations: the ``Provider`` protocol and the litellm one.

``LiteLLMProvider`` asks any model litellm knows (OpenAI, Anthropic, Gemini, Ollama, any
OpenAI-compatible server via ``openai/<name>`` + ``api_base``) for ``count`` independent replies
to the same prompt.  It uses the ``n`` parameter when litellm says the provider supports it and
makes up any shortfall with single calls (many OpenAI-compatible servers ignore ``n``), runs
requests concurrently under a semaphore, retries transient failures with bounded exponential
backoff (honouring ``Retry-After``), and fails fast with a ``SamplingError`` on errors the user
must fix (bad key, unknown model, bad request).

litellm is imported lazily (it takes seconds) and kept quiet: nothing is ever printed to stdout,
which the language server uses for its protocol (``quiet_litellm.py``).  What a failure is and
how often to retry it: ``failures.py``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from coherence.engine.errors import SamplingError
from coherence.engine.sampling.failures import Failure, RetryPolicy, classify, retry_after
from coherence.engine.sampling.prompt import Sample, build_messages, extract_program
from coherence.engine.sampling.quiet_litellm import import_litellm, litellm_loaded
from coherence.engine.spec import Spec

log = logging.getLogger(__name__)


@dataclass
class ProviderReply:
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # one entry per sample not obtained
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""  # the model that answered, when only the reply says (the editor's choice)


@runtime_checkable
class Provider(Protocol):
    # read-only: the replay provider's are properties
    @property
    def model(self) -> str: ...
    @property
    def temperature(self) -> float: ...

    cacheable: bool

    async def generate(self, spec: Spec, count: int) -> ProviderReply: ...


@dataclass
class _Result:
    texts: list[str] = field(default_factory=list)
    failure: Failure | None = None
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _chunks(total: int, size: int) -> list[int]:
    size = max(1, size)
    out = [size] * (total // size)
    if total % size:
        out.append(total % size)
    return out


def deadline_message(model: str, api_base: str | None, seconds: float) -> str:
    """What to say when the LLM did not answer within the deadline, with the option that sets it."""
    where = f" at {api_base}" if api_base else ""
    return (
        f"{model}{where} did not answer within llm_timeout = {seconds:g} s (requests and retries); "
        "it is not asked again in this run. Check that the server is up, or give it longer with "
        "--llm-timeout SECONDS (llm_timeout in the config)."
    )


class LiteLLMProvider:
    """Alternatives from a model through litellm (see the module docstring).

    ``use_n``: None asks litellm whether the provider supports ``n``; True/False forces it.
    ``completion_kwargs`` are passed to ``litellm.acompletion`` as-is (e.g. ``mock_response``
    in unit tests, ``max_tokens``, provider-specific options).
    """

    cacheable = True

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.6,
        timeout: float = 60.0,
        deadline: float | None = None,
        max_concurrency: int = 4,
        retry: RetryPolicy | None = None,
        use_n: bool | None = None,
        max_n: int = 10,
        completion_kwargs: dict[str, Any] | None = None,
        semaphores: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] | None = None,
    ) -> None:
        if not model or not model.strip():
            from coherence.engine.errors import ConfigurationError

            raise ConfigurationError("No model name given.")
        self.model = model.strip()
        self.api_base = api_base
        self.api_key = api_key
        self.temperature = float(temperature)
        self.timeout = float(timeout)  # one request
        self.deadline = deadline  # one generate(): every request and retry (llm_timeout)
        self.max_concurrency = max(1, int(max_concurrency))
        self.retry = retry or RetryPolicy()
        self.use_n = use_n
        self.max_n = max(1, int(max_n))
        self.completion_kwargs = dict(completion_kwargs or {})
        # per event loop; a panel hands the members of one provider the same dict, so that
        # max_concurrency limits the provider (one API key's rate limit), not each model
        self._sems: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = (
            semaphores if semaphores is not None else {}
        )
        self._supports_n_cache: bool | None = None
        self.waits: list[float] = []  # every backoff slept, in seconds (for tests and benchmarks)

    def __repr__(self) -> str:
        base = f", api_base={self.api_base!r}" if self.api_base else ""
        return f"LiteLLMProvider({self.model!r}{base}, temperature={self.temperature})"

    # -- helpers -------------------------------------------------------------------------------
    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        entry = self._sems.get(id(loop))
        if entry is None or entry[0] is not loop:
            # forget semaphores of closed loops (tests, restarted servers)
            for k in [k for k, v in self._sems.items() if v[0].is_closed()]:
                del self._sems[k]
            entry = (loop, asyncio.Semaphore(self.max_concurrency))
            self._sems[id(loop)] = entry
        return entry[1]

    def supports_n(self) -> bool:
        if self.use_n is not None:
            return self.use_n
        if self._supports_n_cache is None:
            litellm = import_litellm()
            try:
                params = litellm.get_supported_openai_params(model=self.model) or []
                self._supports_n_cache = "n" in params
            except Exception:  # noqa: BLE001 - litellm raises anything for an unknown provider: be conservative
                self._supports_n_cache = False
        return self._supports_n_cache

    def _kwargs(self, messages: list[dict[str, Any]], n: int) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "timeout": self.timeout,
            "num_retries": 0,  # retries are ours
            "max_retries": 0,
            "drop_params": True,
        }
        if n > 1:
            kw["n"] = n
        if self.api_base:
            kw["api_base"] = self.api_base
        if self.api_key:
            kw["api_key"] = self.api_key
        kw.update(self.completion_kwargs)
        return kw

    @staticmethod
    def _accounting(litellm: Any, resp: Any) -> tuple[float, int, int]:
        cost = 0.0
        try:
            cost = float(litellm.completion_cost(completion_response=resp) or 0.0)
        except Exception:  # noqa: BLE001 - unmapped or local models have no price, and litellm says so in many ways
            cost = 0.0
        usage = getattr(resp, "usage", None)
        pt = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
        ct = int(getattr(usage, "completion_tokens", 0) or 0) if usage is not None else 0
        return cost, pt, ct

    async def _request(self, messages: list[dict[str, Any]], n: int, abort: asyncio.Event) -> _Result:
        """One request for ``n`` choices, with retries.  Never raises (except cancellation)."""
        litellm = import_litellm()
        sem = self._semaphore()
        waited = 0.0
        attempt = 0
        cost = 0.0
        pt = ct = 0
        while True:
            attempt += 1
            if abort.is_set():
                return _Result(failure=Failure("not attempted", "provider", False))
            err: BaseException | None = None
            try:
                async with sem:
                    if abort.is_set():  # a fatal error arrived while this one waited its turn
                        return _Result(
                            failure=Failure("not attempted", "provider", False),
                            cost_usd=cost,
                            prompt_tokens=pt,
                            completion_tokens=ct,
                        )
                    resp = await asyncio.wait_for(
                        litellm.acompletion(**self._kwargs(messages, n)),
                        timeout=self.timeout + 10.0,
                    )
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - classified below
                err = e
                failure = classify(e, self.model)
                log.debug("request to %s failed (attempt %d): %r", self.model, attempt, e)
            else:
                c, p, k = self._accounting(litellm, resp)
                cost, pt, ct = cost + c, pt + p, ct + k
                texts: list[str] = []
                for choice in getattr(resp, "choices", None) or []:
                    msg = getattr(choice, "message", None)
                    content = getattr(msg, "content", None) if msg is not None else None
                    if isinstance(content, list):  # content parts
                        content = "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
                    texts.append(content or "")
                if texts:
                    return _Result(texts=texts, cost_usd=cost, prompt_tokens=pt, completion_tokens=ct)
                # A 200 without choices: a provider hiccup, retried like a 5xx.
                failure = Failure("empty response", "provider", True)
                log.debug("request to %s: empty response (attempt %d)", self.model, attempt)
            if failure.fatal or not failure.retryable or attempt >= self.retry.max_attempts:
                return _Result(failure=failure, cost_usd=cost, prompt_tokens=pt, completion_tokens=ct)
            budget = self.retry.max_total_wait - waited
            hinted = retry_after(err) if err is not None else None
            if hinted is not None:
                if hinted > budget:
                    return _Result(failure=failure, cost_usd=cost, prompt_tokens=pt, completion_tokens=ct)
                delay = hinted + random.random() * self.retry.jitter * min(1.0, hinted + 0.01)
            else:
                delay = self.retry.backoff(attempt)
            delay = min(delay, max(0.0, budget))
            if delay <= 0 and budget <= 0:
                return _Result(failure=failure, cost_usd=cost, prompt_tokens=pt, completion_tokens=ct)
            waited += delay
            self.waits.append(delay)
            await asyncio.sleep(delay)

    # -- the Provider API --------------------------------------------------------------------------
    async def generate(self, spec: Spec, count: int) -> ProviderReply:
        """``count`` replies, every request and retry within ``deadline`` seconds when it is set
        (the LLM deadline, ``llm_timeout``): past it, a ``SamplingError`` of kind "deadline"."""
        if count <= 0:
            return ProviderReply()
        # A slow import (docs/results.md#import-costs) must not block the language server's loop,
        # nor count against the deadline.
        if not litellm_loaded():
            await asyncio.to_thread(import_litellm, self.model)
        if self.deadline is None:
            return await self._generate(spec, count)
        try:
            return await asyncio.wait_for(self._generate(spec, count), timeout=self.deadline)
        except asyncio.TimeoutError:
            raise SamplingError(deadline_message(self.model, self.api_base, self.deadline), kind="deadline") from None

    async def _generate(self, spec: Spec, count: int) -> ProviderReply:
        reply = ProviderReply()
        if count <= 0:
            return reply
        messages = build_messages(spec)
        abort = asyncio.Event()
        use_n = self.supports_n()
        need = count
        fatal: Failure | None = None
        for _round in range(3):
            if need <= 0 or fatal is not None:
                break
            chunks = _chunks(need, self.max_n) if (use_n and need > 1) else [1] * need
            results = await asyncio.gather(*(self._run_one(messages, k, abort) for k in chunks))
            need = 0
            for k, res in zip(chunks, results):
                reply.cost_usd += res.cost_usd
                reply.prompt_tokens += res.prompt_tokens
                reply.completion_tokens += res.completion_tokens
                f = res.failure
                if f is not None:
                    if f.bad_request and k > 1 and fatal is None:
                        # some OpenAI-compatible servers reject ``n``: ask one at a time
                        use_n = False
                        need += k
                        continue
                    if f.fatal and fatal is None:
                        fatal = f
                    reply.failures.extend([f.label] * k)
                    continue
                got = res.texts[:k]
                reply.samples.extend(extract_program(t, spec.name, spec.owner) for t in got)
                if len(got) < k:  # the server ignored ``n``: make up the rest one by one
                    use_n = False
                    need += k - len(got)
        if need > 0:
            reply.failures.extend(["too few replies"] * need)
        # "not attempted" entries are noise once a real cause is listed
        if fatal is not None:
            reply.failures = [fatal.label if x == "not attempted" else x for x in reply.failures]
            if not reply.samples:
                raise SamplingError(fatal.message or fatal.label, kind=fatal.kind)
        return reply

    async def _run_one(self, messages: list[dict[str, Any]], n: int, abort: asyncio.Event) -> _Result:
        res = await self._request(messages, n, abort)
        f = res.failure
        if f is not None and f.fatal and not (f.bad_request and n > 1):
            abort.set()  # the user must act: stop retrying the other requests
        return res
