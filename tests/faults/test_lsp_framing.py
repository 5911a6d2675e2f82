"""A broken client against a real ``coherence serve`` (issue 28, section 5): framing it cannot
parse, bodies that are not UTF-8 or not JSON, batches, parameters of the wrong type, positions
and ranges that do not exist, a change to a document that is not open.  Every request gets a
response (an LSP error where it must), the server reads on from the next message, shows the
user no internal error, and still exits 0 after shutdown.

``FAULTS`` is the table ``benchmarks/boundary_tally.py`` counts: each fault sends its bytes and
then says which request id must get an answer (and with which error code, if any)."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from coherence.lsp.transport import FrameReader
from tests.lsp.conftest import server_env
from tests.support.raw_lsp import RawServer

SOURCE = '# coherence\ndef double(x: int) -> int:\n    """Return twice x."""\n    return 2 * x\n'
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body


def req(msg_id, method: str, params) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def hover_params(uri: str, line=0, character=0) -> dict:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


# name -> (bytes to send, given the server, the document's uri and a fresh id; the id whose answer is
# expected; the error code expected, or None for a result)
Fault = Callable[[str, int], tuple[bytes, object, int | None]]


def _non_numeric(uri, i):
    return frame(b'{"jsonrpc":"2.0","method":"$/x"}', b"Content-Length: twelve\r\n\r\n"), None, None


def _missing(uri, i):
    return frame(req(i, "textDocument/hover", hover_params(uri)), b"Content-Type: application/json\r\n\r\n"), None, None


def _absurd(uri, i):
    return (
        frame(req(i, "textDocument/hover", hover_params(uri)), b"Content-Length: 99999999999999999999999\r\n\r\n"),
        i,
        INVALID_REQUEST,
    )


def _negative_length(uri, i):
    return frame(b"{}", b"Content-Length: -5\r\n\r\n"), None, None


def _long_line(uri, i):
    return b"x" * (70 * 1024 * 1024), None, None


def _not_utf8(uri, i):
    body = req(i, "textDocument/hover", hover_params(uri)).replace(b'"uri"', b'"\xff\xfe\xfd"')
    return frame(body), i, PARSE_ERROR


def _not_json(uri, i):
    return frame(b'{"jsonrpc": "2.0", "id": %d, "method": "textDocument/hover", ' % i), i, PARSE_ERROR


def _not_an_object(uri, i):
    return frame(b"42"), None, INVALID_REQUEST


def _batch(uri, i):
    return (
        frame(
            b"["
            + req(i, "textDocument/hover", hover_params(uri))
            + b","
            + req(i + 100000, "textDocument/hover", hover_params(uri))
            + b"]"
        ),
        i,
        INVALID_REQUEST,
    )


def _wrong_types(uri, i):
    return frame(req(i, "textDocument/hover", {"textDocument": 5, "position": "top"})), i, INVALID_PARAMS


def _negative_position(uri, i):
    return frame(req(i, "textDocument/hover", hover_params(uri, -1, -7))), i, INVALID_PARAMS


def _malformed_range(uri, i):
    change = {"range": {"start": {"line": "one", "character": 0}, "end": [1]}, "text": "x"}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]},
        }
    ).encode()
    return frame(body), None, None


def _range_beyond_the_text(uri, i):
    change = {"range": {"start": {"line": 4000, "character": 9}, "end": {"line": 2, "character": 0}}, "text": "x"}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [change]},
        }
    ).encode()
    return frame(body), None, None


def _change_unopened(uri, i):
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri.replace("target.py", "never_opened.py"), "version": 2},
                "contentChanges": [{"text": "x = 1\n"}],
            },
        }
    ).encode()
    return frame(body), None, None


def _bad_id(uri, i):
    return frame(b'{"jsonrpc":"2.0","id":{"a":1},"method":"textDocument/hover","params":{}}'), None, INVALID_REQUEST


def _unknown_method(uri, i):
    return frame(req(i, "coherence/noSuchThing", {})), i, -32601


FAULTS: dict[str, Fault] = {
    "content-length not a number": _non_numeric,
    "content-length missing": _missing,
    "content-length absurd": _absurd,
    "content-length negative": _negative_length,
    "a 70 MB line": _long_line,
    "body not UTF-8": _not_utf8,
    "body not JSON": _not_json,
    "body not an object": _not_an_object,
    "batch array": _batch,
    "wrong parameter types": _wrong_types,
    "negative position": _negative_position,
    "malformed range": _malformed_range,
    "range beyond the text": _range_beyond_the_text,
    "didChange for an unopened document": _change_unopened,
    "id of the wrong type": _bad_id,
    "unknown method": _unknown_method,
}


@pytest.mark.parametrize("seed", range(40))
def test_the_reader_finds_every_message_after_any_fault_however_the_stream_is_cut(seed):
    """``FrameReader`` alone, on every fault followed by a good message, cut into random chunks
    (a chunk boundary anywhere, a header split across reads): every good message comes out, in
    order, and the reader ends at the end of the stream."""
    rng = random.Random(seed)
    good = [req(1000 + k, "textDocument/hover", hover_params(f"file:///m{k}.py")) for k in range(len(FAULTS))]
    parts = [
        p for k, fault in enumerate(FAULTS.values()) for p in (fault("file:///x.py", k)[0][:200_000], frame(good[k]))
    ]
    stream = b"".join(parts)
    # random cuts, and one after every part: a client writes a message, then the next one later
    ends = [sum(map(len, parts[: i + 1])) for i in range(len(parts) - 1)]
    cuts = sorted(set(rng.sample(range(1, len(stream)), 300)) | set(ends))
    chunks = iter([stream[a:b] for a, b in zip([0] + cuts, cuts + [len(stream)])] + [b""] * 3)
    problems: list[str] = []
    reader = FrameReader(lambda n: next(chunks, b""), problems.append)
    bodies: list = []

    def read_all() -> None:
        while (got := reader.next()) is not None and len(bodies) < 3 * len(FAULTS):
            bodies.append(got.body)

    thread = threading.Thread(target=read_all, daemon=True)  # (a reader that spins must fail, not hang)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), f"the reader spins after {len(bodies)} messages"
    assert [b for b in bodies if b in good] == good
    assert len(problems) >= 5 and len(reader.buf) == 0


def start(tmp_path: Path) -> tuple[RawServer, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "target.py").write_text(SOURCE)
    server = RawServer(tmp_path, server_env(tmp_path))
    server.initialize(ws)
    uri = server.open(ws / "target.py", SOURCE)
    return server, uri


def inflict(server: RawServer, uri: str, name: str) -> list[str]:
    """Send fault ``name``, then a good request; what went wrong (empty when it was handled)."""
    i = server.next_id()
    data, expect_id, code = FAULTS[name](uri, i)
    try:
        server.send_raw(data)
    except OSError as exc:  # (BrokenPipeError: it died of this or an earlier fault)
        return [f"the server is gone ({exc}); exit status {server.proc.poll()}"]
    problems = []
    if expect_id is not None or code is not None:
        try:
            answer = server.response(expect_id, timeout=15)
        except AssertionError as exc:
            return [f"no answer: {exc}"[:400]]
        got = (answer.get("error") or {}).get("code")
        if got != code:
            problems.append(f"answered {answer} instead of error {code}")
    if name == "batch array":
        second = server.response(i + 100000, timeout=15)
        if (second.get("error") or {}).get("code") != INVALID_REQUEST:
            problems.append(f"the batch's second request got {second}")
    # (a frame the fault left unfinished is completed by the next header: send one blank line)
    try:
        after = server.hover(uri, 1, 5)
    except AssertionError as exc:
        return problems + [f"deaf afterwards: {exc}"[:400]]
    if "error" in after:
        problems.append(f"the next hover failed: {after}")
    if server.proc.poll() is not None:
        problems.append(f"the server exited with {server.proc.returncode}")
    internal = [m for m in server.shown() if "internal error" in m]
    if internal:
        problems.append(f"the user saw {internal}")
    return problems


# A server per fault: the default run keeps the first; the next test inflicts all of them on one.
@pytest.mark.parametrize(
    "name", [name if i == 0 else pytest.param(name, marks=pytest.mark.slow) for i, name in enumerate(FAULTS)]
)
def test_a_broken_client_gets_answers_and_the_server_reads_on(tmp_path, name):
    server, uri = start(tmp_path)
    try:
        assert inflict(server, uri, name) == []
        assert "Traceback" not in server.stderr(), server.stderr()[-3000:]
    finally:
        code = server.close()
    assert code == 0, server.stderr()[-3000:]


def test_every_fault_in_one_session_and_a_long_line_is_not_kept_in_memory(tmp_path):
    server, uri = start(tmp_path)
    try:
        for name in FAULTS:
            assert inflict(server, uri, name) == [], name
        err = server.stderr()
        # each framing fault is named on stderr, once, with what the server did about it
        assert "not an LSP header" in err and "Content-Length that is not a number" in err
        assert "Traceback" not in err, err[-3000:]
        # 70 MB went through, but were never held: the reader keeps at most a header's worth
        assert server.peak_rss_mb() < 200, server.peak_rss_mb()
    finally:
        code = server.close()
    assert code == 0, server.stderr()[-3000:]
