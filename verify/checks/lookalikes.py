"""The one table of what OCR reads in place of what: label letters and word glyphs.

Three uses, one table, so a confusion learnt in one place holds in all:

- `LABEL_READINGS`: a character an engine reads for a capital label letter
  ("1" for I, "0" for O); `split_label` and `word_label` turn it back.
- `LABEL_RIVALS`: per label letter, the letters read in its place when a
  whole page's labels are assigned in sequence ("(E)" read where "(F)" is).
- `WORD_GLYPHS`: letter runs an engine reads for others inside a word ("rn"
  for "m"); `fold_word` folds both sides before two words are compared.

What a given face draws alike is measured from its font file instead
(`verify.checks.glyphs`); this table is what engines confuse in any face.
"""

from __future__ import annotations

LABEL_READINGS = {
    "1": "I", "l": "I", "|": "I", "!": "I", "i": "I", "]": "I", "0": "O", "8": "B", "©": "C",
}  # fmt: skip
LABEL_RIVALS = {
    "F": "EP",
    "E": "F",
    "I": "1l|JT",
    "D": "O0",
    "O": "D0",
    "G": "C6",
    "C": "G",
    "B": "8",
}
# Longest first: "rn" folds before its "r" could be compared alone.
WORD_GLYPHS = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("ii", "u"), ("l", "i"), ("j", "i"))


def fold_word(word: str) -> str:
    """Return a case-folded word with the glyph runs engines confuse folded to one spelling."""
    folded = word.casefold()
    for read, written in WORD_GLYPHS:
        folded = folded.replace(read, written)
    return folded
