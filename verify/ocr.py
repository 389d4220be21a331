"""Tesseract calls: language choice, one-call OCR of stacked region crops, whole-page words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytesseract

from itemshot.verify.text import has_cjk

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


def words(image: np.ndarray, lang: str, psm: int = 3) -> list[Word]:
    """Return tesseract's words of `image` in its reading order."""
    data = pytesseract.image_to_data(
        image, lang=lang, config=f"--psm {psm}", output_type=pytesseract.Output.DICT
    )
    found: list[Word] = []
    for i, text in enumerate(data["text"]):
        if not text or not text.strip():
            continue
        found.append(
            Word(
                text=text,
                left=int(data["left"][i]),
                top=int(data["top"][i]),
                width=int(data["width"][i]),
                height=int(data["height"][i]),
                conf=float(data["conf"][i]),
                line=(int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i])),
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
