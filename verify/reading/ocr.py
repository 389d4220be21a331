"""Tesseract calls: language choice, one-call OCR of stacked region crops, whole-page words.

Tesseract runs in this process through its C API (`tesserocr`), one engine
per language per thread, loaded once: starting the `tesseract` program per
call costs about 0.1 s of loading its models, more than reading a small
crop. `words` gives what `pytesseract.image_to_data` gives for the same
pixels (the same library reads them; confidences truncated as it does).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pytesseract
from PIL import Image

from itemshot.verify.reading.text import has_cjk

GAP = 48  # blank px between stacked crops: tesseract never joins lines across it
MARGIN = 16


def language_for(language: str, texts: Sequence[str] = ()) -> str:
    """Return the tesseract language for an item: `jpn` for Japanese, `eng+jpn` for mixed."""
    if language.lower().startswith(("ja", "jp")):
        return "jpn"
    if any(has_cjk(t) for t in texts):
        return "eng+jpn"
    return "eng"


@dataclass(frozen=True)
class Word:
    """One OCR word with its box in the OCR'd image and its confidence."""

    text: str
    left: int
    top: int
    width: int
    height: int
    conf: float
    line: tuple[int, int, int]


_ENGINES = threading.local()  # one engine per language per thread: an engine is not thread-safe
TSV_COLUMNS = 12  # level page block paragraph line word left top width height conf text


def _engine(lang: str) -> Any:
    """Return this thread's tesseract engine (a `tesserocr.PyTessBaseAPI`) for `lang`.

    Imported on first use, not with this module: tesseract's OpenMP runtime
    reads `OMP_THREAD_LIMIT` once, when it loads, and it must read 1 (the
    parallelism is one process per core; a pool worker forked from a parent
    that had loaded it with more would run several threads on a shared core).
    """
    if "tesserocr" not in sys.modules:
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    import tesserocr

    engines: dict[str, Any] = _ENGINES.__dict__.setdefault("by_lang", {})
    if lang not in engines:
        engines[lang] = tesserocr.PyTessBaseAPI(path=_tessdata(), lang=lang)
    return engines[lang]


@lru_cache(maxsize=1)
def _tessdata() -> str:
    """Return the folder of the `tesseract` program's models, which the engine reads too.

    A tesserocr wheel bundles its own library, which looks elsewhere; asking
    the program keeps one set of models for both.
    """
    if os.environ.get("TESSDATA_PREFIX"):
        return os.environ["TESSDATA_PREFIX"]
    listing = subprocess.run(
        [pytesseract.pytesseract.tesseract_cmd, "--list-langs"],
        capture_output=True,
        text=True,
        check=True,
    )
    # 'List of available languages in "/usr/share/tesseract-ocr/5/tessdata/" (3):'
    return (listing.stdout + listing.stderr).split('"')[1]


def words(image: np.ndarray, lang: str, psm: int = 3) -> list[Word]:
    """Return tesseract's words of `image` in its reading order."""
    engine = _engine(lang)
    engine.SetPageSegMode(psm)
    pixels = np.ascontiguousarray(image)
    if pixels.dtype != np.uint8:
        pixels = np.asarray(Image.fromarray(image).convert("L" if image.ndim == 2 else "RGB"))
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    height, width = pixels.shape[:2]
    # Raw pixels, no resolution: as the program reads a PNG without one (it estimates it from
    # the text). A PIL image would carry 96 dpi in, and the page would be read otherwise.
    engine.SetImageBytes(pixels.tobytes(), width, height, channels, channels * width)
    try:
        tsv = engine.GetTSVText(0)
    finally:
        engine.Clear()  # nothing of this image is kept for the next one
    found: list[Word] = []
    for row in tsv.splitlines():
        cells = row.split("\t")
        if len(cells) < TSV_COLUMNS or not cells[11].strip():
            continue
        block, paragraph, line, left, top, width, height = (
            int(c) for c in cells[2:5] + cells[6:10]
        )
        # pytesseract truncates the confidence to an integer; the thresholds were set on that.
        found.append(
            Word(
                cells[11],
                left,
                top,
                width,
                height,
                float(int(float(cells[10]))),
                (block, paragraph, line),
            )
        )
    return found


def join_words(found: Sequence[Word]) -> str:
    """Return words joined into text, one line per tesseract line."""
    lines: list[str] = []
    current: tuple[int, int, int] | None = None
    for word in found:
        if word.line != current:
            lines.append(word.text)
            current = word.line
        else:
            lines[-1] += " " + word.text
    return "\n".join(lines)


def ocr_stacked(crops: Sequence[np.ndarray], lang: str) -> list[str]:
    """OCR several grey crops in one tesseract call; return the text of each crop.

    The crops are stacked top to bottom on white with wide blank gaps, OCR'd
    once as a block of text, and each word is given back to the crop its
    centre falls in. One process start per image instead of one per region.
    """
    if not crops:
        return []
    width = max(c.shape[1] for c in crops) + 2 * MARGIN
    height = sum(c.shape[0] for c in crops) + GAP * (len(crops) - 1) + 2 * MARGIN
    canvas = np.full((height, width), 255, dtype=np.uint8)
    spans: list[tuple[int, int]] = []
    y = MARGIN
    for crop in crops:
        canvas[y : y + crop.shape[0], MARGIN : MARGIN + crop.shape[1]] = crop
        spans.append((y, y + crop.shape[0]))
        y += crop.shape[0] + GAP
    per_crop: list[list[Word]] = [[] for _ in crops]
    for word in words(canvas, lang, psm=6 if len(crops) == 1 else 4):
        centre = word.top + word.height / 2
        for index, (top, bottom) in enumerate(spans):
            if top - GAP / 2 <= centre < bottom + GAP / 2:
                per_crop[index].append(word)
                break
    return [join_words(sorted_words(w)) for w in per_crop]


def sorted_words(found: Sequence[Word]) -> list[Word]:
    """Return words in reading order (tesseract's order, which is by line)."""
    return list(found)


def page_text(image: np.ndarray, lang: str) -> str:
    """Return the naive full-page `image_to_string` text (the baseline the benchmark compares)."""
    return pytesseract.image_to_string(image, lang=lang)
