"""What went wrong with an LLM request and what to do about it: ``classify`` names a failure
(the user's to fix, or transient and worth a retry) from the exception and its words, and
``RetryPolicy`` bounds the retries (backoff, ``Retry-After``, a total wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import re
import time
from dataclasses import dataclass

from coherence.engine.sampling.quiet_litellm import import_litellm


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
        d: float = min(self.max_delay, self.base_delay * (2 ** max(0, attempt - 1)))
        return d * (1.0 + self.jitter * random.random())


NO_RETRY = RetryPolicy(max_attempts=1)


def retry_after(err: BaseException) -> float | None:
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


@dataclass(frozen=True)
class Failure:
    label: str  # short, for SampleSet.failures: "rate limited (429)", "timeout", ...
    kind: str  # SamplingError kind
    retryable: bool
    fatal: bool = False  # the user must act; stop asking
    message: str = ""  # user-facing sentence for fatal failures
    bad_request: bool = False


# Failures every provider names alike (litellm's path, the editor's models): one label each.
RATE_LIMITED = Failure("rate limited (429)", "rate_limit", True)
TIMED_OUT = Failure("timeout", "timeout", True)


def _short(err: BaseException, limit: int = 300) -> str:
    msg = str(getattr(err, "message", "") or err).strip()
    # the module of litellm's exception classes ("litellm.BadRequestError: ..."), not every
    # "litellm." in the text: its messages link https://docs.litellm.ai/...
    msg = re.sub(r"\blitellm\.(?=[A-Z]\w*(?:Error|Exception)\b)", "", msg)
    for prefix in ("OpenAIException - ", "OpenAIException -"):
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


# litellm raises it (as a BadRequestError) before any request when a model name has no provider
# it knows ("gpt4o", "my-model"): the name, not the request, is what the user must change.
_NO_PROVIDER = re.compile(r"LLM Provider NOT provided", re.IGNORECASE)


def _missing_key(model: str, text: str) -> Failure:
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
    return Failure("authentication failed (no API key)", "auth", False, fatal=True, message=message)


# litellm's advice to "pass an api_key", which coherence has no option for
_PASS_KEY = re.compile(r"[,.;]?\s*(?:you can )?(?:or )?pass (?:an |the )?api_key\b[^.]*\.?", re.IGNORECASE)


def _rejected(model: str, text: str) -> str:
    from coherence.engine.sampling.keys import key_variables

    names = key_variables(model)
    which = " or ".join(names) if names else "the provider's API key variable (e.g. OPENAI_API_KEY)"
    text = _PASS_KEY.sub("", text).strip()
    return f"The provider of {model} rejected the credentials ({text}). Check the key in {which}."


def classify(err: BaseException, model: str) -> Failure:
    """Map an exception from litellm (or asyncio) to a failure label and policy."""
    if isinstance(err, asyncio.TimeoutError):
        return TIMED_OUT
    litellm = import_litellm()
    status = getattr(err, "status_code", None)
    text = _short(err)
    if _MISSING_KEY.search(text):
        return _missing_key(model, text)
    if isinstance(err, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or status in (
        401,
        403,
    ):
        return Failure(
            f"authentication failed ({status or 401})",
            "auth",
            False,
            fatal=True,
            message=_rejected(model, text),
        )
    if isinstance(err, litellm.RateLimitError) or status == 429:
        return RATE_LIMITED
    if isinstance(err, litellm.Timeout):
        return TIMED_OUT
    if isinstance(err, litellm.NotFoundError) or status == 404:
        return Failure(
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
        return Failure(
            "prompt too long",
            "provider",
            False,
            fatal=True,
            message=f"The prompt is too long for {model}'s context window ({text}).",
        )
    if _NO_PROVIDER.search(text):
        return Failure(
            "no provider",
            "config",
            False,
            fatal=True,
            message=(
                f"litellm cannot tell which provider serves the model {model!r}: name it in litellm's "
                "form 'provider/model' (e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-20250514; "
                "a local OpenAI-compatible server: openai/<its model name> with api_base). "
                "The providers: https://docs.litellm.ai/docs/providers"
            ),
        )
    if isinstance(err, (litellm.BadRequestError, litellm.UnprocessableEntityError)) or status in (
        400,
        422,
    ):
        return Failure(
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
        return Failure("connection error", "connection", True)
    if isinstance(err, (ValueError,)) and _BAD_JSON.search(text):
        return Failure("invalid response", "provider", True)
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
            return Failure("invalid response", "provider", True)
        return Failure(f"server error ({code})", "provider", True)
    if isinstance(err, litellm.APIError):
        return Failure(f"provider error ({status or '?'})", "provider", True)
    return Failure(f"{type(err).__name__}: {text[:120]}", "provider", False)
