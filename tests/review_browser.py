"""Helpers for the review app's browser tests: a real rendered set, Chromium pages, keys."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from itemshot.renderer.backends.chromium import find_chromium
from tests.conftest import ROOT, run_cli, sample_subset

IDS = ("en-rainfall", "en-change", "en-parabola")


def render_six(data: Path, out: Path) -> Path:
    """Render and verify the six-image set (3 items × exam sheet, blackboard) into `out`.

    `data` is an empty folder for the items and their figures.
    """
    items = sample_subset(data, IDS)
    status = run_cli(
        "render", items, "--out", out, "--scene", "exam_sheet,blackboard", "--font-size", "22",
        "--workers", "1", "--no-progress",
    )  # fmt: skip
    assert status in (0, 4)  # rendered (some images may fail the audit: they are reviewed too)
    return out


def chromium_browser() -> Iterator[object]:
    """Yield the system Chromium driven by Playwright (the body of a module fixture)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=find_chromium())
        yield launched
        launched.close()


def open_page(browser: object, url: str, height: int = 800) -> Page:
    """Open `url` in a fresh 1280-wide context, collect its page errors, wait until ready."""
    context = browser.new_context(viewport={"width": 1280, "height": height})  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors  # type: ignore[attr-defined]
    page.goto(url)
    ready(page)
    return page


def ready(page: Page) -> None:
    """Wait until the app has wired the page up."""
    page.wait_for_selector("body[data-ready='1']")


def press_and_follow(page: Page, key: str) -> None:
    """Press a decision key and wait for the navigation its acknowledged answer triggers."""
    with page.expect_navigation():
        page.keyboard.press(key)
    ready(page)


def page_position(page: Page) -> int:
    """Return the queue position of the item page shown."""
    match = re.search(r"/item/(\d+)", page.url)
    assert match, page.url
    return int(match.group(1))


def screenshot_dir(scratch: Path) -> Path:
    """Return where a test's README screenshots go: docs/ only when asked, else `scratch`.

    A test run must not change the checkout; `ITEMSHOT_UPDATE_SCREENSHOTS=1`
    refreshes the README's pictures on purpose.
    """
    if os.environ.get("ITEMSHOT_UPDATE_SCREENSHOTS") == "1":
        return ROOT / "docs"
    return scratch
