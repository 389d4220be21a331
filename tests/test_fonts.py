"""Font catalogue: installed families, glyph coverage with blank glyphs, recorded fallbacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from itemshot.fonts.catalogue import FACE_KEYS, LOOKALIKES, STYLES, all_faces, base_faces
from itemshot.fonts.coverage import FontMissing, face_draws, font_file, resolve_fonts

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
