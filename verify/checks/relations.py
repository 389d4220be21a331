"""Comparisons: a relation (=, <, >, ≤, ≥, ≠) between two operands read as another.

Two options that differ only in a relation ("q = 0" and "q > 0") are two
answers, and their texts are as similar as texts get: neither the text score
nor the number check tells them apart. A relation is checked as a token —
its symbol with the operand on each side — and fails when a reading shows
the same operands with a relation of another meaning and none shows the
source's. A symbol read as no relation at all ("q - 0", "q 0") is no
evidence either way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from itemshot.verify.reading.text import compact
from itemshot.verify.verdicts import Reason, ReasonCode

# What a reading may show for each relation without saying something else: the same
# comparison with a stroke lost ("≤" read as "<"). Any other relation is a rival.
_ALIKE = {"=": "=", "<": "<≤", ">": ">≥", "≤": "≤<", "≥": "≥>", "≠": "≠"}
_SYMBOLS = "".join(_ALIKE)
# ASCII and TeX spellings of the same relations.
_SPELLINGS = (
    (re.compile(r"<="), "≤"),
    (re.compile(r">="), "≥"),
    (re.compile(r"!=|<>"), "≠"),
    (re.compile(r"\\(?:leq?|leqslant)(?![A-Za-z])"), "≤"),
    (re.compile(r"\\(?:geq?|geqslant)(?![A-Za-z])"), "≥"),
    (re.compile(r"\\(?:neq?)(?![A-Za-z])"), "≠"),
    (re.compile(r"\\lt(?![A-Za-z])"), "<"),
    (re.compile(r"\\gt(?![A-Za-z])"), ">"),
)
# A relation with one letter or digit on each side (spaces removed); the right one may be
# negative ("x<-1"). One glyph each: what OCR misreads around a symbol it reads otherwise
# (a subscript, a Greek letter read as Latin) is no part of the comparison checked.
_RELATION = re.compile(rf"(?<=([A-Za-z0-9)\]]))([{_SYMBOLS}])(?=(-?[A-Za-z0-9(]))")
_TEX_NOISE = re.compile(r"\\[A-Za-z]+|[{}]|\\[,;:! ]")


def _spelled(text: str, *, tex: bool = False) -> str:
    """Return the compact text with each relation written as its one symbol.

    With `tex`, the formula's other commands and its braces are left out
    first (`\\Delta U \\geq 0` gives "U≥0").
    """
    for pattern, symbol in _SPELLINGS:
        text = pattern.sub(symbol, text)
    return compact(_TEX_NOISE.sub(" ", text) if tex else text)


def relations(text: str, formulas: Sequence[str] = ()) -> list[str]:
    """Return each relation of the text and of its formulas as a token ("q=0", "x≤-1").

    What is compared is the glyph on each side of the symbol, as drawn: a
    formula's commands and braces are no glyphs of their own.
    """
    found = [_token(m) for m in _RELATION.finditer(_spelled(text))]
    for latex in formulas:
        found += [_token(m) for m in _RELATION.finditer(_spelled(latex, tex=True))]
    return found


def _token(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2) + match.group(3)


def _shows(seen: str, token: str, symbols: str) -> int:
    """Return how often the compact reading shows the token's operands around one of `symbols`."""
    left, right = token[0], token[2:]
    pattern = re.escape(left) + f"[{re.escape(symbols)}]" + re.escape(right)
    return len(re.findall(f"(?={pattern})", seen))


def shown(token: str, readings: Sequence[str]) -> bool:
    """Return whether some reading shows the relation as the source has it."""
    alike = _ALIKE[token[1]]
    return any(_shows(_spelled(r), token, alike) for r in readings)


def changed(text: str, formulas: Sequence[str], reading: str) -> dict[str, str]:
    """Return each relation the reading shows as another, mapped to what it shows.

    Counted against the source: a rival the source itself has as often ("U>0"
    in one place, "U<0" in another) is no evidence at the place whose symbol
    went unread.
    """
    wanted = Counter(relations(text, formulas))
    seen = _spelled(reading)
    found: dict[str, str] = {}
    for token in wanted:
        if _shows(seen, token, _ALIKE[token[1]]):
            continue
        for rival in _SYMBOLS:
            if rival in _ALIKE[token[1]]:
                continue
            other = token[0] + rival + token[2:]
            if _shows(seen, other, rival) > wanted[other]:
                found[token] = other
                break
    return found


def relation_reasons(name: str, text: str, formulas: Sequence[str], reading: str) -> list[Reason]:
    """Return a reason naming each relation the reading shows with another meaning."""
    found = changed(text, formulas, reading)
    if not found:
        return []
    detail = "; ".join(f"'{token}' read as '{other}'" for token, other in found.items())
    return [Reason(ReasonCode.RELATION_CHANGED, name, detail, tokens=tuple(found))]
