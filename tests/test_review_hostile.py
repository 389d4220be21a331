"""The review server against hostile requests: huge bodies, non-finite numbers, wrong types.

Every test talks to the real server (`itemshot review`, a subprocess on
127.0.0.1) over raw sockets, so bodies reach it exactly as written: chunked
or with a Content-Length, `1e999` and `NaN` as JSON texts. Memory is the
server process's peak resident set (`VmHWM` in /proc), compared with its
peak after small requests in the same test.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from itemshot.factorial.review.log import REVIEW_LOG, read_decisions
from tests.review_sets import ReviewServer, review_server, synthetic_set

LARGE = 40 * 1024 * 1024  # a body far past the 64 KB limit
CHUNK = 256 * 1024


@pytest.fixture(scope="module")
def output_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a small synthetic set to review."""
    out = tmp_path_factory.mktemp("hostile-review") / "set"
    synthetic_set(out, 6)
    return out


@pytest.fixture(scope="module")
def server(output_set: Path) -> Iterator[ReviewServer]:
    """Return the review server over the set (loopback, no token)."""
    with review_server(output_set, "--reviewer", "alice") as running:
        yield running


def _connect(url: str) -> tuple[socket.socket, str]:
    address = urlsplit(url)
    assert address.hostname == "127.0.0.1"
    return socket.create_connection((address.hostname, address.port), timeout=60), address.netloc


def _head(netloc: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: {netloc}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def post(url: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    """Send one POST with a Content-Length body; return the status and the JSON answer."""
    sock, netloc = _connect(url)
    try:
        sock.sendall(_head(netloc, path, {**headers, "Content-Length": str(len(body))}) + body)
        status, _headers, answer = _answer(sock)
    finally:
        sock.close()
    return status, json.loads(answer) if answer.startswith(b"{") else {"text": answer.decode()}


def post_streaming(
    url: str, path: str, headers: dict[str, str], size: int, *, chunked: bool
) -> tuple[int, dict[str, str], int]:
    """Send a `size`-byte body (chunked, or with its Content-Length) while reading the answer.

    The body goes out from a second thread, so a server that answers early is
    heard at once; the writer stops where the server stops taking bytes.
    Return the status, the answer's headers and how many body bytes were sent.
    """
    sock, netloc = _connect(url)
    framing = {"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(size)}
    sent = 0

    def write() -> None:
        nonlocal sent
        block = b"[" * CHUNK  # the start of a JSON text that never ends
        try:
            while sent < size:
                piece = block[: size - sent]
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            return  # the server closed the connection: it will not read the rest

    try:
        sock.sendall(_head(netloc, path, {**headers, **framing}))
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        status, answer_headers, _body = _answer(sock)
        with contextlib.suppress(OSError):  # already reset when the server closed first
            sock.shutdown(socket.SHUT_RDWR)  # unblocks a writer the server stopped reading
        writer.join(timeout=60)
    finally:
        sock.close()
    return status, answer_headers, sent


def peak_rss(pid: int) -> int:
    """Return a process's peak resident set size in bytes (`VmHWM` in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def csrf(url: str) -> str:
    """Return the CSRF token the queue page hands the browser."""
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        connection.request("GET", "/", headers={"Host": address.netloc})
        page = connection.getresponse().read()
    finally:
        connection.close()
    marker = b'name="csrf-token" content="'
    start = page.index(marker) + len(marker)
    return page[start : page.index(b'"', start)].decode()


def get_json(url: str, path: str) -> tuple[int, bytes]:
    """GET a path and return the status and the raw answer."""
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        connection.request("GET", path, headers={"Host": address.netloc})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _json_headers(url: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "X-CSRF-Token": csrf(url)}


def _log_bytes(out: Path) -> bytes | None:
    path = out / REVIEW_LOG
    return path.read_bytes() if path.exists() else None


def _image(out: Path, position: int) -> str:
    return json.loads((out / "manifest.jsonl").read_text().splitlines()[position])["image"]


def test_large_bodies_are_refused_without_being_held(
    server: ReviewServer, output_set: Path
) -> None:
    """Defect 5: 413 for a body past 64 KB, declared or chunked, and the body is never held."""
    headers = _json_headers(server.url)
    pid = server.process.pid
    # Baseline: small requests through the same paths (accepted, refused, refused large).
    image = _image(output_set, 1)
    ok = json.dumps({"id": "small-1", "position": 1, "image": image, "action": "accept"})
    assert post(server.url, "/api/decisions", ok.encode(), headers)[0] == 200
    assert post(server.url, "/api/decisions", b"[" * 60000, headers)[0] == 400
    assert post(server.url, "/api/decisions", b" " * (70 * 1024), headers)[0] == 413
    baseline = peak_rss(pid)
    before = _log_bytes(output_set)

    # A declared length past the limit is refused before a byte of the body is sent.
    sock, netloc = _connect(server.url)
    try:
        sock.sendall(_head(netloc, "/api/decisions", {**headers, "Content-Length": str(LARGE)}))
        status, answer_headers, _body = _answer(sock)
    finally:
        sock.close()
    assert status == 413
    assert answer_headers.get("connection") == "close"

    for path in ("/api/decisions", "/api/regenerate"):
        for chunked in (False, True):
            status, _headers, _sent = post_streaming(
                server.url, path, headers, LARGE, chunked=chunked
            )
            assert status == 413, (path, chunked)
    grown = peak_rss(pid) - baseline
    print(f"server peak RSS {baseline / 2**20:.1f} MiB after small requests, "
          f"grown by {grown / 2**20:.2f} MiB over four {LARGE / 2**20:.0f} MiB bodies")  # fmt: skip
    assert grown < LARGE / 10  # nowhere near one body, let alone four
    assert _log_bytes(output_set) == before
    assert get_json(server.url, "/api/progress")[0] == 200  # the server is still serving


BAD_DECISIONS = [
    ('"seconds": 1e999', "seconds"),
    ('"seconds": -1e999', "seconds"),
    ('"seconds": NaN', "seconds"),
    ('"seconds": Infinity', "seconds"),
    ('"seconds": -2.5', "seconds"),
    ('"seconds": "12"', "seconds"),
    ('"seconds": true', "seconds"),
    ('"id": 7', "id"),
    ('"id": ["a"]', "id"),
    ('"note": {"x": 1}', "note"),
    ('"reason": 3', "reason"),
    ('"action": ["accept"]', "action"),
    ('"position": "1"', "position"),
    ('"position": true', "position"),
    ('"position": 1.0', "position"),
    ('"image": 5', "image"),
    ('"adjudication": "yes"', "adjudication"),
    ('"query": [1, 2]', "query"),
    ('"query": {"scene": ["a"]}', "query"),
    ('"query": {"page": NaN}', "query"),
]


@pytest.mark.parametrize(("field_text", "field"), BAD_DECISIONS)
def test_bad_decision_fields_are_refused_before_anything_is_logged(
    server: ReviewServer, output_set: Path, field_text: str, field: str
) -> None:
    """Defect 7: a non-finite number or a wrong type is a 400 naming the field; no log line."""
    image = _image(output_set, 2)
    fields = {"id": '"bad-1"', "position": "2", "image": json.dumps(image), "action": '"flag"'}
    name = field_text.split(":", 1)[0].strip('"')
    fields.pop(name, None)
    body = "{" + ", ".join([*(f'"{k}": {v}' for k, v in fields.items()), field_text]) + "}"
    before = _log_bytes(output_set)
    status, answer = post(server.url, "/api/decisions", body.encode(), _json_headers(server.url))
    assert status == 400, (body, answer)
    assert answer["ok"] is False and field in answer["error"], answer
    assert _log_bytes(output_set) == before
    progress_status, progress = get_json(server.url, "/api/progress")
    assert progress_status == 200, progress


@pytest.mark.parametrize(
    ("field_text", "field"),
    [('"id": 7', "id"), ('"reason": ["x"]', "reason"), ('"position": NaN', "position")],
)
def test_bad_regeneration_fields_are_refused(
    server: ReviewServer, output_set: Path, field_text: str, field: str
) -> None:
    image = json.dumps(_image(output_set, 3))
    fields = {"id": '"regen-1"', "position": "3", "image": image}
    fields.pop(field_text.split(":", 1)[0].strip('"'), None)
    body = "{" + ", ".join([*(f'"{k}": {v}' for k, v in fields.items()), field_text]) + "}"
    before = _log_bytes(output_set)
    status, answer = post(server.url, "/api/regenerate", body.encode(), _json_headers(server.url))
    assert status == 400 and field in answer["error"], answer
    assert _log_bytes(output_set) == before


def test_a_good_decision_with_a_query_is_logged_once(
    server: ReviewServer, output_set: Path
) -> None:
    image = _image(output_set, 4)
    body = {
        "id": "good-1", "position": 4, "image": image, "action": "reject",
        "reason": "text_wrong", "note": "", "seconds": 3.25, "adjudication": False,
        "query": {"status": "unreviewed", "scene": "webpage", "page": "2"},
    }  # fmt: skip
    status, answer = post(
        server.url, "/api/decisions", json.dumps(body).encode(), _json_headers(server.url)
    )
    assert status == 200 and answer["ok"] and not answer["duplicate"], answer
    logged = [d for d in read_decisions(output_set).decisions if d.id == "good-1"]
    assert len(logged) == 1 and logged[0].seconds == 3.25
    assert get_json(server.url, "/api/progress")[0] == 200


def test_a_poisoned_log_still_serves_progress(tmp_path: Path) -> None:
    """A log an older version wrote with `Infinity` in it: the line is skipped, not fatal."""
    out = tmp_path / "set"
    rows = synthetic_set(out, 4)
    good = {"v": 1, "action": "accept", "reviewer": "alice", "time": "2024-01-01T00:00:00.000Z"}
    lines = [
        json.dumps({**good, "id": "ok-1", "image": rows[0]["image"], "seconds": 2.0}),
        json.dumps({**good, "id": "inf-1", "image": rows[1]["image"], "seconds": float("inf")}),
        json.dumps({**good, "id": "nan-1", "image": rows[2]["image"], "seconds": float("nan")}),
        '{"v": 1, "id": "big-1", "action": "accept", "seconds": 1e999}',
        "[1, 2, 3]",
        json.dumps({**good, "id": "ok-2", "image": rows[3]["image"], "seconds": 4.0}),
    ]
    assert "Infinity" in lines[1] and "NaN" in lines[2]
    (out / REVIEW_LOG).write_text("\n".join(lines) + "\n", encoding="utf-8")
    log = tmp_path / "server.log"
    with review_server(out, "--reviewer", "alice", log=log) as server:
        for _ in range(2):  # and again, once the server has read the log
            status, answer = get_json(server.url, "/api/progress")
            assert status == 200, answer
            progress = json.loads(answer)
            assert progress["reviewed"] == 2
            assert progress["times"]["everyone"]["mean"] == 3.0
        assert get_json(server.url, "/stats")[0] == 200
        # A new decision still goes into the same log, after the poisoned lines.
        body = json.dumps({"id": "after-1", "position": 1, "image": rows[1]["image"],
                           "action": "flag", "seconds": 1.0})  # fmt: skip
        headers = _json_headers(server.url)
        assert post(server.url, "/api/decisions", body.encode(), headers)[0] == 200
        assert json.loads(get_json(server.url, "/api/progress")[1])["reviewed"] == 3
    said = log.read_text()
    assert "review.jsonl line 2" in said and "skipped" in said
    read = read_decisions(out)
    assert [d.id for d in read.decisions] == ["ok-1", "ok-2", "after-1"]
    assert read.skipped == 4
    for line in (out / REVIEW_LOG).read_text().splitlines()[len(lines) :]:
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} written to the log"))
