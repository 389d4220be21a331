"""`itemshot predict` against a local OpenAI-compatible stand-in server on loopback."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from itemshot.cli.analysis import register
from tests.chat_replies import chat_completion
from tests.conftest import TOOL_IMAGES as FIXTURE_IMAGES
from tests.fault_injection import cli_command

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
    """A scripted OpenAI-compatible server: plays `script` in arrival order, then answers.

    Actions: `ok` (an answer), `429`, `500`, `401`, `403`, `timeout` (no answer
    until the server stops), `malformed` (half a JSON body), and replies with
    no text: `null` (`content: null`), `empty` (`""`) and `blank` (spaces).
    Once the script is played, `behave(body)` picks each request's action.
    """

    def __init__(
        self,
        script: list[str],
        answer: Callable[[dict[str, Any]], str] | None = None,
        behave: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.script = list(script)
        self.answer = answer or (lambda body: "Answer: B")
        self.behave = behave or (lambda body: "ok")
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
                    action = standin.script.pop(0) if standin.script else standin.behave(body)
                    standin.arrived.notify_all()
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}')
                elif action == "429":
                    self._send(429, b'{"error": "rate limited"}', {"Retry-After": "0"})
                elif action == "500":
                    self._send(500, b'{"error": "internal"}')
                elif action in ("401", "403"):
                    self._send(int(action), b'{"error": {"message": "invalid api key"}}')
                elif action == "timeout":
                    standin.release.wait()
                    self._send(504, b"{}")
                elif action == "malformed":
                    self._send(200, b'{"choices": [{"message": ')
                else:
                    content = {"null": None, "empty": "", "blank": " \n\t "}.get(
                        action, standin.answer(body)
                    )
                    reply = chat_completion(body["model"], content, 11, 3)
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
    (out / "images").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, out / "images" / name)
    return f"images/{name}"


@pytest.fixture
def small_set(tmp_path: Path) -> Path:
    out = tmp_path / "set"
    figures = sorted(p.name for p in FIXTURE_IMAGES.glob("*.png"))[:3]
    assert len(figures) == 3, f"fixture figures missing in {FIXTURE_IMAGES}"
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
        assert status == 3  # some rows failed (here every one)
        assert all(p["error"]["kind"] == "http_error" for p in predictions)
        assert all("404" in p["error"]["message"] for p in predictions)
        sent = len(server.requests)
        main(_predict_args(small_set, server.endpoint.replace("/v1", "/v2")))
        assert len(server.requests) == 2 * sent  # errors are retried on the next run


def test_standin_counts_images(small_set: Path) -> None:
    with StandIn([]) as server:
        assert main(_predict_args(small_set, server.endpoint)) == 0
        counts = sorted(len(image_hashes(body)) for body in server.requests)
        assert counts == [0, 0, 0, 1, 1, 1, 1, 1, 1]


def predict_cli(out: Path, endpoint: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run the real `itemshot predict` command (a new process) and return how it ended."""
    command = cli_command(*_predict_args(out, endpoint), *extra)
    environment = {**os.environ, "NO_ALBUMENTATIONS_UPDATE": "1", "COLUMNS": "200"}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=environment, check=False
    )


def _cached_replies(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in (out / ".cache" / "predict").rglob("*.json")]


def test_a_reply_without_text_is_retried_and_never_cached(small_set: Path) -> None:
    """Defect 9: `content: null`, "" and blank text are retried; only the answers are cached."""
    with StandIn(["null", "empty", "blank"]) as server:
        run = predict_cli(small_set, server.endpoint, "--concurrency", "1")
        assert run.returncode == 0, run.stderr
        predictions = _read(small_set / "predictions.jsonl")
        assert all(p["error"] is None and p["response"] == "Answer: B" for p in predictions)
        assert len(server.requests) == 9 + 3
        assert sum(p["attempts"] - 1 for p in predictions) == 3
        cached = _cached_replies(small_set)
        assert len(cached) == 9 and all(c["response"] == "Answer: B" for c in cached)

        # An empty reply an older version cached is not an answer: the row is asked again.
        key = predictions[0]["request_key"]
        entry = small_set / ".cache" / "predict" / key[:2] / f"{key}.json"
        entry.write_text(json.dumps({**json.loads(entry.read_text()), "response": ""}))
        run = predict_cli(small_set, server.endpoint)
        assert run.returncode == 0, run.stderr
        assert len(server.requests) == 9 + 3 + 1
        again = _read(small_set / "predictions.jsonl")
        assert [p["cached"] for p in again] == [False] + [True] * 8
        assert json.loads(entry.read_text())["response"] == "Answer: B"


def test_failed_rows_exit_3_name_their_kinds_and_a_rerun_retries_only_them(
    small_set: Path,
) -> None:
    """Rows refused (401) or answered with nothing: status 3, one line per kind, retried alone."""
    answering = threading.Event()

    def behave(body: dict[str, Any]) -> str:
        text = body["messages"][0]["content"][0]["text"]
        if answering.is_set():
            return "ok"
        return "401" if "(0)" in text else "null" if "(1)" in text else "ok"

    with StandIn([], behave=behave) as server:
        run = predict_cli(small_set, server.endpoint, "--max-attempts", "3")
        assert run.returncode == 3, run.stderr
        lines = run.stderr.splitlines()
        auth = [line for line in lines if line.startswith("failed auth: 2 rows")]
        empty = [line for line in lines if line.startswith("failed empty_reply: 2 rows")]
        assert len(auth) == 1 and "HTTP 401" in auth[0], run.stderr
        assert len(empty) == 1 and "no text" in empty[0], run.stderr
        assert "4 of 9 rows failed" in run.stderr
        predictions = _read(small_set / "predictions.jsonl")
        kinds = sorted(p["error"]["kind"] for p in predictions if p["error"])
        assert kinds == ["auth", "auth", "empty_reply", "empty_reply"]
        failed = [p for p in predictions if p["error"]]
        assert all(p["response"] is None for p in failed)
        assert [p["attempts"] for p in failed if p["error"]["kind"] == "empty_reply"] == [3, 3]
        assert len(server.requests) == 2 * 1 + 2 * 3 + 5  # a 401 is not retried
        assert len(_cached_replies(small_set)) == 5

        answering.set()
        first = len(server.requests)
        run = predict_cli(small_set, server.endpoint, "--max-attempts", "3")
        assert run.returncode == 0, run.stderr
        assert len(server.requests) - first == 4  # the failed rows only
        again = _read(small_set / "predictions.jsonl")
        assert all(p["error"] is None and p["response"] == "Answer: B" for p in again)
        assert sum(not p["cached"] for p in again) == 4


def test_unreachable_endpoints_are_named(small_set: Path) -> None:
    """Nothing listening, and TLS spoken to a plain HTTP server: status 3, the kind named."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    try:
        port = closed.getsockname()[1]
        run = predict_cli(small_set, f"http://127.0.0.1:{port}/v1", "--max-attempts", "2")
    finally:
        closed.close()
    assert run.returncode == 3, run.stderr
    assert "failed connection_refused: 9 rows" in run.stderr, run.stderr
    assert "Connect call failed ('127.0.0.1'" in run.stderr
    assert not (small_set / ".cache" / "predict").exists() or not _cached_replies(small_set)

    with StandIn([]) as server:
        https = server.endpoint.replace("http://", "https://")
        run = predict_cli(small_set, https, "--max-attempts", "2")
    assert run.returncode == 3, run.stderr
    assert "failed tls: 9 rows" in run.stderr, run.stderr
    predictions = _read(small_set / "predictions.jsonl")
    assert {p["error"]["kind"] for p in predictions} == {"tls"}
