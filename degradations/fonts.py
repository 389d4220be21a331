"""Fonts for drawn interface text (clocks, tab titles), found with fontconfig at run time."""

from __future__ import annotations

from functools import cache

from PIL import ImageFont

from itemshot.fonts.files import match_font

FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont


@cache
def ui_font(size: int, bold: bool = False) -> FontType:
    """Return a sans-serif UI font of `size` px (DejaVu Sans when installed)."""
    # Any sans serif will do for interface text: fontconfig's substitute is accepted.
    found = match_font("DejaVu Sans:bold" if bold else "DejaVu Sans")
    if found is None:
        return ImageFont.load_default(size)
    return ImageFont.truetype(found.path, max(size, 6))
