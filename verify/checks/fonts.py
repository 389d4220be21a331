"""What the verifier knows of a family: its files (`itemshot.fonts.files`) and glyph coverage."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fontTools.ttLib import TTFont

from itemshot.fonts.catalogue import all_faces
from itemshot.fonts.files import FontMissing
from itemshot.fonts.files import font_file as installed_font

DEFAULT_X_HEIGHT = 0.52  # share of the em, when a font does not say


@dataclass(frozen=True)
class FontFacts:
    """What the verifier needs to know about one family: its file, code points, x-height."""

    family: str
    path: str
    codepoints: frozenset[int]
    x_height: float  # in em


def font_file(family: str) -> str | None:
    """Return the file of `family`'s regular face, or None when the family is not installed."""
    try:
        return installed_font(family)[0]
    except FontMissing:
        return None


@lru_cache(maxsize=128)
def face_files(family: str) -> tuple[str, ...]:
    """Return the files of the family's regular and bold faces (one when they are the same).

    fontconfig matches a weight within the family; a family with no bold
    face gives its regular file twice, returned once. Empty when the family
    is not installed (fontconfig would substitute another: that is refused).
    """
    found: list[str] = []
    for weight in _weights(family):
        with contextlib.suppress(FontMissing):
            path = installed_font(family, weight)[0]
            if path not in found:
                found.append(path)
    return tuple(found)


def _weights(family: str) -> tuple[int, ...]:
    """Return the weights a page may draw `family` at: regular, bold and any a style role sets.

    The "thin" role draws Noto Sans CJK JP at 300: weighed against its
    regular file, thin strokes match a drawing too heavy for them.
    """
    roles = {face.weight for face in all_faces() if face.family == family}
    return tuple(sorted({400, 700} | roles, key=lambda w: (w != 400, w)))


@lru_cache(maxsize=128)
def font_facts(family: str) -> FontFacts | None:
    """Return the code points and x-height of an installed family, or None if not installed."""
    path = font_file(family)
    if path is None:
        return None
    font = (
        TTFont(path, fontNumber=0, lazy=True)
        if Path(path).suffix.lower()
        in (
            ".ttc",
            ".otc",
        )
        else TTFont(path, lazy=True)
    )
    try:
        codepoints = frozenset(font.getBestCmap() or {})
        units = font["head"].unitsPerEm or 1000
        x_height = DEFAULT_X_HEIGHT
        if "OS/2" in font and getattr(font["OS/2"], "sxHeight", 0):
            x_height = font["OS/2"].sxHeight / units
    finally:
        font.close()
    return FontFacts(family, path, codepoints, x_height)


def uncovered(text: str, families: list[str]) -> list[str]:
    """Return the characters of `text` that none of the installed `families` has a glyph for."""
    facts = [f for f in (font_facts(name) for name in families) if f is not None]
    if not facts:
        return []
    missing: list[str] = []
    for char in dict.fromkeys(text):
        if char.isspace() or not char.isprintable():
            continue
        if not any(ord(char) in f.codepoints for f in facts):
            missing.append(char)
    return missing
