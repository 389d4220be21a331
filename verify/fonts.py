"""Font files behind family names (fontconfig at run time) and their glyph coverage (fontTools)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fontTools.ttLib import TTFont

DEFAULT_X_HEIGHT = 0.52  # share of the em, when a font does not say


@dataclass(frozen=True)
class FontFacts:
    """What the verifier needs to know about one family: its file, code points, x-height."""

    family: str
    path: str
    codepoints: frozenset[int]
    x_height: float  # in em


@lru_cache(maxsize=1)
def _families() -> dict[str, list[str]]:
    """Return every installed family name (lower case) mapped to its font files."""
    if shutil.which("fc-list") is None:
        return {}
    listing = subprocess.run(
        ["fc-list", "--format", "%{file}\t%{family}\t%{style}\n"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    found: dict[str, list[tuple[int, str]]] = {}
    for line in listing.splitlines():
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        path, families = parts[0], parts[1]
        style = parts[2] if len(parts) > 2 else ""
        rank = 0 if "Regular" in style or "Book" in style else 1
        for family in families.split(","):
            found.setdefault(family.strip().lower(), []).append((rank, path))
    return {name: [p for _r, p in sorted(paths)] for name, paths in found.items()}


def font_file(family: str) -> str | None:
    """Return a font file of `family` (its regular face when there is one), or None."""
    files = _families().get(family.strip().strip("'\"").lower())
    return files[0] if files else None


# fontconfig's weights for CSS regular (400) and bold (700).
_FC_WEIGHTS = {"regular": 80, "bold": 200}


@lru_cache(maxsize=128)
def face_files(family: str) -> tuple[str, ...]:
    """Return the files of the family's regular and bold faces (one when they are the same).

    fontconfig matches a weight within the family; a family with no bold
    face gives its regular file twice, returned once. Empty when the family
    is not installed (fontconfig would substitute another: that is refused).
    """
    name = family.strip().strip("'\"")
    regular = font_file(name)
    if shutil.which("fc-match") is None or regular is None:
        return ()
    found: list[str] = []
    for weight in _FC_WEIGHTS.values():
        answer = subprocess.run(
            ["fc-match", "--format", "%{file}\t%{family}", f"{name}:weight={weight}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        path, _tab, families = answer.partition("\t")
        same = name.lower() in (f.strip().lower() for f in families.split(","))
        if path and same and path not in found:
            found.append(path)
    return tuple(found) or (regular,)


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
