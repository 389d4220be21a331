"""Option labels as OCR reads them: "(A)", "A.", "A)" with the usual misreadings."""

from __future__ import annotations

import re
import unicodedata

from itemshot.verify.checks.lookalikes import LABEL_READINGS as _CONFUSIONS

_LABEL = re.compile(r"^\s*[\(\[{<]?\s*([A-Za-z0-9|!\]]{1,2})\s*[\)\]}>.:]\s*")
_LABEL_SPACE = re.compile(r"^\s*[\(\[{<]\s*([A-Za-z0-9|!\]])\s+")
# What specks, dust and a box's edge read as in front of a label: marks, never a letter.
_LEADING_MARKS = re.compile(r"^[\s.,;:'\"`‘’“”„«»\-–—·•*~_]+")
# A whole OCR word that is a label; a box's rounded edge or a quote may stick to its front,
# and so may a rule it stands against, before its bracket ("\(A)": a notebook's margin line).
_WORD_LABEL = re.compile(r"^(?:[\\|/](?=[\(\[]))?[\(\[‘'`]{0,2}([A-Za-z1|!©])([a-z]?)[\)\].:](.*)$")
# Lower-case readings of a label letter: "l" for I, and letters shaped like their capitals.
_LOWER_READINGS = "lcosuvwxz"


def split_label(text: str) -> tuple[str | None, str]:
    """Return (letter read in the leading label or None, the text after the label).

    Full-width brackets and letters ("（Ｅ）", as CJK-trained engines write them)
    count as their ASCII forms. Marks in front of the label (a speck read as
    ". " or a quote: `“(C).`) are not part of it.
    """
    text = unicodedata.normalize("NFKC", text)
    marked = _LEADING_MARKS.sub("", text)
    match = _LABEL.match(marked) or _LABEL_SPACE.match(marked)
    if not match:
        return None, text
    text = marked
    raw = match.group(1)
    letter = raw if len(raw) == 1 else raw[0] if raw[0].isupper() else raw[-1]
    letter = _CONFUSIONS.get(letter, letter).upper()
    return letter, text[match.end() :]


def same_letter(read: str | None, letter: str) -> bool:
    """Return whether a label letter read by OCR is the option's letter."""
    return read is not None and read.upper() == letter.upper()


def word_label(word: str) -> tuple[str, str] | None:
    """Return (letter, text stuck after it) when an OCR word reads as a label, else None.

    Stricter than `split_label`, for words anywhere on a page: a lower-case
    letter only where it looks like its capital ("(c)"), and a doubled glyph
    only as the same letter in both cases ("(Cc)").
    """
    match = _WORD_LABEL.match(word.strip())
    if match is None:
        return None
    letter, echo, rest = match.groups()
    if letter.islower() and letter not in _LOWER_READINGS:  # not "i.e." opening a line
        return None
    letter = _CONFUSIONS.get(letter, letter).upper()
    if echo and echo != letter.lower():
        return None
    return letter, rest


# A bracketed glyph or two: a label whatever it was read as ("(&)" for G, "(9)" for J, "()"),
# its opening bracket read as a "C" too ("CR)", "C@)": a bracket's curve is a C's).
_LABEL_SHAPE = re.compile(
    r"^(?:[\(\[{]|C(?=[^\s()\[\]{}]{1,2}[\)\]}]))([^\s()\[\]{}]{0,2})[\)\]}](.*)$"
)


def label_shape(word: str) -> str | None:
    """Return the text stuck after a word shaped like a label, read as any glyph, else None.

    A handwriting "(G)" comes out "(&)", "(J)" "(9)" or "()": no letter, but
    still a label's shape. Which letter it is, only its place among the other
    labels can tell (`whole_image.bind_by_position`).
    """
    match = _LABEL_SHAPE.match(word.strip())
    return None if match is None else match.group(2)


# A label that lost a bracket, as a whole word: "(D" for a serif "(I)", ")" or "0)" for "(J)".
_HALF_LABEL = re.compile(r"^(?:[\(\[{][^\s()\[\]{}]{1,2}|[^\s()\[\]{}]{0,2}[\)\]}])$")


def half_label_shape(word: str) -> bool:
    """Return whether a whole word is a label that lost one of its brackets.

    Only where a label stands (opening a line in the grid of labels, bound
    there by `whole_image.bind_by_position`) is such a word taken for one: in
    running text "(a" or "1)" is text.
    """
    return _HALF_LABEL.match(word.strip()) is not None
