"""Property and example tests of the item-text parser."""

from __future__ import annotations

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


@given(st.lists(st.one_of(plain, st.integers(1, 7).map(lambda n: f"<image {n}>")), max_size=6))
def test_figure_tags_round_trip(parts: list[str]) -> None:
    text = "".join(parts)
    assert unparse(parse_inline(text)) == text


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
