"""Glyphs a font draws alike: "1" and "l" in a handwriting face are the same stroke.

Some faces (Nanum Pen Script, several handwriting and display fonts) draw a
digit and a letter with one shape. An image in such a face shows "Figure 1"
exactly as the font draws it, and any reader, person or engine, sees the
stroke "l" the font made; a text check must not call that a mismatch. Which
characters look alike is measured per font, not assumed: both glyphs are
drawn from the font file, cropped to their ink, and compared by size and
overlap. Only pairs of the measured font are folded, and only for text in it.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from itemshot.verify.checks.fonts import font_file
from itemshot.verify.reading.text import normalise
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

# Pairs OCR confuses when a font draws them alike: digit/letter and label letters.
CANDIDATES = (
    ("1", "l"), ("1", "I"), ("l", "I"), ("0", "O"), ("0", "o"), ("O", "D"), ("5", "S"),
    ("8", "B"), ("2", "Z"), ("2", "z"), ("6", "G"), ("J", "3"), ("O", "Q"), ("9", "g"),
    ("9", "q"),
)  # fmt: skip
# Letters whose capital is, in many faces, their small form drawn larger ("v"/"V", "p"/"P"):
# a reader tells them apart by height beside their neighbours, which a handwriting face
# does not keep. Which a face draws so is measured up to scale. Not "m": "mL" and "ML" are
# other quantities.
CASE_CANDIDATES = "copsuvwxz"
BARE_STROKE = "|"  # how OCR writes a glyph that is one vertical stroke ("1" or "l" alike)
SIZE = 32  # px per em: about the size text is read at


def _ink(font: ImageFont.FreeTypeFont, char: str) -> np.ndarray | None:
    image = Image.new("L", (3 * SIZE, 3 * SIZE), 0)
    ImageDraw.Draw(image).text((SIZE, SIZE // 2), char, fill=255, font=font)
    pixels = np.asarray(image).astype(np.float32)
    ys, xs = np.nonzero(pixels > 40)
    if ys.size == 0:
        return None
    return pixels[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Return the correlation of two glyph bitmaps centred on one canvas and blurred by 1 px."""
    height, width = max(a.shape[0], b.shape[0]) + 4, max(a.shape[1], b.shape[1]) + 4
    canvas = np.zeros((2, height, width), dtype=np.float32)
    for index, glyph in enumerate((a, b)):
        top, left = (height - glyph.shape[0]) // 2, (width - glyph.shape[1]) // 2
        canvas[index, top : top + glyph.shape[0], left : left + glyph.shape[1]] = glyph
    x, y = (cv2.GaussianBlur(c, (0, 0), 1.0).ravel() for c in canvas)
    x, y = x - x.mean(), y - y.mean()
    return float(x @ y / max(1e-6, np.sqrt((x @ x) * (y @ y))))


def alike(a: np.ndarray, b: np.ndarray, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> bool:
    """Return whether a reader could take one glyph bitmap for the other out of context.

    Glyphs of one height (within `glyph_same_height_ratio`) leave a reader
    only their shape to tell them apart: a handwriting "0" as small as its
    "o" is read from context alone, and a lower correlation makes them alike
    (`glyph_min_similarity_same_height`, else `glyph_min_similarity`).
    """
    tall, short = sorted((a.shape[0], b.shape[0]), reverse=True)
    if tall > thresholds.glyph_max_height_ratio * short:
        return False
    score = similarity(a, b)
    if tall <= thresholds.glyph_same_height_ratio * short:
        return score >= thresholds.glyph_min_similarity_same_height
    return score >= thresholds.glyph_min_similarity


def alike_up_to_scale(
    small: np.ndarray, large: np.ndarray, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> bool:
    """Return whether two glyph bitmaps have one shape once drawn at one size (a letter's cases)."""
    scaled = cv2.resize(small, (large.shape[1], large.shape[0]), interpolation=cv2.INTER_AREA)
    return similarity(scaled, large) >= thresholds.glyph_min_similarity


@lru_cache(maxsize=64)
def lookalikes(
    family: str, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> tuple[tuple[str, str], ...]:
    """Return the candidate pairs this installed family draws alike (empty if not installed).

    A letter's two cases count as alike when they have one shape up to scale.
    """
    path = font_file(family)
    if path is None:
        return ()
    try:
        font = ImageFont.truetype(path, SIZE)
    except OSError:
        return ()
    found = []
    for a, b in CANDIDATES:
        ink_a, ink_b = _ink(font, a), _ink(font, b)
        if ink_a is None or ink_b is None:
            continue
        if alike(ink_a, ink_b, thresholds):
            found.append((a, b))
    for letter in CASE_CANDIDATES:
        small, large = _ink(font, letter), _ink(font, letter.upper())
        if small is not None and large is not None and alike_up_to_scale(small, large, thresholds):
            found.append((letter, letter.upper()))
    return tuple(found)


def groups(pairs: tuple[tuple[str, str], ...]) -> list[frozenset[str]]:
    """Return the lookalike groups of a font's pairs, joined transitively ("1"~"I", "I"~"l").

    A group holding a bare stroke ("1", "l" or "I" drawn alike) also holds "|",
    which is how OCR writes such a stroke.
    """
    found: list[set[str]] = []
    for a, b in pairs:
        joined = [g for g in found if a in g or b in g]
        merged = {a, b}.union(*joined)
        found = [g for g in found if g not in joined] + [merged]
    for group in found:
        if len(group & {"1", "l", "I"}) >= 2:
            group.add(BARE_STROKE)
    return [frozenset(g) for g in found]


def _drawn_alike(read: str, written: str, found: list[frozenset[str]]) -> bool:
    """Return whether `read` is `written` glyph for glyph, each pair equal or drawn alike."""
    return len(read) == len(written) and all(
        a == b or any(a in g and b in g for g in found) for a, b in zip(read, written, strict=True)
    )


def read_as_drawn(
    observed: str, expected: str, family: str, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> str:
    """Return the OCR text with tokens the font draws as a word of the source made that word.

    "Figure l" read from a face whose "1" is a bare stroke becomes "Figure 1"
    when the source says "Figure 1" ("EI" becomes "E1", "l10°" "110°",
    "I-msquare" "1-msquare"), and "1.(a)" becomes "l.(a)" where the source
    has the letter. A token is rewritten only into a word or piece of the
    source it is glyph for glyph, each pair equal or drawn alike in the face,
    and never when the source has the token as it was read (the word "I"),
    so a changed digit (1 → 7) still differs. The font's lookalikes are
    measured by `thresholds`' `glyph_*`.
    """
    found = groups(lookalikes(family, thresholds)) if family else []
    if not found:
        return observed
    sequence = normalise(expected).split()
    words = set(sequence)
    written: dict[int, list[str]] = {}
    # A word broken at its hyphen across two lines ("EV71-" / "related") is read in pieces,
    # and the reading is cut at brackets and operators ("l.(a)>L(a)"): so is the source.
    pieces = {
        piece for word in words for piece in (word, *_hyphen_pieces(word), *_PIECE.findall(word))
    }
    cores = {_core(piece) for piece in pieces} - {""}
    for core in sorted(cores):  # one order whatever the hash seed: the first alike wins
        written.setdefault(len(core), []).append(core)
    # A handwriting face sets words close, and an engine runs a bare "1" into the word after
    # it ("Figure 1 E" read "Figure IE"): the pair is written back as the source spaces it.
    for first, second in itertools.pairwise(_core(word) for word in sequence):
        if first and second and (_numbered(first) or _numbered(second)):
            written.setdefault(len(first + second), []).append(f"{first} {second}")

    def rewrite(match: re.Match[str]) -> str:
        piece = match.group(0)
        core = piece.rstrip(".,;:!?")
        label = match.start() > 0 and observed[match.start() - 1] in "([" and len(core) == 1
        if label or core in words or core in cores:
            return piece
        for source in written.get(len(core), ()):
            joined = source.replace(" ", "")
            if joined != core and _drawn_alike(core, joined, found):
                return source + piece[len(core) :]
        return piece

    return _PIECE.sub(rewrite, observed)


_ROMAN = re.compile(r"[IVX]+")  # a numeral of letters: "I" and "1" are one stroke in some faces


def _core(piece: str) -> str:
    """Return a source word without the punctuation and brackets around it."""
    return piece.strip(".,;:!?()[]")


def _numbered(core: str) -> bool:
    """Return whether a source word is a number (a digit in it, or a roman numeral)."""
    return any(c.isdigit() for c in core) or bool(_ROMAN.fullmatch(core))


def _hyphen_pieces(word: str) -> list[str]:
    """Return the pieces a line break at a hyphen leaves ("EV71-", "related" of "EV71-related")."""
    parts = word.split("-")
    return [f"{part}-" for part in parts[:-1]] + parts[-1:] if len(parts) > 1 else []


_PIECE = re.compile(r"[^\s()\[\]+=/:;]+")  # a word or number between spaces, brackets, operators


def same_letter_as_drawn(
    read: str | None, letter: str, family: str, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> bool:
    """Return whether a label read as `read` is `letter` in a face that draws the two alike."""
    if read is None or not family:
        return False
    return any({read, letter} <= g for g in groups(lookalikes(family, thresholds)))
