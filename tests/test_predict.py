"""`itemshot predict` against a local OpenAI-compatible stand-in server on loopback."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from itemshot.cli.analysis import register

FIXTURE_IMAGES = (
    Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "mmmu-pro-tool" / "images"
)
SECRET = "sk-test-not-a-real-key-0123456789"


def main(argv: list[str]) -> int:
    """Run the factorial subcommands exactly as `itemshot` dispatches them."""
    parser = argparse.ArgumentParser(prog="itemshot")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args) or 0)


def image_hashes(body: dict[str, Any]) -> list[str]:
    """Return the sha256 of every data-URL image in a chat-completions body."""
    hashes = []
    for part in body["messages"][0]["content"]:
        if part["type"] == "image_url":
            encoded = part["image_url"]["url"].split(",", 1)[1]
            hashes.append(hashlib.sha256(base64.b64decode(encoded)).hexdigest())
    return hashes


class StandIn:
    """A scripted OpenAI-compatible server: plays `script` in arrival order, then answers."""

    def __init__(
        self, script: list[str], answer: Callable[[dict[str, Any]], str] | None = None
    ) -> None:
        self.script = list(script)
        self.answer = answer or (lambda body: "Answer: B")
        self.lock = threading.Lock()
        self.arrived = threading.Condition(self.lock)  # notified on every request
        self.release = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.authorizations: set[str] = set()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with standin.lock:
                    standin.requests.append(body)
                    standin.authorizations.add(self.headers.get("Authorization", ""))
                    action = standin.script.pop(0) if standin.script else "ok"
                    standin.arrived.notify_all()
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}')
                elif action == "429":
                    self._send(429, b'{"error": "rate limited"}', {"Retry-After": "0"})
                elif action == "500":
                    self._send(500, b'{"error": "internal"}')
                elif action == "timeout":
                    standin.release.wait()
                    self._send(504, b"{}")
                elif action == "malformed":
                    self._send(200, b'{"choices": [{"message": ')
                else:
                    reply = {
                        "id": "x",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": standin.answer(body)},
                            }
                        ],
                        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
                    }
                    self._send(200, json.dumps(reply).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def wait_for_requests(self, count: int, timeout: float) -> bool:
        """Block until `count` requests have arrived (False if `timeout` passes first)."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)

    @property
    def endpoint(self) -> str:
        """Return the base URL of the server."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def write_manifest(out: Path, rows: list[dict[str, Any]]) -> None:
    """Write a manifest.jsonl for `rows` into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (out / "manifest.jsonl").write_text(text, encoding="utf-8")


def copy_figure(out: Path, name: str) -> str:
    """Copy a fixture figure into the output set and return its relative path."""
    source = FIXTURE_IMAGES / name
    if not source.exists():
        pytest.skip("fixture images not available")
    (out / "images").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, out / "images" / name)
    return f"images/{name}"


@pytest.fixture
def small_set(tmp_path: Path) -> Path:
    out = tmp_path / "set"
    figures = (
        sorted(p.name for p in FIXTURE_IMAGES.glob("*.png"))[:3] if FIXTURE_IMAGES.exists() else []
    )
    if len(figures) < 3:
        pytest.skip("fixture images not available")
    options = [f"choice {i}" for i in range(10)]
    rows: list[dict[str, Any]] = []
    for index, figure in enumerate(figures):
        relative = copy_figure(out, figure)
        base = {
            "item_id": f"item{index}",
            "status": "ok",
            "answer": "B",
            "options": options,
            "question": f"What does <image 1> show? ({index})",
            "subject": "Biology",
            "language": "en",
            "presentation": {"layout": "exam_sheet"},
            "seed": index,
            "error": None,
        }
        rows.append({**base, "job_key": f"v{index}", "image": relative, "n_options": 10})
        rows.append({**base, "job_key": f"s{index}", "format": "standard", "figures": [relative]})
        rows.append({**base, "job_key": f"b{index}", "format": "blind"})
    rows.append({"item_id": "broken", "job_key": "x", "status": "failed", "error": {"m": "x"}})
    write_manifest(out, rows)
    return out


def _predict_args(out: Path, endpoint: str) -> list[str]:
    return [
        "predict", str(out), "--endpoint", endpoint, "--model", "stand-in-model",
        "--concurrency", "3", "--timeout", "1", "--retry-delay", "0.01", "--max-attempts", "8",
    ]  # fmt: skip


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_predict_survives_failures_and_resumes(
    small_set: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    script = ["429", "429", "500", "timeout", "malformed"]
    with StandIn(script) as server:
        status = main(_predict_args(small_set, server.endpoint))
        first_count = len(server.requests)
        predictions = _read(small_set / "predictions.jsonl")
        assert status == 0
        assert len(predictions) == 9
        assert all(p["error"] is None and p["response"] == "Answer: B" for p in predictions)
        assert first_count == 9 + len(script)
        assert server.authorizations == {f"Bearer {SECRET}"}
        retried = [p for p in predictions if p["attempts"] > 1]
        assert sum(p["attempts"] - 1 for p in retried) == len(script)
        assert all(p["temperature"] == 0.0 and p["max_tokens"] == 4096 for p in predictions)
        assert all(p["usage"]["total_tokens"] == 14 for p in predictions)

        shapes = sorted(
            (m["messages"][0]["content"][0]["text"].split("\n")[0][:20], len(image_hashes(m)))
            for m in server.requests[-9:]
        )
        assert shapes.count(("Answer with the opti", 1)) == 3  # vision: instruction + image
        assert sum(1 for s in shapes if s[0].startswith("What does <image 1>")) == 6
        assert all(m["messages"][0]["content"][0]["text"].count("\nJ. choice 9\n") == 1
                   for m in server.requests if not image_hashes(m))  # fmt: skip

        status = main(_predict_args(small_set, server.endpoint))
        assert status == 0
        assert len(server.requests) == first_count  # nothing new was sent
        again = _read(small_set / "predictions.jsonl")
        assert all(p["cached"] for p in again)
        assert [p["response"] for p in again] == [p["response"] for p in predictions]

    for path in small_set.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            assert SECRET not in path.read_text(encoding="utf-8")


def test_predict_records_permanent_errors_without_caching(small_set: Path) -> None:
    with StandIn([]) as server:
        status = main(
            [*_predict_args(small_set, server.endpoint.replace("/v1", "/v2")), "--concurrency", "1"]
        )
        predictions = _read(small_set / "predictions.jsonl")
        assert status == 1
        assert all(p["error"]["kind"] == "permanent" for p in predictions)
        assert all("404" in p["error"]["message"] for p in predictions)
        sent = len(server.requests)
        main(_predict_args(small_set, server.endpoint.replace("/v1", "/v2")))
        assert len(server.requests) == 2 * sent  # errors are retried on the next run


def test_standin_counts_images(small_set: Path) -> None:
    with StandIn([]) as server:
        assert main(_predict_args(small_set, server.endpoint)) == 0
        counts = sorted(len(image_hashes(body)) for body in server.requests)
        assert counts == [0, 0, 0, 1, 1, 1, 1, 1, 1]
