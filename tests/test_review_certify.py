"""Certified review end to end: a 200-image set certified in the real Chromium through Playwright.

Six images are rendered and verified for real (3 items × exam sheet,
blackboard); the 200-image set is derived from them: each real row is
copied under a new job key with its image file, 20 copies are planted as
verifier failures, and two passed copies are planted as defects the
verifier missed (an option erased from the image), one inside the audit
sample and one outside it. The reviewer draws the sample for "defect rate
among accepted ≤ 5% at 95%", finds the planted defect (the bound widens and
the app asks for more), undoes and redoes the rejection, grows the sample,
reviews it by key and by a confirmed bulk accept, reviews the failures, and
accepts the unsampled passes as certified. The log, `itemshot certify`, and
the HF export's dataset card must then all carry the certification.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import Dialog, Page

from itemshot.api import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from itemshot.factorial.review.log import read_decisions
from itemshot.outputs import ManifestRow, file_sha256, read_manifest, write_manifest
from itemshot.review.certify import (
    CERTIFIED_BASIS,
    draw_sample,
    read_sample,
    sample_size,
    upper_bound,
)
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

SIZE = 200
FAILED = 20
RATE, CONFIDENCE = 0.05, 0.95


def _derived_row(base: ManifestRow, copy: int, out: Path) -> ManifestRow:
    """Return a copy of a real row under a new job key, its image and sidecar copied too."""
    key = hashlib.sha256(f"{base.job_key}/copy/{copy}".encode()).hexdigest()
    stem = f"images/{base.item_id}-{key[:12]}"
    shutil.copyfile(out / str(base.image), out / f"{stem}.png")
    sidecar = json.loads((out / str(base.layout)).read_text())
    sidecar["job_key"] = key
    (out / f"{stem}.json").write_text(json.dumps(sidecar))
    return base.with_fields(job_key=key, image=f"{stem}.png", layout=f"{stem}.json")


def _as_failure(row: ManifestRow) -> ManifestRow:
    """Return the row with a planted verifier failure on the same bytes."""
    record = {
        **dict(row.verify or {}),
        "passed": False,
        "codes": ["text_mismatch"],
        "reasons": [{"code": "text_mismatch", "region": "question", "detail": "planted"}],
    }
    return row.with_verdict(False, record, row.image_sha256)


def _plant_defect(row: ManifestRow, out: Path) -> ManifestRow:
    """Erase the lower part of the image (the options) and keep the verifier's pass on it."""
    path = out / str(row.image)
    with Image.open(path) as image:
        damaged = image.convert("RGB")
    ImageDraw.Draw(damaged).rectangle(
        (0, damaged.height * 2 // 3, damaged.width, damaged.height), fill="white"
    )
    damaged.save(path)
    digest = file_sha256(path)
    return row.with_verdict(True, dict(row.verify or {}), digest)


@pytest.fixture(scope="module")
def certify_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Return a 200-image set derived from six real renders, and its planted images by role."""
    out = render_six(
        tmp_path_factory.mktemp("data"), tmp_path_factory.mktemp("certify") / "bench-set"
    )
    real = [row for row in read_manifest(out) if row.status == "ok"]
    assert len(real) == 6
    rows = [_derived_row(real[i % 6], i, out) for i in range(SIZE)]
    rows = [_as_failure(row) if i % 10 == 3 else row for i, row in enumerate(rows)]
    # Real renders the verifier failed stay failures; the rest are passes.
    passed = [row.image for row in rows if row.verdict == "pass"]
    sample = draw_sample(passed, RATE, CONFIDENCE, seed=0)
    at = {row.image: i for i, row in enumerate(rows)}
    # The sampled defect is the first sample image in queue order, so the next one follows it.
    first = min(sample.drawn, key=lambda image: at[image])
    roles = {"sampled_defect": str(first), "unsampled_defect": str(sample.order[-1])}
    planted = set(roles.values())
    rows = [_plant_defect(row, out) if row.image in planted else row for row in rows]
    for row in real:  # the six originals leave the set: their copies stand for them
        (out / str(row.image)).unlink()
    write_manifest(out, rows, base=())
    assert sum(row.verdict == "fail" for row in read_manifest(out)) >= FAILED
    return out, roles


def _confirm(page: Page, selector: str) -> str:
    """Click a bulk button, accept its confirmation, wait for the reload; return the question."""
    asked: list[str] = []

    def accept(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    with page.expect_navigation():
        page.click(selector)
    ready(page)
    return asked[0]


def _reject(page: Page, reason_key: str = "4") -> None:
    page.keyboard.press("r")
    page.keyboard.press(reason_key)
    press_and_follow(page, "Enter")


def _bar(page: Page) -> str:
    return page.locator("#cert-bar").inner_text()


def test_certify_a_200_image_set(
    certify_set: tuple[Path, dict[str, str]], browser: object, tmp_path: Path
) -> None:
    out, roles = certify_set
    rows = read_manifest(out)
    position = {str(row.image): i for i, row in enumerate(rows)}
    first_size = sample_size(RATE, CONFIDENCE)
    assert first_size == 59
    # Nothing drawn yet: the command line says what is needed and refuses to certify.
    assert run_cli("certify", out, "--max-defect-rate", RATE) == EXIT_SOME_FAILED
    with review_server(out, "--reviewer", "alice") as server:
        page = open_page(browser, server.url + "certify", height=900)
        page.fill("input[name=max_defect_rate]", str(RATE))
        page.fill("input[name=confidence]", str(CONFIDENCE))
        with page.expect_navigation():
            page.click("#draw-form button[type=submit]")
        ready(page)
        sample = read_sample(out)
        assert sample is not None and sample.size == first_size
        assert roles["sampled_defect"] in sample.drawn
        assert roles["unsampled_defect"] in sample.unsampled
        assert f"0 of {first_size} reviewed" in page.locator("#cert-sample").inner_text()

        # The sample queue: its own filter, a badge on each card, the live bound above it.
        page.goto(server.url + "?sample=sample")
        ready(page)
        assert f"{first_size} images" in page.locator(".queue-head h1").inner_text()
        assert page.locator(".card .badge.sample").count() == page.locator(".card").count()
        assert "≤ 100.00%" in page.locator("#live-bound").inner_text()
        facts = page.locator(".card .factors").first.inner_text()
        assert "vision" in facts and "4 options" in facts and "regular" in facts
        for image in page.locator(".card img").all()[:12]:
            image.evaluate("img => img.decode()")
        shots = screenshot_dir(tmp_path)
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / "certify-sample-queue.png"))

        # The planted defect: rejecting it widens the bound and asks for more images.
        defect_at = position[roles["sampled_defect"]]
        page.goto(f"{server.url}item/{defect_at}?sample=sample")
        ready(page)
        _reject(page)
        assert page_position(page) != defect_at
        bar = _bar(page)
        assert "1 defect in 1 of 59 sampled" in bar and "draw" in bar and "more" in bar
        # ← goes back to the decided image; u takes the decision back (a new log line).
        press_and_follow(page, "ArrowLeft")
        assert page_position(page) == defect_at
        assert "rejected" in page.locator("#review-status").inner_text()
        press_and_follow(page, "u")
        assert page_position(page) == defect_at
        assert "unreviewed" in page.locator("#review-status").inner_text()
        assert "0 defects in 0 of 59 sampled" in _bar(page)
        _reject(page)
        assert "1 defect in 1 of 59 sampled" in _bar(page)

        # Grow the sample to the size that reaches 5% with one defect.
        needed = sample_size(RATE, CONFIDENCE, 1)
        assert needed is not None and needed > first_size
        page.goto(server.url + "certify")
        ready(page)
        asked = _confirm(page, "#grow-sample")
        assert f"Draw {needed - first_size} more" in asked and f"({needed} in all)" in asked
        assert read_sample(out).size == needed  # type: ignore[union-attr]

        # Two sample images by key, then the rest of the sample by a confirmed bulk accept.
        page.goto(server.url + "?sample=sample")
        ready(page)
        press_and_follow(page, "Enter")
        press_and_follow(page, "a")
        press_and_follow(page, "a")
        page.goto(server.url + "?sample=sample")
        ready(page)
        remaining = needed - 3
        asked = _confirm(page, "#bulk-accept")
        assert f"Accept all {remaining} images in this selection?" == asked
        bar = _bar(page)
        assert f"1 defect in {needed} of {needed} sampled" in bar
        assert "review the" in bar and "did not pass" in bar

        # Failed images are reviewed in full: one rejected by key, the rest accepted in bulk.
        page.goto(server.url + "?sample=by-hand")
        ready(page)
        failures = int(page.locator(".queue-head h1").inner_text().split()[0])
        assert failures >= FAILED
        press_and_follow(page, "Enter")
        _reject(page, "1")
        page.goto(server.url + "?sample=by-hand")
        ready(page)
        assert (
            _confirm(page, "#bulk-accept") == f"Accept all {failures - 1} images in this selection?"
        )

        # Not certified until the unsampled passes are accepted: export refuses to say so.
        assert (
            run_cli("export", out, "--to", "hf", "--out", tmp_path / "early", "--certified")
            == EXIT_USAGE
        )
        page.goto(server.url + "certify")
        ready(page)
        unsampled = len(sample.order) - needed
        asked = _confirm(page, "#accept-certified")
        assert f"Accept {unsampled} unsampled verifier-passed images" in asked
        statement = page.locator("#statement").inner_text()
        assert f"{SIZE} images" in statement and "certified by sample" in statement
        assert f"≤ {upper_bound(1, needed, CONFIDENCE):.2%}" in statement
        assert "certified" in page.locator("#cert-bar").get_attribute("class")

        page.goto(server.url + "stats")
        ready(page)
        for factor in ("scene", "font", "capture", "backend"):
            assert page.locator(f"#quality-{factor}").count() == 1
        assert "precision" in page.locator("#quality-all").inner_text()
        assert not page.errors  # type: ignore[attr-defined]

    # The log: the undo is a line of its own, every unsampled pass has its certification line.
    decisions = read_decisions(out).decisions
    undo = [d for d in decisions if d.action == "undo"]
    assert len(undo) == 1
    undone = next(d for d in decisions if d.id == undo[0].undoes)
    assert undone.image == roles["sampled_defect"] and undone.action == "reject"
    certified = [d for d in decisions if d.basis == CERTIFIED_BASIS]
    grown = read_sample(out)
    assert grown is not None
    assert sorted(d.image for d in certified) == sorted(grown.unsampled)
    assert all(d.sample == grown.id and d.action == "accept" for d in certified)
    assert roles["unsampled_defect"] in {d.image for d in certified}

    # The command line and the export's dataset card carry the same statement.
    assert run_cli("certify", out, "--max-defect-rate", RATE) == EXIT_OK
    assert run_cli("export", out, "--to", "hf", "--out", tmp_path / "hf", "--certified") == EXIT_OK
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert statement.removeprefix("Certified: ") in card
    assert grown.id in card
