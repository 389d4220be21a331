"""Whole-image labels and wrapped lines found by their place on the page, as region mode does.

Words stand as tesseract returns them (text, box, line key): a two-column
grid of options read as one OCR line per row, and handwriting labels read as
no letter ("(&)" for G, "(9)" for J).
"""

from __future__ import annotations

from itemshot.verify.labels import label_shape
from itemshot.verify.ocr import Word
from itemshot.verify.whole_image import option_labels, option_readings

LETTERS = list("ABCD")
HEIGHT = 20


def _row(y: int, line: int, cells: list[tuple[int, str]]) -> list[Word]:
    """Return the words of one OCR line: (x, text) pairs, each word 10 px per character."""
    return [Word(text, x, y, 10 * len(text), HEIGHT, 90.0, (1, 1, line)) for x, text in cells]


def _grid(label_c: str = "(C)", label_d: str = "(D)") -> list[Word]:
    """Return a stem and a 2 × 2 option grid whose left options wrap onto a second line."""
    return [
        *_row(0, 0, [(0, "Which"), (60, "city?")]),
        *_row(40, 1, [(0, "(A)"), (40, "the"), (80, "old"), (400, "(B)"), (440, "Lima")]),
        *_row(70, 2, [(0, "Oslo")]),
        *_row(110, 3, [(0, label_c), (40, "new"), (400, label_d), (440, "Rome")]),
        *_row(140, 4, [(0, "York")]),
    ]


def test_a_label_read_as_no_letter_is_bound_by_its_place() -> None:
    labels = option_labels(_grid(label_c="(&)", label_d="(9)"), LETTERS)
    assert sorted(labels.assigned) == LETTERS


def test_a_missing_label_leaves_its_option_unassigned() -> None:
    found = [w for w in _grid() if w.text not in ("(C)", "new", "York")]  # option C painted out
    assert sorted(option_labels(found, LETTERS).assigned) == ["A", "B", "D"]


def test_a_wrapped_line_read_after_the_next_column_joins_its_own_option() -> None:
    found = _grid()
    labels = option_labels(found, LETTERS)
    a, b = labels.assigned["A"], labels.assigned["B"]
    assert option_readings(found, a.index, labels.stops, labels.right(a))[-1] == "the old Oslo"
    assert option_readings(found, b.index, labels.stops, labels.right(b)) == ["Lima"]


def test_label_shapes() -> None:
    assert [label_shape(w) for w in ("(&)", "(9)", "()", "(G)x")] == ["", "", "", "x"]
    assert [label_shape(w) for w in ("Figure", "(", "(abc)")] == [None, None, None]
