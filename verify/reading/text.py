"""Text normalisation and the OCR accuracy score.

Normalisation, applied to both the source text and the OCR text before any
comparison:

1. Unicode NFKC (full-width letters and digits become ASCII, ligatures split).
2. Quotes unified to `'` / `"`, dashes and minus signs to `-`, ellipsis to `...`.
3. Whitespace folded: every run of whitespace becomes one space, ends trimmed.
4. Fill-in blanks and elisions (runs of two or more `_`, `-` or dots, an
   ellipsis and dashes included) removed: a rule, or dots a fraction of a
   letter's size, that OCR reads as nothing, one mark or three, underscores
   or dashes; neither says a word ("E is .. ?" asks what E is).
5. CJK spacing removed: a space next to a CJK character (kana, kanji, CJK
   punctuation, full-width forms) is dropped, since tesseract puts spaces
   between Japanese characters that the source does not have.
6. Kanji variant forms folded: a traditional form an engine reads for the
   Japanese standard one (德 for 徳) is the same character to a reader
   (see `verify.reading.variants`).

OCR accuracy = 1 - Levenshtein(a, b) / max(len(a), len(b)), the formula used by
MMMU-Pro and JMMMU-Pro; two empty strings score 1. Verdicts use `ocr_accuracy`,
the same formula on the texts as compared (`folded`): normalised, spaces
removed, case folded, and the glyphs a reader tells apart only by context
folded to one (a bare stroke, a ring, a caret read as an apostrophe).
"""

from __future__ import annotations

import re
import unicodedata

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from itemshot.verify.reading.variants import fold_variants
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds

_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u30fc": "\u30fc",
        "\u2026": "...",
        # Greek capital delta as engines read it: a triangle (the handwriting face's) or the
        # increment sign. A person reads all three as the same Δ.
        "\u25b3": "\u0394",
        "\u2206": "\u0394",
    }
)

_CJK = (
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u30ff"  # hiragana, katakana
    "\u31f0-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uf900-\ufaff"
    "\uff01-\uff60"  # full-width forms (before NFKC they would be folded anyway)
    "\uff61-\uff9f"
)
_CJK_CHAR = re.compile(f"[{_CJK}]")
_SPACE_BEFORE_CJK = re.compile(f" (?=[{_CJK}])")
_SPACE_AFTER_CJK = re.compile(f"(?<=[{_CJK}]) ")
_WHITESPACE = re.compile(r"\s+")
# A rule is read as underscores, dots or dashes ("______" as "———"): runs of two or more.
_BLANK = re.compile(r"_{2,}|\.{2,}|-{2,}")
# Marks an engine reads as another of their height and place, which no reader would tell
# apart in context: a caret as the apostrophe it sits as high as ("sin^2" read "sin'2"), a
# letter x as the multiplication cross a handwriting face draws it like. Folded only where
# texts are compared (not in `normalise`, whose output is parsed for operators and units).
READ_MARKS = {"'": "^", "\u00d7": "x"}
# Glyphs told apart only by context, folded to one where texts are compared (case folded
# first): a bare stroke ("1", "l", "I" in a sans face, "|"), and a ring ("o", "0"). A thin
# face's "2-I, 3-III" is read "2-1, 3-111"; which glyph it is, the number and word checks
# weigh (`verify.checks.tokens`, `verify.checks.meaning`), not the share of characters read.
_READ_ALIKE = str.maketrans({**READ_MARKS, "l": "1", "i": "1", "|": "1", "o": "0"})
# A run of bare strokes is counted by eye, not read: engines read a thin face's "III" as
# "11", "111" or "1111" alike. Compared as one stroke (the number checks count them).
_STROKES = re.compile(r"1{2,}")


# Letters of two scripts drawn as one glyph, which NFKC keeps apart: a reader (and an
# engine) sees the Latin phi "ɸ" of a source as the Greek "φ".
_SAME_GLYPH = str.maketrans({"\u0278": "\u03c6"})


def normalise(text: str) -> str:
    """Return `text` normalised for comparison (NFKC, quotes/dashes, whitespace, CJK spacing)."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).translate(_SAME_GLYPH)
    text = fold_variants(text)
    text = _BLANK.sub(" ", text)
    text = _WHITESPACE.sub(" ", text).strip()
    text = _SPACE_BEFORE_CJK.sub("", text)
    return _SPACE_AFTER_CJK.sub("", text)


def has_cjk(text: str) -> bool:
    """Return whether `text` holds any CJK character."""
    return bool(_CJK_CHAR.search(text))


def accuracy(expected: str, observed: str) -> float:
    """Return 1 - Levenshtein / max(len) of the two texts after normalisation."""
    a, b = normalise(expected), normalise(observed)
    if not a and not b:
        return 1.0
    return 1.0 - Levenshtein.distance(a, b) / max(len(a), len(b))


def ocr_accuracy(expected: str, observed: str) -> float:
    """Return the accuracy used for verdicts: `accuracy` with spaces and letter case ignored.

    Word spacing and case are where tesseract errs most on correct renders
    ("A stroke." read "Astroke.", "(C)" read "(c)"); neither changes content,
    nor does a glyph read as its look-alike (`folded`).
    """
    a, b = folded(expected), folded(observed)
    if not a and not b:
        return 1.0
    return 1.0 - Levenshtein.distance(a, b) / max(len(a), len(b))


def missing_ends(
    expected: str,
    observed: str,
    min_ratio: float = 80.0,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """Return "start" and/or "end" when a long text's first or last characters are not read.

    A truncated text can keep a high overall accuracy when only a short last
    line is lost; its ends must therefore be found near the ends of the OCR text.
    In a text with formulas (line breaks mark where they stood) the ends are
    those of its first and last plain pieces, however short ("What is x?"
    after a displayed formula); a piece that is a formula's place is not
    checked here (its numbers are). How many characters are an end, and how
    long a text or piece must be to have one, are `thresholds`' `ends_*`.
    """
    end_chars = int(thresholds.ends_chars)
    min_end_chars = int(thresholds.ends_min_chars)
    a, b = folded(expected), folded(observed)
    if len(a) < int(thresholds.ends_from_chars):
        return []
    pieces = expected.split("\n")
    first, last = folded(pieces[0]), folded(pieces[-1])
    if len(pieces) == 1:
        first = last = a
    missing = []
    span = 2 * end_chars
    if len(first) >= min_end_chars and fuzz.partial_ratio(first[:end_chars], b[:span]) < min_ratio:
        missing.append("start")
    if len(last) >= min_end_chars and fuzz.partial_ratio(last[-end_chars:], b[-span:]) < min_ratio:
        missing.append("end")
    return missing


def word_recall(expected: str, observed: str, min_ratio: float = 85.0) -> float:
    """Return the share of the expected words found (fuzzily) in the observed text.

    Line breaks in `expected` mark where formulas stood; each piece is split
    into words (a CJK piece without spaces is one word). A word counts as
    found when it aligns with part of the observed text at `min_ratio` or better.
    Only words of two letters or digits or more are wanted: in "q > 0, w = 0"
    the "0," is one digit and a comma, and a comma the engine did not read
    would count as a word lost (the numbers and relations have their own checks).
    """
    wanted = [
        _fold(w)
        for chunk in expected.split("\n")
        for w in words(chunk.casefold())
        if sum(c.isalnum() for c in w) >= 2
    ]
    if not wanted:
        return 1.0
    seen = folded(observed)
    found = sum(1 for w in wanted if w in seen or fuzz.partial_ratio(w, seen) >= min_ratio)
    return found / len(wanted)


# What separates words: spaces, and a semicolon between list items ("0.6 kg;2*10^6 μg;1" lists
# three quantities; an engine that reads its ";" as ":" has still read each of them).
_WORD_BREAK = re.compile(r"[\s;]+")


def words(text: str) -> list[str]:
    """Return the normalised text's words: split at spaces and semicolons."""
    return [w for w in _WORD_BREAK.split(normalise(text)) if w]


def words_and_numbers(text: str) -> str:
    """Return the normalised text with only its letters, digits and spaces (no punctuation)."""
    kept = "".join(c if c.isalnum() else " " for c in normalise(text))
    return " ".join(kept.split())


def folded(text: str) -> str:
    """Return the normalised text as compared: no spaces, case and read-alike glyphs folded."""
    return _fold(compact(text).casefold())


def _fold(text: str) -> str:
    """Return case-folded text with read-alike glyphs folded and stroke runs counted as one."""
    return _STROKES.sub("1", text.translate(_READ_ALIKE))


def compact(text: str) -> str:
    """Return the normalised text without any spaces (for exact token look-ups)."""
    return normalise(text).replace(" ", "")
