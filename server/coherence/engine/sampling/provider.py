"""Providers of alternative implementations: the ``Provider`` protocol and the litellm one.

``LiteLLMProvider`` asks any model litellm knows (OpenAI, Anthropic, Gemini, Ollama, any
OpenAI-compatible server via ``openai/<name>`` + ``api_base``) for ``count`` independent replies
to the same prompt.  It uses the ``n`` parameter when litellm says the provider supports it and
makes up any shortfall with single calls (many OpenAI-compatible servers ignore ``n``), runs
requests concurrently under a semaphore, retries transient failures with bounded exponential
backoff (honouring ``Retry-After``), and fails fast with a ``SamplingError`` on errors the user
must fix (bad key, unknown model, bad request).

litellm is imported lazily (it takes seconds) and kept quiet: nothing is ever printed to stdout,
which the language server uses for its protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import logging
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from coherence.engine.errors import SamplingError
from coherence.engine.sampling.prompt import Sample, build_messages, extract_program
from coherence.engine.spec import Spec

log = logging.getLogger(__name__)


@dataclass
class ProviderReply:
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # one entry per sample not obtained
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class Provider(Protocol):
    # read-only: the replay provider's are properties
    @property
    def model(self) -> str: ...
    @property
    def temperature(self) -> float: ...

    cacheable: bool

    async def generate(self, spec: Spec, count: int) -> ProviderReply: ...


# ---------------------------------------------------------------------------------------------
# litellm, lazily and quietly
# ---------------------------------------------------------------------------------------------

_LITELLM: Any = None
_QUIET_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai")


def import_litellm() -> Any:
    """Import litellm once, offline-friendly and silent on stdout."""
    global _LITELLM
    if _LITELLM is not None:
        return _LITELLM
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    # Not "DEV": litellm would then load a .env found from its own install folder upwards (a venv
    # inside a cloned repository finds the repository's), and an OPENAI_BASE_URL there would send
    # the user's key to the repository's server.  Keys come from the user's environment.
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    # No redirect_stdout here: swapping sys.stdout process-wide for seconds could divert the
    # language server's own protocol output.  litellm prints nothing on import (tested).
    import litellm

    litellm.suppress_debug_info = True
    for attr, value in (("set_verbose", False), ("telemetry", False), ("drop_params", True)):
        with contextlib.suppress(Exception):
            setattr(litellm, attr, value)
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    _LITELLM = litellm
    return litellm


# ---------------------------------------------------------------------------------------------
# Retries
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries of transient failures: at most ``max_attempts`` tries per request,
    exponential backoff ``base_delay * 2**k`` capped at ``max_delay`` with up to ``jitter``
    (a fraction) added, a ``Retry-After`` header used instead when present, and at most
    ``max_total_wait`` seconds of sleeping per request.  A ``Retry-After`` longer than what is
    left of that budget gives up at once (a quota will not come back in time)."""

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 20.0
    max_total_wait: float = 45.0
    jitter: float = 0.25

    def backoff(self, attempt: int) -> float:
        d = min(self.max_delay, self.base_delay * (2 ** max(0, attempt - 1)))
        return d * (1.0 + self.jitter * random.random())


NO_RETRY = RetryPolicy(max_attempts=1)


def _retry_after(err: BaseException) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), if any."""
    sources = [
        getattr(err, "litellm_response_headers", None),
        getattr(getattr(err, "response", None), "headers", None),
        getattr(err, "headers", None),
    ]
    for headers in sources:
        if not headers:
            continue
        try:
            get = headers.get
        except AttributeError:
            continue
        ms = get("retry-after-ms") or get("Retry-After-Ms")
        if ms:
            with contextlib.suppress(ValueError, TypeError):
                return max(0.0, float(ms) / 1000.0)
        ra = get("retry-after") or get("Retry-After")
        if ra:
            try:
                return max(0.0, float(ra))
            except (TypeError, ValueError):
                with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
                    when = email.utils.parsedate_to_datetime(str(ra))
                    return max(0.0, when.timestamp() - time.time())
    return None


@dataclass
class _Failure:
    label: str  # short, for SampleSet.failures: "rate limited (429)", "timeout", ...
    kind: str  # SamplingError kind
    retryable: bool
    fatal: bool = False  # the user must act; stop asking
    message: str = ""  # user-facing sentence for fatal failures
    bad_request: bool = False


def _short(err: BaseException, limit: int = 300) -> str:
    msg = str(getattr(err, "message", "") or err).strip()
    for prefix in ("litellm.", "OpenAIException - ", "OpenAIException -"):
        msg = msg.replace(prefix, "")
    msg = " ".join(msg.split())
    # "AuthenticationError: AuthenticationError: Incorrect API key" -> "Incorrect API key"
    msg = re.sub(r"^(?:[A-Z]\w*(?:Error|Exception)\s*[:-]\s*)+", "", msg) or msg
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


# What json.JSONDecodeError (and friends) say about a body cut short or not JSON at all: the
# OpenAI client wraps it in a 500, but it is a broken reply, not a server error.
_BAD_JSON = re.compile(
    r"expecting (?:value|property name|',' delimiter|':' delimiter)|unterminated string|"
    r"extra data|invalid control character|invalid \\?escape|json",
    re.IGNORECASE,
)


# How litellm and the provider SDKs say no key was given.  They raise it before any request, but
# under whatever class the SDK picked (openai's "Missing credentials" arrives as a 500, Gemini's as
# a connection error), so only the words tell it apart from a real outage worth retrying.
_MISSING_KEY = re.compile(
    r"missing (?:\w+ )?(?:credentials|api[ _-]?key)|api_key client option must be set|"
    r"no api[ _-]?key (?:was )?(?:provided|set|found)",
    re.IGNORECASE,
)


def _missing_key(model: str, text: str) -> _Failure:
    """Name the environment variable(s) litellm looks for, so the user knows what to set."""
    names: list[str] = []
    with contextlib.suppress(Exception):  # an unknown provider: fall back on litellm's words
        names = list(import_litellm().validate_environment(model=model).get("missing_keys") or [])
    if names:
        what = " or ".join(names)
        message = f"No API key for {model}: set {what} in the environment."
        if model.startswith("openai/"):
            message += f" A local OpenAI-compatible server that needs no key accepts any value (e.g. {names[0]}=none)."
    else:
        message = f"No API key for {model} ({text})."
    return _Failure("authentication failed (no API key)", "auth", False, fatal=True, message=message)


def classify(err: BaseException, model: str) -> _Failure:
    """Map an exception from litellm (or asyncio) to a failure label and policy."""
    if isinstance(err, asyncio.TimeoutError):
        return _Failure("timeout", "timeout", True)
    litellm = import_litellm()
    status = getattr(err, "status_code", None)
    text = _short(err)
    if _MISSING_KEY.search(text):
        return _missing_key(model, text)
    if isinstance(err, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (
        401,
        403,
    ):
        return _Failure(
            f"authentication failed ({status or 401})",
            "auth",
            False,
            fatal=True,
            message=(
                f"The provider of {model} rejected the credentials ({text}). Set the provider's "
                "API key (e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) or pass an "
                "api_key."
            ),
        )
    if isinstance(err, litellm.RateLimitError) or status == 429:
        return _Failure("rate limited (429)", "rate_limit", True)
    if isinstance(err, litellm.Timeout):
        return _Failure("timeout", "timeout", True)
    if isinstance(err, litellm.NotFoundError) or status == 404:
        return _Failure(
            "model not found (404)",
            "config",
            False,
            fatal=True,
            message=(
                f"Model {model} was not found ({text}). Check the model name (litellm form "
                "'provider/model', e.g. openai/gpt-4o-mini) and the api_base."
            ),
        )
    if isinstance(err, getattr(litellm, "ContextWindowExceededError", ())):
        return _Failure(
            "prompt too long",
            "provider",
            False,
            fatal=True,
            message=f"The prompt is too long for {model}'s context window ({text}).",
        )
    if isinstance(err, (litellm.BadRequestError, litellm.UnprocessableEntityError)) or status in (
        400,
        422,
    ):
        return _Failure(
            f"bad request ({status or 400})",
            "config",
            False,
            fatal=True,
            message=f"{model} refused the request ({text}). Check the model name and settings.",
            bad_request=True,
        )
    if "connection error" in text.lower() or (
        isinstance(err, litellm.APIConnectionError) and not isinstance(err, litellm.Timeout)
    ):
        return _Failure("connection error", "connection", True)
    if isinstance(err, (ValueError,)) and _BAD_JSON.search(text):
        return _Failure("invalid response", "provider", True)
    if isinstance(
        err,
        (
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            getattr(litellm, "BadGatewayError", litellm.InternalServerError),
        ),
    ) or (isinstance(status, int) and status >= 500):
        code = status if isinstance(status, int) else 500
        if _BAD_JSON.search(text):
            return _Failure("invalid response", "provider", True)
        return _Failure(f"server error ({code})", "provider", True)
    if isinstance(err, litellm.APIError):
        return _Failure(f"provider error ({status or '?'})", "provider", True)
    return _Failure(f"{type(err).__name__}: {text[:120]}", "provider", False)


# ---------------------------------------------------------------------------------------------
# The litellm provider
# ---------------------------------------------------------------------------------------------


@dataclass
class _Result:
    texts: list[str] = field(default_factory=list)
    failure: _Failure | None = None
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _chunks(total: int, size: int) -> list[int]:
    size = max(1, size)
    out = [size] * (total // size)
    if total % size:
        out.append(total % size)
    return out


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
        max_concurrency: int = 4,
        retry: RetryPolicy | None = None,
        use_n: bool | None = None,
        max_n: int = 10,
        completion_kwargs: dict[str, Any] | None = None,
        semaphores: dict | None = None,
    ) -> None:
        if not model or not model.strip():
            from coherence.engine.errors import ConfigurationError

            raise ConfigurationError("No model name given.")
        self.model = model.strip()
        self.api_base = api_base
        self.api_key = api_key
        self.temperature = float(temperature)
        self.timeout = float(timeout)
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

    def _kwargs(self, messages: list[dict], n: int) -> dict[str, Any]:
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

    async def _request(self, messages: list[dict], n: int, abort: asyncio.Event) -> _Result:
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
                return _Result(failure=_Failure("not attempted", "provider", False))
            err: BaseException | None = None
            try:
                async with sem:
                    if abort.is_set():  # a fatal error arrived while this one waited its turn
                        return _Result(
                            failure=_Failure("not attempted", "provider", False),
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
                failure = _Failure("empty response", "provider", True)
                log.debug("request to %s: empty response (attempt %d)", self.model, attempt)
            if failure.fatal or not failure.retryable or attempt >= self.retry.max_attempts:
                return _Result(failure=failure, cost_usd=cost, prompt_tokens=pt, completion_tokens=ct)
            budget = self.retry.max_total_wait - waited
            hinted = _retry_after(err) if err is not None else None
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
        reply = ProviderReply()
        if count <= 0:
            return reply
        messages = build_messages(spec)
        if _LITELLM is None:  # a 2-3 s import must not block the (language server's) loop
            await asyncio.to_thread(import_litellm)
        abort = asyncio.Event()
        use_n = self.supports_n()
        need = count
        fatal: _Failure | None = None
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

    async def _run_one(self, messages: list[dict], n: int, abort: asyncio.Event) -> _Result:
        res = await self._request(messages, n, abort)
        f = res.failure
        if f is not None and f.fatal and not (f.bad_request and n > 1):
            abort.set()  # the user must act: stop retrying the other requests
        return res
