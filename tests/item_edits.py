"""Meaning-changing edits of an item's text: one word, a negation, a formula digit, a unit prefix.

Test tooling for the defect suites (`tests.defects`). Each edit changes one
thing a reader would read differently — "most" → "least", "does NOT contain"
→ "does contain", `\\alpha_{23}` → `\\alpha_{28}`, "1.00 M" → "1.00 mM" — and
returns the changed item with what was changed, or None when the item has
nothing of the kind. Figure tags are never touched; words and units are
changed only outside math, digits only inside it. The choice is drawn from
`random.Random(f"{seed}:{item.id}:{kind}")`, so an item's edit does not
depend on which other items or kinds are asked for.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from itemshot.renderer.items import IMAGE_TAG, LETTERS, Item
from itemshot.renderer.markup import _delimited

EDIT_KINDS = ("word_changed", "negation_dropped", "formula_digit", "unit_prefix")


@dataclass(frozen=True)
class Edit:
    """One edit of an item: the kind, the field ("question", "option:C"), old and new text."""

    kind: str
    field: str
    start: int  # where in the field's source text the edited span starts
    old: str  # the span as the source has it ("most", "NOT ", "23", "M")
    new: str  # what the changed item has in its place ("least", "", "28", "mM")
    item: Item  # the changed item (same id, same figures)

    def describe(self) -> str:
        """Return the edit in one line: `question: 'most' -> 'least'`."""
        return f"{self.field}: {self.old!r} -> {self.new!r}"


# A meaning word and what it becomes: antonyms, opposite directions, quantifiers.
ANTONYMS = {
    "most": "least", "least": "most", "more": "less", "less": "more", "fewer": "more",
    "greater": "less", "greatest": "smallest", "larger": "smaller", "smaller": "larger",
    "largest": "smallest", "smallest": "largest", "higher": "lower", "lower": "higher",
    "highest": "lowest", "lowest": "highest", "high": "low", "low": "high",
    "increase": "decrease", "decrease": "increase", "increases": "decreases",
    "decreases": "increases", "increased": "decreased", "decreased": "increased",
    "increasing": "decreasing", "decreasing": "increasing", "rise": "fall", "fall": "rise",
    "gain": "loss", "loss": "gain", "maximum": "minimum", "minimum": "maximum",
    "left": "right", "right": "left", "above": "below", "below": "above", "top": "bottom",
    "bottom": "top", "upper": "lower", "inside": "outside", "outside": "inside",
    "north": "south", "south": "north", "east": "west", "west": "east",
    "before": "after", "after": "before", "first": "last", "last": "first",
    "earlier": "later", "later": "earlier", "early": "late", "late": "early",
    "true": "false", "false": "true", "correct": "incorrect", "incorrect": "correct",
    "positive": "negative", "negative": "positive", "best": "worst", "worst": "best",
    "strong": "weak", "weak": "strong", "stronger": "weaker", "weaker": "stronger",
    "long": "short", "short": "long", "likely": "unlikely", "unlikely": "likely",
    "direct": "indirect", "indirect": "direct", "all": "none", "none": "all",
    "always": "never", "only": "also",
}  # fmt: skip
# Without a meaning word in the stem, a content word is swapped for one of these.
OTHER_WORDS = (
    "energy", "price", "market", "tissue", "signal", "pressure", "volume", "current",
    "period", "growth", "surface", "profit", "region", "species", "method", "density",
)  # fmt: skip
_COMMON = frozenset(
    [
        "which",
        "what",
        "where",
        "when",
        "that",
        "this",
        "these",
        "those",
        "there",
        "their",
        "about",
        "with",
        "from",
        "into",
        "following",
        "shown",
        "given",
        "image",
        "figure",
        "above",
        "below",
        "would",
        "could",
        "should",
        "the",
    ]
)
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")

# Negations a stem or option may hold, and what is left when one is dropped.
_NEGATION = re.compile(r"\b(?:NOT|Not|not|EXCEPT|Except|except|never|Never|NEVER)\b ?")
_CONTRACTED = {
    "doesn't": "does", "don't": "do", "isn't": "is", "aren't": "are", "wasn't": "was",
    "weren't": "were", "can't": "can", "cannot": "can", "won't": "will", "didn't": "did",
    "shouldn't": "should", "wouldn't": "would", "couldn't": "could", "hasn't": "has",
    "haven't": "have",
}  # fmt: skip
_CONTRACTION = re.compile(r"\b(?:" + "|".join(re.escape(k) for k in _CONTRACTED) + r")\b", re.I)

# A unit after a number and the same unit under another prefix.
PREFIX_SWAPS = {
    "M": "mM", "mM": "M", "μM": "mM", "µM": "mM", "kg": "g", "g": "kg", "mg": "g",
    "μg": "mg", "µg": "mg", "m": "cm", "cm": "mm", "mm": "cm", "km": "m", "nm": "μm",
    "μm": "nm", "µm": "nm", "L": "mL", "mL": "L", "ml": "L", "J": "kJ", "kJ": "J",
    "MJ": "kJ", "W": "kW", "kW": "W", "MW": "kW", "Pa": "kPa", "kPa": "Pa", "MPa": "kPa",
    "GPa": "MPa", "Hz": "kHz", "kHz": "Hz", "MHz": "kHz", "GHz": "MHz", "V": "mV",
    "mV": "V", "kV": "V", "A": "mA", "mA": "A", "s": "ms", "ms": "s", "mol": "mmol",
    "mmol": "mol", "N": "kN", "kN": "N", "eV": "keV", "keV": "eV", "MeV": "keV",
}  # fmt: skip
_NUMBER_UNIT = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?\s?(%|°|[A-Za-zμµ]{1,4})(?![A-Za-z])")


def _math_spans(text: str) -> list[tuple[int, int]]:
    """Return (start, end) of every formula as the renderer parses it (delimiters included)."""
    return [(start, end) for start, end, _math in _delimited(text)]


def _protected(text: str) -> list[tuple[int, int]]:
    """Return the spans an edit outside math must not touch: formulas and figure tags."""
    return _math_spans(text) + [m.span() for m in IMAGE_TAG.finditer(text)]


def _outside(span: tuple[int, int], protected: list[tuple[int, int]]) -> bool:
    return all(span[1] <= a or span[0] >= b for a, b in protected)


def _text_fields(item: Item, options: bool) -> list[tuple[str, str]]:
    """Return (field name, text) of the stem and, with `options`, of every option."""
    fields = [("question", item.question)]
    if options:
        fields += [(f"option:{LETTERS[i]}", o) for i, o in enumerate(item.options)]
    return fields


def _with_field(item: Item, field: str, text: str) -> Item | None:
    """Return the item with one field's text replaced, or None if options would coincide."""
    if field == "question":
        return replace(item, question=text)
    index = LETTERS.index(field.split(":", 1)[1])
    options = list(item.options)
    options[index] = text
    if text.strip() in {o.strip() for i, o in enumerate(item.options) if i != index}:
        return None  # two options reading alike is another defect, not this one
    return replace(item, options=tuple(options))


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word.capitalize() if like[:1].isupper() else word


def _apply(
    kind: str, item: Item, choices: list[tuple[str, int, int, str]], rng: random.Random
) -> Edit | None:
    """Apply one (field, start, end, new text) choice drawn from `choices`; None if none fits."""
    rng.shuffle(choices)
    texts = dict(_text_fields(item, options=True))
    for field, start, end, new in choices:
        text = texts[field]
        changed = _with_field(item, field, text[:start] + new + text[end:])
        if changed is not None:
            return Edit(kind, field, start, text[start:end], new, changed)
    return None


def word_changed(item: Item, rng: random.Random) -> Edit | None:
    """Swap one meaning word of the stem for its opposite ("most" → "least").

    A stem with no word of `ANTONYMS` gets one of its content words (five
    letters or more) swapped for another word of `OTHER_WORDS` instead.
    """
    text = item.question
    protected = _protected(text)
    words = [m for m in _WORD.finditer(text) if _outside(m.span(), protected)]
    choices = [
        ("question", m.start(), m.end(), _cased(ANTONYMS[m.group().lower()], m.group()))
        for m in words
        if m.group().lower() in ANTONYMS
    ]
    if not choices:
        for m in words:
            word = m.group()
            if len(word) < 5 or word.lower() in _COMMON or "'" in word:
                continue
            other = rng.choice([w for w in OTHER_WORDS if w != word.lower()])
            choices.append(("question", m.start(), m.end(), _cased(other, word)))
    return _apply("word_changed", item, choices, rng)


def negation_dropped(item: Item, rng: random.Random) -> Edit | None:
    """Drop one negation ("NOT", "EXCEPT", "never", "doesn't" → "does") from the stem or an option."""
    choices = []
    for field, text in _text_fields(item, options=True):
        if IMAGE_TAG.fullmatch(text.strip()):
            continue
        protected = _protected(text)
        for m in _NEGATION.finditer(text):
            if _outside(m.span(), protected):
                choices.append((field, m.start(), m.end(), ""))
        for m in _CONTRACTION.finditer(text):
            if _outside(m.span(), protected):
                choices.append(
                    (field, m.start(), m.end(), _cased(_CONTRACTED[m.group().lower()], m.group()))
                )
    return _apply("negation_dropped", item, choices, rng)


def formula_digit(item: Item, rng: random.Random) -> Edit | None:
    """Change one digit inside a formula of the stem or an option (`s^{2}` → `s^{6}`)."""
    choices = []
    for field, text in _text_fields(item, options=True):
        for start, end in _math_spans(text):
            for m in re.finditer(r"\d", text[start:end]):
                new = str((int(m.group()) + rng.randint(1, 8)) % 10)
                choices.append((field, start + m.start(), start + m.end(), new))
    return _apply("formula_digit", item, choices, rng)


def unit_prefix(item: Item, rng: random.Random) -> Edit | None:
    """Change the prefix of a unit after a number, outside math ("1.00 M" → "1.00 mM")."""
    choices = []
    for field, text in _text_fields(item, options=True):
        protected = _protected(text)
        for m in _NUMBER_UNIT.finditer(text):
            unit = m.group(1)
            if unit in PREFIX_SWAPS and _outside(m.span(), protected):
                choices.append((field, m.start(1), m.end(1), PREFIX_SWAPS[unit]))
    return _apply("unit_prefix", item, choices, rng)


EDITS: dict[str, Callable[[Item, random.Random], Edit | None]] = {
    "word_changed": word_changed,
    "negation_dropped": negation_dropped,
    "formula_digit": formula_digit,
    "unit_prefix": unit_prefix,
}


def edit_item(item: Item, kind: str, seed: int = 0) -> Edit | None:
    """Return the `kind` edit of `item` drawn from (seed, item id, kind), or None if it has none."""
    return EDITS[kind](item, random.Random(f"{seed}:{item.id}:{kind}"))
