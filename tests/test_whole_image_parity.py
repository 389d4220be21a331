"""Whole-image labels and wrapped lines found by their place on the page, as region mode does.

Words stand as tesseract returns them (text, box, line key): a two-column
grid of options read as one OCR line per row, and handwriting labels read as
no letter ("(&)" for G, "(9)" for J).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from itemshot.renderer.items import Item
from itemshot.renderer.records import Region, box_to_quad
from itemshot.verify.checks.fonts import font_file
from itemshot.verify.checks.labels import half_label_shape, label_shape
from itemshot.verify.checks.scoring import FORMULA_PREFIX, FieldResult
from itemshot.verify.modes.regions import settle_located
from itemshot.verify.modes.whole_image import (
    _audit_words,
    _label_shown,
    _without_placeholders,
    _words_showing,
    locate_fields,
    option_labels,
    option_readings,
    reading_order,
    settled_by_reading,
)
from itemshot.verify.reading.ocr import Word
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS
from itemshot.verify.verdicts import Reason, RegionScore

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
    assert option_readings(found, a, labels)[-1] == "the old Oslo"
    assert option_readings(found, b, labels) == ["Lima"]


def test_a_label_that_lost_a_bracket_is_bound_by_its_place_only() -> None:
    # A serif "(D)" whose "I)"-like end merged ("(D" read for it), a "(J)" read as "0)".
    assert sorted(option_labels(_grid(label_c="(D", label_d="0)"), LETTERS).assigned) == LETTERS
    assert [half_label_shape(w) for w in ("(D", ")", "0)", "(ab")] == [True] * 4
    assert [half_label_shape(w) for w in ("(abc", "(D)", "word)", "(x+1", "D")] == [False] * 5
    # In running text such a word is text: the stem's "(a" binds nothing.
    found = [w for w in _grid() if w.text not in ("(C)", "new", "York")]
    found[1] = replace(found[1], text="(a")
    assert sorted(option_labels(found, LETTERS).assigned) == ["A", "B", "D"]


def test_a_label_read_as_any_short_word_is_bound_on_a_row_of_labels_only() -> None:
    # A bold "(C)" on a notebook's rule read as "@": in the labels' column, on the row of
    # the label "(D)" read in the other column, exactly where C's label is missing.
    assert sorted(option_labels(_grid(label_c="@"), LETTERS).assigned) == LETTERS
    # Unread, C's label leaves nothing there: the wrapped lines "Oslo" and "York" start in
    # the labels' column too, but on rows no label read stands on.
    found = [w for w in _grid() if w.text != "(C)"]
    assert sorted(option_labels(found, LETTERS).assigned) == ["A", "B", "D"]
    # Nor is a longer word in that place a label.
    assert sorted(option_labels(_grid(label_c="Paris"), LETTERS).assigned) == ["A", "B", "D"]


def test_a_last_row_of_labels_all_misread_is_found_by_the_rows_pitch() -> None:
    # Eight options in rows set at one pitch; the last row's "(G)" and "(H)" read "M" and
    # "W3": no label on that row is read, but it continues the rows above.
    def grid(*last: str) -> list[Word]:
        rows = [("(A)", "(B)"), ("(C)", "(D)"), ("(E)", "(F)"), last]
        return [
            word
            for line, (left, right) in enumerate(rows)
            for word in _row(40 * line, line, [(0, left), (40, "x"), (400, right), (440, "y")])
        ]

    letters = list("ABCDEFGH")
    assert sorted(option_labels(grid("M", "W3"), letters).assigned) == letters
    # A row set otherwise (a line wrapped: half a pitch on) holds no labels.
    found = [replace(w, top=w.top - 20) if w.line[2] == 3 else w for w in grid("M", "W3")]
    assert sorted(option_labels(found, letters).assigned) == letters[:6]


def test_labels_after_the_last_one_read_are_bound_in_order() -> None:
    # Five options, D's label read as "(9)" and E's not read at all: after "(C)", the last
    # label read, the one label shape left is D's; E stays unbound.
    labels = option_labels(_grid(label_d="(9)"), list("ABCDE"))
    assert sorted(labels.assigned) == ["A", "B", "C", "D"]
    # A wrapped line read as a label shape ("(3" for "13") after the last label is none.
    found = [*_grid(label_d="(9)"), *_row(170, 5, [(0, "(3")])]
    labels = option_labels(found, LETTERS)
    assert sorted(labels.assigned) == LETTERS
    assert found[labels.assigned["D"].index].text == "(9)"
    # After the last label read a shape binds the next letter only in that letter's column:
    # E stands under C; a "(3)" in the right column there is another label misread.
    for x, bound in ((0, True), (400, False)):
        found = [*_grid(), *_row(180, 5, [(x, "(3)"), (x + 40, "Paris")])]
        assert ("E" in option_labels(found, list("ABCDEF")).assigned) is bound
    # Between two labels read, a run that does not fill the gap binds nothing.
    found = [w for w in _grid(label_c="(&)") if w.text != "(B)"]
    assert sorted(option_labels(found, LETTERS).assigned) == ["A", "D"]


def test_label_shapes() -> None:
    assert [label_shape(w) for w in ("(&)", "(9)", "()", "(G)x")] == ["", "", "", "x"]
    assert [label_shape(w) for w in ("Figure", "(", "(abc)")] == [None, None, None]
    # An opening bracket read as a "C" ("(R)" as "CR)"); a word or a lone "C)" is no label.
    assert [label_shape(w) for w in ("CR)", "C@)x", "Cell", "C)", "CO")] == [
        "",
        "x",
        None,
        None,
        None,
    ]


def test_a_label_read_as_another_options_letter_is_bound_by_its_place_and_fails_as_read() -> None:
    found = _grid(label_d="(C)")  # a serif "(D)" read as a second "(C)"
    labels = option_labels(found, LETTERS)
    assert found[labels.assigned["D"].index].left == 400
    item = Item("grid", "Which city?", ("the old Oslo", "Lima", "new York", "Rome"), 0)
    verdict = _audit_words(found, labels, item, "eng", DEFAULT_THRESHOLDS, "")
    # Bound, the option is located for a reading in place; as read, it is labelled C.
    assert [(r.code, r.region) for r in verdict.reasons] == [("letter_mismatch", "option:D")]


def test_a_label_opening_its_line_beats_a_bracketed_one_in_the_stem() -> None:
    found = [
        *_row(0, 0, [(0, "Is"), (30, "(D)"), (70, "right?")]),  # the stem names option D
        *_row(40, 1, [(0, "(A)"), (40, "yes"), (400, "(B)"), (440, "no")]),
        *_row(70, 2, [(0, "(C)"), (40, "maybe"), (400, "(D)"), (440, "never")]),
    ]
    labels = option_labels(found, LETTERS)
    assert found[labels.assigned["D"].index].top == 70


def test_a_label_drawn_as_the_pages_labels_are_beats_a_stem_line_opening_with_a_letter() -> None:
    found = [
        *_row(0, 0, [(0, "Station"), (80, "is"), (110, "far"), (150, "from")]),
        *_row(30, 1, [(0, "A.From"), (70, "there")]),  # the stem's line opens "A.From"
        *_row(70, 2, [(0, "(A)"), (40, "yes"), (400, "(B)"), (440, "no")]),
        *_row(100, 3, [(0, "(C)"), (40, "maybe"), (400, "(D)"), (440, "never")]),
    ]
    labels = option_labels(found, LETTERS)
    assert found[labels.assigned["A"].index].text == "(A)"
    # The other way round: labels "A." … "D.", and a stem line opening "(A)".
    plain = [replace(w, text=f"{w.text[1]}.") if w.text[0] == "(" else w for w in found]
    plain[4] = replace(plain[4], text="(A)")
    assert option_labels(plain, LETTERS).assigned["A"].index == labels.assigned["A"].index


def test_fields_are_located_where_their_words_stand_for_the_region_audit() -> None:
    item = Item("grid", "Which city?", ("the old Oslo", "Lima", "new York", "Rome"), 0)
    found = [*_row(-40, 9, [(0, "QUIZ"), (60, "TIME")]), *_grid()]  # a header above the stem
    labels = option_labels(found, LETTERS)
    regions = {r.name: r for r in locate_fields(found, labels, 1.0, item, (400, 800))}
    assert sorted(regions) == ["option:A", "option:B", "option:C", "option:D", "question"]
    margin = 0.35 * HEIGHT
    assert regions["question"].box == (0.0, 0.0, 110 + margin, 20 + margin)  # not the header
    # Option A: its label, its first line and the line it wraps onto, not column B's words,
    # with room after its last word read for what no engine read (`UNREAD_ROOM` heights).
    room = 4.0 * HEIGHT
    assert regions["option:A"].box == (0.0, 40 - margin, 110 + room + margin, 90 + margin)
    assert regions["option:B"].box[0] == 400 - margin
    assert regions["option:A"].letter == "A"
    assert regions["option:A"].font_px == HEIGHT / 0.75


def test_options_moved_with_their_labels_are_out_of_reading_order() -> None:
    in_order = option_labels(_grid(), LETTERS)
    assert reading_order([in_order.assigned[x] for x in LETTERS]) == []
    moved = option_labels(_grid(label_c="(D)", label_d="(C)"), LETTERS)  # "(D)" left of "(C)"
    (reason,) = reading_order([moved.assigned[x] for x in LETTERS])
    assert (reason.code, reason.region) == ("reading_order", "option:D")


def test_reading_in_place_settles_how_text_reads_but_not_a_formula_or_the_page() -> None:
    assert settled_by_reading(Reason("number_missing", "option:A", "25.69", ("25.69",)))
    assert settled_by_reading(Reason("text_mismatch", "question", "accuracy 0.71"))
    # A formula's numbers are checked against the layout record in region mode: none here,
    # and a reading in place that leaves a script unread would vouch for a changed one.
    assert not settled_by_reading(Reason("number_missing", "option:A", FORMULA_PREFIX + "1"))
    # An option whose label no reading shows is looked for by its text and read in place.
    assert settled_by_reading(Reason("option_missing", "option:B", "label not found"))
    assert not settled_by_reading(Reason("reading_order", "option:D", "after option:C"))


def test_an_option_whose_label_is_not_read_stands_where_its_text_is_read() -> None:
    item = Item("list", "Which city?", ("the old Oslo", "Lima", "new York", "Rome"), 0)
    found = [
        *_row(0, 0, [(0, "Which"), (60, "city?")]),
        *_row(40, 1, [(0, "(A)"), (40, "the"), (80, "old"), (120, "Oslo")]),
        *_row(70, 2, [(0, "(B)"), (40, "Lima")]),
        *_row(100, 3, [(0, "(PD."), (40, "new"), (80, "York")]),  # a label misread
        *_row(130, 4, [(40, "Rome")]),  # a label not read at all
    ]
    labels = option_labels(found, LETTERS)
    assert sorted(labels.assigned) == ["A", "B"]
    regions = {r.name: r for r in locate_fields(found, labels, 1.0, item, (400, 800))}
    margin = 0.35 * HEIGHT
    # C: from its misread label, a short word just before its text.
    assert regions["option:C"].box == (0.0, 100 - margin, 120 + margin, 120 + margin)
    # D: its text, with room on its left for the label.
    assert regions["option:D"].box == (0.0, 130 - margin, 80 + margin, 150 + margin)
    assert (regions["option:D"].letter, regions["option:D"].kind) == ("D", "option")


def test_a_short_option_is_located_only_where_it_is_read_exactly() -> None:
    item = Item("grid", "Which city?", ("the old Oslo", "Lima", "new York", "Rome"), 0)
    found = [w for w in _grid() if w.text != "(D)"]
    found = [replace(w, text="Rame") if w.text == "Rome" else w for w in found]
    regions = locate_fields(found, option_labels(found, LETTERS), 1.0, item, (400, 800))
    assert "option:D" not in {r.name for r in regions}


def test_an_option_placed_by_its_text_passes_only_where_its_own_label_is_shown() -> None:
    def placed(observed: str, settled: list[dict]) -> FieldResult:
        region = RegionScore("option:D", "option", 1.0, "(D) Rome", observed, {"settled": settled})
        return FieldResult(1.0, (), region)

    assert _label_shown(placed("(D) Rome", []))
    # Its text was what placed it: a label read as no letter, or as another, proves nothing.
    reread = [{"settler": "reread", "passed": ["letter_mismatch: label read as 'H'"]}]
    assert not _label_shown(placed("(4) Rome", reread))
    assert not _label_shown(placed("(H) Rome", []))
    # The ink drawing the source's label better than its rivals shows it.
    ink = [{"settler": "ink", "passed": ["letter_mismatch: label read as None"]}]
    assert _label_shown(placed("(0) Rome", ink))


def test_a_row_below_that_opens_with_the_next_options_label_is_not_a_wrapped_line() -> None:
    # A one-line option over the next: the next row's short last word ("rad") sits a little
    # higher than its label and number, but the row it belongs to opens with "(C)".
    found = [
        *_row(0, 0, [(0, "Which"), (60, "angle?")]),
        *_row(40, 1, [(0, "(A)"), (40, "10.6"), (120, "rad"), (400, "(B)"), (440, "14.6")]),
        Word("(C)", 0, 84, 30, HEIGHT, 90.0, (1, 1, 2)),
        Word("11.6", 40, 84, 40, HEIGHT, 90.0, (1, 1, 2)),
        Word("rad", 120, 78, 30, 14, 90.0, (1, 1, 2)),
    ]
    labels = option_labels(found, ["A", "B", "C"])
    a = labels.assigned["A"]
    assert option_readings(found, a, labels) == ["10.6 rad"]


def test_a_located_option_carries_its_label_as_the_page_draws_labels() -> None:
    found = _grid(label_d="(&)")  # D read as no letter: bound by place, drawn like the others
    labels = option_labels(found, LETTERS)
    item = Item("i", "Which city?", ("the old Oslo", "Lima", "new York", "Rome"), answer=0)
    located = {r.name: r for r in locate_fields(found, labels, 1.0, item, (400, 800))}
    assert [located[f"option:{letter}"].label for letter in LETTERS] == ["(A)", "(B)", "(C)", "(D)"]


def test_a_label_read_as_no_letter_binds_only_an_option_placed_by_its_label() -> None:
    # "(9) Rome": found by its label's place, the read "9" is bound to D by position; found
    # by its text, nothing vouches for its label, which stays failing with no face to ask.
    font = ImageFont.truetype(font_file("Noto Sans"), 28)
    page = Image.new("RGB", (400, 80), "white")
    ImageDraw.Draw(page).text((20, 20), "(9) Rome", font=font, fill="black")
    item = Item("grid", "Which city?", ("Oslo", "Lima", "York", "Rome"), 3)
    box = (10.0, 10.0, 220.0, 70.0)
    region = Region("option:D", "option", box, box_to_quad(box), letter="D", font_px=28.0)
    image = np.asarray(page)
    by_place = settle_located(image, item, [region])["option:D"]
    assert not by_place.reasons, by_place.reasons
    by_text = settle_located(image, item, [region], placed_by_text=frozenset({"option:D"}))
    assert [r.code for r in by_text["option:D"].reasons] == ["letter_mismatch"]


def test_an_options_text_is_not_found_inside_another_options_words() -> None:
    # J's "W sin t" reads exactly inside H's "2W sin t": that run cuts into a word, so J is
    # found where its own text stands, after a label read as no letter.
    found = [
        *_row(0, 0, [(0, "(H)"), (40, "2W"), (70, "sin"), (110, "t")]),
        *_row(40, 1, [(0, "(3)"), (40, "W"), (60, "sin"), (100, "t")]),
    ]
    there = _words_showing("W sin t", found, DEFAULT_THRESHOLDS)
    assert [(w.text, w.top) for w in there] == [("W", 40), ("sin", 40), ("t", 40)]
    # Glued to its label, the text is found all the same.
    glued = [*_row(0, 0, [(0, "(3)W"), (50, "sin"), (90, "t")])]
    assert [w.text for w in _words_showing("W sin t", glued, DEFAULT_THRESHOLDS)] == [
        "(3)W",
        "sin",
        "t",
    ]
    # So it is glued to a label that lost its closing bracket: a serif "(I) 130" read "(D130".
    half = [*_row(0, 0, [(0, "(D130"), (60, "hp")])]
    assert [w.text for w in _words_showing("130 hp", half, DEFAULT_THRESHOLDS)] == ["(D130", "hp"]


def test_a_missing_figures_placeholder_is_no_word_of_the_stem() -> None:
    # The stem runs on after its figure; the box standing for the absent figure says "not".
    found = [
        *_row(0, 0, [(0, "Give"), (50, "the"), (90, "bar"), (130, "number:")]),
        *_row(40, 1, [(0, "Figure"), (70, "1"), (90, "(image"), (160, "not"), (200, "available)")]),
        *_row(80, 2, [(0, "a"), (20, "7-6"), (60, "suspension")]),
    ]
    kept = _without_placeholders(found, "en", DEFAULT_THRESHOLDS)
    assert [w.text for w in kept] == ["Give", "the", "bar", "number:", "a", "7-6", "suspension"]
    # A stem line that says so in other words stays.
    said = [*_row(0, 0, [(0, "the"), (40, "image"), (100, "is"), (130, "not"), (170, "shown")])]
    assert _without_placeholders(said, "en", DEFAULT_THRESHOLDS) == said


def test_options_enumerating_their_parts_are_read_whole_not_cut_at_each_part() -> None:
    # "(1)$37,000" after "(A)" reads as a label of I (a handwritten "(I)" is read "(1)"), and
    # the wrapped "(2)79,000" has a label's shape: written so by the item, both are its text.
    item = Item(
        "enumerated",
        "Find (1) the cash used and (2) the net increase.",
        ("(1)$37,000 ; (2)79,000", "(1)$38,000 ; (2)81,000", "(1)$36,500 ; (2)78,000"),
        answer=0,
    )
    found = [
        *_row(0, 0, [(0, "Find"), (50, "(1)"), (90, "the"), (130, "cash")]),
        *_row(
            40, 1, [(0, "(A)"), (40, "(1)$37,000"), (150, ";"), (400, "(B)"), (440, "(1)$38,000")]
        ),
        *_row(70, 2, [(0, "(2)79,000"), (400, "(2)81,000")]),
        *_row(110, 3, [(0, "(C)"), (40, "(1)$36,500"), (150, ";")]),
        *_row(140, 4, [(0, "(2)78,000")]),
    ]
    written = frozenset(w for text in (item.question, *item.options) for w in text.split())
    labels = option_labels(found, ["A", "B", "C"], written)
    readings = {
        letter: option_readings(found, anchor, labels)[-1]
        for letter, anchor in labels.assigned.items()
    }
    assert readings == {
        "A": "(1)$37,000 ; (2)79,000",
        "B": "(1)$38,000 (2)81,000",
        "C": "(1)$36,500 ; (2)78,000",
    }
    # Unaware of the item's words, with a fourth option's label unread, the reading takes
    # the wrapped part for that label.
    blind = option_labels(found, ["A", "B", "C", "D"])
    assert option_readings(found, blind.assigned["A"], blind) == ["(1)$37,000 ;"]


def test_options_naming_drawings_in_brackets_are_text_mid_line_and_labels_at_its_start() -> None:
    # "(c)" reads as a label of C; after "(A) (a), (b) and" it stands mid-line, where no label
    # of the grid does, and is the item's word: text. Opening a line it is still a label.
    item = Item("drawings", "Which drawing(s)?", ("(a), (b) and (c)", "(f)", "(b)"), answer=0)
    found = [
        *_row(0, 0, [(0, "Which"), (60, "drawing(s)?")]),
        *_row(40, 1, [(0, "(A)"), (40, "(a),"), (90, "(b)"), (130, "and"), (170, "(c)")]),
        *_row(40, 1, [(400, "(B)"), (440, "(f)")]),
        *_row(80, 2, [(0, "(c)"), (40, "(b)")]),  # the label (C) read lowercase
    ]
    written = frozenset(w for text in (item.question, *item.options) for w in text.split())
    labels = option_labels(found, ["A", "B", "C"], written)
    readings = {
        letter: option_readings(found, anchor, labels)[-1]
        for letter, anchor in labels.assigned.items()
    }
    assert readings == {"A": "(a), (b) and (c)", "B": "(f)", "C": "(b)"}


def test_a_wrapped_row_shaped_like_a_label_runs_on_once_every_option_has_its_label() -> None:
    # "l(b)>2,(b)" wraps its "(b)" under the label: with a label for every option, that
    # row is the option's own text, not the next option's label.
    found = [
        *_row(0, 0, [(0, "Which"), (60, "moment?")]),
        *_row(40, 1, [(0, "(A)"), (40, "l(a)>2,"), (400, "(B)"), (440, "l(b)=2")]),
        *_row(70, 2, [(0, "(b)")]),
        *_row(110, 3, [(0, "(C)"), (40, "l(a)<2"), (400, "(D)"), (440, "l(b)<2")]),
    ]
    labels = option_labels(found, LETTERS)
    assert "l(a)>2, (b)" in option_readings(found, labels.assigned["A"], labels)
    # While an option has no label, a row opening so may be that option's.
    three = option_labels([w for w in found if w.text != "(D)"], LETTERS)
    assert not three.complete
    assert "l(a)>2, (b)" not in option_readings(found, three.assigned["A"], three)


def test_a_located_option_has_room_for_an_end_no_engine_read_up_to_the_next_column() -> None:
    # "C < B < A" read "C <2B": its last glyphs stand right of the last word read. The box
    # takes in room for them, and stops short of the next column's labels, and of what lies
    # past the text block (the stem's and options' last words read): a scene's frame.
    found = [
        *_row(0, 0, [(0, "Rank"), (60, "them"), (110, "in"), (140, "increasing"), (250, "order:")]),
        *_row(40, 1, [(0, "(A)"), (40, "C"), (60, "<2B"), (150, "(B)"), (190, "B<C<A")]),
        *_row(70, 2, [(0, "(C)"), (40, "A<C<B"), (150, "(D)"), (190, "B<A<C")]),
    ]
    stem = "Rank them in increasing order:"
    item = Item("rank", stem, ("C < B < A", "B < C < A", "A < C < B", "B < A < C"), 0)
    labels = option_labels(found, LETTERS)
    boxes = {r.name: r.box for r in locate_fields(found, labels, 1.0, item, (400, 800))}
    last_read = 60 + 10 * len("<2B")
    assert last_read + 2 * HEIGHT < boxes["option:A"][2] <= 150
    block = 250 + 10 * len("order:")
    assert 190 + 10 * len("B<C<A") + 2 * HEIGHT <= boxes["option:B"][2] <= block + 0.35 * HEIGHT
