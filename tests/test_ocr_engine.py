"""The in-process tesseract: the words the `tesseract` program reads, whatever was read before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytesseract
from PIL import Image, ImageDraw, ImageFont

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.verify.checks.fonts import font_file
from itemshot.verify.reading.ocr import words

LINES = ("Which of the following is NOT a", "noble gas at 25 °C and 1.00 atm?")


def _page(lines: tuple[str, ...], px: int = 26) -> np.ndarray:
    """Return `lines` drawn in DejaVu Sans on white, grey, as the verifier's crops are."""
    font = ImageFont.truetype(font_file("DejaVu Sans"), px)
    width = max(int(font.getlength(line)) for line in lines) + 40
    image = Image.new("L", (width, 20 + len(lines) * 2 * px), 255)
    for index, line in enumerate(lines):
        ImageDraw.Draw(image).text((20, 10 + index * 2 * px), line, fill=25, font=font)
    return np.asarray(image)


def _program_words(image: np.ndarray, psm: int) -> list[tuple[str, int, int, float]]:
    """Return what the `tesseract` program reads of `image` (through pytesseract)."""
    data = pytesseract.image_to_data(
        image, lang="eng", config=f"--psm {psm}", output_type=pytesseract.Output.DICT
    )
    return [
        (t, data["left"][i], data["top"][i], float(data["conf"][i]))
        for i, t in enumerate(data["text"])
        if t and t.strip()
    ]


def _read(image: np.ndarray, psm: int) -> list[tuple[str, int, int, float]]:
    return [(w.text, w.left, w.top, w.conf) for w in words(image, "eng", psm=psm)]


def test_the_engine_reads_what_the_tesseract_program_reads() -> None:
    grey = _page(LINES)
    # A colour page too: the page is read at the resolution the program estimates, not 96 dpi.
    tinted = np.stack([grey, np.maximum(grey, 40), np.maximum(grey, 90)], axis=-1)
    for page, psm in ((grey, 6), (grey, 4), (tinted, 3)):
        read = _read(page, psm)
        assert [w[0] for w in read][:4] == ["Which", "of", "the", "following"]
        assert read == _program_words(page, psm)


def test_a_reading_does_not_depend_on_what_the_engine_read_before() -> None:
    page, other = _page(LINES), _page(("EXCEPT 0.5 mM", "least"), px=40)
    first = _read(page, 6)
    _read(other, 7)
    _read(np.full((30, 30), 255, dtype=np.uint8), 6)  # a blank crop reads as nothing
    assert _read(page, 6) == first
    assert words(np.full((30, 30), 255, dtype=np.uint8), "eng", psm=6) == []


def test_rendered_pages_read_as_the_program_reads_them(tool_data: Path, tmp_path: Path) -> None:
    """Whole rendered pages read alike: textured scenes, colour and real layout.

    Here a resolution the program would not assume (a PIL image's 96 dpi)
    changes what is read.
    """
    items = load_dataset(tool_data).items[:2]
    requests = [
        JobRequest(item, PresentationSpec(scene=scene, font_style="serif"))
        for item in items
        for scene in ("game_console", "blackboard", "webpage")
    ]
    run_jobs(plan(requests, 0), tmp_path, RunSettings(workers=1))
    pages = sorted((tmp_path / "images").glob("*.png"))
    assert len(pages) == len(requests)
    for page in pages:
        pixels = np.asarray(Image.open(page).convert("RGB"))
        assert _read(pixels, 3) == _program_words(pixels, 3), page.name
