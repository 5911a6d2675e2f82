"""The server's end of the stdio stream: frames in, one JSON-RPC message at a time to pygls.

pygls' own loop (``pygls.io_.run_async``) trusts the client: a header line it cannot parse (a
``Content-Length`` that is not a number, missing, or absurd) leaves it waiting forever for a blank
line that started no message, one long line with no end ends it, and a body that is not UTF-8,
not JSON, a batch array, or a message whose parameters do not fit the method is logged and
dropped, so the request that carried it never gets an answer.  Here:

* ``FrameReader`` splits the byte stream into bodies in bounded memory (a header block of at most
  ``MAX_HEADER`` bytes, a body of at most ``MAX_BODY``).  After anything it cannot frame it says
  why (``on_problem``) and resynchronizes: it drops bytes up to the next ``Content-Length:``.
* ``Dispatcher`` answers every request it cannot hand to pygls with a JSON-RPC error (parse
  error, invalid request, invalid params, too large), with the request's id when one can be read,
  and hands everything else to pygls.  A notification it cannot use is logged and dropped, as
  JSON-RPC says.

``pump`` runs the reader in a daemon thread (a blocked read can never hold the process at exit)
and hands the loop one frame at a time through a small queue, so a client that sends faster than
the server handles waits instead of filling this process's memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

log = logging.getLogger(__name__)

MAX_HEADER = 8 * 1024  # bytes of one header block (LSP sends one or two short lines)
MAX_BODY = 64 * 1024 * 1024  # editors do not sync files this large; a body beyond it is dropped
_CHUNK = 1 << 16
_QUEUED = 16  # frames read ahead of the loop

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32602, -32603

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LENGTH = re.compile(rb"(?im)^[ \t]*content-length[ \t]*:[ \t]*([^\r\n]*?)[ \t]*\r?$")
_MARK = b"content-length:"
# the id of a request, read from the start of a body that cannot be parsed as a whole
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")')


@dataclass
class Frame:
    """One message body, or (``body`` None) a message too large to read, with what could be
    read of its start (``head``)."""

    body: bytes | None
    head: bytes = b""


class FrameReader:
    """Splits the stream that ``read(n)`` returns (``b""`` at its end) into message bodies."""

    def __init__(self, read: Callable[[int], bytes], on_problem: Callable[[str], None]):
        self._read = read
        self._problem = on_problem
        self.buf = bytearray()
        self._lost = 0  # bytes dropped since the last message

    def _fill(self) -> bool:
        data = self._read(_CHUNK)
        if not data:
            return False
        self.buf += data
        return True

    def _resync(self, why: str, start: int = 1) -> None:
        """Say ``why`` (once for a run of bytes that are no message) and drop everything before
        the next ``Content-Length:`` at ``start`` or later, or all but an end that may be the
        start of one."""
        if not self._lost:
            self._problem(why)
        low = self.buf.lower()
        at = low.find(_MARK, start)
        if at < 0:  # keep only an end that may be the start of one (nothing else: no blank line)
            at = len(low) - next(
                (k for k in range(min(len(_MARK) - 1, len(low)), 0, -1) if _MARK.startswith(low[-k:])), 0
            )
        self._lost += at
        del self.buf[:at]

    def next(self) -> Frame | None:
        """The next message, or None when the stream ended."""
        while True:
            end = _HEADER_END.search(self.buf, 0, MAX_HEADER + 4)
            if end is None:
                if len(self.buf) > MAX_HEADER:  # a line with no end, or a header block with none
                    self._resync(
                        "bytes that are not an LSP header", 1 if self.buf[: len(_MARK)].lower() == _MARK else 0
                    )
                elif not self._fill():
                    return None
                continue
            header = bytes(self.buf[: end.start()])
            found = _LENGTH.findall(header)
            raw = found[-1] if found else None
            if raw is None:
                self._resync(f"a header without Content-Length: {header[:80]!r}")
                continue
            if not raw.isdigit():
                self._resync(f"a Content-Length that is not a number: {raw[:40]!r}")
                continue
            n = int(raw) if len(raw) <= 15 else MAX_BODY + 1  # (int() refuses 4300 digits and more)
            if n > MAX_BODY:
                head = bytes(self.buf[end.end() : end.end() + 512])
                self._resync(
                    f"a message of {raw[:40].decode()} bytes, more than the {MAX_BODY} this server reads", end.end()
                )
                return Frame(None, head)
            while len(self.buf) < end.end() + n:
                if not self._fill():
                    self._problem(f"the end of the stream inside a message ({len(self.buf) - end.end()} of {n} bytes)")
                    return None
            body = bytes(self.buf[end.end() : end.end() + n])
            del self.buf[: end.end() + n]
            if self._lost:
                log.warning("reading on after %d bytes that were no message", self._lost)
                self._lost = 0
            return Frame(body)


def _id_in(data: bytes) -> int | str | None:
    """The request id at the start of an unreadable body, if one is there."""
    m = _ID.search(data[:4096])
    if m is None:
        return None
    try:
        return json.loads(m.group(1).decode("utf-8", "replace"))
    except ValueError:
        return None


def _valid_id(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, str)


class Dispatcher:
    """Hands messages to a pygls ``protocol`` and answers what it cannot take."""

    def __init__(self, protocol):
        self.protocol = protocol

    def reply_error(self, msg_id: Any, code: int, message: str) -> None:
        self.protocol._send_data(
            {"jsonrpc": "2.0", "id": msg_id if _valid_id(msg_id) else None, "error": {"code": code, "message": message}}
        )

    def frame(self, frame: Frame) -> None:
        """One frame from the reader: the message in it, or an error answer."""
        if frame.body is None:
            msg_id = _id_in(frame.head)
            log.warning("dropped a message too large to read (request id %r)", msg_id)
            if msg_id is not None:
                self.reply_error(msg_id, INVALID_REQUEST, f"the message is larger than {MAX_BODY} bytes")
            return
        try:
            text = frame.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            log.warning("a message that is not UTF-8: %s", exc)
            self.reply_error(
                _id_in(frame.body), PARSE_ERROR, f"the message is not valid UTF-8 ({exc.reason} at byte {exc.start})"
            )
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            log.warning("a message that is not JSON: %s", exc)
            self.reply_error(_id_in(frame.body), PARSE_ERROR, f"the message is not JSON: {exc}"[:300])
            return
        self.message(data)

    def message(self, data: Any) -> None:
        if isinstance(data, list):
            # JSON-RPC batches are not part of LSP: each request in one gets an error
            log.warning("a batch of %d messages: LSP has no batches", len(data))
            ids = [m.get("id") for m in data if isinstance(m, dict) and "method" in m and _valid_id(m.get("id"))]
            for msg_id in ids:
                self.reply_error(msg_id, INVALID_REQUEST, "batch messages are not supported (LSP has none)")
            if not ids:
                self.reply_error(None, INVALID_REQUEST, "batch messages are not supported (LSP has none)")
            return
        if not isinstance(data, dict):
            log.warning("a message that is not a JSON object: %.80r", data)
            self.reply_error(None, INVALID_REQUEST, "a message must be a JSON object")
            return
        msg_id = data.get("id")
        method = data.get("method")
        is_request = "id" in data and "method" in data
        if (
            data.get("jsonrpc") != "2.0"
            or ("method" in data and not isinstance(method, str))
            or ("id" in data and not _valid_id(msg_id) and msg_id is not None)
        ):
            log.warning("an invalid JSON-RPC message: %.200r", data)
            if is_request or ("method" not in data and "result" not in data and "error" not in data):
                self.reply_error(msg_id, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
            return
        if is_request and self.protocol._shutdown and method != "exit":
            self.reply_error(msg_id, INVALID_REQUEST, "the server is shutting down")
            return
        try:
            message = self.protocol.structure_message(data)
        except JsonRpcInvalidParams as exc:
            why = _cause(exc)
            log.warning("%s with parameters that do not fit: %s", method or "a response", why)
            if is_request:
                self.reply_error(msg_id, INVALID_PARAMS, f"invalid parameters for {method}: {why}")
            return
        except Exception as exc:  # noqa: BLE001 - pygls wraps anything else as an internal error
            log.warning("cannot read a %s message: %s", method or "response", _cause(exc))
            if is_request:
                self.reply_error(msg_id, INTERNAL_ERROR, f"cannot read the message: {_cause(exc)}")
            return
        self.protocol.handle_message(message)


class _NoDeserializeTraceback(logging.Filter):
    """pygls logs a message it cannot structure with a full traceback before raising; the
    ``Dispatcher`` logs one line about it instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


logging.getLogger("pygls.protocol.json_rpc").addFilter(_NoDeserializeTraceback())


def _cause(exc: BaseException) -> str:
    """What went wrong, one line: the innermost error under cattrs' validation groups, with the
    path of attributes that led to it (``params > position > line: ...``)."""
    inner = exc.__cause__ or exc
    path: list[str] = []
    while True:
        subs = getattr(inner, "exceptions", None)
        if not subs:
            break
        sub = subs[0]
        notes = [str(n) for n in getattr(sub, "__notes__", [])]
        path += [n.rsplit(" @ ", 1)[-1].replace("attribute ", "") for n in notes if " @ " in n]
        inner = sub
    where = " > ".join(path)
    return (f"{where}: " if where else "") + f"{type(inner).__name__}: {inner}"[:300]


def pump(stream, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue, room: threading.Semaphore) -> threading.Thread:
    """Read frames from ``stream`` in a daemon thread into ``queue`` (None at the end), each
    once ``room`` lets it (the loop releases it as it takes a frame): a client that sends faster
    than the server handles waits in its pipe, not in this process's memory."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None

    def read(n: int) -> bytes:
        try:
            return os.read(fd, n) if fd is not None else stream.read1(n)
        except (OSError, ValueError):
            return b""

    def problem(why: str) -> None:
        log.warning("the client sent %s; reading on from the next message", why)

    def run() -> None:
        reader = FrameReader(read, problem)
        while True:
            try:
                frame = reader.next()
            except Exception:  # a bug here must end the connection, not hang it
                log.exception("reading the client's messages failed")
                frame = None
            room.acquire()
            try:
                loop.call_soon_threadsafe(queue.put_nowait, frame)
            except RuntimeError:  # the loop is closed
                return
            if frame is None:
                return

    thread = threading.Thread(target=run, name="coherence-stdin", daemon=True)
    thread.start()
    return thread


async def serve(stream, protocol, stop_event: threading.Event) -> None:
    """Hand every message from ``stream`` to ``protocol`` until the stream ends or
    ``stop_event`` is set (pygls' ``exit`` raises SystemExit through here)."""
    queue: asyncio.Queue = asyncio.Queue()
    room = threading.Semaphore(_QUEUED)
    pump(stream, asyncio.get_running_loop(), queue, room)
    dispatcher = Dispatcher(protocol)
    while not stop_event.is_set():
        frame = await queue.get()
        room.release()
        if frame is None:
            return
        try:
            dispatcher.frame(frame)
        except Exception:  # one message must never end the server
            log.exception("handling a message failed")


__all__ = ["MAX_BODY", "MAX_HEADER", "Dispatcher", "Frame", "FrameReader", "serve"]
