"""A local stand-in for the Gemini REST API, for tests, benchmarks and offline trials.

It listens on 127.0.0.1 only and speaks the real wire shapes (camelCase,
`inlineData` base64):

- `POST /{version}/models/{model}:generateContent` — one request, one answer;
- `POST /{version}/models/{model}:batchGenerateContent` — a batch of inlined
  requests (`batch.inputConfig.requests.requests[].request`), answered with a
  batch operation (`name: batches/…`, `metadata.state: BATCH_STATE_…`);
- `GET /{version}/batches/{id}` — the batch's state; once it has succeeded,
  `metadata.output.inlinedResponses.inlinedResponses[]` holds one `response`
  (or `error`) per request, in request order, with the request's `metadata`;
- `POST /{version}/batches/{id}:cancel`.

Every generation request (single or inlined) is recorded and a script says
what to answer to it; a batch plan says how many polls a batch stays pending
and how it ends, so tests are driven by the server's state, not by sleeps.
A reply may also misbehave as hostile servers do: raw bytes instead of JSON,
or a body dripped one byte at a time.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import traceback
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
    batch: str | None = None  # the batch's name for an inlined request
    metadata: dict[str, str] = field(default_factory=dict)  # an inlined request's metadata
    headers: dict[str, str] = field(default_factory=dict)  # HTTP headers, names in lower case

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
    """What to answer: HTTP status, JSON body, extra headers, and a simulated latency.

    `raw` replaces the JSON body with these exact bytes (a broken answer);
    `drip` sends the body one byte every `drip` seconds (a server that never
    quite stops answering).
    """

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None
    drip: float = 0.0


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

TERMINAL_STATES = (
    "BATCH_STATE_SUCCEEDED",
    "BATCH_STATE_FAILED",
    "BATCH_STATE_CANCELLED",
    "BATCH_STATE_EXPIRED",
)


@dataclass(frozen=True)
class BatchPlan:
    """How a batch behaves: the first `polls` GETs answer RUNNING, the next ones `final`."""

    polls: int = 0
    final: str = "BATCH_STATE_SUCCEEDED"  # or BATCH_STATE_FAILED, BATCH_STATE_EXPIRED, …
    error: str = "the batch failed"  # the operation's error message when it does not succeed


BatchScript = Callable[[int], BatchPlan]  # batch number (0, 1, …) → its plan


@dataclass
class _Batch:
    name: str
    model: str
    plan: BatchPlan
    answers: list[dict[str, Any]]
    polls: int = 0
    cancelled: bool = False

    def state(self) -> str:
        if self.cancelled:
            return "BATCH_STATE_CANCELLED"
        if self.polls <= self.plan.polls:
            return "BATCH_STATE_PENDING" if self.polls == 0 else "BATCH_STATE_RUNNING"
        return self.plan.final

    def operation(self) -> dict[str, Any]:
        state = self.state()
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
            "model": f"models/{self.model}",
            "displayName": self.name,
            "state": state,
            "batchStats": {"requestCount": str(len(self.answers))},
        }
        body: dict[str, Any] = {"name": self.name, "metadata": metadata}
        if state == "BATCH_STATE_SUCCEEDED":
            output = {"inlinedResponses": {"inlinedResponses": self.answers}}
            metadata["output"] = output
            body["done"] = True
            body["response"] = {
                "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta."
                "GenerateContentBatchOutput",
                **output,
            }
        elif state in TERMINAL_STATES:
            body["done"] = True
            body["error"] = {"code": 13, "message": self.plan.error}
        return body


class StandIn:
    """The stand-in server: start it, point the client at `base_url`, read `captured`."""

    def __init__(self, script: Script, batches: BatchPlan | BatchScript | None = None) -> None:
        self.script = script
        self.batch_script: BatchScript = (
            batches if callable(batches) else (lambda _n, plan=batches or BatchPlan(): plan)
        )
        self.captured: list[Captured] = []
        self.http_log: list[tuple[str, str]] = []  # (method, path) of every HTTP request
        self.batches: dict[str, _Batch] = {}
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
        """Return the number of generation requests received so far (inlined ones included)."""
        with self._lock:
            return len(self.captured)

    @property
    def http_requests(self) -> int:
        """Return the number of HTTP requests received so far (batch creation and polls too)."""
        with self._lock:
            return len(self.http_log)

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _record(
        self,
        path: str,
        body: dict[str, Any],
        batch: str | None = None,
        metadata: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Captured:
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        with self._lock:
            entry = Captured(
                len(self.captured), path, model, body, batch, dict(metadata or {}), headers or {}
            )
            self.captured.append(entry)
        return entry

    def _create_batch(self, path: str, body: dict[str, Any]) -> Reply:
        """Record a batch's inlined requests, answer each by the script, return the operation."""
        try:
            inlined = body["batch"]["inputConfig"]["requests"]["requests"]
        except (KeyError, TypeError):
            return error_reply(400, "batch.inputConfig.requests.requests is required")
        model = path.rsplit("/", 1)[-1].split(":", 1)[0]
        with self._lock:
            number = len(self.batches)
        name = f"batches/standin-{number + 1}"
        answers = []
        for entry in inlined:
            metadata = entry.get("metadata") or {}
            captured = self._record(path, entry.get("request") or {}, name, metadata)
            reply = self.script(captured)
            if reply.status == 200:
                answers.append({"response": reply.body, "metadata": metadata})
            else:
                error = reply.body.get("error", {"code": reply.status, "message": "error"})
                answers.append({"error": error, "metadata": metadata})
        batch = _Batch(name, model, self.batch_script(number), answers)
        with self._lock:
            self.batches[name] = batch
        return Reply(200, batch.operation())

    def _get_batch(self, name: str) -> Reply:
        with self._lock:
            batch = self.batches.get(name)
            if batch is None:
                return error_reply(404, f"no such batch {name}")
            batch.polls += 1
            return Reply(200, batch.operation())

    def _cancel_batch(self, name: str) -> Reply:
        with self._lock:
            batch = self.batches.get(name)
            if batch is None:
                return error_reply(404, f"no such batch {name}")
            if batch.state() not in TERMINAL_STATES:
                batch.cancelled = True
        return Reply(200, {})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with owner._lock:
                    owner.http_log.append(("GET", path))
                found = re.fullmatch(r"/[^/]+/(batches/[^/:]+)", path)
                if found is None:
                    return self._send(error_reply(404, f"no such resource {path}"))
                self._send(owner._get_batch(found.group(1)))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?", 1)[0]
                with owner._lock:
                    owner.http_log.append(("POST", path))
                cancel = re.fullmatch(r"/[^/]+/(batches/[^/:]+):cancel", path)
                if cancel is not None:
                    return self._send(owner._cancel_batch(cancel.group(1)))
                if not path.endswith((":generateContent", ":batchGenerateContent")):
                    return self._send(error_reply(404, f"no such method {self.path}"))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(error_reply(400, "body is not JSON"))
                if path.endswith(":batchGenerateContent"):
                    return self._send(owner._create_batch(path, body))
                headers = {k.lower(): v for k, v in self.headers.items()}
                captured = owner._record(path, body, headers=headers)
                try:
                    reply = owner.script(captured)
                except Exception as error:  # a broken script answers like a failing service
                    traceback.print_exc()
                    reply = error_reply(500, f"stand-in script failed: {error!r}")
                if reply.delay > 0:
                    time.sleep(reply.delay)  # the simulated service's latency
                try:
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up on this request

            def _send(self, reply: Reply) -> None:
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.drip <= 0:
                    self.wfile.write(data)
                    return
                for offset in range(len(data)):
                    self.wfile.write(data[offset : offset + 1])
                    self.wfile.flush()
                    time.sleep(reply.drip)  # the simulated service's pace

        return Handler
