"""OCR text against source text, as a character diff a reviewer can read at a glance."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_SPACE = re.compile(r"\s+")
MAX_DIFF_CHARS = 4000  # longer texts are cut: a diff is quadratic in the worst case


@dataclass(frozen=True)
class Piece:
    """A run of text that is the same in both, missing from the reading, or extra in it."""

    kind: str  # "same", "missing" (in the source, not read) or "extra" (read, not in the source)
    text: str


def text_diff(expected: str, observed: str) -> list[Piece]:
    """Return the character diff of the OCR reading against the source (whitespace folded)."""
    source = _SPACE.sub(" ", expected).strip()[:MAX_DIFF_CHARS]
    reading = _SPACE.sub(" ", observed).strip()[:MAX_DIFF_CHARS]
    matcher = difflib.SequenceMatcher(None, source, reading, autojunk=False)
    pieces: list[Piece] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            pieces.append(Piece("same", source[a0:a1]))
            continue
        if a1 > a0:
            pieces.append(Piece("missing", source[a0:a1]))
        if b1 > b0:
            pieces.append(Piece("extra", reading[b0:b1]))
    return pieces
