"""Right-to-left items: Hebrew and Arabic set right to left, their formulas left to right.

Real pages of every scene are shown in real Chromium the way the backend shows
them (the shell document, `itemshotShow`, `itemshotLayout`, the same asset
guard), then read from the DOM: each text block's computed direction, and
where the browser drew each character of a formula.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Route, async_playwright

from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.assets import ORIGIN, AssetNotAllowed, static_asset
from itemshot.renderer.backends.chromium import SHELL_HTML, SHELL_PATH, find_chromium
from itemshot.renderer.direction import item_direction, text_direction
from itemshot.renderer.items import Item
from itemshot.renderer.markup import parse_inline
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.page import PageDocument, build_page
from itemshot.renderer.presentation import FONT_STYLES, SCENES, PresentationSpec
from tests.conftest import SAMPLE_DATA, job_sidecar, run_cli

RTL_ROWS = [
    {"id": "he-linear", "language": "he", "question": "מהו הערך של $x = 3$ במשוואה?",
     "options": ["שלוש", "$x = 3$", "ארבע", "חמש"], "answer": "A"},
    {"id": "ar-linear", "language": "ar", "question": "إذا كان $x = 3$ فما قيمة المقدار؟",
     "options": ["ثلاثة", "$x = 3$", "أربعة", "خمسة"], "answer": "A"},
]  # fmt: skip

# Reads, per question paragraph and option: its computed direction, its box, the
# centre x of its first character, and the characters of each formula as drawn
# (KaTeX's visible HTML, not its MathML) with the centre x of each glyph.
_PROBE = """() => {
  const centre = (node, i) => {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const rect = range.getBoundingClientRect();
    return rect.left + rect.width / 2;
  };
  const glyphs = (math) => {
    const drawn = math.querySelector(".katex-html") || math;
    const walker = document.createTreeWalker(drawn, NodeFilter.SHOW_TEXT);
    const found = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        if (node.data[i].trim()) found.push([node.data[i], centre(node, i)]);
      }
    }
    return found;
  };
  const firstText = (el) => {
    const text = el.querySelector(".t");
    if (!text || !text.firstChild) return null;
    return centre(text.firstChild, 0);
  };
  const block = (el) => {
    const rect = el.getBoundingClientRect();
    return {
      region: el.closest("[data-region]").getAttribute("data-region"),
      direction: getComputedStyle(el).direction,
      left: rect.left,
      right: rect.right,
      first: firstText(el),
      math: Array.from(el.querySelectorAll(".math")).map(glyphs),
    };
  };
  return {
    paragraphs: Array.from(document.querySelectorAll(".q-par")).map(block),
    options: Array.from(document.querySelectorAll(".option")).map(block),
  };
}"""
_SHOW_AND_LAYOUT = """async ([html, minScale, dsf]) => {
  await window.itemshotShow(html);
  return await window.itemshotLayout(minScale, dsf);
}"""


def rtl_items(tmp_path: Path) -> list[Item]:
    """Return the right-to-left items, loaded through the dataset adapter."""
    path = tmp_path / "rtl.jsonl"
    path.write_text(
        "\n".join(json.dumps(row, ensure_ascii=False) for row in RTL_ROWS) + "\n", encoding="utf-8"
    )
    return list(load_dataset(path, format="generic").items)


def page_for(item: Item, scene: str) -> PageDocument:
    """Return the page of `item` in `scene` with the scene's default look."""
    presentation = PresentationSpec(scene=scene).resolve(random.Random(1))
    return build_page(item, presentation, seed=1)


async def _read_pages(documents: list[PageDocument]) -> list[dict[str, Any]]:
    """Show each page in real Chromium as the backend does and return what `_PROBE` reads."""
    assets: dict[str, tuple[bytes, str]] = {}

    async def serve(route: Route) -> None:
        path = route.request.url.removeprefix(ORIGIN)
        try:
            if path == SHELL_PATH:
                body, mime = SHELL_HTML, "text/html"
            elif path in assets:
                body, mime = assets[path]
            else:
                body, mime = static_asset(path)
        except AssetNotAllowed:
            await route.abort("blockedbyclient")
            return
        await route.fulfill(status=200, body=body, content_type=mime)

    found = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=find_chromium(), args=["--font-render-hinting=none"]
        )
        page = await browser.new_page()
        await page.route("**/*", serve)
        await page.goto(ORIGIN + SHELL_PATH, wait_until="load")
        for document in documents:
            assets.clear()
            assets.update(document.assets)
            await page.set_viewport_size(
                {"width": document.css_width, "height": document.css_height}
            )
            layout = await page.evaluate(_SHOW_AND_LAYOUT, [document.html, document.min_scale, 1])
            assert layout["fits"] and not layout["math_errors"], layout
            found.append(await page.evaluate(_PROBE))
        await browser.close()
    return found


def test_rtl_text_is_set_right_to_left_with_formulas_left_to_right_in_every_scene(
    tmp_path: Path,
) -> None:
    items = rtl_items(tmp_path)
    cases = [(item, scene) for item in items for scene in SCENES]
    readings = asyncio.run(_read_pages([page_for(item, scene) for item, scene in cases]))
    for (item, scene), reading in zip(cases, readings, strict=True):
        where = f"{item.id} in {scene}"
        (paragraph,) = reading["paragraphs"]
        assert paragraph["direction"] == "rtl", where
        (formula,) = paragraph["math"]
        # The formula reads x, =, 3 from left to right, and the sentence starts on the right
        # of it: the first word is drawn right of the formula's rightmost glyph.
        assert "".join(char for char, _ in sorted(formula, key=lambda g: g[1])) == "x=3", where
        assert paragraph["first"] > max(x for _, x in formula), where
        options = {o["region"]: o for o in reading["options"]}
        assert [options[f"option:{letter}"]["direction"] for letter in "ABCD"] == ["rtl"] * 4
        (alone,) = options["option:B"]["math"]  # a formula as the whole option
        assert "".join(char for char, _ in sorted(alone, key=lambda g: g[1])) == "x=3", where
        first, second = options["option:A"], options["option:B"]
        if abs(first["left"] - second["left"]) > 1:  # options side by side: A on the right
            assert first["right"] > second["right"], where


@pytest.mark.parametrize("style", FONT_STYLES)
def test_rtl_text_is_drawn_in_catalogue_faces_in_every_style(tmp_path: Path, style: str) -> None:
    """No RTL letter is left to a face the catalogue did not choose, or to none (tofu)."""
    path = tmp_path / "rtl.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in RTL_ROWS) + "\n")
    out = tmp_path / "out"
    status = run_cli("render", path, "--out", out, "--format", "generic", "--scene", "plain",
                     "--font-style", style, "--no-progress", "--no-verify")  # fmt: skip
    assert status == 0
    for row in read_jsonl(out / "manifest.jsonl"):
        layout = job_sidecar(out, row)["layout"]
        script = "Hebrew" if row["language"] == "he" else "Arabic"
        assert layout["fonts_uncovered"] == "", row["item_id"]
        assert any(script in family for family in layout["fonts_requested"]), layout
        allowed = set(layout["fonts_requested"]) | set(layout["fonts_fallback"])
        for region in layout["regions"]:
            used = {name for name in region["fonts"] if not name.startswith("KaTeX")}
            strays = {name for name in used if not any(name.startswith(f) for f in allowed)}
            assert not strays, (row["item_id"], region["name"], strays, allowed)


def test_left_to_right_pages_carry_no_dir_attribute() -> None:
    """LTR pages are the HTML they were before direction was set, so their bytes stay too."""
    items = load_dataset(SAMPLE_DATA).items
    for item in items:
        for scene in SCENES:
            assert ' dir="' not in page_for(item, scene).html, (item.id, scene)


def test_a_mixed_item_sets_each_block_in_its_own_direction(tmp_path: Path) -> None:
    """An English question with a Hebrew option; a Hebrew question with an English option."""
    rows = [
        {"id": "en-with-he", "question": "Which word means 'three'?",
         "options": ["שלוש", "four", "five", "six"], "answer": "A"},
        {"id": "he-with-en", "language": "he", "question": "איזו מילה פירושה שלוש?",
         "options": ["three", "ארבע", "7", "חמש"], "answer": "A"},
    ]  # fmt: skip
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    english, hebrew = load_dataset(path, format="generic").items
    readings = asyncio.run(_read_pages([page_for(english, "plain"), page_for(hebrew, "plain")]))
    directions = [
        [r["direction"] for r in (*reading["paragraphs"], *reading["options"])]
        for reading in readings
    ]
    assert directions[0] == ["ltr", "rtl", "ltr", "ltr", "ltr"]
    # A bare number takes the item's direction; the English option keeps its own.
    assert directions[1] == ["rtl", "ltr", "rtl", "rtl", "rtl"]


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "What is $x$?", "ltr"),
        ("en", "מהו $x$?", "rtl"),  # the text decides when the language is the default
        ("he", "DNA הוא", "rtl"),  # an opening Latin word does not turn a Hebrew sentence
        ("ar", "$x = 3$", "rtl"),  # no letters: the language's direction
        ("en", "$x = 3$ 42", "ltr"),
        ("fa-IR", "x", "rtl"),
    ],
)
def test_item_direction_from_language_and_text(language: str, text: str, expected: str) -> None:
    assert item_direction(language, parse_inline(text)) == expected


def test_block_direction_uses_letters_and_falls_back_to_the_item() -> None:
    assert text_direction(parse_inline("$x = 3$"), "rtl") == "rtl"
    assert text_direction(parse_inline("three"), "rtl") == "ltr"
    assert text_direction(parse_inline("x שלוש"), "rtl") == "rtl"
    assert text_direction(parse_inline("x שלוש"), "ltr") == "ltr"  # first strong letter
    assert text_direction(parse_inline("שלוש x"), "ltr") == "rtl"
