"""A real ``python -m coherence serve`` driven over raw stdio bytes, for what no well-behaved LSP
client library can send: broken framing, bodies that are not UTF-8 or not JSON, batches, wrong
parameter types.  Frames the server writes are parsed strictly here; requests the server makes
are answered with ``null``."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class RawServer:
    def __init__(self, tmp_path: Path, env: dict[str, str]):
        self.stderr_path = tmp_path / "server-stderr.txt"
        self._err = open(self.stderr_path, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coherence", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
            cwd=str(tmp_path),
        )
        self.messages: queue.Queue = queue.Queue()
        self.seen: list[dict] = []  # every message from the server, in order
        self.bad_frames: list[bytes] = []
        self._ids = iter(range(1, 1 << 30))
        threading.Thread(target=self._read, daemon=True).start()

    # -- reading --------------------------------------------------------------------------
    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                ch = out.read(1)
                if not ch:
                    self.messages.put(None)
                    return
                header += ch
            length = None
            for line in header.decode("ascii").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            if length is None:
                self.bad_frames.append(header)
                continue
            body = out.read(length)
            try:
                msg = json.loads(body)
            except ValueError:
                self.bad_frames.append(body)
                continue
            self.seen.append(msg)
            if "method" in msg and "id" in msg:  # a request from the server: answer it
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            self.messages.put(msg)

    def response(self, msg_id: Any, timeout: float = 15.0) -> dict:
        """The server's response to ``msg_id`` (None: an error without an id)."""
        deadline = time.monotonic() + timeout
        for m in self.seen:
            if "method" not in m and m.get("id") == msg_id:
                return m
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no response to {msg_id!r} in {timeout} s; server stderr:\n{self.stderr()[-3000:]}"
                )
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise AssertionError(
                    f"the server closed its output waiting for {msg_id!r}; stderr:\n{self.stderr()[-3000:]}"
                )
            if "method" not in m and m.get("id") == msg_id:
                return m

    def stderr(self) -> str:
        if not self._err.closed:
            self._err.flush()
        return self.stderr_path.read_text(errors="replace")

    def shown(self) -> list[str]:
        """The window messages the user would see."""
        return [m["params"]["message"] for m in self.seen if m.get("method") == "window/showMessage"]

    # -- writing --------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        body = json.dumps(message).encode("utf-8")
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def next_id(self) -> int:
        return next(self._ids)

    def request(self, method: str, params: Any, timeout: float = 15.0) -> dict:
        msg_id = self.next_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id, timeout)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- session --------------------------------------------------------------------------
    def initialize(self, root: Path) -> dict:
        r = self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
        self.notify("initialized", {})
        return r

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
        return uri

    def hover(self, uri: str, line: int = 0, character: int = 0) -> dict:
        return self.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        )

    def peak_rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def close(self, timeout: float = 20.0) -> int:
        """shutdown + exit; the exit code."""
        try:
            if self.proc.poll() is None:
                try:
                    self.request("shutdown", None)
                    self.notify("exit", None)
                    self.proc.stdin.close()
                except (OSError, AssertionError):  # gone, or deaf: killed below, exit status -9
                    self.proc.kill()
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._err.close()
