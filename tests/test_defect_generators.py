"""The swap defect exchanges two options' texts and leaves every label where it was drawn.

A swap that moved a label's letter with its text ("(" kept, "A) text" moved)
would make an image that says the same thing in another order: no meaning
changed, so a verifier passing it would be right and the benchmark wrong.
"""

from __future__ import annotations

import random

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from itemshot.renderer.items import Item
from itemshot.renderer.records import Layout, Region, box_to_quad
from itemshot.verify.checks.fonts import font_file
from tests.defects import options_swapped

FONT_PX = 22
ROW = 40


def _page(face: str, texts: tuple[str, str]) -> tuple[np.ndarray, Layout]:
    """Return a page with two option rows "(A)  text" in `face`, and their layout."""
    path = font_file(face)
    assert path is not None, f"{face} is not installed"
    font = ImageFont.truetype(path, FONT_PX)
    image = Image.new("RGB", (400, 2 * ROW + 20), "white")
    draw = ImageDraw.Draw(image)
    regions = []
    for row, (letter, text) in enumerate(zip("AB", texts, strict=True)):
        top = 10 + row * ROW
        draw.text((10, top), f"({letter})  {text}", fill="black", font=font)
        box = (5.0, float(top - 4), 390.0, float(top + ROW - 6))
        regions.append(
            Region(
                f"option:{letter}",
                "option",
                box,
                box_to_quad(box),
                text=text,
                label=f"({letter})",
                letter=letter,
                font_px=FONT_PX,
            )
        )
    return np.asarray(image), Layout(400, 2 * ROW + 20, tuple(regions))


def test_a_swap_leaves_the_labels_and_exchanges_the_texts() -> None:
    for face in ("DejaVu Sans Mono", "Noto Sans"):  # a mono label has blanks between its glyphs
        for texts in (("D", "A"), ("tr>tb", "tb is greater than tr")):
            image, layout = _page(face, texts)
            item = Item("swap", "Which?", texts, 0)
            made = options_swapped(image, item, layout, random.Random(0))
            assert made is not None
            swapped, _item = made
            expected, _layout = _page(face, texts[::-1])
            font = ImageFont.truetype(str(font_file(face)), FONT_PX)
            label_end = 10 + int(np.ceil(font.getlength("(A)"))) + 1
            # The labels are untouched, and the texts read as the other option's.
            assert np.array_equal(swapped[:, :label_end], image[:, :label_end]), (face, texts)
            ink = (swapped < 128).any(axis=2)
            assert ink[:, label_end:].any(), (face, texts)
            difference = np.abs(swapped.astype(int) - expected.astype(int)).max(axis=2)
            assert (difference[:, label_end:] > 128).mean() < 0.01, (face, texts)
