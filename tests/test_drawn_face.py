"""The face of a page with no layout record, told from the ink of words read exactly."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from itemshot.verify.checks.fonts import font_file
from itemshot.verify.settlers.drawn_face import (
    DrawnFace,
    Probe,
    candidate_families,
    identify_face,
    is_probe,
    opening,
)
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS

WORDS = ("Panning", "motion", "effect")


def _ink(word: str, family: str, size: int) -> np.ndarray:
    """Return `word` drawn in `family` at `size` px, dark on white, with a margin."""
    path = font_file(family)
    assert path is not None, family
    font = ImageFont.truetype(path, size)
    width = round(font.getlength(word)) + size
    image = Image.new("L", (width, 2 * size), 255)
    ImageDraw.Draw(image).text((size // 2, size // 3), word, fill=20, font=font)
    return np.asarray(image)


@pytest.mark.parametrize("family", ["Nanum Pen Script", "Noto Sans", "JetBrains Mono"])
def test_the_face_that_drew_the_words_is_told_from_their_ink(family: str) -> None:
    drawn = 30
    estimated = 26.0  # what OCR boxes suggest: not the face's drawn size
    probes = [Probe(w, _ink(w, family, drawn), estimated) for w in WORDS]
    face = identify_face(probes, estimated, "en", DEFAULT_THRESHOLDS)
    assert face is not None
    assert face.family == family
    assert abs(face.size - drawn) <= 1
    assert face.drawn_px(estimated) == pytest.approx(face.size)
    assert face.score - face.runner_up_score >= DEFAULT_THRESHOLDS.face_lead


def test_no_face_is_claimed_for_ink_no_catalogue_face_drew() -> None:
    noise = np.random.default_rng(7).integers(0, 256, size=(60, 240), dtype=np.uint8)
    probes = [Probe(w, noise, 26.0) for w in WORDS]
    assert identify_face(probes, 26.0, "en", DEFAULT_THRESHOLDS) is None
    assert identify_face([], 26.0, "en", DEFAULT_THRESHOLDS) is None


def test_probes_are_long_source_words_of_letters() -> None:
    source = {"panning", "blur", "photo1"}
    picked = [
        w
        for w in ("Panning", "blur", "Photo1", "Tanning")
        if is_probe(w, source, DEFAULT_THRESHOLDS)
    ]
    assert picked == ["Panning"]
    assert "Nanum Pen Script" in candidate_families("en")


def test_a_fields_size_is_fitted_to_its_ink_not_to_its_boxes() -> None:
    # Words of brackets box far taller than the stem's words: the size their boxes imply
    # (48) is not the size the option's text is drawn at (33), which its ink shows.
    face = DrawnFace("Nanum Pen Script", 33, 21.5, 0.95, "Noto Sans", 0.7, WORDS)
    crop = _ink("[Ca2+]", "Nanum Pen Script", 33)
    fitted = face.fitted_px(crop, "[Ca2+]", 48.0, DEFAULT_THRESHOLDS)
    assert fitted is not None and abs(fitted - 33) <= 1
    # Too short an opening tells no size; ink no drawing fits gives none either.
    assert face.fitted_px(_ink("1", "Nanum Pen Script", 33), "1", 48.0, DEFAULT_THRESHOLDS) is None
    blank = np.full((60, 240), 255, dtype=np.uint8)
    assert face.fitted_px(blank, "[Ca2+]", 48.0, DEFAULT_THRESHOLDS) is None


def test_an_opening_is_the_first_words_up_to_the_limit() -> None:
    assert opening("Suppose that a typical market", 16) == "Suppose that a"
    assert opening("Incomprehensibilities abound", 16) == "Incomprehensibilities"
