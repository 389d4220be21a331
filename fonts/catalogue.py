"""Font catalogue: style roles × scripts → concrete families from Debian packages."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FontFace:
    """One concrete face: family name as fontconfig knows it, CSS weight, package, licence."""

    family: str
    weight: int
    package: str
    licence: str


# Latin and Japanese faces per style role. A Japanese item's stack lists the
# Japanese face first: some Latin faces (Nanum Pen Script) map a few CJK code
# points to blank glyphs, which would silently win over the Japanese face.
_LATIN: dict[str, FontFace] = {
    "regular": FontFace("Noto Sans", 400, "fonts-noto-core", "OFL-1.1"),
    "bold": FontFace("Noto Sans", 700, "fonts-noto-core", "OFL-1.1"),
    "thin": FontFace("Noto Sans CJK JP", 300, "fonts-noto-cjk-extra", "OFL-1.1"),
    "handwritten": FontFace("Nanum Pen Script", 400, "fonts-nanum-extra", "OFL-1.1"),
    "comic": FontFace("Comic Neue", 400, "fonts-comic-neue", "OFL-1.1"),
    "serif": FontFace("TeX Gyre Termes", 400, "fonts-texgyre", "GUST-Font-License"),
    "mono": FontFace("JetBrains Mono", 400, "fonts-jetbrains-mono", "OFL-1.1"),
}
_JAPANESE: dict[str, FontFace] = {
    "regular": FontFace("Noto Sans CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
    "bold": FontFace("Noto Sans CJK JP", 700, "fonts-noto-cjk", "OFL-1.1"),
    "thin": FontFace("Noto Sans CJK JP", 300, "fonts-noto-cjk-extra", "OFL-1.1"),
    "handwritten": FontFace("Klee One", 400, "fonts-klee", "OFL-1.1"),
    "comic": FontFace("MotoyaLMaru", 400, "fonts-motoya-l-maruberi", "Apache-2.0"),
    "serif": FontFace("Noto Serif CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
    "mono": FontFace("Noto Sans Mono CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
}


@dataclass(frozen=True)
class FontChoice:
    """The faces an item is set in, in CSS fallback order, and the weight to ask for."""

    faces: tuple[FontFace, ...]
    weight: int

    @property
    def families(self) -> tuple[str, ...]:
        """Return the family names in fallback order."""
        return tuple(dict.fromkeys(face.family for face in self.faces))

    def css_stack(self) -> str:
        """Return the CSS font-family value; names come only from this catalogue."""
        return ", ".join(f'"{family}"' for family in self.families)


def choose_fonts(style: str, language: str) -> FontChoice:
    """Return the faces for a style role and an item language (`en`, `ja`, …)."""
    latin = _LATIN[style]
    if language == "ja":
        japanese = _JAPANESE[style]
        return FontChoice((japanese, latin), japanese.weight)
    return FontChoice((latin,), latin.weight)


def all_faces() -> list[FontFace]:
    """Return every face in the catalogue (for install checks and documentation)."""
    return list({id(f): f for f in [*_LATIN.values(), *_JAPANESE.values()]}.values())
