"""The review app end to end: the real server, the real Chromium through Playwright, the keyboard.

A small set is rendered and verified for real; the test reviews it with the
keys a reviewer uses (accept, reject with a reason and a note, regenerate,
arrows, help), restarts the server, checks that the decisions and the queue
position survived, and exports the set with the rejected image left out.
The queue and item screenshots in the README are taken here (written to docs/ only with ITEMSHOT_UPDATE_SCREENSHOTS=1).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Page

from itemshot.factorial.review.log import read_decisions
from itemshot.renderer.output import read_jsonl
from tests.conftest import run_cli
from tests.review_browser import (
    open_page,
    page_position,
    press_and_follow,
    ready,
    render_six,
    screenshot_dir,
)
from tests.review_sets import review_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a freshly rendered and verified six-image set (3 items × exam sheet, blackboard)."""
    return render_six(
        tmp_path_factory.mktemp("data"), tmp_path_factory.mktemp("review") / "exam-set"
    )


def _images_loaded(page: Page) -> None:
    """Wait until every image of the page is decoded (a broken one fails the test).

    `decode()` resolves once the image can be drawn; awaited through `evaluate`,
    which the app's strict CSP allows, where a polled `wait_for_function`
    predicate is compiled with `eval` and refused by it.
    """
    for image in page.locator("img").all():
        image.evaluate("img => img.decode()")


def test_keyboard_review_restart_and_export(
    rendered: Path, browser: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = read_jsonl(rendered / "manifest.jsonl")
    images = [row["image"] for row in rows]
    assert len(images) == 6
    with review_server(rendered, "--reviewer", "alice") as server:
        assert server.url.startswith("http://127.0.0.1:")
        page = open_page(browser, server.url)
        cards = page.locator(".card")
        assert cards.count() == 6
        _images_loaded(page)
        shots = screenshot_dir(tmp_path)
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / "review-queue.png"))

        # Enter opens the first image of the queue; `?` shows the keys, Esc hides them.
        with page.expect_navigation():
            page.keyboard.press("Enter")
        ready(page)
        first = page_position(page)
        page.keyboard.press("?")
        assert page.locator("#help").is_visible()
        page.keyboard.press("Escape")
        assert page.locator("#help").is_hidden()
        page.set_viewport_size({"width": 1280, "height": 1100})  # room for the OCR diff
        _images_loaded(page)
        assert page.locator("#boxes polygon").count() >= 5  # question, four options
        assert page.locator(".readings tr").count() >= 5  # OCR readings beside the source
        page.screenshot(path=str(shots / "review-item.png"))

        # a: accept → the next image of the queue.
        press_and_follow(page, "a")
        second = page_position(page)
        assert second != first
        # r, 2 (number_wrong), a note, Enter: reject with a reason → the next image.
        page.keyboard.press("r")
        assert page.locator("#reject").is_visible()
        page.keyboard.press("2")
        page.keyboard.press("Tab")
        page.keyboard.type("4,600 is drawn as 4,800 <b>sic</b>")
        press_and_follow(page, "Enter")
        third = page_position(page)
        assert len({first, second, third}) == 3

        # g: regenerate → a new attempt seed, a different image, shown in place.
        # The page reloads once the regeneration is logged; wait for that, not for a time.
        old_src = page.get_attribute("#image", "src")
        with page.expect_navigation(timeout=180_000):
            page.keyboard.press("g")
        ready(page)
        new_src = page.get_attribute("#image", "src")
        assert old_src == f"/files/{images[third]}" and new_src != old_src
        new_image = new_src.removeprefix("/files/")
        old_bytes = (rendered / images[third]).read_bytes()  # the old image is kept
        new_bytes = (rendered / new_image).read_bytes()
        assert new_bytes != old_bytes  # a different image, shown in place of the old one
        note = page.locator("#regen-note").inner_text()
        assert note.startswith("Attempt 1 (chromium, seed ") and "identical" not in note
        assert page.locator("#review-status").inner_text() == "review: unreviewed"

        # Arrows move through the whole queue (status=all) in its order.
        page.goto(server.url + "?status=all")
        ready(page)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        ready(page)
        start = page_position(page)
        with page.expect_navigation():
            page.keyboard.press("ArrowRight")
        ready(page)
        moved = page_position(page)
        assert moved != start
        with page.expect_navigation():
            page.keyboard.press("ArrowLeft")
        ready(page)
        assert page_position(page) == start
        assert not page.errors  # type: ignore[attr-defined]
        assert server.stop() == 0

    # The log holds every decision, with reviewer, time and the reason; the manifest has them too.
    decisions = read_decisions(rendered).decisions
    actions = [(d.action, d.image) for d in decisions]
    assert actions == [
        ("accept", images[first]),
        ("reject", images[second]),
        ("regenerate", images[third]),
    ]
    rejection = decisions[1]
    assert (rejection.reviewer, rejection.reason) == ("alice", "number_wrong")
    assert rejection.note == "4,600 is drawn as 4,800 <b>sic</b>" and rejection.time.endswith("Z")
    assert all(d.seconds is not None and d.seconds >= 0 for d in decisions[:2])
    manifest = read_jsonl(rendered / "manifest.jsonl")
    assert manifest[first]["review"]["status"] == "accepted"
    assert manifest[second]["review"]["status"] == "rejected"
    assert manifest[third]["image"] == new_image
    assert manifest[third]["previous_images"] == [images[third]]
    assert manifest[third]["regeneration"]["seed"] != rows[third]["seed"]
    # The row names the bytes of the image it now shows, and its verdict is about them.
    digest = hashlib.sha256((rendered / new_image).read_bytes()).hexdigest()
    assert manifest[third]["image_sha256"] == digest == manifest[third]["verify"]["image_sha256"]

    # A restart keeps the decisions, and the queue resumes at the first image still to
    # review (queue order: verifier failures first, then manifest order).
    undecided = [i for i in range(6) if i not in (first, second)]
    resume_at = min(undecided, key=lambda i: (manifest[i]["verdict"] != "fail", i))
    with review_server(rendered, "--reviewer", "alice") as server:
        page = open_page(browser, server.url)
        assert page.locator(".card").count() == 4
        with page.expect_navigation():
            page.keyboard.press("Enter")
        ready(page)
        assert page_position(page) == resume_at
        page.goto(f"{server.url}item/{third}")
        assert page.get_attribute("#image", "src") == f"/files/{new_image}"
        page.goto(server.url + "?status=rejected")
        assert page.locator(".card .item-id").all_inner_texts() == [rows[second]["item_id"]]
        page.goto(server.url + "stats")
        assert "2 of 6 images reviewed" in page.locator(".big").inner_text()

    # Every export leaves the rejected image out and carries the regenerated one.
    for target in ("hf", "lmms-eval", "vlmevalkit"):
        capsys.readouterr()
        result = run_cli("export", rendered, "--to", target, "--out", tmp_path / target)
        assert result == 0
        said = capsys.readouterr().err
        assert "exported 5 rows" in said and "1 rejected left out" in said
    import itemshot

    export = itemshot.export(rendered, "hf", tmp_path / "hf-api")
    assert export.rows == 5 and export.review["left_out"] == 1
    (parquet,) = [path for path in export.paths if path.suffix == ".parquet"]
    table = pq.read_table(parquet).to_pylist()
    assert sorted(r["id"] for r in table) == sorted(
        rows[i]["job_key"] for i in range(6) if i != second
    )
    exported = {r["id"]: r["image"]["bytes"] for r in table}
    assert exported[rows[third]["job_key"]] == new_bytes
    (tsv,) = (tmp_path / "vlmevalkit").glob("*.tsv")
    assert len(tsv.read_text(encoding="utf-8").splitlines()) == 1 + 5  # header + rows
    marked = itemshot.export(rendered, "hf", tmp_path / "hf-marked", rejected="mark")
    assert marked.rows == 6 and marked.review["left_out"] == 0
    marks = json.loads((tmp_path / "hf-marked" / "review.json").read_text())
    statuses = {m["id"]: m["status"] for m in marks["rows"]}
    assert statuses[rows[second]["job_key"]] == "rejected"
    assert statuses[rows[first]["job_key"]] == "accepted"
