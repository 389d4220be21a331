"""Regenerating a Nano Banana image from the review app, against the local Gemini stand-in.

The set is made by the real generative run (the stand-in answers with a real
Chromium render of the item); the reviewer rejects the image for its text
and presses g: the server asks the model for the job's next attempt with a
prompt adjusted to that reason, audits the answer from its pixels, and shows
it in place of the old image, which stays on disk.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import sync_playwright

from itemshot.factorial.review.log import read_decisions
from itemshot.pipeline import run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.backends.chromium import find_chromium
from itemshot.renderer.backends.nanobanana.standin import Captured, Reply, StandIn, image_reply
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import PresentationSpec
from tests.conftest import run_cli, sample_subset
from tests.review_sets import review_server

pytestmark = pytest.mark.slow

SPEC = PresentationSpec(
    scene="plain", color="white", font_style="regular", font_size=22, aspect="9:16"
)
FLAGS = ("--scene", "plain", "--color", "white", "--font-size", "22", "--aspect", "9:16")


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def test_regenerate_asks_the_model_again_with_an_adjusted_prompt(tmp_path: Path) -> None:
    data = sample_subset(tmp_path / "data", ["en-change"])
    (item,) = [e for e in load_dataset(data).entries if isinstance(e, Item)]
    jobs = plan([JobRequest(item, SPEC)], 0)
    run_jobs(jobs, tmp_path / "renders")
    clean = np.asarray(Image.open(tmp_path / "renders" / jobs[0].image_path).convert("RGB"))
    first = _png(clean)
    framed = clean.copy()
    framed[:6, :] = framed[-6:, :] = (40, 90, 200)  # the second attempt: another, still legible
    second = _png(framed)
    answers = iter([first, second])

    def script(_captured: Captured) -> Reply:
        return image_reply(next(answers))

    out = tmp_path / "generated"
    with StandIn(script) as standin:
        env = {"GEMINI_API_KEY": "secret-test-key", "GOOGLE_GEMINI_BASE_URL": standin.base_url}
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("GEMINI_API_KEY", env["GEMINI_API_KEY"])
            status = run_cli(
                "render", data, "--out", out, *FLAGS, "--backend", "nanobanana",
                "--api-base", standin.base_url, "--attempts", "1", "--workers", "1", "--no-progress",
            )  # fmt: skip
        assert status == 0
        (row,) = read_jsonl(out / "manifest.jsonl")
        assert (row["backend"], row["attempts"], row["verdict"]) == ("nanobanana", 1, "pass")
        with review_server(out, "--reviewer", "bob", env=env) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium())
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(server.url + "next")
            page.wait_for_selector("body[data-ready='1']")
            page.keyboard.press("r")
            page.keyboard.press("1")  # text_wrong
            with page.expect_navigation():
                page.keyboard.press("Enter")
            page.goto(server.url + "?status=rejected")
            page.wait_for_selector("body[data-ready='1']")
            with page.expect_navigation():
                page.keyboard.press("Enter")
            page.wait_for_selector("body[data-ready='1']")
            old_src = page.get_attribute("#image", "src")
            with page.expect_navigation(timeout=180_000):
                page.keyboard.press("g")
            page.wait_for_selector("body[data-ready='1']")
            new_src = page.get_attribute("#image", "src")
            note = page.locator("#regen-note").inner_text()
            browser.close()
            assert server.stop() == 0
        prompts = [c.prompt for c in standin.captured]
    assert len(prompts) == 2
    assert "IMPORTANT: an earlier image left out" not in prompts[0]
    assert "IMPORTANT: an earlier image left out" in prompts[1]  # the reviewer's reason
    assert old_src == f"/files/{row['image']}" and new_src != old_src
    assert note.startswith("Attempt 2 (nanobanana")
    new_image = new_src.removeprefix("/files/")
    assert (out / new_image).read_bytes() == second
    assert (out / row["image"]).read_bytes() == first  # the old image is kept
    (after,) = read_jsonl(out / "manifest.jsonl")
    assert (after["image"], after["attempts"], after["backend"]) == (new_image, 2, "nanobanana")
    assert after["verify"]["mode"] == "whole_image" and after["verdict"] in ("pass", "fail")
    assert "stress_text" in after["regeneration"]["adjustments"]
    assert after["review"]["status"] == "unreviewed"
    actions = [(d.action, d.reason, d.reviewer) for d in read_decisions(out).decisions]
    assert actions == [("reject", "text_wrong", "bob"), ("regenerate", "text_wrong", "bob")]
    for path in out.rglob("*"):
        if path.is_file():
            assert b"secret-test-key" not in path.read_bytes()
