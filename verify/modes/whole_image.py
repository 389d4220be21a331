"""Whole-image audit for images without a layout record: OCR the page, align fields by anchors.

The page is OCR'd as a whole. Option labels ("(A)", "A.", "A)" and their
common misreadings) found in the words are the anchors: each option's text is
what follows its own label up to the next label, on its line and the lines it
wraps onto. The stem is located by semi-global alignment of its text in the
page text (the substring of least edit distance, of any length: a page may
show "<image 1>" as "Figure 1"). Each field gets the same accuracy and
critical-token checks as in the region audit, and the numbers on a formula's
baseline must be on the page; missing and extra option letters and the
reading order of stem and labels are reported. A page no single reading
explains is judged field by field on several readings.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import NamedTuple

import cv2
import numpy as np
from rapidfuzz import fuzz

from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.page import words_for
from itemshot.renderer.records import Region, box_to_quad
from itemshot.verify.checks import expected as source
from itemshot.verify.checks.figure_search import FigureSearch
from itemshot.verify.checks.figures import decode_figure
from itemshot.verify.checks.findings import FINDING_CODES
from itemshot.verify.checks.glyphs import CANDIDATES, groups
from itemshot.verify.checks.labels import half_label_shape, label_shape, split_label, word_label
from itemshot.verify.checks.lookalikes import LABEL_RIVALS
from itemshot.verify.checks.meaning import split_words
from itemshot.verify.checks.scoring import (
    FORMULA_PREFIX,
    FieldResult,
    formula_number_reasons,
    score_option,
    score_stem,
)
from itemshot.verify.checks.tokens import (
    contradicted_formula_scripts,
    is_short,
    unread_formula_scripts,
)
from itemshot.verify.modes.regions import located_crops, settle_located
from itemshot.verify.page.crops import gray, normalise_text
from itemshot.verify.reading import second_reader
from itemshot.verify.reading.align import best_window
from itemshot.verify.reading.ocr import Word, join_words, language_for, words
from itemshot.verify.reading.text import compact, normalise, ocr_accuracy
from itemshot.verify.settlers.drawn_face import (
    DrawnFace,
    Probe,
    as_source_spells,
    identify_face,
    longest_probes,
)
from itemshot.verify.settlers.formula_ink import script_parts, sibling_scripts, weigh_formula
from itemshot.verify.settlers.ink_settle import settle_by_ink
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason, ReasonCode, RegionScore, Verdict, verdict

# Readings tried in turn until one explains the item: (paint out rules and frames, page
# segmentation mode). Sparse text (11) last: it finds lone labels in option boxes.
READINGS = ((False, 3), (True, 3), (False, 6), (True, 11))
CONTINUATION_LINES = 4  # an option's text may wrap onto this many more lines
MIN_LONG_SIDE = 1400  # smaller pages are enlarged before OCR
# A label misread as any glyphs is a short word ("@", "e8)", "(DH") starting within this
# many of its heights of the labels read above and below it.
LABEL_WORD_CHARS = 4
LABEL_COLUMN = 0.5
LABEL_ROW = 0.6  # heights between the middles of a row's labels
# What a field read in place (see `settle_located`) may settle: how its text and label
# read. A figure or the reading order is about the page, not one field's words.
SETTLED_IN_PLACE = frozenset(
    {
        ReasonCode.TEXT_MISMATCH,
        ReasonCode.NUMBER_MISSING,
        ReasonCode.UNIT_MISSING,
        ReasonCode.SHORT_OPTION_MISSING,
        ReasonCode.LETTER_MISMATCH,
        ReasonCode.OPTION_MISSING,  # whole-image: no reading shows its label, nor its text well
        *FINDING_CODES,
    }
)
# An option's label no reading shows as its letter: its text is looked for in every reading.
LABEL_NOT_READ = frozenset({ReasonCode.LETTER_MISMATCH, ReasonCode.OPTION_MISSING})
LABEL_SETTLED = f"{ReasonCode.LETTER_MISMATCH.value}:"  # a settled record of a label shown
WORD_HEIGHT_EM = 0.75  # an OCR word box's height (median of a line's words) per em
BOX_MARGIN = 0.35  # word heights of margin around a located field's words
INSIDE_SLACK = 0.25  # em one reading's box may reach past another's and still lie inside it
STEM_LINE_SHARE = 0.5  # a line of the stem: at least this share of its words are the stem's
FORMULA_ROOM = 0.5  # em around a field's words where its formulas may reach
STEM_WRAP_GAP = 0.8  # word heights of blank between a stem line and the one it wraps onto
LABEL_ROOM = 3.0  # word heights left of an option's first word that its label may take
UNREAD_ROOM = 4.0  # word heights right of an option's last word read: what no engine read
LABEL_CHARS = 5  # a word this short just before an option's text is its label, misread
WINDOW_TRIES = 3  # runs tried, best first, before a field is not found by its text
MASK = "\x00"  # stands for a rejected run's characters: it matches none of a field's
PROBE_PUNCTUATION = ".,;:!?()[]'\"“”‘’"  # stripped from a word drawn to tell the face


@dataclass(frozen=True)
class Anchor:
    """An option label found in the OCR words."""

    letter: str  # as read; "" for a label shape read as no letter ("(&)")
    index: int  # word index
    x: float
    top: float
    height: float
    opens: bool = True  # opens its line (or a column); False: a bracketed label mid-line
    bracketed: bool = True  # drawn "(A)" rather than "A." or "A)"


def _opens(found: list[Word], index: int) -> bool:
    """Return whether word `index` opens a line or follows a wide gap (a second option column)."""
    word = found[index]
    previous = found[index - 1] if index else None
    if previous is None or previous.line != word.line:
        return True
    return word.left - (previous.left + previous.width) > 2 * word.height


def _anchors(found: list[Word], written: frozenset[int]) -> list[Anchor]:
    anchors: list[Anchor] = []
    for index, word in enumerate(found):
        label = word_label(word.text)
        if label is None or index in written:
            continue
        opens = _opens(found, index)
        if opens or word.text.startswith("("):
            bracketed = word.text.lstrip("‘'`").startswith(("(", "["))
            anchors.append(
                Anchor(label[0], index, word.left, word.top, word.height, opens, bracketed)
            )
    return anchors


def _label_shapes(
    found: list[Word], anchors: list[Anchor], written: frozenset[int]
) -> list[Anchor]:
    """Return the words shaped like a label but read as no letter, where a label would stand.

    A label that lost a bracket ("(D" for a serif "(I)", "0)" for "(J)") counts
    too, and so does any short word standing in the column of the labels
    read, where one more would stand ("@" or "e8)" for a bold "(I)" on a
    notebook's rule): each is bound only where it exactly fills a gap in the
    grid of labels, and the option's text after it is checked as any other.
    """
    known = {a.index for a in anchors}
    opening = [a for a in anchors if a.opens]
    free = [
        k for k in range(len(found)) if k not in known and k not in written and _opens(found, k)
    ]
    shaped = [
        k for k in free if label_shape(found[k].text) is not None or half_label_shape(found[k].text)
    ]
    # Short words in a labels' column, on a row where a label read stands in another column.
    column = [
        Anchor("", k, found[k].left, found[k].top, found[k].height)
        for k in free
        if len(found[k].text.strip()) <= LABEL_WORD_CHARS
        and _in_column(found[k].left, found[k].height, opening)
    ]
    rowed = [c.index for c in column if _on_a_label_row(c, opening)]
    return [
        Anchor("", k, found[k].left, found[k].top, found[k].height)
        for k in sorted(set(shaped + rowed))
    ]


def _in_column(x: float, height: float, anchors: list[Anchor]) -> bool:
    """Return whether a word at `x` starts within `LABEL_COLUMN` of its height where a label starts."""
    return any(abs(a.x - x) <= LABEL_COLUMN * max(height, 1) for a in anchors)


def _on_a_label_row(word: Anchor, others: list[Anchor]) -> bool:
    """Return whether the word stands on a row of labels, where its own column has none read.

    A wrapped option's next line may start in the labels' column too, but
    between the rows of labels; the next lines of options side by side start
    on one row, so only labels read say where a row of labels is: one in
    another column on the word's row, or rows read above it set at one pitch
    (no option wrapped) that the word's row continues (the last row's labels
    all unread).
    """
    height = max(word.height, 1)
    near = LABEL_ROW * height
    row = [o for o in others if o.index != word.index and abs(_middle(o) - _middle(word)) <= near]
    if any(abs(o.x - word.x) <= LABEL_COLUMN * height for o in row):
        return False
    if any(abs(o.x - word.x) > LABEL_COLUMN * height for o in row):
        return True
    rows: list[float] = []
    for middle in sorted(_middle(o) for o in others if _middle(o) < _middle(word)):
        if not rows or middle - rows[-1] > near:
            rows.append(middle)
    pitches = np.diff(rows)
    if len(pitches) < 2 or float(np.ptp(pitches)) > near:
        return False
    return abs(rows[-1] + float(np.median(pitches)) - _middle(word)) <= near


def _source_word(found: list[Word], index: int, source_words: frozenset[str]) -> bool:
    """Return whether a word shaped like a label is the item's own text, not a label.

    Options may enumerate their parts ("(1)$37,000 ; (2)79,000") or name
    drawings ("(a), (b) and (c)"). A word read exactly as the item writes it
    is that text when text is stuck to it ("(1)$37,000", which would stand
    for a handwritten "(I)" and cut option A short at its first word) or when
    it stands mid-line, where no label of a grid stands ("(c)" after "(A)
    (a), (b) and"). A bare "(1)" opening a line is still a label shape: the
    item's text gives no word that tells it from one.
    """
    text = found[index].text.strip()
    if text not in source_words:
        return False
    return bool(_label_rest(text)) or not _opens(found, index)


def assign_anchors(anchors: list[Anchor], letters: list[str]) -> dict[str, Anchor]:
    """Return each option letter's label anchor.

    Exact letters first: a label opening its line before one in mid-line (a
    stem's "(D.C" is no option D), one drawn as most of the page's labels are
    before one that is not (a stem's line opening "A.From S" is no label
    where the options are "(A)" … "(J)"), then the first occurrence; then a
    letter still without a label takes an unused label read as a look-alike
    ("(E)" read twice where "(F)" belongs) — one per letter, in reading order.
    """
    assigned: dict[str, Anchor] = {}
    used: set[int] = set()
    forms = [a.bracketed for a in anchors if a.letter in letters]
    bracketed = 2 * sum(forms) >= len(forms)
    for anchor in sorted(anchors, key=lambda a: (not a.opens, a.bracketed != bracketed)):
        if anchor.letter in letters and anchor.letter not in assigned:
            assigned[anchor.letter] = anchor
            used.add(anchor.index)
    for letter in letters:
        if letter in assigned:
            continue
        for anchor in anchors:
            if anchor.index not in used and anchor.letter in LABEL_RIVALS.get(letter, ""):
                assigned[letter] = anchor
                used.add(anchor.index)
                break
    return assigned


def bind_by_position(
    assigned: dict[str, Anchor], spare: list[Anchor], letters: list[str]
) -> dict[str, Anchor]:
    """Return the assignment with letters still without a label bound to the labels where theirs stand.

    A label read as no option letter ("(&)" for G, "(9)" for J) still stands
    in its place in the grid of labels: in the order the page lays them out
    (row by row, or column by column: the one in which the labels read are in
    letter order), a run of such labels that exactly fills the gap between two
    labels read (or before the first, after the last) is those letters. As in
    region mode, a label bound by its place contradicts nothing; a letter with
    no label shape in its place (an option painted out) stays unassigned.
    """
    missing = [letter for letter in letters if letter not in assigned]
    if not missing or not spare or not assigned:
        return assigned
    placed = [(a, letter) for letter, a in assigned.items()] + [(a, "") for a in spare]
    for order in (_row_major, _column_major):
        sequence = order(placed)
        known = [letters.index(letter) for _a, letter in sequence if letter]
        if all(a < b for a, b in itertools.pairwise(known)):
            return {**assigned, **_fill_gaps(sequence, letters, set(missing))}
    return assigned


def _fill_gaps(
    sequence: list[tuple[Anchor, str]], letters: list[str], missing: set[str]
) -> dict[str, Anchor]:
    """Return the spare labels that fill a gap of missing letters in the sequence.

    Between two labels read, only a run that exactly fills the gap says which
    letter each is. After the last label read the run's first shapes are the
    next letters in order: labels unread there too (or an option painted out)
    leave the rest of the gap unbound, and shapes past the letters (a wrapped
    line read "(3") are no labels. An option bound to the wrong letter fails
    on its text, as it would unbound.
    """
    bound: dict[str, Anchor] = {}
    placed = {letter: anchor for anchor, letter in sequence if letter}
    columns = _columns([anchor for anchor, _letter in sequence])
    run: list[Anchor] = []
    before = -1  # the letter index of the last label read
    for anchor, letter in [*sequence, (None, "")]:
        if anchor is not None and not letter:
            run.append(anchor)
            continue
        after = letters.index(letter) if letter else len(letters)
        gap = letters[before + 1 : after]
        if not letter and before >= 0:  # after the last label read
            gap = _in_their_columns(gap, run, letters, placed, columns)
            run = run[: len(gap)]
        if run and len(run) == len(gap) and all(x in missing for x in gap):
            bound.update(zip(gap, run, strict=True))
            placed.update(zip(gap, run, strict=True))
        run, before = [], after
    return bound


def _columns(anchors: list[Anchor]) -> int:
    """Return how many columns the labels stand in (starts `LABEL_COLUMN` heights apart)."""
    ordered = sorted(anchors, key=lambda a: a.x)
    return 1 + sum(
        1 for a, b in itertools.pairwise(ordered) if b.x - a.x > LABEL_COLUMN * max(a.height, 1)
    )


def _in_their_columns(
    gap: list[str],
    run: list[Anchor],
    letters: list[str],
    placed: dict[str, Anchor],
    columns: int,
) -> list[str]:
    """Return the gap's first letters whose shape in the run stands in that letter's column.

    A letter's column is the one of the label `columns` letters before it: a
    shape in another column (a "(J)" read "(3)" with "(I)" unread) is not its label.
    """
    kept: list[str] = []
    placed = dict(placed)
    for letter, shape in zip(gap, run, strict=False):
        index = letters.index(letter)
        above = placed.get(letters[index - columns]) if index >= columns else None
        if above is None or abs(above.x - shape.x) > LABEL_COLUMN * max(shape.height, 1):
            break
        kept.append(letter)
        placed[letter] = shape
    return kept


def _row_major(placed: list[tuple[Anchor, str]]) -> list[tuple[Anchor, str]]:
    """Return the labels row by row (rows of labels within 0.6 of a line height), left to right."""
    rows: list[list[tuple[Anchor, str]]] = []
    for entry in sorted(placed, key=lambda e: _middle(e[0])):
        if rows and _middle(entry[0]) - _middle(rows[-1][0][0]) <= LABEL_ROW * entry[0].height:
            rows[-1].append(entry)
        else:
            rows.append([entry])
    return [e for row in rows for e in sorted(row, key=lambda e: e[0].x)]


def _column_major(placed: list[tuple[Anchor, str]]) -> list[tuple[Anchor, str]]:
    """Return the labels column by column (columns within 1.5 line heights), top to bottom."""
    columns: list[list[tuple[Anchor, str]]] = []
    for entry in sorted(placed, key=lambda e: e[0].x):
        if columns and entry[0].x - columns[-1][0][0].x <= 1.5 * entry[0].height:
            columns[-1].append(entry)
        else:
            columns.append([entry])
    return [e for column in columns for e in sorted(column, key=lambda e: _middle(e[0]))]


def _middle(box: Anchor | Word) -> float:
    """Return the vertical middle of a label anchor or a word."""
    return box.top + box.height / 2


@dataclass(frozen=True)
class OptionLabels:
    """The option labels of one reading: each letter's anchor, the word indices options end at."""

    assigned: dict[str, Anchor]
    stops: set[int]
    anchors: list[Anchor]  # every label read as a letter (also those of no option)
    # Words shaped like a label that are the item's own text ("(2)79,000" wrapped onto a
    # line of its own): they neither end an option nor open the next one.
    written: frozenset[int] = frozenset()
    # Every option letter has its label: a row opening with another word shaped like one
    # ("(b)" wrapped from "l(b)>2,(b)") is no further option's.
    complete: bool = False

    def right(self, anchor: Anchor) -> float:
        """Return where the option column of `anchor` ends: at the next column's labels."""
        return min(
            (a.x for a in self.assigned.values() if a.x > anchor.x + 2 * anchor.height),
            default=math.inf,
        )


# What one reading of the page found: its words, its option labels, the scale it read at.
PageReading = tuple[list[Word], OptionLabels, float]


class _Audit(NamedTuple):
    """What the passes over a chosen verdict work from: the page, its item, its readings."""

    image: np.ndarray
    item: Item
    pages: list[PageReading]  # the reading explaining the item best first
    thresholds: Thresholds


def option_labels(
    found: list[Word], letters: list[str], source_words: frozenset[str] = frozenset()
) -> OptionLabels:
    """Return the option labels of a reading: read as letters, then bound by their place.

    `source_words` are the item's words as written: one of them is text, never a label.
    """
    written = frozenset(k for k in range(len(found)) if _source_word(found, k, source_words))
    anchors = _anchors(found, written)
    assigned = assign_anchors(anchors, letters)
    used = {a.index for a in assigned.values()}
    # Spare labels: read as no option letter at all, or opening a line as a letter another
    # label already has (a serif "(I)" read "(D)"): bound by place, the second is scored as
    # read, so its option fails unless a reading in place shows its own letter. The letter
    # after the last option's is kept out: read there, it is an extra option.
    after = LETTERS[len(letters)] if len(letters) < len(LETTERS) else ""
    spare = [
        a
        for a in anchors
        if a.index not in used
        and (a.letter not in (*letters, after) or (a.letter in assigned and a.opens))
    ]
    shapes = _label_shapes(found, anchors, written)
    assigned = bind_by_position(assigned, spare + shapes, letters)
    stops = {a.index for a in anchors if a.letter in letters}
    stops |= {a.index for a in assigned.values()}
    complete = set(letters) <= assigned.keys()
    return OptionLabels(assigned, stops, anchors, written, complete)


def _label_rest(text: str) -> str:
    """Return the text stuck after a label word ("(A)15.2" gives "15.2")."""
    label = word_label(text)
    if label is not None:
        return label[1]
    return label_shape(text) or ""


def _segment(found: list[Word], start: int, stops: set[int], right: float) -> tuple[list[int], int]:
    """Return the word indices after the label at `start` up to the next stop or the line's end."""
    end = _line_run(found, start + 1, stops, found[start].line, right)
    return list(range(start + 1, end)), end


def _line_run(
    found: list[Word], begin: int, stops: set[int], line: tuple[int, int, int], right: float
) -> int:
    """Return the index after the words from `begin` on `line` before a stop or a column gap."""
    end = begin
    while end < len(found) and end not in stops and found[end].line == line:
        if found[end].left >= right:  # the next option column
            break
        gap = found[end].left - (found[end - 1].left + found[end - 1].width)
        same_line = found[end - 1].line == line  # no gap to measure to the line above
        if same_line and gap > 3 * max(8, found[end].height):
            break
        end += 1
    return end


def option_lines(found: list[Word], anchor: Anchor, labels: OptionLabels) -> list[list[int]]:
    """Return the word indices of an option's lines: its first line, then each wrapped line.

    The first line is what follows the label on its OCR line. A wrapped line
    is found by its place, not by the OCR's order (which may read two option
    columns as one line): the next row of words below, close under the
    previous line, within the option's column (from under its label to the
    next column's labels), up to a column gap; it ends the option when it
    holds a label or, while some option has no label, opens with a word
    shaped like one, or when the text
    runs on to its left (a paragraph, not a wrapped option). A word of the
    item's own text (`labels.written`) is no label however it is shaped.
    """
    start, stops, right = anchor.index, labels.stops, labels.right(anchor)
    first, _end = _segment(found, start, stops, right)
    lines = [first]
    label = found[start]
    taken = {start, *first}
    middle = _middle(label)
    for _ in range(CONTINUATION_LINES):
        line = _wrapped_line(found, middle, label.height, label.left - label.height, right, taken)
        if not line or any(i in stops for i in line):
            break
        shaped = line[0] not in labels.written and _opens_with_label(found[line[0]].text)
        if shaped and not labels.complete:
            break
        lines.append(line)
        taken.update(line)
        middle = min(_middle(found[i]) for i in line)
    return lines


def _opens_with_label(text: str) -> bool:
    """Return whether a row's first word reads as a label or has a label's shape ("(&)").

    A row under an option that opens so is the next option's, whichever
    letter (if any) this reading made of its label.
    """
    return word_label(text) is not None or label_shape(text) is not None


def _wrapped_line(
    found: list[Word], middle: float, height: float, left: float, right: float, taken: set[int]
) -> list[int]:
    """Return the next row of words below `middle` in the column [left, right), or []."""
    column = [i for i, w in enumerate(found) if i not in taken and left <= w.left < right]
    below = [i for i in column if 0.5 * height < _middle(found[i]) - middle <= 2.2 * height]
    if not below:
        return []
    top = min(_middle(found[i]) for i in below)
    # The whole row at that height, not only its words inside the band: a short word whose
    # middle sits a little higher ("rad") must not stand for a row that opens with a label.
    row = sorted(
        (i for i in column if abs(_middle(found[i]) - top) < 0.5 * height),
        key=lambda i: found[i].left,
    )
    cut = 1  # a column gap ends the row: the words past it are another column's
    while cut < len(row):
        before, word = found[row[cut - 1]], found[row[cut]]
        if word.left - (before.left + before.width) > 3 * max(8, word.height):
            break
        cut += 1
    row = row[:cut]
    head = found[row[0]]
    for index, word in enumerate(found):
        runs_on = 0 <= head.left - (word.left + word.width) < 2 * head.height
        level = abs(_middle(word) - _middle(head)) < 0.5 * height
        if index not in row and word.left < left and runs_on and level:
            return []
    return row


def option_readings(found: list[Word], anchor: Anchor, labels: OptionLabels) -> list[str]:
    """Return the option's text read after its label: its first line, then with each wrapped line."""
    rest = _label_rest(found[anchor.index].text)
    parts = [rest] if rest else []
    readings = []
    for line in option_lines(found, anchor, labels):
        parts.extend(found[i].text for i in line)
        readings.append(" ".join(parts))
    return readings


def remove_rules(grey: np.ndarray) -> np.ndarray:
    """Return the grey page with long straight rules (ruled paper, margins, frames) painted out.

    Rules that cross text make tesseract merge words ("the-engine"); they are
    found as long thin runs of darker pixels by morphological opening.
    """
    background = float(np.median(grey))
    ink = (grey < background - 25).astype(np.uint8)
    long = max(40, grey.shape[1] // 12)
    horizontal = cv2.morphologyEx(
        ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (long, 1))
    )
    vertical = cv2.morphologyEx(
        ink,
        cv2.MORPH_OPEN,
        cv2.getStructuringElement(cv2.MORPH_RECT, (1, max(40, grey.shape[0] // 12))),
    )
    rules = cv2.dilate(horizontal | vertical, np.ones((3, 3), np.uint8)) > 0
    out = grey.copy()
    out[rules] = int(background)
    return out


def remove_frames(grey: np.ndarray) -> np.ndarray:
    """Return the grey page with box outlines (option buttons, cards, panels) painted out.

    Tesseract reads a box's edges as brackets and drops short text inside a
    box. An outline is a large thin stroke around one hole that takes up most
    of what it encloses. Ruled lines and grids with letters touching them are
    not outlines (no such hole): painting them out would take the letters too.
    Ink is judged against the neighbourhood (a pale grey box on white counts),
    and is painted over with the lightest nearby value.
    """
    ink = cv2.adaptiveThreshold(
        grey, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, blockSize=31, C=12
    )
    _count, labels, stats, _centres = cv2.connectedComponentsWithStats(ink, connectivity=8)
    # Two levels: every component's outer boundary (also those inside another's hole), its holes.
    contours, hierarchy = cv2.findContours(ink, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    links = hierarchy[0] if hierarchy is not None else np.empty((0, 4), int)
    largest_hole: dict[int, float] = {}
    for contour, (_next, _previous, _child, parent) in zip(contours, links, strict=True):
        if parent != -1:
            largest_hole[parent] = max(largest_hole.get(parent, 0.0), cv2.contourArea(contour))
    outlines = []
    for index, contour in enumerate(contours):
        _x, _y, width, height = cv2.boundingRect(contour)
        if links[index][3] != -1 or width < 80 or height < 30:
            continue
        enclosed = cv2.contourArea(contour)
        column, row = contour[0][0]
        label = labels[row, column]
        thin = stats[label, cv2.CC_STAT_AREA] < 0.25 * enclosed
        if thin and largest_hole.get(index, 0.0) >= 0.6 * enclosed:
            outlines.append(label)
    if not outlines:
        return grey
    out = grey.copy()
    painted = np.isin(labels, outlines)
    out[painted] = cv2.dilate(grey, np.ones((9, 9), np.uint8))[painted]
    return out


def _page_words(
    image: np.ndarray, lang: str, *, rules: bool, psm: int = 3
) -> tuple[list[Word], float]:
    grey = gray(image)
    long_side = max(grey.shape[:2])
    scale = 1.0
    if long_side < MIN_LONG_SIDE:
        scale = MIN_LONG_SIDE / long_side
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    if float(np.median(grey)) < 128:
        grey = 255 - grey
    if rules:  # frames first: painting out rules first would cut outlines into letter-sized arcs
        grey = remove_rules(remove_frames(grey))
    found = words(grey, lang, psm=psm)
    if (
        psm == 3 and len(found) < 20
    ):  # page segmentation gave up (busy background): read it as sparse text
        sparse = words(grey, lang, psm=11)
        if len(sparse) > len(found):
            found = sparse
    return found, scale


def audit_image(
    image: np.ndarray,
    item: Item,
    *,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    image_name: str = "",
    check_figures: bool = True,
) -> Verdict:
    """Audit one image with no layout record against its item (whole-page OCR + alignment).

    The page is read as is, with rules and box outlines painted out, as one
    block of text and as sparse text, until a reading explains the item. Each
    field (stem, option) is then judged on the reading that reads it best:
    every reading is of the same pixels, so a field one reading shows is on
    the page.
    """
    lang = language_for(item.language, [item.question, *item.options])
    written = frozenset(w for text in (item.question, *item.options) for w in text.split())
    readings: list[Verdict] = []
    pages: list[PageReading] = []  # what each reading found
    for rules, psm in READINGS:
        found, scale = _page_words(image, lang, rules=rules, psm=psm)
        # One reading's labels serve its text verdict and its formula re-reading alike.
        labels = option_labels(found, [f.letter for f in source.options(item)], written)
        reading = _audit_words(found, labels, item, lang, thresholds, image_name)
        readings.append(_with_stem_scripts(reading, image, found, labels, scale, item))
        pages.append((found, labels, scale))
        if not readings[-1].reasons:
            break
    best = readings[-1] if not readings[-1].reasons else _field_by_field(readings)
    order = sorted(range(len(readings)), key=lambda k: _fit(readings[k]), reverse=True)
    # The passes over the chosen verdict, in order; each sees the readings best first.
    audit = _Audit(image, item, [pages[k] for k in order], thresholds)
    if best.reasons:
        best = _formula_numbers_by_ink(best, audit)
    if best.reasons:
        best = _settled_in_place(best, audit)
    best = _formulas_by_ink(best, audit)
    if check_figures:
        reasons, scores = _figures(image, item, thresholds)
        best = verdict(
            image_name,
            item.id,
            "whole_image",
            lang,
            [*best.reasons, *reasons],
            [*best.regions, *scores],
        )
    return best


def locate_fields(
    found: list[Word],
    labels: OptionLabels,
    scale: float,
    item: Item,
    shape: tuple[int, ...],
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> list[Region]:
    """Return a region for each field whose words this reading places on the page.

    An option stands where its label and the lines after it are read. The
    stem is the run of lines before the first label, from the first to the
    last line most of whose words are the stem's (a header or badge above it,
    a caption under a figure inside it, are not its lines), and the lines
    it wraps onto right under it. An option whose label the reading shows as
    no letter stands where its text is read, widened on the left for its label.
    """
    first = min((a.index for a in labels.assigned.values()), default=len(found))
    stem_words = set(split_words(source.stem(item).text))
    above = _without_placeholders(found[:first], item.language, thresholds)
    rows = list(_by_line(_without_captions(above)).values())
    shared = [k for k, row in enumerate(rows) if _share(row, stem_words) >= STEM_LINE_SHARE]
    located: list[Region] = []
    stem: list[Word] = []
    if shared:
        last = shared[-1]
        while last + 1 < len(rows) and _wraps_onto(rows[last], rows[last + 1]):
            last += 1  # a short last line ("blur'?") read as no word of the stem
        stem = [w for row in rows[shared[0] : last + 1] for w in row]
        located.append(_region("question", "question", stem, scale, shape))
    form = _label_form(found, labels)
    options = {
        letter: [
            found[anchor.index],
            *(found[i] for ln in option_lines(found, anchor, labels) for i in ln),
        ]
        for letter, anchor in labels.assigned.items()
    }
    # Where the text block ends: the stem's or an option's last word read. Past it lie the
    # scene's frame and furniture (a blackboard's wooden edge), whose ink garbles a reading.
    placed = [*stem, *(w for words in options.values() for w in words)]
    block = max((w.left + w.width for w in placed), default=0)
    for letter, anchor in labels.assigned.items():
        there = options[letter]
        label_word = there[0]
        # Room after the last word read for what no engine read there: a short option after
        # its label ("1" after "(D)"), an option's end ("< A" of "C < B < A"), up to the next
        # column's labels and within the text block.
        end = max(w.left + w.width for w in there)
        reach = min(end + UNREAD_ROOM * label_word.height, max(end, block))
        right = min(reach, labels.right(anchor) - BOX_MARGIN * label_word.height)
        label = form.format(letter)
        located.append(
            _region(
                f"option:{letter}", "option", there, scale, shape, letter, label=label, right=right
            )
        )
    # An option whose label no reading shows as a letter ("(I)" read "(PD.") stands where
    # its text is read, with the room its label takes on the left: read in place, the label
    # is then judged as in region mode (read again, or shown by the ink in the page's face).
    stem_ids = {id(word) for word in stem}
    rest = [word for word in found if id(word) not in stem_ids]
    for field in source.options(item, drop_figure_refs=True):
        if field.letter in labels.assigned or not field.text.strip():
            continue
        there = _words_showing(field.text, rest, thresholds)
        if there:
            name = f"option:{field.letter}"
            room = _label_room(rest, there)
            label = form.format(field.letter)
            located.append(_region(name, "option", there, scale, shape, field.letter, room, label))
    return located


def _words_showing(text: str, found: list[Word], thresholds: Thresholds) -> list[Word]:
    """Return the run of words that reads as `text` (none: no run reads as it well enough).

    The run is in reading order: an option of a grid's left column that wraps
    is read with the right column's words between its lines, and is not found.
    A run that cuts into a word's letters or digits is another field's text
    ("W sin θ" inside option H's "2W sin θ"): the next best run is tried.
    """
    pieces = [normalise(word.text) for word in found]
    page = " ".join(pieces)
    for _ in range(WINDOW_TRIES):
        start, end, _cost = best_window(normalise(text), page)
        if end <= start:
            return []
        there, cut, at = [], False, 0
        for word, piece in zip(found, pieces, strict=True):
            if at < end and at + len(piece) > start:
                there.append(word)
                outside = piece[: max(0, start - at)] + piece[max(0, end - at) :]
                cut = cut or _cuts_into(outside)
            at += len(piece) + 1
        if not cut:
            break
        page = page[:start] + MASK * (end - start) + page[end:]  # no run is found there again
    else:
        return []
    lines = {word.line for word in there}
    if not there or len(lines) > CONTINUATION_LINES + 1:
        return []
    shown = page[start:end]
    if is_short(text, thresholds):  # must be read exactly: "34.5%" is not where "34.8%" is
        return there if compact(text).casefold() == compact(shown).casefold() else []
    return there if ocr_accuracy(text, shown) >= thresholds.whole_image_field else []


def _cuts_into(outside: str) -> bool:
    """Return whether what a run leaves of its end words is part of a token, not a label.

    A label glued to the text ("(3)W", or "(D130" for "(I) 130": a serif "(I)"
    that lost its closing bracket) or punctuation beside it is cut off as it
    should be; a digit or letter left over ("2" of "2W") is not.
    """
    rest = outside.strip()
    label = label_shape(rest) is not None or half_label_shape(rest)
    return bool(rest) and not label and any(c.isalnum() for c in rest)


def _label_room(found: list[Word], there: list[Word]) -> float:
    """Return where (OCR px) the room for an option's label left of its first word begins.

    A short word just before it on its line is its label misread; otherwise
    the room is `LABEL_ROOM` word heights, short of any word before it.
    """
    first = there[0]
    index = next(k for k, word in enumerate(found) if word is first)
    previous = found[index - 1] if index and found[index - 1].line == first.line else None
    room = first.left - LABEL_ROOM * first.height
    if previous is None:
        return max(0.0, room)
    end = previous.left + previous.width
    if len(previous.text) <= LABEL_CHARS and first.left - end < LABEL_ROOM * first.height:
        return float(previous.left)
    return max(room, end + BOX_MARGIN * first.height)


def _wraps_onto(row: list[Word], below: list[Word]) -> bool:
    """Return whether `below` is the next line of the same paragraph: close under, not indented."""
    height = float(np.median([w.height for w in row]))
    gap = min(w.top for w in below) - max(w.top + w.height for w in row)
    indent = min(w.left for w in below) - min(w.left for w in row)
    return gap < STEM_WRAP_GAP * height and abs(indent) < height


def _share(row: list[Word], stem_words: set[str]) -> float:
    """Return the share of a line's words that are words of the stem."""
    read = split_words(" ".join(w.text for w in row))
    return sum(w in stem_words for w in read) / len(read) if read else 0.0


def _region(
    name: str,
    kind: str,
    there: list[Word],
    scale: float,
    shape: tuple[int, ...],
    letter: str = "",
    left: float = math.inf,
    label: str = "",
    right: float = -math.inf,
) -> Region:
    """Return the region around a field's words, in the image's pixels, sized by their height.

    `left` and `right` (OCR px) widen it, to hold what stands before or after the words;
    `label` is how the page draws the option's label ("(I)"), "" when unknown.
    """
    height = float(np.median([w.height for w in there])) / scale
    margin = BOX_MARGIN * height
    box = (
        max(0.0, min(left, *(w.left for w in there)) / scale - margin),
        max(0.0, min(w.top for w in there) / scale - margin),
        min(float(shape[1]), max(right, *(w.left + w.width for w in there)) / scale + margin),
        min(float(shape[0]), max(w.top + w.height for w in there) / scale + margin),
    )
    font_px = height / WORD_HEIGHT_EM
    return Region(
        name,
        kind,
        box,
        box_to_quad(box),
        label=label,
        letter=letter,
        font_px=font_px,
        set_px=font_px,
    )


# A label as a reading shows it: its letter between what the page draws around every label.
_LABEL_FORM = re.compile(r"^([\(\[]?)([A-Z])([\)\].:])")


def _label_form(found: list[Word], labels: OptionLabels) -> str:
    """Return how the page draws its labels ("({})", "{}.") from those its reading shows as letters.

    A label no reading shows as its letter is then known as drawn ("(I)"),
    and the ink can be asked whether the page shows it (as region mode asks
    of the label its record names). "" when the reading shows no label as a
    letter: every label is then unknown ("".format(letter) is "").
    """
    forms: Counter[str] = Counter()
    for anchor in labels.assigned.values():
        match = _LABEL_FORM.match(found[anchor.index].text.strip())
        if anchor.letter and match and match.group(2) == anchor.letter:
            forms[f"{match.group(1)}{{}}{match.group(3)}"] += 1
    return forms.most_common(1)[0][0] if forms else ""


def _settled_in_place(best: Verdict, audit: _Audit) -> Verdict:
    """Return the verdict with each failing field the region audit passes where it stands passed.

    Only how a field's text reads is settled this way (`SETTLED_IN_PLACE`).
    Each reading, the one explaining the item best first, places the fields
    it finds; a field passes when the region audit leaves no reason at a
    place one of them gives (a field's label and text shown together there are
    on the page, whichever reading found them). The whole-image reasons it
    replaced, the box and what was read there are recorded under `located`.
    """
    image, item, pages, thresholds = audit
    if not all(map(settled_by_reading, best.reasons)):
        return best  # the image fails whatever its fields read in place
    failing = {r.region for r in best.reasons}
    # Only an option whose label is not read is looked for in every reading: a field whose
    # text fails is judged where the closest reading that places it does, as a larger box
    # from another reading (with a figure's frame in it) gives the ink more to mistake.
    # Another reading's place inside that one holds no ink it lacks, and is tried too (a
    # taller box that takes in the line below reads "q)0" where a tight one reads "q>0").
    unlabelled = failing - {r.region for r in best.reasons if r.code not in LABEL_NOT_READ}
    settled: dict[str, tuple[Region, FieldResult]] = {}
    closest: dict[str, Region] = {}
    face: DrawnFace | None = None
    faced = False
    for found, labels, scale in pages:
        located = locate_fields(found, labels, scale, item, image.shape[:2], thresholds)
        first = {r.name for r in located if r.name not in closest}
        closest.update((r.name, r) for r in located if r.name in first)
        places = {
            r.name: r
            for r in located
            if r.name in failing - settled.keys()
            and (r.name in first or r.name in unlabelled or _inside(r, closest[r.name]))
        }
        if not places:
            continue
        by_text = {r.name for r in located if r.letter and r.letter not in labels.assigned}
        stem = next((r for r in located if r.name == "question"), None)
        if not faced and stem is not None:
            face, faced = _drawn_face(image, item, found, scale, stem, thresholds), True
        results = settle_located(
            image,
            item,
            list(places.values()),
            thresholds=thresholds,
            face=face,
            # What the page's reading showed of a field no label anchored is the text most like
            # it anywhere on the page ("d" of "pd" for an option "D"): not a reading of this place.
            page_readings={r.name: r.observed for r in best.regions if r.name not in unlabelled},
            placed_by_text=frozenset(by_text),
        )
        settled.update(
            (name, (places[name], result))
            for name, result in results.items()
            if not result.reasons and (name not in by_text or _label_shown(result))
        )
        if len(settled) == len(failing):
            break
    if not settled:
        return best
    regions = []
    for region in best.regions:
        if region.name in settled:
            place, result = settled[region.name]
            record = {
                "box": [round(v, 1) for v in place.box],
                "observed": result.region.observed,
                "score": round(result.score, 4),
                "replaced": [
                    f"{r.code}: {r.detail}" for r in best.reasons if r.region == region.name
                ],
                "settled": result.region.measures.get("settled", []),
                "face": face.as_dict() if face is not None else None,
            }
            region = replace(region, measures={**region.measures, "located": record})
        regions.append(region)
    reasons = [r for r in best.reasons if r.region not in settled]
    return verdict(best.image, best.item_id, best.mode, best.lang, reasons, regions)


def _inside(place: Region, outer: Region) -> bool:
    """Return whether `place`'s box lies within `outer`'s and is not it.

    Within a quarter of an em: two readings box the same words a few pixels
    apart, and that much margin holds no other line.
    """
    if place.box == outer.box:
        return False
    slack = INSIDE_SLACK * max(place.font_px, outer.font_px)
    x0, y0, x1, y1 = place.box
    ox0, oy0, ox1, oy1 = outer.box
    return x0 >= ox0 - slack and y0 >= oy0 - slack and x1 <= ox1 + slack and y1 <= oy1 + slack


def _formulas_by_ink(best: Verdict, audit: _Audit) -> Verdict:
    """Return the verdict with each field whose ink shows a formula with another digit failed.

    Region mode knows from the layout record what each formula was typeset
    from; here there is no record, and OCR leaves most scripts, fractions and
    limits unread. So each part of a formula that holds a digit in a sub- or
    superscript (`script_parts`), in a field that passes so far, is drawn
    and asked of the ink where a reading places the field (`formula_ink`);
    the evidence is recorded under `formula_ink` either way.
    """
    image, item, pages, thresholds = audit
    failing = {r.region for r in best.reasons}
    passing = [
        f
        for f in (source.stem(item, drop_figure_refs=True), *source.options(item))
        if f.name not in failing
    ]
    # Each part with how often the field has it: each of its places must show it.
    parts = {f.name: Counter(p for latex in f.math for p in script_parts(latex)) for f in passing}
    siblings = {
        f.name: tuple(dict.fromkeys(s for latex in f.math for s in sibling_scripts(latex)))
        for f in passing
    }
    names = [name for name, found in parts.items() if found]
    places = _places_of(names, image, item, pages, thresholds)
    fields = list(places)
    if not fields:
        return best
    # A script or a limit reaches above or below its line, and OCR may read a formula's
    # first glyph and nothing after it: the crop gets room on every side.
    wide = [_widened(places[name], FORMULA_ROOM, image.shape) for name in fields]
    reasons: list[Reason] = []
    notes: dict[str, list[str]] = {}
    for name, crop in zip(fields, located_crops(image, wide), strict=True):
        font_px, others = places[name].font_px, tuple(parts[name].elements())
        for part in parts[name]:
            evidence = weigh_formula(crop, font_px, part, thresholds, others, siblings[name])
            if evidence is None:
                continue
            notes.setdefault(name, []).append(evidence.describe())
            if evidence.contradicted(thresholds):
                said = f"{part!r} drawn as {evidence.rival!r} (ink)"
                reasons.append(Reason(ReasonCode.FORMULA_CHANGED, name, said, (part,)))
    regions = [
        replace(r, measures={**r.measures, "formula_ink": notes[r.name]}) if r.name in notes else r
        for r in best.regions
    ]
    return verdict(
        best.image, best.item_id, best.mode, best.lang, [*best.reasons, *reasons], regions
    )


def _places_of(
    names: list[str],
    image: np.ndarray,
    item: Item,
    pages: list[PageReading],
    thresholds: Thresholds,
) -> dict[str, Region]:
    """Return where the reading explaining the item best (first in `pages`) places each field."""
    places: dict[str, Region] = {}
    for found, labels, scale in pages:
        if all(name in places for name in names):
            break
        for region in locate_fields(found, labels, scale, item, image.shape[:2], thresholds):
            if region.name in names:
                places.setdefault(region.name, region)
    return places


def _formula_numbers_by_ink(best: Verdict, audit: _Audit) -> Verdict:
    """Return the verdict with the formula numbers no reading shows passed where the ink shows them.

    Each failing formula-number check (`in a formula: …`) is asked of its
    formula's drawing where the best reading places the field, widened for
    scripts (`settle_by_ink`, face-free: a formula is drawn in math's own
    face). What the ink leaves failing stands; what was weighed is recorded
    under the field's `formula_ink` measures.
    """
    image, item, pages, thresholds = audit
    failing = {
        r.region: r
        for r in best.reasons
        if r.code == ReasonCode.NUMBER_MISSING and r.detail.startswith(FORMULA_PREFIX)
    }
    places = _places_of(list(failing), image, item, pages, thresholds)
    if not places:
        return best
    fields = {f.name: f for f in (source.stem(item, drop_figure_refs=True), *source.options(item))}
    wide = [_widened(places[name], FORMULA_ROOM, image.shape) for name in places]
    left: dict[str, Reason | None] = {}
    notes: dict[str, list[str]] = {}
    for name, crop in zip(places, located_crops(image, wide), strict=True):
        region = RegionScore(name, "", None, "", "", {})
        result = FieldResult(0.0, (failing[name],), region)
        settled = settle_by_ink(
            fields[name], [crop], places[name].font_px, "", "", result, (), thresholds
        )
        left[name] = settled.reasons[0] if settled.reasons else None
        notes[name] = list(settled.region.measures.get("formula_ink", []))
    reasons = [
        left[r.region] if r.region in left and r is failing[r.region] else r for r in best.reasons
    ]
    regions = [
        replace(r, measures={**r.measures, "formula_ink": notes[r.name]})
        if notes.get(r.name)
        else r
        for r in best.regions
    ]
    return verdict(
        best.image,
        best.item_id,
        best.mode,
        best.lang,
        [r for r in reasons if r is not None],
        regions,
    )


def _widened(region: Region, em: float, shape: tuple[int, ...]) -> Region:
    """Return the region with `em` of its font size added on every side (within the image)."""
    left, top, right, bottom = region.box
    room = em * region.font_px
    box = (
        max(0.0, left - room),
        max(0.0, top - room),
        min(float(shape[1]), right + room),
        min(float(shape[0]), bottom + room),
    )
    return replace(region, box=box, quad=box_to_quad(box))


def _label_shown(result: FieldResult) -> bool:
    """Return whether an option placed by its text shows its own label there.

    Its place was found by its text, so its text being read there proves
    nothing: its label must be read as its letter, or shown by the ink. A
    label read as no letter, which region mode lets its recorded place
    vouch for, would let options swapped with their labels unread pass.
    """
    letter = result.region.name.split(":", 1)[1]
    if split_label(result.region.observed)[0] == letter:
        return True
    return any(
        entry["settler"] == "ink" and any(p.startswith(LABEL_SETTLED) for p in entry["passed"])
        for entry in result.region.measures.get("settled", [])
    )


def settled_by_reading(reason: Reason) -> bool:
    """Return whether a field read in place can settle the reason by what its reading shows.

    Not a formula's number: region mode checks what a formula says against
    the TeX the layout record says was typeset, and treats a script no
    engine reads as unchecked. In place there is no record, so a formula
    number the page reading shows otherwise stands, and one it does not show
    is asked of the ink only (`_formula_numbers_by_ink`): a reading in place
    that leaves a script unread, or whose garbled digits hold the number
    ("872" for "8π x"), would vouch for a changed formula.
    """
    return reason.code in SETTLED_IN_PLACE and not reason.detail.startswith(FORMULA_PREFIX)


def _drawn_face(
    image: np.ndarray,
    item: Item,
    found: list[Word],
    scale: float,
    stem: Region,
    thresholds: Thresholds,
) -> DrawnFace | None:
    """Return the face the stem's words read exactly are drawn in (None: no clear one)."""
    stem_text = source.stem(item).text
    stem_words = set(split_words(stem_text))
    top, bottom = stem.box[1], stem.box[3]
    chosen: dict[str, Word] = {}
    for word in found:
        if top <= _middle(word) / scale <= bottom:
            chosen.setdefault(word.text.strip(PROBE_PUNCTUATION), word)
    longest = longest_probes(chosen, stem_words, thresholds)
    shape = image.shape[:2]
    regions = [
        _region(f"probe:{k}", "question", [chosen[t]], scale, shape) for k, t in enumerate(longest)
    ]
    crops = located_crops(image, regions)
    probes = [
        Probe(as_source_spells(t, stem_text), c, r.font_px)
        for t, c, r in zip(longest, crops, regions, strict=True)
    ]
    return identify_face(probes, stem.font_px, item.language, thresholds)


def _with_stem_scripts(
    reading: Verdict,
    image: np.ndarray,
    found: list[Word],
    labels: OptionLabels,
    scale: float,
    item: Item,
) -> Verdict:
    """Return the reading with the formula scripts of the stem and options asked again.

    tesseract reads no superscript (`x^2` comes out `x?`), so a changed
    script would go unseen on a page it reads otherwise; as in region mode,
    the lines of a field whose scripts this reading leaves unread (the stem,
    an option that is one formula) are read by the second engine, and a
    script it reads as another number fails. One neither engine reads is
    unchecked.
    """
    observed = {r.name: r.observed for r in reading.regions}
    first = min((a.index for a in labels.assigned.values()), default=len(found))
    spans = {"question": list(range(first))}
    for letter, anchor in labels.assigned.items():
        lines = option_lines(found, anchor, labels)
        spans[f"option:{letter}"] = [anchor.index, *(i for line in lines for i in line)]
    fields = [source.stem(item, drop_figure_refs=True), *source.options(item)]
    added: list[Reason] = []
    for field in fields:
        if not field.math or field.name not in spans or field.name not in observed:
            continue
        unread = unread_formula_scripts(field.math, observed[field.name])
        if not unread:
            continue
        words_there = [found[i] for i in spans[field.name]]
        if field.name == "question":
            words_there = _without_captions(words_there)
        second = second_reader.read_lines(_line_crops(image, words_there, scale))
        contradicted = [s for s in contradicted_formula_scripts(field.math, second) if s in unread]
        if contradicted:
            detail = FORMULA_PREFIX + ", ".join(contradicted)
            added.append(Reason("number_missing", field.name, detail, tuple(contradicted)))
    if not added:
        return reading
    return verdict(
        reading.image,
        reading.item_id,
        reading.mode,
        reading.lang,
        [*reading.reasons, *added],
        list(reading.regions),
    )


def _line_crops(image: np.ndarray, found: list[Word], scale: float) -> list[np.ndarray]:
    """Return the lines the words stand on, as normalised grey crops of the page."""
    lines = _by_line(found)
    grey = gray(image)
    crops = []
    for line in lines.values():
        height = max(w.height for w in line) / scale
        pad = round(0.3 * height)
        top = max(0, round(min(w.top for w in line) / scale) - pad)
        bottom = round(max(w.top + w.height for w in line) / scale) + pad
        left = max(0, round(min(w.left for w in line) / scale) - pad)
        right = round(max(w.left + w.width for w in line) / scale) + pad
        crop = grey[top:bottom, left:right]
        if crop.size:
            crops.append(normalise_text(crop, height))
    return crops


def _field_by_field(readings: list[Verdict]) -> Verdict:
    """Return a verdict taking each field's reasons and score from the reading that reads it best.

    Reasons about no field of the item (a label after the last option) come
    from the reading that explains the item best as a whole.
    """
    overall = max(readings, key=_fit)
    names = [region.name for region in overall.regions]

    def field_fit(reading: Verdict, name: str) -> tuple[int, float]:
        failures = sum(r.region == name for r in reading.reasons)
        score = next((g.score for g in reading.regions if g.name == name), None)
        return (-failures, score or 0.0)

    reasons: list[Reason] = []
    regions: list[RegionScore] = []
    for name in names:
        chosen = max(readings, key=lambda reading: field_fit(reading, name))
        reasons.extend(r for r in chosen.reasons if r.region == name)
        regions.extend(g for g in chosen.regions if g.name == name)
    reasons.extend(r for r in overall.reasons if r.region not in names)
    return verdict(overall.image, overall.item_id, overall.mode, overall.lang, reasons, regions)


def _fit(result: Verdict) -> tuple[int, float]:
    """Return how well a reading explains the item: fewer failed fields, then higher scores."""
    scores = [r.score for r in result.regions if r.score is not None]
    failed = len({r.region for r in result.reasons})
    return (-failed, sum(scores) / len(scores) if scores else 0.0)


def _figures(
    image: np.ndarray, item: Item, thresholds: Thresholds
) -> tuple[list[Reason], list[RegionScore]]:
    """Return a reason for each source figure not found unchanged, and every figure's score."""
    reasons: list[Reason] = []
    scores: list[RegionScore] = []
    search = FigureSearch(image, thresholds)
    for number, figure in sorted(item.figures.items()):
        found = search.find(decode_figure(figure.data), thresholds.figure_presence)
        if found.score < thresholds.figure_presence:
            detail = (
                f"not found (best match {found.score:.2f} by {found.method}, "
                f"{found.candidates} placements checked)"
                if found.candidates
                else "no placement of the figure found"
            )
            reasons.append(Reason("figure_missing", f"figure:{number}", detail))
        measures = {
            "method": found.method,
            "outline": [list(p) for p in found.outline],
            "worst_tiles": list(found.worst_tiles),
            "placements_checked": found.candidates,
        }
        scores.append(RegionScore(f"figure:{number}", "figure", found.score, measures=measures))
    return reasons, scores


def _audit_words(
    found: list[Word],
    labels: OptionLabels,
    item: Item,
    lang: str,
    thresholds: Thresholds,
    image_name: str,
) -> Verdict:
    """Return the text verdict of one OCR reading of a page (stem, options, order)."""
    page = join_words(found)
    reasons: list[Reason] = []
    scores: list[RegionScore] = []

    options = source.options(item, drop_figure_refs=True)
    letters = [f.letter for f in options]
    first_anchor = labels.assigned

    # Stem: align its text in the page text before the first option label.
    stem = source.stem(item, drop_figure_refs=True)
    before = found[
        : min((first_anchor[x].index for x in letters if x in first_anchor), default=len(found))
    ]
    # A missing figure's placeholder stands where the figure does, inside the stem's span.
    before = _without_placeholders(before, item.language, thresholds)
    area, start, end = _align_span(stem.text, join_words(before) or page)
    stem_window = _without_references(area[start:end], stem.figures)
    result = score_stem(stem, stem_window, _whole(thresholds))
    # The stem's formulas are looked for where its words are, not in headers or badges;
    # a formula that opens or closes the stem lies just outside the aligned words.
    margin = max((len(latex) for latex in stem.math), default=0)
    text = stem.text.strip(" ")
    start -= margin * text.startswith(source.MATH_GAP)
    end += margin * text.endswith(source.MATH_GAP)
    reasons.extend(formula_number_reasons(stem, area[max(0, start) : end]))
    reasons.extend(result.reasons)
    scores.append(result.region)
    reasons.extend(_figure_references(item, join_words(_without_captions(found))))

    # Options: the text after each label.
    for field in options:
        anchor = first_anchor.get(field.letter)
        if anchor is None:
            found_text = _align(field.text, page) if field.text.strip() else ""
            if (
                field.text.strip()
                and ocr_accuracy(field.text, found_text) >= thresholds.whole_image_field
            ):
                reasons.append(Reason("letter_mismatch", field.name, "text found, label not found"))
            else:
                reasons.append(Reason("option_missing", field.name, "label not found"))
            scores.append(RegionScore(field.name, "option", None, field.text, found_text))
            continue
        readings = option_readings(found, anchor, labels)
        text = max(readings, key=lambda reading: ocr_accuracy(field.text, reading))
        # The region audit's scorer, given the label it was anchored by: one rule for both. A
        # label bound by its place or read as a look-alike is the option's own; one read as
        # another option's letter is that letter.
        read = anchor.letter
        if read not in letters or read in LABEL_RIVALS.get(field.letter, ""):
            read = field.letter
        result = score_option(field, f"({read}) {text}", _whole(thresholds))
        reasons.extend(result.reasons)
        scores.append(replace(result.region, observed=text))
        reasons.extend(formula_number_reasons(field, readings[-1]))

    bound = {a.index for a in first_anchor.values()}
    for anchor in labels.anchors:
        extra = anchor.letter not in letters and LETTERS.index(anchor.letter) == len(letters)
        if extra and anchor.index not in bound:
            reasons.append(
                Reason("extra_option", f"option:{anchor.letter}", "label after the last option")
            )
            break
    reasons.extend(reading_order([first_anchor[x] for x in letters if x in first_anchor]))

    return verdict(image_name, item.id, "whole_image", lang, reasons, scores)


def _whole(thresholds: Thresholds) -> Thresholds:
    """Return the thresholds of a whole-image field: its text is found, not cut out."""
    field = thresholds.whole_image_field
    return replace(
        thresholds, text_accuracy=field, option_accuracy=min(field, thresholds.option_accuracy)
    )


def _align(needle: str, haystack: str) -> str:
    """Return the part of `haystack` closest to `needle` by edit distance (any length)."""
    text, start, end = _align_span(needle, haystack)
    return text[start:end]


def _align_span(needle: str, haystack: str) -> tuple[str, int, int]:
    """Return the normalised haystack and the span of it `_align` picks."""
    a, b = normalise(needle), normalise(haystack)
    if not a or not b:
        return b, 0, 0
    if len(a) >= len(b):
        return b, 0, len(b)
    start, end, _distance = best_window(a, b)
    return b, start, end


# "Figure" as engines read it: "Fig.", or "Fig" and a few letters ("Figuve" in a handwriting
# face, whose r is a v to tesseract). A "Fig…" word followed by the figure's number says it.
_FIGURE_WORD = r"fig[a-z]{0,4}\.?"


def _reference_pattern(number: int) -> re.Pattern[str]:
    """Return how a page may show `<image N>` in words: Figure N, Fig. N, Image N, 図N.

    The number's digits may be read as glyphs OCR confuses them with ("Figure |").
    """
    numeral = _numeral(number)
    return re.compile(rf"(?:\b(?:{_FIGURE_WORD}|image)\s*|図\s*|<image\s*){numeral}(?!\d)>?", re.I)


def _without_references(text: str, figures: tuple[int, ...]) -> str:
    """Return a field's text without the words that stand for its figures.

    The source is compared with its `<image N>` tags dropped, while a page
    shows them as "Figure 1" (or not at all); `_figure_references` checks them.
    """
    for number in dict.fromkeys(figures):
        text = _reference_pattern(number).sub("", text)
    return re.sub(r"\s{2,}", " ", text).strip()


CAPTION_GAP = 1.2  # line heights of blank space (a figure) above a caption's line


def _without_captions(found: list[Word]) -> list[Word]:
    """Return the words without the lines that look like a figure's caption.

    A caption is a line of nothing but a figure reference ("Figure 1") with
    a gap above it wider than a line: the figure it stands under. Left in,
    it would stand for the stem's own reference to the figure, so a stem cut
    before its "Figure 1" would pass. A wrapped stem line that holds only
    "Figure 1." follows its previous line at line spacing and stays.
    """
    lines = _by_line(found)
    captions: set[tuple[int, int, int]] = set()
    previous_bottom: int | None = None
    for key, line in lines.items():
        top = min(w.top for w in line)
        height = max(w.height for w in line)
        text = " ".join(w.text for w in line)
        gap = top - previous_bottom if previous_bottom is not None else None
        if _CAPTION.fullmatch(text.strip()) and (gap is None or gap > CAPTION_GAP * height):
            captions.add(key)
        previous_bottom = max(w.top + w.height for w in line)
    return [w for w in found if w.line not in captions]


def _by_line(found: list[Word]) -> dict[tuple[int, int, int], list[Word]]:
    """Return the words grouped by the OCR line they stand on, in reading order."""
    lines: dict[tuple[int, int, int], list[Word]] = {}
    for word in found:
        lines.setdefault(word.line, []).append(word)
    return lines


def _without_placeholders(found: list[Word], language: str, thresholds: Thresholds) -> list[Word]:
    """Return the words without the lines that read as a missing figure's placeholder.

    A figure the dataset lacks is drawn as a box saying so ("Figure 1 (image
    not available)"): its words are the figure's, and left in a stem that
    runs on after the figure they read as words the source has not ("not").
    """
    template = words_for(language)["missing"]
    rest = compact(template.partition("{n}")[2]).casefold()
    lines = _by_line(found)
    placeholders = {
        key
        for key, line in lines.items()
        if fuzz.ratio(rest, compact(_CAPTION.sub(" ", " ".join(w.text for w in line))).casefold())
        >= 100 * thresholds.whole_image_placeholder
    }
    return [w for w in found if w.line not in placeholders]


# What OCR reads a figure number's digits as: the glyphs engines confuse with each
# ("Figure 1" in a handwriting face comes out "Figure |" or "Figure l").
_DIGIT_READINGS = {
    digit: "".join(sorted({digit}.union(*(g for g in groups(CANDIDATES) if digit in g))))
    for digit in "0123456789"
}
_NUMERAL = "[" + re.escape("".join(sorted(set("".join(_DIGIT_READINGS.values()))))) + "]+"
_CAPTION = re.compile(rf"(?i:figure|fig\.?|image)\s*{_NUMERAL}[.:]?|図\s*{_NUMERAL}")


def _numeral(number: int) -> str:
    """Return a pattern of `number` as OCR may read it: each digit or a glyph confused with it."""
    return "".join(f"[{re.escape(_DIGIT_READINGS[d])}]" for d in str(number))


def _figure_references(item: Item, page: str) -> list[Reason]:
    """Return a reason for each `<image N>` of the stem that the page shows by no words at all."""
    field = source.stem(item)
    reasons = []
    seen = compact(page)
    for number in dict.fromkeys(field.figures):
        name = re.compile(rf"(?i:{_FIGURE_WORD}|image|<image|図){_numeral(number)}")
        if not name.search(seen):
            reasons.append(
                Reason(
                    "figure_reference_dropped", "question", f"<image {number}> not shown as text"
                )
            )
    return reasons


def reading_order(anchors: list[Anchor]) -> list[Reason]:
    """Return a reason when an option's label stands before the previous one's in reading order.

    Before: on a line above and not in a column to its right, or on the same
    line to its left (options moved with their labels: "(D)" left of "(C)").
    """
    for previous, current in itertools.pairwise(anchors):
        height = max(previous.height, current.height)
        above = current.top < previous.top - height
        level = abs(current.top - previous.top) < 0.5 * height
        if (above and current.x <= previous.x) or (level and current.x < previous.x - height):
            return [
                Reason(
                    "reading_order", f"option:{current.letter}", f"after option:{previous.letter}"
                )
            ]
    return []
