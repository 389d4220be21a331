"""What an image must show for an item: the source text of the stem and of each option."""

from __future__ import annotations

from dataclasses import dataclass

from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.markup import (
    FigureRef,
    Math,
    Segment,
    Text,
    is_only_figures,
    paragraphs,
    parse_inline,
)
from itemshot.verify.checks.meaning import split_words

# How the renderer writes an `<image N>` reference, by item language.
FIGURE_WORDS = {"en": "Figure {n}", "ja": "図{n}"}


def figure_word(language: str) -> str:
    """Return the renderer's figure-reference pattern for a language (from its page words)."""
    try:
        from itemshot.renderer.page import words_for
    except ImportError:
        return FIGURE_WORDS.get(language.split("-")[0], FIGURE_WORDS["en"])
    return words_for(language)["figure"]


MATH_GAP = "\n"  # where a formula stood in a field's text (split point for word recall)


@dataclass(frozen=True)
class Field:
    """One part of the item as it should read: `text` without math, figure tags as words."""

    name: str
    text: str
    math: tuple[str, ...]
    figures: tuple[int, ...]
    letter: str = ""
    # Every word of the item (case-folded): a reading showing one of them in this field's
    # place shows a word a person reads, however rare ("opiates" where "cocaine" belongs).
    vocabulary: frozenset[str] = frozenset()


def _flatten(source: str, figure_word: str, *, drop_figure_refs: bool, option: bool) -> Field:
    # The renderer sets a stem paragraph by paragraph (a formula never runs over a line
    # break): parsed whole, "3,\n S_i ≧ 0" would be one formula the page never typeset.
    blocks = [parse_inline(source)] if option else paragraphs(source)
    segments: list[Segment] = []
    for index, block in enumerate(blocks):
        segments.extend([Text("\n"), *block] if index else block)
    # An option of figures only shows them, not their references (the page draws the
    # figures in the option's place); a stem shows its references whatever else it holds.
    only_figures = option and is_only_figures(segments)
    parts: list[str] = []
    math: list[str] = []
    figures: list[int] = []
    for segment in segments:
        if isinstance(segment, Text):
            parts.append(segment.text)
        elif isinstance(segment, Math):
            math.append(segment.latex)
            parts.append(MATH_GAP)
        elif isinstance(segment, FigureRef):
            figures.append(segment.number)
            if not (only_figures or drop_figure_refs):
                parts.append(figure_word.format(n=segment.number))
    text = "".join(parts)
    # The spaces the parser sets beside a figure tag are all a stem of dropped tags holds.
    text = text if text.strip() else ""
    return Field(name="", text=text, math=tuple(math), figures=tuple(figures))


def vocabulary(item: Item) -> frozenset[str]:
    """Return every word of the item's stem and options, case-folded."""
    return frozenset(w for text in (item.question, *item.options) for w in split_words(text))


def stem(item: Item, *, drop_figure_refs: bool = False) -> Field:
    """Return the stem as it should read; `<image N>` becomes the item language's "Figure N"."""
    field = _flatten(
        item.question, figure_word(item.language), drop_figure_refs=drop_figure_refs, option=False
    )
    return Field("question", field.text, field.math, field.figures, vocabulary=vocabulary(item))


def options(item: Item, *, drop_figure_refs: bool = False) -> list[Field]:
    """Return each option as it should read, with its letter; image-only options have no text."""
    word = figure_word(item.language)
    words = vocabulary(item)
    found: list[Field] = []
    for index, option in enumerate(item.options):
        letter = LETTERS[index]
        field = _flatten(option, word, drop_figure_refs=drop_figure_refs, option=True)
        name = f"option:{letter}"
        found.append(Field(name, field.text, field.math, field.figures, letter, words))
    return found


def caption(item: Item, name: str, number: int) -> Field:
    """Return the caption under figure `number` as it should read ("Figure 2", "図2")."""
    text = figure_word(item.language).format(n=number)
    return Field(name, text, (), (number,))
