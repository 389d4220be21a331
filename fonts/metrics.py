"""Measured x-heights of catalogue faces, and the size that gives a face a reference's x-height.

The x-height is measured from the outlines the face draws, not read from its
OS/2 `sxHeight` field (MotoyaLMaru leaves it at zero, Nanum Pen Script says
0.500): it is the median ink height, bottom to top, of the lowercase letters
with neither ascender nor descender (`X_HEIGHT_LETTERS`). Bottom to top, not
baseline to top: Nanum Pen Script's letters float 0.15 em above its baseline,
so its `x` tops out at 0.481 em but is 0.331 em tall. The median, not the `x`
alone: a handwriting face's letters differ in height (Nanum Pen Script's run
from 0.31 to 0.46 em, median 0.36). Two faces at the same CSS size differ in
x-height by up to a third (Nanum Pen Script 0.360, Noto Sans 0.546), so a
font-style contrast at one nominal size also changes the text size;
`matched_size` removes that. The page measures the same quantity with the
browser's own text metrics (`templates/static/page.js`, `xHeight`).
"""

from __future__ import annotations

import statistics
from functools import cache

from fontTools.pens.boundsPen import BoundsPen
from fontTools.ttLib import TTFont

from itemshot.fonts.catalogue import FontFace, base_faces
from itemshot.fonts.files import font_file

REFERENCE_STYLE = "regular"  # the role whose x-height every other face is matched to
X_HEIGHT_LETTERS = "acemnorsuvwxz"


class NoXHeight(LookupError):
    """A face that draws none of the x-height letters: its x-height cannot be measured."""


@cache
def x_height_ratio(family: str, weight: int) -> float:
    """Return the face's x-height in em: the median ink height of `X_HEIGHT_LETTERS`."""
    path, index = font_file(family, weight)
    font = TTFont(path, fontNumber=index, lazy=True)
    cmap = font.getBestCmap() or {}
    glyphs = font.getGlyphSet()
    heights = []
    for letter in X_HEIGHT_LETTERS:
        glyph = cmap.get(ord(letter))
        if glyph is None:
            continue
        pen = BoundsPen(glyphs)
        glyphs[glyph].draw(pen)
        if pen.bounds is not None:
            heights.append(float(pen.bounds[3] - pen.bounds[1]))
    if not heights:
        raise NoXHeight(f"{family!r} draws none of {X_HEIGHT_LETTERS!r}")
    return statistics.median(heights) / float(font["head"].unitsPerEm)


def face_x_height(face: FontFace) -> float:
    """Return the x-height ratio of a catalogue face."""
    return x_height_ratio(face.family, face.weight)


def reference_face(language: str, japanese: bool = False) -> FontFace:
    """Return the face whose x-height the others are matched to: the reference role's first."""
    return base_faces(REFERENCE_STYLE, language, japanese=japanese).faces[0]


def matched_size(nominal_px: float, face: FontFace, reference: FontFace) -> float:
    """Return the CSS px at which `face` has the x-height `reference` has at `nominal_px`.

    Rounded to 1/100 px, so the page's CSS (and so its bytes) is stable.
    The reference face itself keeps `nominal_px` exactly.
    """
    if face.family == reference.family and face.weight == reference.weight:
        return float(nominal_px)
    try:
        ratio = face_x_height(reference) / face_x_height(face)
    except NoXHeight:
        return float(nominal_px)  # a script without Latin letters: nothing to match
    return round(nominal_px * ratio, 2)
