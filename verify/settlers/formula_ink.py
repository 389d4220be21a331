"""Ink evidence for formulas: does the ink show the source's formula, or one with another digit?

OCR reads typeset math poorly: a sub- or superscript (`ft^{2}`, `V_1`, an
integral's limits) comes out as a speck, a symbol or nothing, so a changed
digit there goes unread. Region mode knows from the layout record what was
typeset; an image with no record has only its ink.

So each part of the source's formula that holds a script is drawn
(matplotlib's mathtext in its Computer Modern fontset, the family of
KaTeX's fonts), located in the field's ink, and compared there with the same
part drawn with each of its digits replaced by each other digit (Computer
Modern's digits share one advance, so a rival lines up with the source glyph
for glyph). As with words (`ink.weigh`), only the pixels where the two
drawings differ count. A rival that matches the ink
there clearly better than the source is what the image shows; anything less
is no evidence either way.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import cv2
import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.mathtext import MathTextParser

from itemshot.verify.settlers.ink import (
    DIFFERENT_INK,
    SUPERSAMPLE,
    WINDOW_PAD,
    where_they_differ,
    window_at,
    window_std,
)
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

# KaTeX sets math at 1.21 em of the text around it; mathtext's sizes are its own, so the
# drawing is tried over a band of sizes around that and located where it fits best.
MATH_EM = 1.21
SIZE_BAND = (0.4, 1.3)
SIZE_STEP = 0.05  # relative: sizes tried 5% apart
CONTEXT = 0.6  # em of shared glyphs either side of a changed digit that place its patch
REACH = 0.3  # em a patch may move from its place in the whole formula's drawing
PLACES = 3  # places a formula's drawing is weighed at, at most
PLACE_TOLERANCE = 0.05  # a place fitting this much worse than the best is still weighed;
# another formula of the field fitting a place this much better than the source takes it
_PARSER = MathTextParser("agg")
_DIGIT = re.compile(r"\d")
_SCRIPT = re.compile(r"[_^]")
_STACKED = re.compile(r"\\(?:[dt]?frac|binom|sqrt)")
_SCRIPT_OF = re.compile(r"(?<!\\)\b([A-Za-z]+)([_^])\{?(\d+)\}?")


@dataclass(frozen=True)
class FormulaEvidence:
    """How the ink matches a formula's drawing, and the rival digit that fits it best."""

    latex: str
    score: float  # the source drawing's match with the ink where it was located
    rival: str  # the rival formula closest to (or past) the source's match, "" for none
    rival_score: float  # that rival's match with the ink where the two differ
    margin: float  # the source's lead over that rival there

    def contradicted(self, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> bool:
        """Return whether the ink shows a rival digit rather than the source's."""
        t = thresholds
        return (
            self.score >= t.formula_ink_min_match
            and self.rival_score >= t.formula_ink_min_match
            and self.margin <= -t.formula_ink_margin
        )

    def shown(self, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> bool:
        """Return whether the ink shows the source's digits rather than any rival's.

        The mirror of `contradicted`, judged where the digits are: there the
        source's drawing matches the ink by `formula_ink_min_match` and leads
        every rival digit by the margin a rival would need to be what is
        shown. Not on the whole drawing's match: mathtext spaces a long
        formula otherwise than KaTeX, so a formula shown as the source has it
        may match as a whole by little more than half (0.56), while each
        digit's patch, placed by the glyphs around it, matches by 0.9.
        """
        t = thresholds
        own = self.rival_score + self.margin  # the source's match where the two differ
        return own >= t.formula_ink_min_match and self.margin >= t.formula_ink_margin

    def describe(self) -> str:
        """Return a one-line account for the region's measures."""
        return (
            f"{self.latex!r} drawn: match {self.score:.2f}; closest rival {self.rival!r} "
            f"{self.rival_score:.2f} where they differ, lead {self.margin:+.2f}"
        )


class _Place(NamedTuple):
    """Where a formula's drawing fits the ink: its match, size, weight and top-left corner."""

    score: float
    size: int
    bold: bool
    y: int
    x: int


@lru_cache(maxsize=512)
def formula_drawing(latex: str, size: int, blur: float, bold: bool = False) -> np.ndarray | None:
    """Return `latex` typeset by mathtext at `size` px as blurred ink (high = ink), None: unparsable.

    `bold` thickens every stroke by about a pixel: a page may set its math bold
    (a bold face, an option drawn bold), and mathtext has no bold italic.
    """
    try:  # drawn at SUPERSAMPLE times the size: mathtext rounds a small formula's layout
        parsed = _PARSER.parse(
            f"${latex}$",
            dpi=72 * SUPERSAMPLE,
            prop=FontProperties(size=size, math_fontfamily="cm"),
        )
    except ValueError:  # a command mathtext lacks (`\ce`): no drawing, no evidence
        return None
    large = np.asarray(parsed.image, dtype=np.float32)
    if large.size == 0 or not (large > 40).any():
        return None
    if bold:  # strokes about a pixel thicker at the final size
        large = cv2.dilate(large, np.ones((SUPERSAMPLE, SUPERSAMPLE), np.uint8))
    height = max(1, round(large.shape[0] / SUPERSAMPLE))
    width = max(1, round(large.shape[1] / SUPERSAMPLE))
    pixels = cv2.resize(large, (width, height), interpolation=cv2.INTER_AREA)
    drawing = cv2.GaussianBlur(np.pad(pixels, 2), (0, 0), blur)
    drawing.flags.writeable = False  # cached: shared by every caller
    return drawing


def script_parts(latex: str) -> list[str]:
    """Return the parts of a formula OCR leaves unread that hold a digit: its scripts.

    A formula is cut at its top-level relations, operators, commas and
    spaces (`A = 2.5\\ ft^{2}` gives `A`, `2.5`, `ft^{2}`), outside any
    brace group; a part is kept when it holds a digit and a sub- or
    superscript, and no fraction or root. A part is drawn and located on its
    own: mathtext spaces a long formula otherwise than KaTeX, and a baseline
    number is for OCR to read. Fractions are left out: mathtext stacks them
    otherwise than KaTeX's inline fractions, and on the tuning set a
    numerator's digit drawn so was taken for another on clean renders.
    """
    return [
        part
        for part in _top_level_parts(latex)
        if _DIGIT.search(part)
        and _SCRIPT.search(part)
        and not _STACKED.search(part)
        and part.count("{") == part.count("}")
    ]


def sibling_scripts(latex: str) -> list[str]:
    """Return every digit script of a formula, each on its own (`k_{3}`), wherever it stands.

    A part's drawing located over another script's ink (a numerator's `k_{3}`,
    which `script_parts` leaves out, or the `k_{6}` inside `R^2{(k_{6})}`)
    may be on that script's place, not its own (`weigh_formula`'s `siblings`).
    """
    found = (f"{letters}{mark}{{{digits}}}" for letters, mark, digits in _SCRIPT_OF.findall(latex))
    return list(dict.fromkeys(found))


def _top_level_parts(latex: str) -> list[str]:
    """Return the formula cut at relations, operators, commas and spaces outside brace groups."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(latex):
        depth += {"{": 1, "}": -1}.get(char, 0)
        cut = char in "=+-,<>" or char.isspace() or latex.startswith("\\ ", index)
        if depth == 0 and cut and not latex[:index].endswith("\\"):
            parts.append(latex[start:index])
            start = index + 1
    parts.append(latex[start:])
    return [part.strip() for part in parts]


def digit_rivals(latex: str, at: Collection[int] | None = None) -> list[str]:
    """Return the formula with each of its digits replaced by each other digit, in order.

    `at`: only the digits at these indexes (a formula's baseline digits, say).
    """
    return [
        latex[: m.start()] + other + latex[m.end() :]
        for m in _DIGIT.finditer(latex)
        if at is None or m.start() in at
        for other in "0123456789"
        if other != m.group()
    ]


def _sizes(font_px: float) -> list[int]:
    centre = MATH_EM * font_px
    low, high = SIZE_BAND
    count = round((high - low) / SIZE_STEP)
    return sorted({max(6, round(centre * (low + k * SIZE_STEP))) for k in range(count + 1)})


def weigh_formula(
    crop: np.ndarray,
    font_px: float,
    latex: str,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    others: tuple[str, ...] = (),
    siblings: tuple[str, ...] = (),
    digits: Collection[int] | None = None,
) -> FormulaEvidence | None:
    """Return how the ink of a normalised grey crop (dark on white) shows `latex` against its rivals.

    The source's drawing is located at every place it fits about as well as
    its best (`PLACES`: a field may hold `w_{1}` and `w_{2}`, and either
    drawing fits both). `others` are the field's script parts, each as often
    as the field has it. A place where another of them fits better is that
    formula's, not this one's, for as many places as the field has it; a
    place past that is this one's, drawn with another digit (the field's
    `I_1` and `I_2` shown as two `I_2`). At each place left, every rival
    drawn at that size is compared with the source where the two differ
    (`_compare`). A formula the field has n times must be shown at n places:
    the evidence is the place that shows it n-th best (the unchanged
    `CaCO_3` of two shows nothing of the other, drawn `CaCO_5`), so the ink
    contradicts the source only where too few places show it. A place whose
    closest rival is one of the field's scripts (`siblings`, from
    `sibling_scripts`: `k_{5}` against the `k_{6}` of a numerator or of
    `R^2{(k_{6})}` beside it) may be that script's ink, and is no evidence
    against the source. `digits`: only the digits at these indexes of `latex`
    get rivals (all of them by default). None when the formula has no such
    digit, mathtext cannot draw it or no place is left.
    """
    rivals = digit_rivals(latex, digits)
    if not rivals:
        return None
    count = max(1, others.count(latex))
    blur = max(0.6, font_px / 24)
    margin = round(2 * font_px)
    page = cv2.GaussianBlur(np.pad(255.0 - crop.astype(np.float32), margin), (0, 0), blur)
    found = _places(page, latex, font_px, blur, thresholds, count)
    owned: set[int] = set()  # places another of the field's formulas shows
    surplus: set[int] = set()  # places another shows more often than the field has it
    for other in dict.fromkeys(o for o in others if o != latex):
        claimed = [k for k, place in enumerate(found) if _fits_better(page, other, place, blur)]
        extra = len(claimed) - others.count(other)
        owned.update(claimed[max(0, extra) :])
        surplus.update(claimed[: max(0, extra)])
    places = [(k, place) for k, place in enumerate(found) if k not in owned]
    if not places:
        return None
    evidence = []
    for k, (score, size, bold, y, x) in places:
        own = formula_drawing(latex, size, blur, bold)
        assert own is not None  # it was located
        worst, rival_score, lead = "", -1.0, 1.0
        for rival in rivals:
            theirs = formula_drawing(rival, size, blur, bold)
            if theirs is None:
                continue
            pair = _compare(page, own, theirs, (y, x), size)
            if pair is not None and pair[0] - pair[1] < lead:
                worst, rival_score, lead = rival, pair[1], pair[0] - pair[1]
        if lead < 0 and worst in siblings and k not in surplus:
            continue
        evidence.append(FormulaEvidence(latex, score, worst, rival_score, lead))
    if not evidence:
        return None
    ranked = sorted(evidence, key=lambda e: e.margin, reverse=True)
    return ranked[min(count, len(ranked)) - 1]


def _fits_better(page: np.ndarray, other: str, place: _Place, blur: float) -> bool:
    """Return whether `other` drawn at the place's size fits the ink near it better than it scored."""
    score, size, bold, y, x = place
    drawing = formula_drawing(other, size, blur, bold)
    if drawing is None:
        return False
    reach = max(2, round(REACH * size))
    height, width = drawing.shape
    window = window_at(page, y - reach, x - reach, height + 2 * reach, width + 2 * reach)
    scores = cv2.matchTemplate(window, drawing, cv2.TM_CCOEFF_NORMED)
    return float(scores.max()) > score + PLACE_TOLERANCE


def _places(
    page: np.ndarray,
    latex: str,
    font_px: float,
    blur: float,
    thresholds: Thresholds,
    count: int = 1,
) -> list[_Place]:
    """Return each place the formula's drawing fits about as well as its best.

    A place is one of the best windows at some size and weight; places
    closer than half the drawing's width are one. Kept: those within
    `PLACE_TOLERANCE` of the best, `PLACES` at most; and however well they
    fit, the `count` best, for a formula the field shows `count` times.
    """
    found: list[_Place] = []
    for size, bold in itertools.product(_sizes(font_px), (False, True)):
        drawing = formula_drawing(latex, size, blur, bold)
        if drawing is None:
            return []
        height, width = drawing.shape
        if height > page.shape[0] or width > page.shape[1]:
            continue
        scores = cv2.matchTemplate(page, drawing, cv2.TM_CCOEFF_NORMED)
        # A near-blank window correlates with anything: no place for a formula.
        spread = thresholds.ink_min_window_std * float(drawing.std())
        scores = np.where(window_std(page, height, width) >= spread, scores, -1.0)
        for _ in range(max(PLACES, count)):
            y, x = np.unravel_index(int(scores.argmax()), scores.shape)
            if scores[y, x] <= -1.0:
                break
            found.append(_Place(float(scores[y, x]), size, bold, int(y), int(x)))
            top, left = max(0, y - height // 2), max(0, x - width // 2)
            scores[top : y + height // 2 + 1, left : x + width // 2 + 1] = -1.0
    kept: list[_Place] = []
    ranked = sorted(found, reverse=True)
    for place in ranked:
        if place.score < ranked[0].score - PLACE_TOLERANCE and len(kept) >= count:
            break
        drawing = formula_drawing(latex, place.size, blur, place.bold)
        assert drawing is not None  # it was located
        near = 0.5 * drawing.shape[1]
        if all(abs(place.x - k.x) >= near or abs(place.y - k.y) >= near for k in kept):
            kept.append(place)
    return kept[: max(PLACES, count)]


def _compare(
    page: np.ndarray, own: np.ndarray, theirs: np.ndarray, at: tuple[int, int], size: int
) -> tuple[float, float] | None:
    """Return (own, rival) correlations with the ink where the two drawings differ.

    mathtext spaces a formula a little otherwise than KaTeX, so over a long
    formula placed as a whole a glyph may sit a few pixels off. Both drawings
    are therefore cut to the columns around where the two differ, with
    `CONTEXT` em of shared glyphs either side, and placed where the ink the
    two patches share fits best within `REACH` em of their place in the
    whole. Only the pixels where the two differ (widened a little) are then
    compared, each drawing with the same few pixels of leeway. None: drawn
    alike.
    """
    height = max(own.shape[0], theirs.shape[0])
    width = max(own.shape[1], theirs.shape[1])
    # Both share their origin (a changed digit keeps its advance): one frame for both.
    mine, other = window_at(own, 0, 0, height, width), window_at(theirs, 0, 0, height, width)
    columns = np.nonzero((np.abs(mine - other) > DIFFERENT_INK).any(axis=0))[0]
    if columns.size == 0:
        return None
    context, reach = round(CONTEXT * size), max(2, round(REACH * size))
    left, right = max(0, columns[0] - context), min(width, columns[-1] + 1 + context)
    y, x = at
    top, start = y - reach, x + left - reach
    search = window_at(page, top, start, height + 2 * reach, right - left + 2 * reach)
    # Placed by the ink the two share (the glyphs around, and what the two digits have in
    # common), so where the patch goes is decided by neither digit.
    shared = np.ascontiguousarray(np.minimum(mine, other)[:, left:right])
    scores = cv2.matchTemplate(search, shared, cv2.TM_CCOEFF_NORMED)
    dy, dx = np.unravel_index(int(scores.argmax()), scores.shape)
    pad = max(2, round(WINDOW_PAD * size))
    shift = max(2, round(0.08 * size))
    return where_they_differ(
        page,
        mine[:, left:right],
        other[:, left:right],
        (top + int(dy), start + int(dx)),
        shift,
        pad,
    )
