"""The face of a page with no layout record, told from the ink of words read exactly."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from itemshot.fonts.catalogue import STYLES, choose_fonts
from itemshot.fonts.files import font_file as weighted_file
from itemshot.verify.checks.fonts import font_file
from itemshot.verify.settlers.drawn_face import (
    DrawnFace,
    Probe,
    as_source_spells,
    candidate_families,
    identify_face,
    is_probe,
    opening,
)
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS

WORDS = ("Panning", "motion", "effect")


def _ink(word: str, family: str, size: int, weight: int | None = None) -> np.ndarray:
    """Return `word` drawn in `family` at `size` px, dark on white, with a margin."""
    path = font_file(family) if weight is None else weighted_file(family, weight)[0]
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


@pytest.mark.parametrize("style", STYLES)
def test_every_style_roles_face_is_told_at_the_weight_it_is_drawn(style: str) -> None:
    # The "thin" role draws Noto Sans CJK JP at 300: weighed only against its regular
    # and bold files, its strokes fit no face well enough to name one.
    face = choose_fonts(style, "en").faces[0]
    drawn, estimated = 16, 19.0
    words = ("depolarization", "concentration", "overshooting")
    probes = [Probe(w, _ink(w, face.family, drawn, face.weight), estimated) for w in words]
    found = identify_face(probes, estimated, "en", DEFAULT_THRESHOLDS)
    assert found is not None and found.family == face.family


def test_a_probe_is_drawn_in_the_case_the_source_spells_it() -> None:
    # A handwritten "position?" read "Position": drawn as read, its capital fits no face.
    stem = "What is the velocity at position? Position it straight."
    assert as_source_spells("Straight", stem) == "straight"
    assert as_source_spells("velocity", stem) == "velocity"
    # Spelled both ways in the source: which one this is, only the reading says.
    assert as_source_spells("POSITION", stem) == "POSITION"
    assert as_source_spells("Position", stem) == "Position"


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
