"""Glyph coverage: does a family really draw every character of an item's text?

Font files are found at runtime with `fc-match` (`files.font_file`) and their
cmaps read with fontTools once per process. A code point counts as covered only when its glyph
has an outline (or the character is whitespace): Nanum Pen Script, for one,
maps thousands of CJK code points to blank glyphs.
"""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from functools import cache

from fontTools.pens.boundsPen import BoundsPen
from fontTools.ttLib import TTFont

from itemshot.fonts.catalogue import (
    FontChoice,
    FontFace,
    base_faces,
    fallbacks_for,
    has_japanese,
    rtl_scripts,
)
from itemshot.fonts.files import font_file


class _Coverage:
    """The drawable code points of one font file, computed lazily per code point."""

    def __init__(self, path: str, index: int) -> None:
        self.font = TTFont(path, fontNumber=index, lazy=True)
        self.cmap = self.font.getBestCmap() or {}
        self.glyphs = self.font.getGlyphSet()
        self._drawn: dict[str, bool] = {}

    def draws(self, char: str) -> bool:
        """Return whether the font maps `char` to a glyph with ink (whitespace needs none)."""
        glyph = self.cmap.get(ord(char))
        if glyph is None:
            return False
        if char.isspace() or unicodedata.category(char) in ("Zs", "Cf"):
            return True
        if glyph not in self._drawn:
            pen = BoundsPen(self.glyphs)
            self.glyphs[glyph].draw(pen)
            self._drawn[glyph] = pen.bounds is not None
        return self._drawn[glyph]


@cache
def _coverage(family: str, weight: int) -> _Coverage:
    return _Coverage(*font_file(family, weight))


def face_draws(face: FontFace, char: str) -> bool:
    """Return whether `face` draws `char` with ink."""
    return _coverage(face.family, face.weight).draws(char)


def _first_in_cmap(faces: tuple[FontFace, ...], char: str) -> FontFace | None:
    """Return the face the browser would pick for `char`: the first whose cmap has it."""
    for face in faces:
        if ord(char) in _coverage(face.family, face.weight).cmap:
            return face
    return None


def _ignorable(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") or char in "\n\r\t"


def resolve_fonts(style: str, language: str, text: str, face: str = "auto") -> FontChoice:
    """Return the faces for `text`, with coverage fallbacks appended for what they lack.

    A character is covered when the first face (in CSS order) whose cmap holds
    it draws it with ink. Characters no face covers go to the role's documented
    fallback chain; each fallback used is recorded with its characters; what
    even the fallbacks lack is recorded as `uncovered`. A character the face
    that would set it draws as another character (`FontFace.draws_as`: a
    backslash drawn as "₩") is `avoided`: set in `avoided_faces`, recorded
    like a fallback.
    """
    choice = base_faces(
        style, language, face, japanese=has_japanese(text), scripts=rtl_scripts(text)
    )
    chain = fallbacks_for(style, face)
    used: dict[str, list[str]] = {}
    fallbacks: list[FontFace] = []
    uncovered: list[str] = []
    avoided: list[str] = []
    for char in sorted(set(text)):
        if _ignorable(char):
            continue
        stack = (*choice.faces, *fallbacks)
        picked = _first_in_cmap(stack, char)
        if picked is not None and picked.misdraws(char):
            avoided.append(char)  # set in a face that draws it as itself (below)
            continue
        if picked is not None and face_draws(picked, char):
            if picked in fallbacks:
                used[picked.family].append(char)
            continue
        if picked is not None and picked in choice.faces:
            # The browser would take a blank glyph from a chosen face; no fallback
            # placed after it can win, so the character is recorded as uncovered.
            uncovered.append(char)
            continue
        for candidate in chain:
            if face_draws(candidate, char):
                if candidate not in fallbacks:
                    fallbacks.append(candidate)
                used.setdefault(candidate.family, []).append(char)
                break
        else:
            uncovered.append(char)
    avoided_faces: tuple[FontFace, ...] = ()
    if avoided:
        # The page sets these characters in their own stack: every face of the
        # item's stack and chain that draws none of them as another character.
        # Whichever face the browser then picks is recorded like a fallback,
        # so the layout record names every face a character was drawn in.
        candidates = dict.fromkeys((*choice.faces, *fallbacks, *chain))
        avoided_faces = tuple(f for f in candidates if not any(f.misdraws(c) for c in avoided))
        for char in avoided:
            picked = _first_in_cmap(avoided_faces, char)
            if picked is None or not face_draws(picked, char):
                uncovered.append(char)
                continue
            if picked not in fallbacks:
                fallbacks.append(picked)
            used.setdefault(picked.family, []).append(char)
    return replace(
        choice,
        fallbacks=tuple(fallbacks),
        fallback_chars={family: "".join(chars) for family, chars in used.items()},
        uncovered="".join(uncovered),
        avoided="".join(avoided),
        avoided_faces=avoided_faces,
    )
