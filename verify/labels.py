"""Option labels as OCR reads them: "(A)", "A.", "A)" with the usual misreadings."""

from __future__ import annotations

import re

# Characters tesseract commonly reads in place of a capital letter in a label.
_CONFUSIONS = {"1": "I", "l": "I", "|": "I", "!": "I", "i": "I", "]": "I", "0": "O", "8": "B"}
_LABEL = re.compile(r"^\s*[\(\[{<]?\s*([A-Za-z0-9|!\]]{1,2})\s*[\)\]}>.:]\s*")
_LABEL_SPACE = re.compile(r"^\s*[\(\[{<]\s*([A-Za-z0-9|!\]])\s+")


def split_label(text: str) -> tuple[str | None, str]:
    """Return (letter read in the leading label or None, the text after the label)."""
    match = _LABEL.match(text) or _LABEL_SPACE.match(text)
    if not match:
        return None, text
    raw = match.group(1)
    letter = raw if len(raw) == 1 else raw[0] if raw[0].isupper() else raw[-1]
    letter = _CONFUSIONS.get(letter, letter).upper()
    return letter, text[match.end() :]


def same_letter(read: str | None, letter: str) -> bool:
    """Return whether a label letter read by OCR is the option's letter."""
    return read is not None and read.upper() == letter.upper()
