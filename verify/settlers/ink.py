"""Ink evidence: does a field's ink show a source token, or a rival of it?

OCR engines share blind spots: a handwriting face's "J" read as ")" by
both, its "1" after a comma read as "i", a label on a scan's dust not read
at all. Where every engine misses a token, the verifier still knows what no
engine does: the face and the size the text was set in (the layout record).
So it draws the token as the source has it, and every rival of it — each
other digit in each digit's place, the other option letters, the token's
unit with other prefixes or as another quantity, and whatever the engines
read — in that face at that size, and asks which drawing the ink matches.

A token counts as shown only when its own drawing is the best match by a
margin. A changed digit or unit is one of the rivals, so an image showing
another number than the source always has a rival that matches the ink at
least as well as the source does: the evidence can only ever settle an
engine's misreading, never a real difference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from itemshot.verify.checks.fonts import face_files
from itemshot.verify.reading.text import normalise
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

# What decides a verdict (the least match, the margin over a rival, the lead of a reading
# here, the tolerances of a context and a size, a blank window, a glyph beside) is the
# `ink_*` fields of `Thresholds`; what follows is how drawings are made and compared.
SCALES = (0.9, 1.1)  # sizes tried, 1 px apart, around the recorded one: a capture resamples
DIFFERENT_INK = 64.0  # drawings differing by more than this in a column differ there
EDGE = 2  # px of blank drawn around a drawing's text, its origin's offset
SUPERSAMPLE = 4  # an emboldened drawing's scale while drawn: its stroke is a fraction of a px
WINDOW_PAD = 0.1  # em around the pixels where two drawings differ, compared with the ink
DIGITS = "0123456789"
# A unit's quantity prefixes and the symbols one quantity is most often swapped for.
PREFIXES = ("", "k", "M", "m", "c", "μ", "n", "G")
UNITS = (
    "m", "g", "s", "A", "K", "mol", "cd", "Hz", "N", "Pa", "J", "W", "C", "V", "F", "Ω", "T",
    "L", "eV", "min", "h", "d", "yr", "atm", "bar", "cal", "%", "°", "°C", "°F", "in", "ft",
    "lb",
)  # fmt: skip
_UNIT_TOKEN = re.compile(r"^([-+]?[\d.,]+)(.+)$")


@dataclass(frozen=True)
class Evidence:
    """How well the source token and its best rival match the ink, and the verdict."""

    token: str
    drawn: str  # the token with the context it was matched in
    score: float  # the source drawing's match with the ink where it was located
    rival: str  # the rival closest to (or past) the source's match
    rival_score: float  # that rival's match where the two drawings differ
    margin: float  # the source's lead over that rival there (the least lead of all rivals)
    # Where the token itself was found: (crop, row, column, size). Two places of one token
    # found at the same spot are one drawing, not two (`same_place`).
    at: tuple[int, int, int, int] | None = field(default=None, compare=False)
    # The thresholds it is judged by (`ink_min_match`, `ink_margin`).
    thresholds: Thresholds = field(default=DEFAULT_THRESHOLDS, compare=False, repr=False)

    def same_place(self, other: Evidence) -> bool:
        """Return whether two evidences found their token's drawing at the same spot of the ink."""
        if not self.same_line(other):
            return False
        assert self.at is not None and other.at is not None
        return abs(self.at[2] - other.at[2]) < max(self.at[3], other.at[3])

    def same_line(self, other: Evidence) -> bool:
        """Return whether two evidences found their tokens' drawings on one line of one crop."""
        if self.at is None or other.at is None:
            return False
        page, y, _x, size = self.at
        other_page, other_y, _other_x, other_size = other.at
        return _one_line((page, y, size), (other_page, other_y, other_size))

    @property
    def shown(self) -> bool:
        """Return whether the ink shows the source token rather than any rival."""
        t = self.thresholds
        return self.score >= t.ink_min_match and self.margin >= t.ink_margin

    @property
    def ambiguous(self) -> bool:
        """Return whether the ink matches the token's drawing but tells it from no close rival.

        Its drawing matches, no rival leads it by the margin either: in this
        face at this size the two are drawn too alike for the pixels to say
        which one the image shows.
        """
        t = self.thresholds
        return self.score >= t.ink_min_match and -t.ink_margin < self.margin < t.ink_margin

    def describe(self) -> str:
        """Return a one-line account for the region's measures."""
        verdict = "shown" if self.shown else "not shown"
        return (
            f"{self.drawn!r} {verdict}: match {self.score:.2f}; closest rival {self.rival!r} "
            f"{self.rival_score:.2f} where they differ, lead {self.margin:+.2f}"
        )


@dataclass(frozen=True)
class Face:
    """A face file as it is drawn: as designed, or emboldened as a browser draws a bold it lacks."""

    path: str
    emboldened: bool = False


def faces(family: str) -> tuple[Face, ...]:
    """Return the ways `family` may draw a page's text: its files, and a synthetic bold.

    The weight is not on record (a figure reference or a label is bold). A
    family with no bold file is drawn bold by the browser thickening its
    strokes, which no file has: that drawing is one more face to try.
    """
    files = face_files(family)
    synthetic = (Face(files[0], emboldened=True),) if len(files) == 1 else ()
    return (*(Face(f) for f in files), *synthetic)


@lru_cache(maxsize=256)
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def _embolden(size: int) -> float:
    """Return the px a synthetic bold adds to each side of a stroke at `size` (Skia's rule).

    The stroke grows by `size` × a ratio from 1/24 at 9 px to 1/32 at 36 px,
    half of it on each side.
    """
    ratio = float(np.interp(size, (9, 36), (1 / 24, 1 / 32)))
    return size * ratio / 2


# Drawings are asked again and again (a token's context at each size, for each rival and
# each place): one worker keeps its last 1,024, read-only (15 KB a drawing on average,
# 66 KB the largest seen: 16 MB, 70 MB at worst).
@lru_cache(maxsize=1024)
def _drawing(text: str, face: Face, size: int, blur: float) -> np.ndarray | None:
    """Return `text` drawn in the face at `size` px as blurred ink (high = ink).

    Every drawing shares one frame: its top is the face's ascender and its
    left the text's origin, so two texts drawn alike line up glyph for glyph
    and a drawing compares with another over the same pixels. An emboldened
    face is drawn at `SUPERSAMPLE` times the size with a stroke and reduced:
    its strokes grow by a fraction of a pixel.
    """
    scale = SUPERSAMPLE if face.emboldened else 1
    font = _font(face.path, size * scale)
    ascent, descent = font.getmetrics()
    width = int(np.ceil(font.getlength(text) / scale)) + 2 * EDGE
    if width <= 2 * EDGE:
        return None
    height = int(np.ceil((ascent + descent) / scale)) + 2 * EDGE
    image = Image.new("L", (width * scale, height * scale), 0)
    stroke = round(_embolden(size) * scale) if face.emboldened else 0
    ImageDraw.Draw(image).text(
        (EDGE * scale, EDGE * scale),
        text,
        fill=255,
        font=font,
        stroke_width=stroke,
        stroke_fill=255,
    )
    if scale > 1:
        image = image.resize((width, height), Image.Resampling.BOX)
    pixels = np.asarray(image, dtype=np.float32)
    if not (pixels > 40).any():
        return None
    drawing = cv2.GaussianBlur(pixels, (0, 0), blur)
    drawing.flags.writeable = False  # cached: shared by every caller
    return drawing


def _page(crop: np.ndarray, blur: float, margin: int) -> np.ndarray:
    """Return a normalised grey crop (dark ink on white) as blurred ink, with blank margins.

    Crops are trimmed close to their ink; a drawing's frame (ascender to
    descender) is taller than a line's ink, so the page gets room around it.
    """
    pixels = np.pad(255.0 - crop.astype(np.float32), margin)
    return cv2.GaussianBlur(pixels, (0, 0), blur)


def _window_sums(table: np.ndarray, height: int, width: int) -> np.ndarray:
    """Return the sum over every `height` × `width` window from an integral table."""
    return (
        table[height:, width:]
        - table[:-height, width:]
        - table[height:, :-width]
        + table[:-height, :-width]
    )


def window_std(page: np.ndarray, height: int, width: int) -> np.ndarray:
    """Return the std of every `height` × `width` window of the page (matchTemplate's grid)."""
    total, squares = cv2.integral2(page.astype(np.float64))[:2]
    count = float(height * width)
    mean = _window_sums(total, height, width) / count
    return np.sqrt(np.maximum(_window_sums(squares, height, width) / count - mean * mean, 0.0))


SIDE = 0.15  # em: the strip beside a located drawing's ink that must hold none
SIDE_GAP = 2  # px between the drawing's ink and its strips: the blur's halo of its own edge


def _ink_level(page: np.ndarray, thresholds: Thresholds) -> float:
    """Return the strip darkness over which a side strip holds another glyph's stroke.

    That is `ink_side_level` of the page's ink level (its 99.5th percentile).
    """
    inked = page[page > 0]
    return thresholds.ink_side_level * float(np.percentile(inked, 99.5)) if inked.size else 0.0


def _stands_alone(
    page: np.ndarray, level: float, drawing: np.ndarray, size: int, side_em: float = SIDE
) -> np.ndarray:
    """Return, per window of the drawing's size, whether no glyph touches its ink's sides.

    Glyphs of one word or number sit under 0.15 em apart in the faces used,
    words over 0.3 em: a drawing located inside a longer number ("20" in
    "420", "2024") has another glyph's stroke right beside its own ink.
    `side_em` is how far from its ink no glyph may be (0.15 em: none touches).
    """
    height, width = drawing.shape
    inked = drawing > 0.5 * drawing.max()
    columns = np.nonzero(inked.any(axis=0))[0]
    if columns.size == 0:
        return np.ones((page.shape[0] - height + 1, page.shape[1] - width + 1), dtype=bool)
    side = max(2, round(side_em * size))
    # Only the rows the drawing's ink spans: its frame reaches the face's ascender and
    # descender, where the lines above and below a tightly set line have theirs.
    ink_rows = np.nonzero(inked.any(axis=1))[0]
    top, tall = int(ink_rows[0]), int(ink_rows[-1] - ink_rows[0] + 1)
    # strongest[y, x] is the page's maximum over rows y..y+tall, columns x..x+side.
    kernel = np.ones((tall, side), np.uint8)
    strongest = cv2.dilate(
        page, kernel, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT, borderValue=0
    )
    rows, count = page.shape[0] - height + 1, page.shape[1] - width + 1
    x = np.arange(count)
    left = np.clip(x + columns[0] - SIDE_GAP - side, 0, page.shape[1] - 1)
    right = np.clip(x + columns[-1] + 1 + SIDE_GAP, 0, page.shape[1] - 1)
    beside = strongest[top : top + rows]
    return (beside[:, left] <= level) & (beside[:, right] <= level)


def _sizes(font_px: float) -> range:
    """Return the font sizes a drawing is tried at around the recorded one (1 px apart)."""
    return range(max(6, round(font_px * SCALES[0])), max(6, round(font_px * SCALES[-1])) + 1)


def _lift(face: Face, size: int, other: int) -> int:
    """Return how far below a `size` drawing's top an `other`-size drawing's top sits.

    Drawings of one face at two sizes line up on their baseline.
    """
    return _font(face.path, size).getmetrics()[0] - _font(face.path, other).getmetrics()[0]


# Where other places of a token were found: (crop, row, column of the token's first glyph).
Taken = Sequence[tuple[int, int, int]]


@dataclass(frozen=True)
class _Spot:
    """Where the source's drawing matches the ink best: crop, scale and top-left corner."""

    score: float
    face: Face  # the face drawn
    page: int
    size: int
    y: int
    x: int


def _locate(
    pages: Sequence[np.ndarray],
    levels: Sequence[float],
    text: str,
    face: Face,
    sizes: Iterable[int],
    blur: float,
    thresholds: Thresholds,
    taken: Taken = (),
    start: int = 0,
    apart: float = SIDE,
) -> _Spot | None:
    """Return the best `_Spot` of `text` at every size in every crop (None: nowhere).

    `levels` are the pages' `_ink_level`s, measured once per page. A window
    whose spread is under `ink_min_window_std` of the drawing's is no place;
    nor is one that puts the token (from character `start` of `text`) where
    `taken` says another place of it was found (`Evidence.same_place`), nor
    one with ink within `apart` em of the drawing's sides.
    """
    best: _Spot | None = None
    for size in sizes:
        drawing = _drawing(text, face, size, blur)
        if drawing is None:
            continue
        height, width = drawing.shape
        for index, page in enumerate(pages):
            if height > page.shape[0] or width > page.shape[1]:
                continue
            scores = cv2.matchTemplate(page, drawing, cv2.TM_CCOEFF_NORMED)
            spread = thresholds.ink_min_window_std * float(drawing.std())
            inked = window_std(page, height, width) >= spread
            inked &= _stands_alone(page, levels[index], drawing, size, apart)
            for page_at, y, x in taken:
                if page_at == index:
                    x -= _span(face, size, text, start, start)[0]
                    rows = slice(max(0, y - (size - 1) // 2), max(0, y + (size + 1) // 2))
                    inked[rows, max(0, x - size + 1) : max(0, x + size)] = False
            if not inked.any():
                continue
            scores = np.where(inked, scores, -1.0)
            y, x = np.unravel_index(int(scores.argmax()), scores.shape)
            if best is None or scores[y, x] > best.score:
                best = _Spot(float(scores[y, x]), face, index, size, int(y), int(x))
    return best


def face_fit(
    crops: Sequence[np.ndarray],
    text: str,
    family: str,
    sizes: Sequence[int],
    thresholds: Thresholds,
) -> tuple[float, int]:
    """Return how well `text` drawn in `family` matches the crops' ink at its best size, and the size.

    Each of the family's `faces` is tried (the weight is not on record);
    (-1.0, 0) when the family is not installed or nothing matches.
    """
    if not sizes or not crops:
        return -1.0, 0
    blur = max(0.6, min(sizes) / 24)
    pages = [_page(crop, blur, max(sizes)) for crop in crops]
    levels = [_ink_level(page, thresholds) for page in pages]
    best = (-1.0, 0)
    for face in faces(family):
        spot = _locate(pages, levels, text, face, sizes, blur, thresholds)
        if spot is not None and spot.score > best[0]:
            best = (spot.score, spot.size)
    return best


class _Centred:
    """Values with their mean taken out and their sum of squares: one side of many correlations."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values - values.mean()
        self.squares = (self.values * self.values).sum()

    def correlation(self, other: _Centred) -> float:
        """Return the Pearson correlation of the two sets of values."""
        products = (self.values * other.values).sum()
        return float(products / max(1e-6, np.sqrt(self.squares * other.squares)))


def window_at(page: np.ndarray, y: int, x: int, height: int, width: int) -> np.ndarray:
    """Return the page window at (y, x), blank (no ink) where it runs off the crop."""
    window = np.zeros((height, width), dtype=np.float32)
    top, left = max(0, y), max(0, x)
    bottom, right = min(page.shape[0], y + height), min(page.shape[1], x + width)
    if bottom > top and right > left:
        window[top - y : bottom - y, left - x : right - x] = page[top:bottom, left:right]
    return window


def _span(face: Face, size: int, text: str, start: int, end: int) -> tuple[int, int]:
    """Return the columns of a drawing of `text` that its characters start..end take."""
    font = _font(face.path, size)  # emboldening leaves the advances as they are
    return EDGE + int(font.getlength(text[:start])), EDGE + int(np.ceil(font.getlength(text[:end])))


def _changed(text: str, other: str) -> tuple[int, int, int]:
    """Return (start, end in `text`, end in `other`) of the characters the two differ in.

    Where a character is added beside one like it ("3 mmol" for "3 mol") either
    copy could be the new one: the span covers both.
    """
    shortest = min(len(text), len(other))
    prefix = next((i for i in range(shortest) if text[i] != other[i]), shortest)
    suffix = next((i for i in range(shortest) if text[-1 - i] != other[-1 - i]), shortest)
    start = min(prefix, len(text) - suffix, len(other) - suffix)
    common = min(suffix, len(text) - prefix, len(other) - prefix)
    return start, len(text) - common, len(other) - common


def _compare(
    page: np.ndarray,
    face: Face,
    drawn: tuple[str, np.ndarray, _Spot],
    rival: tuple[str, np.ndarray, _Spot],
    shift: int,
    level: float,
) -> tuple[float, float] | None:
    """Return (own, rival) correlations with the ink where the glyphs they differ in sit.

    Each `(text, drawing, spot)` is drawn at one size and placed where it
    fits the ink best as a whole, so a rival of another width ("7,150" for
    "1,150", "200" for "1200") has its shared glyphs on the ink as the
    source has. Only the ink under the changed characters of either
    drawing counts, a little widened, and there only the pixels where the
    two placed drawings differ: the shared glyphs around them say nothing
    between the two, and a rival narrower than the source must still explain
    the ink the source's glyph leaves. `level` is the page's ink level
    (`_ink_level`): a stretch beside the source's drawing with nothing over it
    is blank page. None: drawn alike there.
    """
    (text, own, at), (other, theirs, there) = drawn, rival
    start, end, other_end = _changed(text, other)
    own_span = _span(face, at.size, text, start, end)
    rival_span = _span(face, at.size, other, start, other_end)
    pad = max(2, round(WINDOW_PAD * at.size))
    top = min(at.y, there.y)
    height = max(at.y + own.shape[0], there.y + theirs.shape[0]) - top
    # Only where the source is drawn: beside it lies what it was drawn without (an option's
    # label beside a short option), which a wider rival reaches and the source does not model.
    # Unless nothing lies there: a rival's glyph over blank page (a unit's prefix before a
    # unit that opens its line, "MN/m" for "N/m") is what the ink does not show.
    reach = (
        min(at.x + own_span[0], there.x + rival_span[0]),
        max(at.x + own_span[1], there.x + rival_span[1]),
    )
    drawn_from, drawn_to = at.x + EDGE, at.x + own.shape[1] - EDGE
    rows = (top, height)  # the stretch compared, with its pad, must be blank
    if reach[0] < drawn_from and not _inked(page, level, rows, (reach[0] - pad, drawn_from)):
        drawn_from = reach[0]
    if reach[1] > drawn_to and not _inked(page, level, rows, (drawn_to, reach[1] + pad)):
        drawn_to = reach[1]
    left = max(reach[0], drawn_from) - pad
    right = min(reach[1], drawn_to) + pad
    if right - left <= 2 * pad:
        return None
    width = right - left
    mine_placed = window_at(own, top - at.y, left - at.x, height, width)
    theirs_placed = window_at(theirs, top - there.y, left - there.x, height, width)
    return where_they_differ(page, mine_placed, theirs_placed, (top, left), shift, pad)


def _inked(page: np.ndarray, level: float, rows: tuple[int, int], columns: tuple[int, int]) -> bool:
    """Return whether a stretch of the page (top, height) × (left, right) holds a glyph's stroke."""
    (top, height), (left, right) = rows, columns
    stretch = page[max(0, top) : max(0, top + height), max(0, left) : max(0, right)]
    return not stretch.size or float(stretch.max()) > level


def where_they_differ(
    page: np.ndarray,
    own: np.ndarray,
    theirs: np.ndarray,
    at: tuple[int, int],
    shift: int,
    pad: int,
) -> tuple[float, float] | None:
    """Return (own, rival) correlations with the page's ink where two placed drawings differ.

    `own` and `theirs` are drawn over one window whose top-left is `at` on the
    page; only the pixels where they differ by `DIFFERENT_INK`, widened by
    `pad`, count. None: drawn alike.
    """
    differ = np.abs(own - theirs) > DIFFERENT_INK
    if not differ.any():
        return None
    kernel = np.ones((2 * pad + 1, 2 * pad + 1), np.uint8)
    mask = cv2.dilate(differ.astype(np.uint8), kernel) > 0
    mine, value = -1.0, -1.0
    own_ink, rival_ink = _Centred(own[mask]), _Centred(theirs[mask])
    top, left = at
    height, width = own.shape
    # A line placed as a whole may sit a pixel or two off at one glyph (the ink's size lies
    # between two drawn sizes): both drawings get the same leeway there.
    for dy in range(-shift, shift + 1):
        for dx in range(-shift, shift + 1):
            ink = _Centred(window_at(page, top + dy, left + dx, height, width)[mask])
            mine = max(mine, ink.correlation(own_ink))
            value = max(value, ink.correlation(rival_ink))
    return mine, value


def weigh(
    crops: Sequence[np.ndarray],
    font_px: float,
    family: str,
    token: str,
    contexts: Sequence[tuple[str, str]],
    rivals: Iterable[str],
    read_here: Sequence[str] = (),
    text: str = "",
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    taken: Taken = (),
    apart: float = SIDE,
) -> Evidence | None:
    """Return how the ink of normalised `crops` supports `token` against its `rivals`.

    `contexts` are (before, after) texts of the source around the token; the
    drawing is located with the context that matches best (a line break may
    cut it). Every rival is then drawn in that context, and at every size
    tried both it and the source are drawn, each placed where it fits the
    ink best near that spot, and compared where their changed glyphs sit
    (`_compare`); the best match of each at any size counts. None when the
    face is not installed or nothing matches.

    `read_here` are what the engines read at the token's place: each drawn
    in the same context is located too, and one that fits the ink better than
    the source's drawing somewhere else says where the place is. The source
    was located over other ink ("less than" over a handwritten "loss then"),
    and is not shown. So is a token whose reading, drawn in any of the
    token's contexts, fits the ink by `ink_read_lead` better than the source
    drawn in that context: "Both can be" fits an image that says so far
    better than "Both cannot be", which a shorter context ("Both cannot",
    its extra letters over the next word) fits well enough to be located.
    `text` is the field's source: a reading drawn in a context the source
    itself shows somewhere ("does know" where it also says "does know") is
    no evidence about this place. `thresholds` hold the `ink_*` numbers the
    evidence is weighed by, and its verdict judged by. `taken` are where
    other places of the token were found (`Evidence.at`): the token is
    located nowhere near them; nor where other ink lies within `apart` em of
    its drawing's sides.
    """
    tried = faces(family) if family else ()
    if not tried or not crops:
        return None
    blur = max(0.6, font_px / 24)
    pages = [_page(crop, blur, round(font_px)) for crop in crops]
    levels = [_ink_level(page, thresholds) for page in pages]
    located = []
    # The weight is not on record (a label is bold, a "bold" style all of it): every face
    # is tried, and the rivals are drawn in the one the ink matches.
    sizes = _sizes(font_px)
    for face in tried:
        for before, after in contexts or [("", "")]:
            drawn = before + token + after
            spot = _locate(
                pages, levels, drawn, face, sizes, blur, thresholds, taken, len(before), apart
            )
            if spot is not None:
                located.append((spot.score, before, after, spot))
    if not located:
        return None
    # Of the contexts that match about as well, the one with the most words: a rival wider
    # than the token then lies over ink both drawings model (the next word), not over ink
    # only the rival's drawing reaches, which any rival fits better than a blank.
    top = max(found[0] for found in located)
    _score, before, after, spot = max(
        (found for found in located if found[0] >= top - thresholds.ink_context_tolerance),
        key=lambda found: (len(found[1]) + len(found[2]), found[0]),
    )
    page, face, level = pages[spot.page], spot.face, levels[spot.page]
    shift = max(1, round(0.08 * font_px))
    drawn = before + token + after
    where = _token_at(spot, before, token)
    foreign = [r for r in dict.fromkeys(read_here) if r and _value(r) != _value(token)]
    unshown = _unshown(foreign, before, after, text)
    elsewhere = _read_elsewhere(
        pages, levels, spot, (before, after), unshown, font_px, blur, thresholds
    )
    if elsewhere is not None:
        other, there = elsewhere
        lead = spot.score - there.score
        return Evidence(token, drawn, spot.score, other, there.score, lead, where, thresholds)
    instead = _read_instead(
        pages, levels, located, face, token, foreign, text, font_px, blur, thresholds
    )
    if instead is not None:
        source_drawn, source_score, other, there = instead
        lead = source_score - there.score
        return Evidence(
            token, source_drawn, source_score, other, there.score, lead, where, thresholds
        )
    own = _drawing(drawn, face, spot.size, blur)
    assert own is not None  # it was located
    # A rival is another value: one that differs only in spaces and punctuation ("Figure.1")
    # reads as the token itself, and a speck's worth of ink would decide between them.
    others = [r for r in dict.fromkeys(rivals) if r and _value(r) != _value(token)]
    # The source drawn at every size a rival is, each where it fits the ink best near the
    # located spot: a rival is compared with the source drawn at its own size, so the two
    # differ only where their glyphs do, not over a whole line drawn a size apart.
    sized = {}
    for size in sizes:
        drawing = own if size == spot.size else _drawing(drawn, face, size, blur)
        if drawing is not None:
            lift = _lift(face, spot.size, size)
            sized[size] = (drawing, _near(page, spot, own, drawing, lift, shift))
    rival, rival_score, margin = "", -1.0, 1.0
    for other in others:  # every one: a rival left out could be what the image shows
        # At every size either was free to take (a narrow digit drawn a size larger fills a
        # wider digit's ink): the best drawing of each, at any size, is what counts.
        mine, value = -1.0, -1.0
        text = before + other + after
        for size, (drawing_own, at) in sized.items():
            drawing = _drawing(text, face, size, blur)
            if drawing is None:
                continue
            there = _near(page, at, drawing_own, drawing, 0, shift)
            if max(at.score, there.score) < spot.score - thresholds.ink_fit_tolerance:
                continue  # neither drawing is the ink's size: their glyphs land anywhere
            pair = _compare(
                page, face, (drawn, drawing_own, at), (text, drawing, there), shift, level
            )
            if pair is not None:  # drawn alike at this size: no evidence either way
                mine, value = max(mine, pair[0]), max(value, pair[1])
        if value == -1.0:  # drawn alike at every size: a tie, whatever the ink
            mine, value = 1.0, 1.0
        if mine - value < margin:
            rival, rival_score, margin = other, value, mine - value
    return Evidence(token, drawn, spot.score, rival, rival_score, margin, where, thresholds)


def _token_at(spot: _Spot, before: str, token: str) -> tuple[int, int, int, int]:
    """Return (crop, row, column, size) of where the token's own glyphs begin in a located drawing."""
    start, _end = _span(spot.face, spot.size, before + token, len(before), len(before) + len(token))
    return spot.page, spot.y, spot.x + start, spot.size


def _unshown(reads: Sequence[str], before: str, after: str, text: str) -> list[str]:
    """Return the reads whose drawing in this context the source text shows nowhere.

    Shown means as whole words: "Both can" is not shown by "Both cannot".
    """
    return [
        r
        for r in reads
        if not text
        or not re.search(rf"(?<!\w){re.escape(before + r + after)}(?!\w)", text, re.IGNORECASE)
    ]


def _read_instead(
    pages: Sequence[np.ndarray],
    levels: Sequence[float],
    located: Sequence[tuple[float, str, str, _Spot]],
    face: Face,
    token: str,
    reads: Sequence[str],
    text: str,
    font_px: float,
    blur: float,
    thresholds: Thresholds,
) -> tuple[str, float, str, _Spot] | None:
    """Return a reading that, in one of the token's contexts, fits far better than the source there.

    Each `located` entry is the source drawn in one context and face, with
    its fit. Only `face`, the one the ink matches, is asked, and the reading
    must also fit better than the source's best drawing in any context: in
    a context the ink does not hold, both drawings fit poorly and either may
    lead (a scan's thickened "has no effect" fits bold Noto at 0.70, "has
    Rio effect" at 0.82, while "has no" fits at 0.90). Returns (source
    drawing, its fit, the reading's drawing, where that was located) for
    the first context where the reading leads by `ink_read_lead`; None
    when the source holds its own in every context.
    """
    best = max(found[0] for found in located)
    for score, before, after, spot in located:
        if spot.face != face:
            continue
        for read in _unshown(reads, before, after, text):
            drawn = before + read + after
            there = _locate(pages, levels, drawn, spot.face, _sizes(font_px), blur, thresholds)
            if there is not None and there.score >= max(score + thresholds.ink_read_lead, best):
                return before + token + after, score, drawn, there
    return None


def _read_elsewhere(
    pages: Sequence[np.ndarray],
    levels: Sequence[float],
    spot: _Spot,
    context: tuple[str, str],
    read_here: Sequence[str],
    font_px: float,
    blur: float,
    thresholds: Thresholds,
) -> tuple[str, _Spot] | None:
    """Return a reading drawn in the token's context that fits better away from its spot.

    Only a drawing the source has nowhere counts: the source's own "more
    than" elsewhere is no evidence about this place.
    """
    before, after = context
    for read in dict.fromkeys(read_here):
        if not read:
            continue
        drawn = before + read + after
        there = _locate(pages, levels, drawn, spot.face, _sizes(font_px), blur, thresholds)
        if there is not None and there.score > spot.score and not _overlap(spot, there):
            return read, there
    return None


def _one_line(one: tuple[int, int, int], other: tuple[int, int, int]) -> bool:
    """Return whether two drawings, each (crop, row, size), lie on one line of one crop.

    One line is less than half an em up or down: a handwriting face is drawn
    larger than the size its lines are set at, so its next line can lie less
    than a whole em of the drawing below.
    """
    (page, y, size), (other_page, other_y, other_size) = one, other
    return page == other_page and 2 * abs(y - other_y) < max(size, other_size)


def _overlap(one: _Spot, other: _Spot) -> bool:
    """Return whether two located drawings lie on the same line, a word or less apart."""
    em = max(one.size, other.size)
    same_line = _one_line((one.page, one.y, one.size), (other.page, other.y, other.size))
    return same_line and abs(one.x - other.x) < 4 * em


def _near(
    page: np.ndarray, spot: _Spot, own: np.ndarray, drawing: np.ndarray, lift: int, shift: int
) -> _Spot:
    """Return where `drawing` (the source at another size, a rival) fits the ink best near `spot`.

    It sits `lift` px lower on the same baseline and may reach as far right
    as its width differs from `own`, the drawing located there.
    """
    height, width = drawing.shape
    reach = shift + abs(width - own.shape[1])
    top, left = spot.y + lift - shift, spot.x - reach
    window = window_at(page, top, left, height + 2 * shift, width + 2 * reach)
    scores = cv2.matchTemplate(window, drawing, cv2.TM_CCOEFF_NORMED)
    y, x = np.unravel_index(int(scores.argmax()), scores.shape)
    return replace(spot, score=float(scores[y, x]), y=top + int(y), x=left + int(x))


def _value(text: str) -> str:
    """Return what a token says: its letters, digits and symbols, without spaces or punctuation."""
    return "".join(c for c in normalise(text) if c.isalnum() or c in "%°")


def digit_rivals(token: str) -> list[str]:
    """Return the token with each digit replaced by each other digit, and its sign changed.

    Both are a changed number; a token that is no number ("P2.79") has no sign to change.
    """
    rivals = []
    for index, char in enumerate(token):
        if char.isdigit():
            rivals.extend(token[:index] + d + token[index + 1 :] for d in DIGITS if d != char)
    if token.startswith("-") and token[1:2].isdigit():
        rivals.append(token[1:])
    elif token[:1].isdigit():
        rivals.append("-" + token)
    return rivals


def unit_rivals(token: str) -> list[str]:
    """Return `number+unit` with the unit's prefix changed or the unit swapped for a symbol."""
    match = _UNIT_TOKEN.match(token)
    if match is None:
        return []
    number, unit = match.groups()
    space = " " if unit.startswith(" ") else ""
    return [with_unit(number, u, space) for u in unit_variants(unit.strip())]


def unit_variants(unit: str) -> list[str]:
    """Return the unit with its prefix changed, and the symbols its quantity is swapped for."""
    base = unit[1:] if len(unit) > 1 and unit[0] in "".join(PREFIXES) else unit
    units = {p + base for p in PREFIXES} | set(UNITS)
    return [u for u in sorted(units) if u and u != unit]


def with_unit(number: str, unit: str, space: str) -> str:
    """Return a number and unit written with the source's spacing (none before % or °)."""
    return f"{number}{space if unit[:1].isalpha() else ''}{unit}"


def label_rivals(label: str, letter: str, letters: str) -> list[str]:
    """Return the option label drawn with each other option letter."""
    return [label.replace(letter, other) for other in letters if other != letter]


def occurrences(text: str, token: str, shared: bool = False) -> list[list[tuple[str, str]]]:
    """Return, for every place the source shows `token` as a whole, its (before, after) contexts.

    A place inside a longer word or number ("20" in "420") is no place of
    the token. What is glued to the token ("$" of "$0.25", "°" of "100°",
    a closing comma) is drawn with it in every context: in the image it
    touches the token's ink, and a drawing is located only where no ink
    touches its sides. Each place's contexts add the words around it: the
    word before, after, or both (whichever is drawn on one line in the image
    matches best); of those, only the ones the source shows at no other
    place, where some are. The token is drawn without a neighbouring word
    only where it has none (a caption): alone, a short token is found anywhere its
    glyphs are ("3" on a handwritten "B"), and a token the source shows
    twice at the wrong place.

    `shared` keeps every context of a place, those other places share too:
    for a place whose own contexts a line break cut, located away from where
    the others were found (`weigh`'s `taken`). Never the token without its
    neighbours there: a lone "0" is found on a handwritten "o".
    """
    places = []
    for (at, end), (glued_before, glued_after) in zip(
        _places(text, token), glued(text, token), strict=True
    ):
        before = text[: at - len(glued_before)].rsplit(maxsplit=1)
        after = text[end + len(glued_after) :].split(maxsplit=1)
        prev = f"{before[-1]} {glued_before}" if before else glued_before
        nxt = f"{glued_after} {after[0]}" if after else glued_after
        bare = (glued_before, glued_after)
        # Glued on both sides to numbers or words ("80.0%,0.50 mol,0.05"): that is context
        # enough, and the only one that never crosses a line break or an option's label.
        anchored = _anchored(glued_before) and _anchored(glued_after)
        tried = [bare] if anchored else []
        tried += [(prev, glued_after), (glued_before, nxt), (prev, nxt)]
        found = [c for c in dict.fromkeys(tried) if has_neighbours([c]) or (anchored and c == bare)]
        places.append(found or [bare])
    if shared:
        return places
    return [_own_contexts(text, token, contexts) for contexts in places]


def _places(text: str, token: str) -> list[tuple[int, int]]:
    """Return (start, end) of every place the source shows `token` as a whole."""
    return [
        (m.start(), m.end())
        for m in re.finditer(re.escape(token), text)
        if not (m.start() and text[m.start() - 1].isalnum())
        and not (m.end() < len(text) and text[m.end()].isalnum())
    ]


def glued(text: str, token: str) -> list[tuple[str, str]]:
    """Return, for every place of `token`, only what is glued to it: its drawing without neighbours."""
    return [
        (text[_word_start(text, at) : at], text[end : _word_end(text, end)])
        for at, end in _places(text, token)
    ]


def _own_contexts(text: str, token: str, contexts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Return the contexts that draw this place alone, when some do.

    "I don't" is drawn at both places of "I don't know and I don't want": the
    ink of the second would show the first's token, changed or not. A
    context the source has once ("don't know") is drawn only at its place.
    """
    # Counted overlapping: in "x 1 x 1 x", "x 1 x" is drawn at both places.
    own = [
        (b, a) for b, a in contexts if len(re.findall(f"(?={re.escape(b + token + a)})", text)) == 1
    ]
    return own or contexts


def _anchored(glued: str) -> bool:
    """Return whether text glued to a token holds a letter or digit (more than punctuation)."""
    return any(c.isalnum() for c in glued)


def has_neighbours(contexts: Sequence[tuple[str, str]]) -> bool:
    """Return whether any of a place's contexts draws a neighbouring word with the token."""
    return any(" " in before + after for before, after in contexts)


def _word_start(text: str, at: int) -> int:
    while at and not text[at - 1].isspace():
        at -= 1
    return at


def _word_end(text: str, end: int) -> int:
    while end < len(text) and not text[end].isspace():
        end += 1
    return end
