"""Font catalogue: style roles × scripts → concrete families from Debian packages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class FontFace:
    """One concrete face: family name as fontconfig knows it, CSS weight, package, licence.

    `draws_as` lists (character, what the face draws instead) for code points
    the face maps to another character's glyph: Korean faces draw U+005C
    backslash as the won sign "₩", some Japanese faces draw it as the yen
    sign "¥" (the JIS and KS legacy code pages). The renderer never sets those
    characters in that face (see `coverage.resolve_fonts`).
    """

    family: str
    weight: int
    package: str
    licence: str
    draws_as: tuple[tuple[str, str], ...] = ()

    def misdraws(self, char: str) -> bool:
        """Return whether this face draws `char` as another character."""
        return any(source == char for source, _ in self.draws_as)


STYLES = ("regular", "bold", "thin", "handwritten", "comic", "serif", "mono")
SCRIPTS = ("latin", "japanese", "hebrew", "arabic")

# Faces whose glyph for a character is another character's (checked by rendering
# each face's U+005C and U+007E in tests/test_fonts.py). Nanum Pen Script and
# NanumBarunpen draw backslash as "₩"; MotoyaLMaru draws it as "¥" and its
# tilde as a raised small tilde "˜" (U+02DC), above the x-height.
_NANUM_PEN = FontFace(
    "Nanum Pen Script", 400, "fonts-nanum-extra", "OFL-1.1", draws_as=(("\\", "₩"),)
)
_NANUM_BARUNPEN = FontFace(
    "NanumBarunpen", 400, "fonts-nanum-extra", "OFL-1.1", draws_as=(("\\", "₩"),)
)
_MOTOYA_MARU = FontFace(
    "MotoyaLMaru",
    400,
    "fonts-motoya-l-maruberi",
    "Apache-2.0",
    draws_as=(("\\", "¥"), ("~", "˜")),
)

# Latin and Japanese faces per style role. A stack for text with Japanese in it
# lists the Japanese face first: some Latin faces (Nanum Pen Script) map CJK
# code points to blank glyphs, which would silently win over the Japanese face.
_LATIN: dict[str, FontFace] = {
    "regular": FontFace("Noto Sans", 400, "fonts-noto-core", "OFL-1.1"),
    "bold": FontFace("Noto Sans", 700, "fonts-noto-core", "OFL-1.1"),
    "thin": FontFace("Noto Sans CJK JP", 300, "fonts-noto-cjk", "OFL-1.1"),
    "handwritten": _NANUM_PEN,
    "comic": FontFace("Comic Neue", 400, "fonts-comic-neue", "OFL-1.1"),
    "serif": FontFace("TeX Gyre Termes", 400, "fonts-texgyre", "GUST-Font-License"),
    "mono": FontFace("JetBrains Mono", 400, "fonts-jetbrains-mono", "OFL-1.1"),
}
_JAPANESE: dict[str, FontFace] = {
    "regular": FontFace("Noto Sans CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
    "bold": FontFace("Noto Sans CJK JP", 700, "fonts-noto-cjk", "OFL-1.1"),
    "thin": FontFace("Noto Sans CJK JP", 300, "fonts-noto-cjk", "OFL-1.1"),
    "handwritten": FontFace("Klee One", 400, "fonts-klee", "OFL-1.1"),
    "comic": _MOTOYA_MARU,
    "serif": FontFace("Noto Serif CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
    "mono": FontFace("Noto Sans Mono CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
}

# Right-to-left scripts: the role's face for them, set after the Latin face (which has
# none of their letters), so Latin text keeps its own face. Noto has no handwritten,
# comic or monospaced Hebrew or Arabic; those roles take the script's plain sans face.
_NOTO = "fonts-noto-core"
_HEBREW_SANS = FontFace("Noto Sans Hebrew", 400, _NOTO, "OFL-1.1")
_ARABIC_SANS = FontFace("Noto Sans Arabic", 400, _NOTO, "OFL-1.1")
_RTL_FACES: dict[str, dict[str, FontFace]] = {
    "hebrew": {
        **dict.fromkeys(("regular", "thin", "handwritten", "comic", "mono"), _HEBREW_SANS),
        "bold": FontFace("Noto Sans Hebrew", 700, _NOTO, "OFL-1.1"),
        "serif": FontFace("Noto Serif Hebrew", 400, _NOTO, "OFL-1.1"),
    },
    "arabic": {
        **dict.fromkeys(("regular", "thin", "handwritten", "comic", "mono"), _ARABIC_SANS),
        "bold": FontFace("Noto Sans Arabic", 700, _NOTO, "OFL-1.1"),
        "serif": FontFace("Noto Naskh Arabic", 400, _NOTO, "OFL-1.1"),
    },
}
# Unicode blocks of each script: base letters, supplements and presentation forms.
_RTL_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "hebrew": ((0x0590, 0x05FF), (0xFB1D, 0xFB4F)),
    "arabic": (
        (0x0600, 0x06FF),
        (0x0750, 0x077F),
        (0x0870, 0x08FF),
        (0xFB50, 0xFDFF),
        (0xFE70, 0xFEFF),
    ),
}

# Coverage fallbacks per role, tried in order for characters the chosen faces
# lack (Greek, arrows, maths symbols, rare kanji…). Broad-coverage faces of the
# same look: DejaVu for Latin-side symbols, Noto CJK for everything East Asian.
_DEJAVU = "fonts-dejavu-core"
_FALLBACKS: dict[str, tuple[FontFace, ...]] = {
    "regular": (FontFace("DejaVu Sans", 400, _DEJAVU, "Bitstream-Vera"),),
    "bold": (FontFace("DejaVu Sans", 700, _DEJAVU, "Bitstream-Vera"),),
    "thin": (FontFace("DejaVu Sans", 400, _DEJAVU, "Bitstream-Vera"),),
    "handwritten": (FontFace("DejaVu Sans", 400, _DEJAVU, "Bitstream-Vera"),),
    "comic": (FontFace("DejaVu Sans", 400, _DEJAVU, "Bitstream-Vera"),),
    "serif": (FontFace("DejaVu Serif", 400, _DEJAVU, "Bitstream-Vera"),),
    "mono": (FontFace("DejaVu Sans Mono", 400, _DEJAVU, "Bitstream-Vera"),),
}
_CJK_FALLBACK = {
    "serif": FontFace("Noto Serif CJK JP", 400, "fonts-noto-cjk", "OFL-1.1"),
    "bold": FontFace("Noto Sans CJK JP", 700, "fonts-noto-cjk", "OFL-1.1"),
}
_CJK_DEFAULT = FontFace("Noto Sans CJK JP", 400, "fonts-noto-cjk", "OFL-1.1")

# Open look-alikes of the proprietary families the MMMU-Pro tool used (see README).
LOOKALIKES: dict[str, tuple[str, FontFace]] = {
    "Arial": ("regular", FontFace("Liberation Sans", 400, "fonts-liberation2", "OFL-1.1")),
    "Verdana": ("regular", FontFace("DejaVu Sans", 400, _DEJAVU, "Bitstream-Vera")),
    "Tahoma": ("regular", FontFace("DejaVu Sans Condensed", 400, _DEJAVU, "Bitstream-Vera")),
    "Georgia": ("serif", FontFace("DejaVu Serif", 400, _DEJAVU, "Bitstream-Vera")),
    "Palatino Linotype": (
        "serif",
        FontFace("TeX Gyre Pagella", 400, "fonts-texgyre", "GUST-Font-License"),
    ),
    "Courier New": ("mono", FontFace("Liberation Mono", 400, "fonts-liberation2", "OFL-1.1")),
    "Brush Script MT": (
        "handwritten",
        FontFace("Dancing Script", 700, "fonts-dancingscript", "OFL-1.1"),
    ),
    "Savoye LET": (
        "handwritten",
        FontFace("Dancing Script", 400, "fonts-dancingscript", "OFL-1.1"),
    ),
    "Bradley Hand": ("handwritten", _NANUM_BARUNPEN),
    "Nanum Pen Script": ("handwritten", _NANUM_PEN),
}
# Catalogue keys for `Presentation.font_face`: `auto` (the role's face) or a look-alike.
FACE_KEYS: dict[str, str] = {name.lower().replace(" ", "_"): name for name in LOOKALIKES}


@dataclass(frozen=True)
class FontChoice:
    """The faces an item is set in, in CSS fallback order, and the weight to ask for.

    `fallbacks` are coverage fallbacks appended after the faces because the
    item's text has characters the faces lack; `fallback_chars` records which
    characters each fallback family is there for, `uncovered` what no face has.
    """

    faces: tuple[FontFace, ...]
    weight: int
    fallbacks: tuple[FontFace, ...] = ()
    fallback_chars: dict[str, str] = field(default_factory=dict)
    uncovered: str = ""
    # Characters of the text the face that would set them draws as another
    # character (`FontFace.draws_as`), and the faces they are set in instead.
    avoided: str = ""
    avoided_faces: tuple[FontFace, ...] = ()

    @property
    def families(self) -> tuple[str, ...]:
        """Return the requested family names in fallback order (coverage fallbacks excluded)."""
        return tuple(dict.fromkeys(face.family for face in self.faces))

    @property
    def fallback_families(self) -> tuple[str, ...]:
        """Return the coverage fallback family names."""
        return tuple(f for f in dict.fromkeys(face.family for face in self.fallbacks))

    def css_stack(self) -> str:
        """Return the CSS font-family value; names come only from this catalogue."""
        names = dict.fromkeys([*self.families, *self.fallback_families])
        return ", ".join(f'"{family}"' for family in names)

    def avoided_css_stack(self) -> str:
        """Return the CSS font-family value for the `avoided` characters (empty when none)."""
        names = dict.fromkeys(face.family for face in self.avoided_faces)
        return ", ".join(f'"{family}"' for family in names)


def has_japanese(text: str) -> bool:
    """Return whether `text` holds kana, kanji or full-width CJK punctuation."""
    return any(
        0x3000 <= ord(c) <= 0x30FF or 0x3400 <= ord(c) <= 0x9FFF or 0xF900 <= ord(c) <= 0xFAFF
        for c in text
    )


def rtl_scripts(text: str) -> tuple[str, ...]:
    """Return the right-to-left scripts (`hebrew`, `arabic`) whose letters `text` holds.

    By the text alone: a face is needed only for letters that are there.
    """
    found: set[str] = set()
    for char in set(text):
        code = ord(char)
        for script, ranges in _RTL_RANGES.items():
            if any(low <= code <= high for low, high in ranges):
                found.add(script)
    return tuple(script for script in _RTL_FACES if script in found)


def base_faces(
    style: str,
    language: str,
    face: str = "auto",
    japanese: bool = False,
    scripts: tuple[str, ...] = (),
) -> FontChoice:
    """Return the faces for a role (or a look-alike key) before any coverage check.

    Text in Japanese (by language or by its characters) gets the role's
    Japanese face first, so no Latin face's blank CJK glyphs can win. Each
    right-to-left script in `scripts` (see `rtl_scripts`) adds the role's face
    for it after the Latin face.
    """
    if face != "auto":
        style, latin = LOOKALIKES[FACE_KEYS[face]]
    else:
        latin = _LATIN[style]
    rtl = tuple(_RTL_FACES[script][style] for script in scripts)
    if language == "ja" or japanese:
        jp = _JAPANESE[style]
        return FontChoice((jp, latin, *rtl), jp.weight if face == "auto" else latin.weight)
    return FontChoice((latin, *rtl), latin.weight)


def fallbacks_for(style: str, face: str = "auto") -> tuple[FontFace, ...]:
    """Return the documented coverage fallback chain of a role (or a look-alike's role)."""
    if face != "auto":
        style = LOOKALIKES[FACE_KEYS[face]][0]
    return (*_FALLBACKS[style], _CJK_FALLBACK.get(style, _CJK_DEFAULT))


def choose_fonts(style: str, language: str, face: str = "auto") -> FontChoice:
    """Return the faces for a style role and an item language (`en`, `ja`, …), unchecked."""
    return base_faces(style, language, face)


def all_faces() -> list[FontFace]:
    """Return every face in the catalogue (for install checks and documentation)."""
    faces = [*_LATIN.values(), *_JAPANESE.values(), _CJK_DEFAULT, *_CJK_FALLBACK.values()]
    faces += [f for by_role in _RTL_FACES.values() for f in by_role.values()]
    faces += [f for chain in _FALLBACKS.values() for f in chain]
    faces += [f for _, f in LOOKALIKES.values()]
    return list(dict.fromkeys(faces))
