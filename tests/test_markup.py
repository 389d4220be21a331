"""Property and example tests of the item-text parser."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from itemshot.renderer.markup import FigureRef, Math, Text, paragraphs, parse_inline


def unparse(segments: list) -> str:
    """Rebuild source text from segments (the parser's inverse, up to math delimiters)."""
    out = []
    for s in segments:
        if isinstance(s, Text):
            out.append(s.text)
        elif isinstance(s, FigureRef):
            out.append(f"<image {s.number}>")
        else:
            out.append(f"$${s.latex}$$" if s.display else f"${s.latex}$")
    return "".join(out)


plain = st.text(alphabet=st.characters(blacklist_characters="$\\<"), max_size=60)


@given(plain)
def test_text_without_markup_is_one_literal_segment(text: str) -> None:
    segments = parse_inline(text)
    assert "".join(s.text for s in segments) == text
    assert all(isinstance(s, Text) for s in segments)


def _untagged_spaces(text: str) -> str:
    return re.sub(r"\s*(<image \d+>)\s*", r"\1", text)


tags = st.lists(st.one_of(plain, st.integers(1, 7).map(lambda n: f"<image {n}>")), max_size=6)


@given(tags)
def test_figure_tags_round_trip_up_to_the_spaces_beside_them(parts: list[str]) -> None:
    text = "".join(parts)
    assert _untagged_spaces(unparse(parse_inline(text))) == _untagged_spaces(text)


@given(tags)
def test_a_figure_tags_words_never_touch_a_latin_word(parts: list[str]) -> None:
    # "Figure 1" set against "The" or "2" would read "Figure 1The", "Figure 1Figure 2".
    page = unparse(parse_inline("".join(parts)))
    assert not re.search(r"(?i)<image \d+>[a-z0-9<]|[a-z0-9.:;,!?]<image", page), page


def test_a_tag_glued_to_words_is_set_apart_except_beside_punctuation_and_japanese() -> None:
    assert unparse(parse_inline("above:<image 1>The")) == "above: <image 1> The"
    assert unparse(parse_inline("<image 1><image 2>A")) == "<image 1> <image 2> A"
    assert unparse(parse_inline("(see <image 1>).")) == "(see <image 1>)."
    assert unparse(parse_inline("図<image 1>の回路")) == "図<image 1>の回路"


@given(plain.filter(lambda t: t.strip() == t and t != ""), plain)
def test_inline_math_is_extracted(latex: str, tail: str) -> None:
    text = f"before ${latex}$ {tail}"
    segments = parse_inline(text)
    assert Math(latex.strip(), False) in segments


def test_currency_is_not_math() -> None:
    segments = parse_inline("A pen costs $5 and a book $10.")
    assert segments == [Text("A pen costs $5 and a book $10.")]


def test_display_and_bracket_math() -> None:
    segments = parse_inline(r"Solve $$x^2=4$$ and \(y\) then \[z\]")
    maths = [s for s in segments if isinstance(s, Math)]
    assert maths == [Math("x^2=4", True), Math("y", False), Math("z", True)]


def test_paragraphs_split_on_line_breaks() -> None:
    assert len(paragraphs("first line\nsecond <image 2>\n\nthird")) == 3
