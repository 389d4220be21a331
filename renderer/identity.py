"""The identity of a text: which option texts a reader of the rendered image cannot tell apart.

Two texts are the same option when their visible forms are of one length and
each pair of characters in them is equal or a look-alike pair:

- The visible form drops every character that draws nothing (Unicode format
  characters, category Cf, and the other default-ignorable code points:
  zero-width space and joiners, word joiner, soft hyphen, byte-order mark,
  direction marks, variation selectors, …), applies NFKC (full-width and other
  compatibility forms become their plain characters) and folds whitespace.
- A look-alike pair is two characters in one class of Unicode's confusables
  table (UTS #39 `confusables.txt`, as shipped by `confusable-homoglyphs`):
  Cyrillic "А" and Latin "A", Greek "ν" and Latin "v", katakana "カ" and
  kanji "力". Two different ASCII characters are never a look-alike pair, so
  "0"/"O" and "1"/"l"/"I" stay different options: they are characters a
  dataset's authors type on purpose and readers tell apart by context, and
  folding them would refuse ordinary items.

The relation is checked pairwise rather than through one key because it is not
transitive: Greek "Ο" looks like both "O" and "0", which are different options.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from confusable_homoglyphs.utils import load as _load_confusables

# Default-ignorable code points that are not in category Cf (DerivedCoreProperties.txt,
# Unicode 15.1): combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# Mongolian variation selectors, variation selectors, and reserved ignorable ranges.
_IGNORABLE_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0FFF),
)
# The package wraps right-to-left characters in LEFT-TO-RIGHT MARKs for display.
_DISPLAY_MARK = "\u200e"


def invisible(char: str) -> bool:
    """Return whether `char` draws nothing: a format (Cf) or other default-ignorable character."""
    if unicodedata.category(char) == "Cf":
        return True
    point = ord(char)
    return any(low <= point <= high for low, high in _IGNORABLE_RANGES)


def visible_form(text: str) -> str:
    """Return `text` as a reader sees it: invisible characters dropped, NFKC, whitespace folded."""
    kept = "".join(char for char in text if not invisible(char))
    # NFKC after dropping: "e", ZWSP, U+0301 composes to "é" only once the ZWSP is gone.
    kept = unicodedata.normalize("NFKC", kept)
    return " ".join("".join(char for char in kept if not invisible(char)).split())


def look_alike(a: str, b: str) -> bool:
    """Return whether characters `a` and `b` are equal or a confusable (non-ASCII) pair."""
    if a == b:
        return True
    if a.isascii() and b.isascii():
        return False
    classes = _classes()
    return a in classes and classes.get(a) == classes.get(b)


def same_text(a: str, b: str) -> bool:
    """Return whether texts `a` and `b` would look the same in an image (see the module)."""
    first, second = visible_form(a), visible_form(b)
    if first == second:
        return True
    return len(first) == len(second) and all(map(look_alike, first, second))


def differences(a: str, b: str) -> list[str]:
    """Return, for two texts that are the same option, what tells them apart, in text order."""
    found: list[str] = []
    only = set(a) ^ set(b)
    for char in dict.fromkeys(a + b):  # each character once, in the order the texts have them
        if char not in only:
            continue
        if invisible(char):
            found.append(f"{char_name(char)} draws nothing")
        elif (plain := unicodedata.normalize("NFKC", char)) != char:
            found.append(f"{char_name(char)} is a form of {plain!r}")
    first, second = visible_form(a), visible_form(b)
    pairs = dict.fromkeys((x, y) for x, y in zip(first, second, strict=False) if x != y)
    for x, y in pairs:
        odd, other = (x, y) if not x.isascii() else (y, x)
        found.append(f"{char_name(odd)} looks like {other!r}")
    if found:
        return found
    if a.split() == b.split():
        return ["they differ only in spacing"]
    return ["they are one text written in different Unicode forms"]


def shown(
    text: str, marked: set[str] | frozenset[str] = frozenset(), around: int = 0, context: int = 10
) -> str:
    """Return `text` quoted for a message, invisible, control, odd-space and `marked` chars escaped.

    A text longer than `2 * context + 1` characters is shown as the excerpt of
    `context` characters either side of position `around` (ellipses mark the cut).
    """
    start, end = 0, len(text)
    if len(text) > 2 * context + 1:
        start, end = max(0, around - context), min(len(text), around + context + 1)
    out = ["…"] if start else []
    for char in text[start:end]:
        odd = char in marked or invisible(char) or (char.isspace() and char != " ")
        if odd or unicodedata.category(char) in ("Cc", "Cs", "Co", "Cn"):
            point = ord(char)
            out.append(f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}")
        else:
            out.append(char)
    out += ["…"] if end < len(text) else []
    return "'" + "".join(out) + "'"


def char_name(char: str) -> str:
    """Return `U+XXXX NAME` for one character, as error messages show it."""
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')}"


@cache
def _classes() -> dict[str, int]:
    """Return the confusable class of each character, from the package's `confusables.json`.

    The file lists, for each character, its homoglyphs: every source character
    of `confusables.txt` with its prototype, and each prototype with its
    sources, so the connected groups of that graph are the table's classes
    (one prototype and the characters that map to it). The graph is taken as
    it is, not after NFKC: folding its compatibility characters first would
    join classes through them (long s "ſ" is NFKC "s" and a look-alike of
    "f"), while texts meet it already in NFKC. An entry of several
    characters ("rn" for "m") is left out, since texts are compared
    character by character.
    """
    parent: dict[str, str] = {}

    def root(char: str) -> str:
        while parent.setdefault(char, char) != char:
            parent[char] = parent[parent[char]]
            char = parent[char]
        return char

    for key, entries in _load_confusables("confusables.json").items():
        source = _single(key)
        if source is None:
            continue
        for entry in entries:
            target = _single(entry["c"])
            if target is not None and target != source:
                parent[root(source)] = root(target)
    roots = sorted({root(char) for char in parent})
    number = {char: index for index, char in enumerate(roots)}
    return {char: number[root(char)] for char in parent}


def _single(text: str) -> str | None:
    """Return the one character an entry of the table stands for, or None when it is several."""
    plain = text.replace(_DISPLAY_MARK, "")
    return plain if len(plain) == 1 and not invisible(plain) else None
