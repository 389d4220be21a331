"""Fonts for drawn interface text (clocks, tab titles), found with fontconfig at run time."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache

from PIL import ImageFont

FontType = ImageFont.FreeTypeFont | ImageFont.ImageFont


@cache
def font_file(pattern: str) -> str | None:
    """Return the font file fontconfig picks for `pattern` (e.g. `DejaVu Sans:bold`), if any."""
    if shutil.which("fc-match") is None:
        return None
    result = subprocess.run(
        ["fc-match", "-f", "%{file}", pattern], capture_output=True, text=True, check=False
    )
    path = result.stdout.strip()
    return path or None


@cache
def ui_font(size: int, bold: bool = False) -> FontType:
    """Return a sans-serif UI font of `size` px (DejaVu Sans when installed)."""
    path = font_file("DejaVu Sans:bold" if bold else "DejaVu Sans")
    if path is None:
        return ImageFont.load_default(size)
    return ImageFont.truetype(path, max(size, 6))
