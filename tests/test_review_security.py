"""The review server refuses what it must: traversal, missing CSRF, tokenless exposure, markup.

Each test talks to the real server (a subprocess on 127.0.0.1) with raw
HTTP, so request targets reach it exactly as written; the markup test loads
the pages in the real Chromium and checks that item text is shown literally
and runs nothing.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from itemshot.factorial.review.log import REVIEW_LOG, read_decisions
from itemshot.renderer.backends.chromium import find_chromium
from tests.conftest import run_cli
from tests.review_sets import ReviewServer, review_server, synthetic_set, tiny_png

MARKUP = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> & <b>bold</b>'
SECRET = "not for the browser"


@pytest.fixture(scope="module")
def output_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a synthetic set whose first item's text is markup, with a secret file beside it."""
    root = tmp_path_factory.mktemp("security")
    out = root / "set"
    synthetic_set(
        out,
        4,
        rows={
            0: {
                "item_id": 'x"><script>window.pwned = 3</script>',
                "question": MARKUP,
                "options": ["<svg onload='window.pwned = 4'>", "</td></tr><i>x</i>", "A & B", "D"],
                "subject": "<u>subject</u>",
            }
        },
    )
    (root / "secret.png").write_bytes(tiny_png(10))
    (root / "secret.txt").write_text(SECRET)
    (out / ".cache").mkdir()
    (out / ".cache" / "answer.png").write_bytes(tiny_png(20))
    (out / "images" / "outside.png").symlink_to(root / "secret.png")
    return out


@pytest.fixture(scope="module")
def server(output_set: Path) -> Iterator[ReviewServer]:
    """Return the review server over the set (loopback, no token)."""
    with review_server(output_set, "--reviewer", "alice") as running:
        yield running


def _request(
    url: str, method: str, target: str, body: bytes | None = None, headers: dict | None = None
) -> tuple[int, bytes, dict[str, str]]:
    """Send one raw HTTP request (the target exactly as given) and return status, body, headers."""
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        sent = {"Host": address.netloc, **(headers or {})}
        connection.request(method, target, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


def _csrf(url: str) -> str:
    _status, page, _headers = _request(url, "GET", "/")
    marker = b'name="csrf-token" content="'
    start = page.index(marker) + len(marker)
    return page[start : page.index(b'"', start)].decode()


def test_files_outside_the_set_are_refused(server: ReviewServer, output_set: Path) -> None:
    row = json.loads((output_set / "manifest.jsonl").read_text().splitlines()[1])
    status, body, headers = _request(server.url, "GET", f"/files/{row['image']}")
    assert status == 200 and body == (output_set / row["image"]).read_bytes()
    assert headers["content-type"] == "image/png"
    for target in (
        "/files/../secret.txt",
        "/files/../secret.png",
        "/files/%2e%2e/secret.png",
        "/files/images/..%2f..%2fsecret.png",
        "/files/images/../../secret.png",
        "/files//etc/passwd",
        "/files/%2fetc%2fpasswd",
        "/files/manifest.jsonl",
        "/files/.cache/answer.png",
        "/files/images/outside.png",  # a symlink out of the set
        "/files/images/%00.png",
    ):
        status, body, _headers = _request(server.url, "GET", target)
        assert status in (400, 404), target
        assert SECRET.encode() not in body and body != tiny_png(10), target


def test_state_changes_need_the_csrf_token(server: ReviewServer, output_set: Path) -> None:
    row = json.loads((output_set / "manifest.jsonl").read_text().splitlines()[1])
    decision = {"id": "csrf-1", "position": 1, "image": row["image"], "action": "accept"}
    body = json.dumps(decision).encode()
    json_type = {"Content-Type": "application/json"}
    for headers in (
        json_type,  # no token
        {**json_type, "X-CSRF-Token": "wrong"},
        {**json_type, "X-CSRF-Token": _csrf(server.url), "Origin": "http://evil.example"},
    ):
        status, answer, _headers = _request(server.url, "POST", "/api/decisions", body, headers)
        assert status == 403, (headers, answer)
    status, _answer, _headers = _request(server.url, "POST", "/api/regenerate", body, json_type)
    assert status == 403
    # A form post (what a cross-site page could send) is refused even with the token.
    token = {"X-CSRF-Token": _csrf(server.url)}
    form = {**token, "Content-Type": "application/x-www-form-urlencoded"}
    status, _answer, _headers = _request(server.url, "POST", "/api/decisions", b"id=1", form)
    assert status == 415
    assert not (output_set / REVIEW_LOG).exists()  # nothing was logged
    status, answer, _headers = _request(
        server.url, "POST", "/api/decisions", body, {**json_type, **token}
    )
    assert status == 200 and json.loads(answer)["ok"]
    assert [d.id for d in read_decisions(output_set).decisions] == ["csrf-1"]


def test_unknown_host_names_are_refused(server: ReviewServer) -> None:
    """A page whose domain was rebound to 127.0.0.1 sends its own Host: refused."""
    status, _body, _headers = _request(server.url, "GET", "/", headers={"Host": "evil.example"})
    assert status == 400
    status, _body, headers = _request(server.url, "GET", "/")
    assert status == 200
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"


def test_a_non_loopback_bind_needs_a_token(
    output_set: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ITEMSHOT_REVIEW_TOKEN", raising=False)
    for host in ("0.0.0.0", "::", "192.0.2.10"):
        assert run_cli("review", output_set, "--host", host, "--port", "0") == 2
        said = capsys.readouterr().err
        assert "--token" in said and host in said


def test_a_token_server_refuses_requests_without_it(output_set: Path) -> None:
    token = "t0ken-" + "x" * 20
    with review_server(output_set, "--token", token) as server:
        assert _request(server.url, "GET", "/")[0] == 401
        assert _request(server.url, "GET", "/files/images/item-00001-000000000001.png")[0] == 401
        assert _request(server.url, "GET", "/?token=wrong")[0] == 401
        status, _body, headers = _request(server.url, "GET", "/stats?token=" + token)
        assert status == 303 and headers["location"] == "/stats"
        cookie = headers["set-cookie"].split(";", 1)[0]
        assert "HttpOnly" in headers["set-cookie"]
        assert _request(server.url, "GET", "/stats", headers={"Cookie": cookie})[0] == 200
        bearer = {"Authorization": f"Bearer {token}"}
        assert _request(server.url, "GET", "/", headers=bearer)[0] == 200


def test_item_text_is_shown_literally_everywhere(server: ReviewServer) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium())
        try:
            page = browser.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            for path in (
                "/?status=all",
                "/item/0",
                "/stats",
                "/item/0?scene=%3Cscript%3Ex%3C/script%3E",
            ):
                page.goto(server.url.rstrip("/") + path)
                page.wait_for_selector("body[data-ready='1']")
                assert page.evaluate("window.pwned") is None, path
                # Only the app's own script element exists; no item markup became elements.
                assert page.locator("script").count() == 1, path
                assert page.locator("main b:text('bold'), main svg[onload], main u").count() == 0
            page.goto(server.url + "item/0")
            assert page.locator(".question").inner_text() == MARKUP
            options = page.locator(".option").all_inner_texts()
            assert "<svg onload='window.pwned = 4'>" in options[0]
            assert "</td></tr><i>x</i>" in options[1]
            assert (
                page.locator(".item-title").inner_text() == 'x"><script>window.pwned = 3</script>'
            )
            assert not dialogs
        finally:
            browser.close()
