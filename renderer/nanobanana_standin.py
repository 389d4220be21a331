"""A local stand-in for the Gemini REST API, for tests, benchmarks and offline trials.

It listens on 127.0.0.1 only, answers `POST /{version}/models/{model}:generateContent`
with the real wire shapes (camelCase, `inlineData` base64), records every request
body, and asks a script what to answer to each request.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Captured:
    """One request the stand-in received."""

    index: int
    path: str
    model: str
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """Return the text parts of the request joined."""
        parts = self.body["contents"][0]["parts"]
        return "\n".join(p["text"] for p in parts if "text" in p)

    @property
    def images(self) -> list[bytes]:
        """Return the decoded inline images of the request."""
        parts = self.body["contents"][0]["parts"]
        key = "inlineData" if any("inlineData" in p for p in parts) else "inline_data"
        return [_b64(p[key]["data"]) for p in parts if key in p]


def _b64(text: str) -> bytes:
    """Return base64 (standard or URL-safe, padded or not) decoded."""
    return base64.urlsafe_b64decode(
        text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4)
    )


@dataclass(frozen=True)
class Reply:
    """What to answer: HTTP status, JSON body, extra headers, and a simulated latency."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def image_reply(
    png: bytes, *, thought_first: bytes | None = None, usage: dict[str, int] | None = None
) -> Reply:
    """Return a success answer with one image (optionally after a draft `thought` image)."""
    parts: list[dict[str, Any]] = []
    if thought_first is not None:
        parts.append(_inline(thought_first) | {"thought": True})
    parts.append(_inline(png))
    return Reply(200, _answer(parts, "STOP", usage))


def text_reply(text: str) -> Reply:
    """Return a text-only answer (no image) that finishes with STOP."""
    return Reply(200, _answer([{"text": text}], "STOP", None))


def drafts_only_reply(png: bytes) -> Reply:
    """Return an answer whose only image is a draft (`thought: true`)."""
    return Reply(200, _answer([_inline(png) | {"thought": True}], "STOP", None))


def finish_reply(reason: str) -> Reply:
    """Return a candidate without content that finished with `reason` (e.g. IMAGE_SAFETY)."""
    return Reply(
        200,
        {
            "candidates": [{"finishReason": reason, "index": 0}],
            "usageMetadata": {"promptTokenCount": 300, "totalTokenCount": 300},
            "modelVersion": "standin",
        },
    )


def blocked_reply(reason: str = "PROHIBITED_CONTENT") -> Reply:
    """Return a prompt block: `promptFeedback.blockReason` and no candidates."""
    return Reply(200, {"promptFeedback": {"blockReason": reason}, "modelVersion": "standin"})


def error_reply(status: int, message: str = "", retry_delay: str | None = None) -> Reply:
    """Return a Google-style error answer (with a RetryInfo hint when given)."""
    names = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
    error: dict[str, Any] = {
        "code": status,
        "message": message or names.get(status, "error"),
        "status": names.get(status, "INTERNAL"),
    }
    if retry_delay is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
        ]
    return Reply(status, {"error": error})


def _inline(png: bytes) -> dict[str, Any]:
    return {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(png).decode()}}


def _answer(parts: list[dict[str, Any]], finish: str, usage: dict[str, int] | None) -> dict:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}
        ],
        "usageMetadata": usage
        or {"promptTokenCount": 560, "candidatesTokenCount": 1120, "totalTokenCount": 1680},
        "modelVersion": "standin",
        "responseId": "standin-response",
    }


Script = Callable[[Captured], Reply]


class StandIn:
    """The stand-in server: start it, point the client at `base_url`, read `captured`."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.captured: list[Captured] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """Return the URL to pass as the client's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> int:
        """Return the number of requests received so far."""
        with self._lock:
            return len(self.captured)

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _record(self, path: str, body: dict[str, Any]) -> Captured:
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        with self._lock:
            entry = Captured(len(self.captured), path, model, body)
            self.captured.append(entry)
        return entry

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.split("?", 1)[0].endswith(":generateContent"):
                    return self._send(error_reply(404, f"no such method {self.path}"))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(error_reply(400, "body is not JSON"))
                captured = owner._record(self.path.split("?", 1)[0], body)
                reply = owner.script(captured)
                if reply.delay > 0:
                    time.sleep(reply.delay)  # the simulated service's latency
                try:
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up on this request

            def _send(self, reply: Reply) -> None:
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler
