"""Font catalogue: installed families, glyph coverage with blank glyphs, recorded fallbacks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import ImageFont

from itemshot.fonts.catalogue import (
    FACE_KEYS,
    LOOKALIKES,
    STYLES,
    FontFace,
    all_faces,
    base_faces,
)
from itemshot.fonts.coverage import face_draws, resolve_fonts
from itemshot.fonts.files import FontMissing, font_file

README = Path(__file__).resolve().parents[1] / "fonts" / "README.md"


def test_every_catalogue_family_is_installed_and_documented() -> None:
    readme = README.read_text(encoding="utf-8")
    for face in all_faces():
        path, _index = font_file(face.family, face.weight)
        assert Path(path).is_file()
        assert face.family in readme, face.family
        assert face.package in readme, face.package
    for name in LOOKALIKES:
        assert name in readme


def test_a_missing_family_is_refused_not_substituted() -> None:
    with pytest.raises(FontMissing, match="not installed"):
        font_file("Itemshot Nonexistent Sans", 400)


def test_blank_glyphs_count_as_missing() -> None:
    nanum = base_faces("handwritten", "en").faces[0]
    assert nanum.family == "Nanum Pen Script"
    assert face_draws(nanum, "A")
    assert not face_draws(nanum, "漢")  # in the cmap, but drawn blank


def test_japanese_text_puts_the_japanese_face_first_even_in_an_english_item() -> None:
    choice = resolve_fonts("handwritten", "en", "Ohm's law: 電圧 = IR")
    assert choice.families == ("Klee One", "Nanum Pen Script")
    assert choice.uncovered == ""


@pytest.mark.parametrize("style", STYLES)
def test_uncovered_characters_take_the_documented_fallback(style: str) -> None:
    choice = resolve_fonts(style, "en", "Let ∮ be a contour integral ≠ 0 ⇒ done")
    assert choice.uncovered == ""
    covered = "".join(choice.fallback_chars.values())
    for char in covered:
        assert not any(face_draws(f, char) for f in choice.faces)
    assert set(choice.fallback_chars) == set(choice.fallback_families)
    assert choice.css_stack().split(", ")[: len(choice.families)] == [
        f'"{f}"' for f in choice.families
    ]


def test_comic_latin_lacks_greek_and_records_dejavu() -> None:
    choice = resolve_fonts("comic", "en", "angle α and β")
    assert choice.fallback_chars == {"DejaVu Sans": "αβ"}
    assert choice.css_stack() == '"Comic Neue", "DejaVu Sans"'


def test_lookalike_keys_cover_every_mmmu_pro_family() -> None:
    assert set(FACE_KEYS.values()) == set(LOOKALIKES)
    choice = resolve_fonts("regular", "en", "x", face="palatino_linotype")
    assert choice.families == ("TeX Gyre Pagella",)


def _ink(face: FontFace, char: str) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """Return the glyph's ink mask at 200 px and its box relative to the baseline."""
    path, index = font_file(face.family, face.weight)
    font = ImageFont.truetype(path, 200, index=index)
    mask = font.getmask(char, mode="L")
    ink = np.asarray(mask, dtype=np.uint8).reshape(mask.size[1], mask.size[0]) > 127
    return ink, font.getbbox(char, anchor="ls")


def _draws_as_itself(face: FontFace, char: str) -> bool:
    """Return whether the face's glyph for a backslash or a tilde looks like one.

    A backslash is one stroke from top left to bottom right (its ink's x and y
    correlate; "₩" and "¥" do not). A tilde sits below the x-height; a raised
    small tilde "˜" or an overline sits above it.
    """
    if char == "\\":
        ys, xs = np.nonzero(_ink(face, char)[0])
        return float(np.corrcoef(xs, ys)[0, 1]) > 0.6
    _, (_, top, _, bottom) = _ink(face, char)
    _, (_, x_top, _, _) = _ink(face, "x")
    return -(top + bottom) / 2 < 0.6 * -x_top


def test_the_catalogue_knows_which_faces_draw_backslash_or_tilde_as_another_character() -> None:
    checked = 0
    for face in all_faces():
        for char in ("\\", "~"):
            if not face_draws(face, char):
                continue  # the face has no such glyph: the browser never uses it for one
            assert face.misdraws(char) == (not _draws_as_itself(face, char)), (face.family, char)
            checked += 1
    assert checked >= 40
    known = {face.family: dict(face.draws_as) for face in all_faces() if face.draws_as}
    assert known == {
        "Nanum Pen Script": {"\\": "₩"},
        "NanumBarunpen": {"\\": "₩"},
        "MotoyaLMaru": {"\\": "¥", "~": "˜"},
    }


def test_characters_a_face_misdraws_are_set_in_a_face_that_draws_them() -> None:
    handwritten = resolve_fonts("handwritten", "en", "86°43\\25.9' and a~b")
    assert handwritten.avoided == "\\"
    assert handwritten.fallback_chars == {"DejaVu Sans": "\\"}
    assert not any(face.misdraws("\\") for face in handwritten.avoided_faces)
    assert handwritten.avoided_css_stack().startswith('"DejaVu Sans"')
    comic_ja = resolve_fonts("comic", "ja", "角度 a\\b ~ c")
    assert comic_ja.families == ("MotoyaLMaru", "Comic Neue")
    assert comic_ja.avoided == "\\~" and comic_ja.fallback_chars == {"Comic Neue": "\\~"}
    assert resolve_fonts("regular", "en", "a\\b ~ c").avoided == ""
