"""Font files behind family names: the one fontconfig lookup every stage uses.

`match_font` asks `fc-match` which file fontconfig draws a pattern with (a
family, optionally `:weight=…` or `:bold`); fontconfig substitutes another
family when the asked one is missing, so `font_file` refuses a match of
another family (FontMissing). Results are cached per process.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

# fontconfig's weight names for CSS weights (100..900).
_FC_WEIGHTS = {
    100: "thin",
    200: "extralight",
    300: "light",
    400: "regular",
    500: "medium",
    600: "semibold",
    700: "bold",
    800: "extrabold",
    900: "black",
}


class FontMissing(LookupError):
    """A catalogue family is not installed (fontconfig substituted another)."""


@dataclass(frozen=True)
class FontMatch:
    """The face fontconfig picked for a pattern: its file, face index and family names."""

    path: str
    index: int
    families: tuple[str, ...]

    def is_family(self, family: str) -> bool:
        """Return whether the face is of `family` (any of its names, case-insensitive)."""
        return family.strip().lower() in (name.lower() for name in self.families)


@cache
def match_font(pattern: str) -> FontMatch | None:
    """Return the face fontconfig picks for `pattern` (any family); None without fontconfig."""
    if shutil.which("fc-match") is None:
        return None
    try:
        found = subprocess.run(
            ["fc-match", "-f", "%{file}\n%{index}\n%{family}", pattern],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return None
    path, index, families = [*found, "", "", ""][:3]
    if not path:
        return None
    return FontMatch(path, int(index or 0), tuple(f.strip() for f in families.split(",")))


def font_file(family: str, weight: int = 400) -> tuple[str, int]:
    """Return (file, face index) of an installed family at a CSS weight; raise FontMissing."""
    name = family.strip().strip("'\"")
    pattern = f"{name}:weight={_FC_WEIGHTS.get(round(weight / 100) * 100, 'regular')}"
    found = match_font(pattern)
    if found is None:
        raise FontMissing(f"fc-match found no font for {name!r} (is fontconfig installed?)")
    if not found.is_family(name):
        raise FontMissing(
            f"font family {name!r} is not installed (fontconfig offers {found.path!r})"
        )
    return found.path, found.index
