"""A loopback OpenAI-compatible chat-completions server for tests.

It serves recorded or scripted candidate replies over real HTTP (stdlib ``http.server`` in a
thread, bound to 127.0.0.1 on a free port), so that code under test goes through litellm's real
request path: use model ``"openai/<anything>"`` with ``api_base=server.url`` and any api_key.

    with LoopbackServer(replies=["```python\\ndef f(x):\\n    return x\\n```"]) as server:
        ...  # litellm.acompletion(model="openai/test", api_base=server.url, api_key="dummy", ...)
        assert server.request_count == 1

What it can do:

* ``replies``: candidate texts handed out one per choice, in order (cycling when ``cycle``);
  a ``Fault`` in the list is served instead of a choice for the request that reaches it.
* ``responder``: a callable ``(request: RecordedRequest) -> str | list[str] | Fault`` that
  overrides ``replies`` (a list is the choices of that one response).
* ``n`` is honoured unless ``ignore_n=True`` (then every response has one choice).
* ``faults``: per-request script consumed in order (``None`` = serve normally), then ``then``
  applies to every later request (``None`` = serve normally).  ``Fault`` covers HTTP errors with
  an optional ``Retry-After``, delays, truncated JSON, empty choices and a raw body.
* ``requests``: every request received (path, headers, JSON body), for assertions.

It also runs stand-alone (for manual tests of the language server, and tests/e2e), printing its
URL; ``GET /loopback/stats`` then says how many chat requests it served::

    python -m tests.support.openai_loopback --corpus ../shared/corpus/humaneval-gpt_4o.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "Fault",
    "LoopbackServer",
    "RecordedRequest",
    "code_reply",
    "corpus_responder",
    "rate_limited",
    "server_error",
    "slow",
    "truncated_json",
]

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
# GET: {"chatRequests": N}, the chat requests served so far (for a test driving it stand-alone)
STATS_PATH = "/loopback/stats"


@dataclass(frozen=True)
class Fault:
    """Something other than a normal completion, for one request.

    ``status``: answer with this HTTP status and an OpenAI-style error body (``message``).
    ``retry_after``: add a ``Retry-After`` header (seconds; floats are sent as given).
    ``delay``: sleep this long before answering (combined with the other fields; a delay alone
    then serves normally).
    ``truncated``: send a 200 whose JSON body is cut in half.
    ``empty``: send a 200 with no choices.
    ``body``: send this raw body with ``status`` (default 200) as-is.
    """

    status: int | None = None
    retry_after: float | None = None
    delay: float = 0.0
    truncated: bool = False
    empty: bool = False
    body: str | None = None
    message: str = ""

    @property
    def serves_normally(self) -> bool:
        return self.status is None and not self.truncated and not self.empty and self.body is None


def rate_limited(retry_after: float | None = None) -> Fault:
    return Fault(status=429, retry_after=retry_after, message="Rate limit reached")


def server_error(status: int = 500) -> Fault:
    return Fault(status=status, message="The server had an error while processing your request")


def slow(seconds: float) -> Fault:
    return Fault(delay=seconds)


def truncated_json() -> Fault:
    return Fault(truncated=True)


def code_reply(code: str, prose: str = "Here is the implementation:") -> str:
    """A typical chat reply: a sentence and one fenced python block."""
    return f"{prose}\n\n```python\n{code.strip()}\n```\n"


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: str
    received_at: float = field(default_factory=time.monotonic)

    @property
    def n(self) -> int:
        try:
            return int((self.body or {}).get("n") or 1)
        except (TypeError, ValueError):
            return 1

    @property
    def model(self) -> str:
        return str((self.body or {}).get("model", ""))

    @property
    def messages(self) -> list[dict]:
        return list((self.body or {}).get("messages") or [])

    @property
    def text(self) -> str:
        """All message contents joined: what the model was shown."""
        parts = []
        for m in self.messages:
            c = m.get("content")
            if isinstance(c, str):
                parts.append(c)
            elif isinstance(c, list):
                parts.extend(str(p.get("text", "")) for p in c if isinstance(p, dict))
        return "\n".join(parts)


Responder = Callable[[RecordedRequest], "str | Sequence[str] | Fault"]


class LoopbackServer:
    """See the module docstring.  Use as a context manager or call ``start()``/``stop()``."""

    def __init__(
        self,
        replies: Iterable[str | Fault] | None = None,
        *,
        responder: Responder | None = None,
        cycle: bool = True,
        ignore_n: bool = False,
        faults: Iterable[Fault | None] | None = None,
        then: Fault | None = None,
        delay: float = 0.0,
        max_n: int | None = None,
    ) -> None:
        self._replies: list[str | Fault] = list(replies or [])
        self._reply_pos = 0
        self.responder = responder
        self.cycle = cycle
        self.ignore_n = ignore_n
        self.max_n = max_n
        self._faults: list[Fault | None] = list(faults or [])
        self.then = then
        self.delay = delay
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self.choices_served = 0
        self.in_flight = 0
        self.max_in_flight = 0  # most chat requests being handled at once
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- configuration while running -------------------------------------------------------
    def add_replies(self, *replies: str | Fault) -> None:
        with self._lock:
            self._replies.extend(replies)

    def set_replies(self, replies: Iterable[str | Fault]) -> None:
        with self._lock:
            self._replies = list(replies)
            self._reply_pos = 0

    def push_faults(self, *faults: Fault | None) -> None:
        """Script the next requests (``None`` = serve normally)."""
        with self._lock:
            self._faults.extend(faults)

    # -- what it saw ---------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/") in CHAT_PATHS]

    @property
    def request_count(self) -> int:
        return len(self.chat_requests)

    def reset_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The ``api_base`` to give litellm / an OpenAI client."""
        return f"{self.base_url}/v1"

    def start(self) -> LoopbackServer:
        if self._httpd is not None:
            return self
        handler = _make_handler(self)
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=f"openai-loopback-{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving -----------------------------------------------------------------------------
    def _record(self, req: RecordedRequest) -> Fault | None:
        with self._lock:
            self._requests.append(req)
            if self._faults:
                return self._faults.pop(0)
            return self.then

    def _next_reply(self) -> str | Fault | None:
        with self._lock:
            if not self._replies:
                return None
            if self._reply_pos >= len(self._replies):
                if not self.cycle:
                    return None
                self._reply_pos = 0
            item = self._replies[self._reply_pos]
            self._reply_pos += 1
            return item

    def _choices_for(self, req: RecordedRequest) -> list[str] | Fault:
        want = 1 if self.ignore_n else max(1, req.n)
        if self.max_n is not None:
            want = min(want, self.max_n)
        if self.responder is not None:
            got = self.responder(req)
            if isinstance(got, Fault):
                return got
            if isinstance(got, str):
                return [got]
            return list(got)[:want] if not self.ignore_n else list(got)[:1]
        out: list[str] = []
        for _ in range(want):
            item = self._next_reply()
            if item is None:
                break
            if isinstance(item, Fault):
                if not out:
                    return item
                break  # serve what we have; the fault is lost (keep scripts simple)
            out.append(item)
        if not out:
            return Fault(status=500, message="loopback: no replies configured or left")
        return out


def _usage(req: RecordedRequest, choices: Sequence[str]) -> dict[str, int]:
    prompt = max(1, len(req.text) // 4)
    completion = sum(max(1, len(c) // 4) for c in choices)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _make_handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    counter = itertools.count(1)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "openai-loopback/1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(
            self, status: int, body: str, headers: dict[str, str] | None = None, content_length: int | None = None
        ) -> None:
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if content_length is None else content_length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True

        def _error(
            self,
            status: int,
            message: str,
            headers: dict[str, str] | None = None,
        ) -> None:
            err_type = {
                400: "invalid_request_error",
                401: "invalid_api_key",
                403: "permission_denied",
                404: "not_found_error",
                429: "rate_limit_exceeded",
            }.get(status, "server_error")
            body = json.dumps(
                {"error": {"message": message or f"HTTP {status}", "type": err_type, "param": None, "code": err_type}}
            )
            self._send(status, body, headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(
                    200,
                    json.dumps(
                        {"object": "list", "data": [{"id": "loopback", "object": "model", "owned_by": "loopback"}]}
                    ),
                )
            elif self.path.rstrip("/") == STATS_PATH:  # what a test in another process asserts on
                self._send(200, json.dumps({"chatRequests": server.request_count}))
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                self._post()
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _post(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = None
            req = RecordedRequest(
                path=self.path.split("?", 1)[0],
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw=raw,
            )
            fault = server._record(req)
            if req.path.rstrip("/") not in CHAT_PATHS:
                self._error(404, f"no route {self.path}")
                return
            if body is None:
                self._error(400, "request body is not JSON")
                return
            if server.delay:
                time.sleep(server.delay)
            if fault is not None and fault.serves_normally:
                time.sleep(fault.delay)
                fault = None
            choices = None
            if fault is None:
                got = server._choices_for(req)
                if isinstance(got, Fault):
                    fault = got
                else:
                    choices = got
            if fault is not None:
                self._serve_fault(fault, req)
                return
            assert choices is not None
            with server._lock:
                server.choices_served += len(choices)
            self._send(200, json.dumps(self._completion(req, choices)))

        def _completion(self, req: RecordedRequest, choices: Sequence[str]) -> dict:
            return {
                "id": f"chatcmpl-loopback-{next(counter)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": req.model or "loopback",
                "choices": [
                    {
                        "index": i,
                        "message": {"role": "assistant", "content": c},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                    for i, c in enumerate(choices)
                ],
                "usage": _usage(req, choices),
            }

        def _serve_fault(self, fault: Fault, req: RecordedRequest) -> None:
            if fault.delay:
                time.sleep(fault.delay)
            headers = {}
            if fault.retry_after is not None:
                ra = fault.retry_after
                headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
            if fault.body is not None:
                self._send(fault.status or 200, fault.body, headers)
            elif fault.truncated:
                full = json.dumps(self._completion(req, ["```python\npass\n```"]))
                self._send(200, full[: len(full) // 2], headers)
            elif fault.empty:
                data = self._completion(req, [])
                self._send(200, json.dumps(data), headers)
            else:
                self._error(fault.status or 500, fault.message, headers)

    return Handler


# -- serving recorded corpus candidates ---------------------------------------------------------
def _read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def corpus_responder(path: str | Path, *, skip: int = 0) -> Responder:
    """A responder serving the recorded candidates (``../shared/corpus`` schema) of the task whose
    ``entry_point`` appears in the request as ``def <entry_point>(``, wrapped in a fenced block,
    round-robin per task."""
    entries = _read_jsonl(Path(path))
    positions: dict[str, int] = {}
    lock = threading.Lock()

    def respond(req: RecordedRequest) -> list[str] | Fault:
        text = req.text
        # The prompt names its function ("Write the function `name`"); other recorded functions
        # may appear in it too, as module context.
        named = [e for e in entries if f"function `{e.get('entry_point', '')}`" in text]
        for e in named + entries:
            name = e.get("entry_point", "")
            if f"def {name}(" in text:
                cands = list(e.get("candidates") or [])[skip:]
                if not cands:
                    break
                out = []
                with lock:
                    for _ in range(max(1, req.n)):
                        i = positions.get(name, 0)
                        positions[name] = i + 1
                        out.append(code_reply(cands[i % len(cands)]))
                return out
        return Fault(status=400, message="loopback: no recorded task matches this prompt")

    return respond


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="a corpus .jsonl(.gz) whose candidates to serve")
    ap.add_argument("--reply", action="append", default=[], help="a reply text (repeatable)")
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--ignore-n", action="store_true")
    args = ap.parse_args(argv)
    responder = corpus_responder(args.corpus, skip=args.skip) if args.corpus else None
    server = LoopbackServer(args.reply, responder=responder, ignore_n=args.ignore_n).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
