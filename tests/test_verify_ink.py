"""Ink evidence: a token every engine misread is settled by drawing it and its rivals."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.fonts import font_file
from itemshot.verify.checks.scoring import FieldResult
from itemshot.verify.settlers import ink
from itemshot.verify.settlers.ink_settle import _shown_with_unit, settle_by_ink
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS
from itemshot.verify.verdicts import Reason, ReasonCode, RegionScore

INK_CROPS = Path(__file__).parent / "data" / "ink"  # crops of real pages (see its README)
FAMILY = "Nanum Pen Script"  # the handwriting face both engines misread
RECORDED_PX = 22.0

pytestmark = pytest.mark.skipif(font_file(FAMILY) is None, reason="fonts-nanum-extra missing")


def _ink(text: str, px: float = 23) -> np.ndarray:
    """Return `text` as a normalised crop: drawn a pixel off the recorded size, softened, JPEG'd."""
    font = ImageFont.truetype(font_file(FAMILY), px)
    width = int(font.getlength(text)) + 24
    image = Image.new("L", (width, round(2 * px)), 255)
    ImageDraw.Draw(image).text((12, round(px) // 3), text, fill=20, font=font)
    image = image.filter(ImageFilter.GaussianBlur(0.6))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=70)
    return np.asarray(Image.open(buffer).convert("L"))


def _weigh(drawn: str, token: str, rivals: list[str], shown_as: str = "") -> ink.Evidence:
    """Weigh `token` of a source that reads like `drawn` with `shown_as` put back as `token`."""
    source = drawn.replace(shown_as, token) if shown_as else drawn
    found = ink.weigh(
        [_ink(drawn)], RECORDED_PX, FAMILY, token, ink.occurrences(source, token)[0], rivals
    )
    assert found is not None
    return found


def test_a_number_drawn_as_the_source_has_it_is_shown() -> None:
    found = _weigh("an average of 1,150 loaves", "1,150", ink.digit_rivals("1,150"))
    assert found.shown, found.describe()


def test_a_changed_digit_is_never_shown_its_old_value_is_a_rival() -> None:
    # The source now says 1,160; the page still shows 1,150.
    found = _weigh("an average of 1,150 loaves", "1,160", ink.digit_rivals("1,160"), "1,150")
    assert not found.shown, found.describe()
    assert found.rival == "1,150"


def test_a_narrower_digit_drawn_larger_is_no_match_for_the_wider_one() -> None:
    # The source now says $1; the page shows $3. A size up, "costs $1. Maya" spans the ink
    # of "costs $3. Maya": the rival is drawn at every size the source could take.
    crop = _ink("A pen costs $3. Maya pays", 22)
    for contexts in ink.occurrences("A pen costs $1. Maya pays", "1"):
        for context in contexts:
            found = ink.weigh([crop], RECORDED_PX, FAMILY, "1", [context], ink.digit_rivals("1"))
            assert found is None or not found.shown, found.describe()


@pytest.mark.parametrize(
    ("drawn", "token", "changed"),
    [
        ("an average of 1,150 loaves", "1,150", "7,150"),
        ("in Fig. P2.79 is", "P2.79", "P0.79"),
        ("sum 2E1 + E2 + E3", "2E1", "4E1"),
    ],
)
def test_a_line_set_between_two_drawn_sizes_is_judged_glyph_by_glyph(
    drawn: str, token: str, changed: str
) -> None:
    # A browser sets a scaled page at 18.6 px: a drawing at a whole size fits the line at one
    # end and sits a pixel or two off at the other, so each drawing gets that leeway at the
    # glyphs the two differ in, and "7" wider than "1" pushing the line along decides nothing.
    def weigh(shown: str) -> ink.Evidence:
        contexts = ink.occurrences(drawn, token)[0]
        found = ink.weigh(
            [_ink(shown, 18.6)], 18.62, FAMILY, token, contexts, ink.digit_rivals(token)
        )
        assert found is not None
        return found

    assert weigh(drawn).shown, weigh(drawn).describe()
    assert not weigh(drawn.replace(token, changed)).shown


def test_a_unit_with_a_letter_added_beside_its_twin_is_never_shown() -> None:
    # The source now says 3 mmol; the page shows 3 mol. Either "m" could be the added one.
    found = _weigh("form when 3 mol of methane", "3 mmol", ink.unit_rivals("3 mmol"), "3 mol")
    assert not found.shown, found.describe()


@given(st.text("ab1 ", max_size=8), st.text("ab1 ", max_size=8))
def test_the_changed_span_is_what_turns_one_text_into_the_other(text: str, other: str) -> None:
    start, end, other_end = ink._changed(text, other)
    assert text[:start] + other[start:other_end] + text[end:] == other
    assert text[:start] == other[:start] and text[end:] == other[other_end:]


@pytest.mark.parametrize(
    ("drawn", "shown_as", "source"),
    [("turned by 90° here", "90°", "90%"), ("uses 1200 kJ per day", "1200 kJ", "1200 MJ")],
)
def test_a_changed_unit_is_never_shown(drawn: str, shown_as: str, source: str) -> None:
    found = _weigh(drawn, source, ink.unit_rivals(source), shown_as)
    assert not found.shown, found.describe()


def test_a_unit_drawn_as_the_source_has_it_is_shown() -> None:
    found = _weigh("uses 1200 kJ", "1200 kJ", ink.unit_rivals("1200 kJ"))
    assert found.shown, found.describe()


def test_a_label_is_told_from_the_other_letters() -> None:
    crop = _ink("(D) 110°")
    own = ink.weigh(
        [crop], RECORDED_PX, FAMILY, "(D)", [("", "")], ink.label_rivals("(D)", "D", "ABCDEFGHIJ")
    )
    other = ink.weigh(
        [crop], RECORDED_PX, FAMILY, "(B)", [("", "")], ink.label_rivals("(B)", "B", "ABCDEFGHIJ")
    )
    assert own is not None and own.shown, own and own.describe()
    assert other is not None and not other.shown


def test_rivals_cover_every_digit_place_and_the_units_quantity() -> None:
    # Every digit changed, and the sign: "-1,150" is another number too.
    assert len(ink.digit_rivals("1,150")) == 4 * 9 + 1
    assert ink.digit_rivals("-5")[-1] == "5" and ink.digit_rivals("5")[-1] == "-5"
    assert "-P2.79" not in ink.digit_rivals("P2.79")  # a code has no sign
    assert "800 K" in ink.unit_rivals("800 °C")
    assert "90°" in ink.unit_rivals("90%")
    assert {"1200 J", "1200 MJ"} <= set(ink.unit_rivals("1200 kJ"))
    assert ink.occurrences("an average of 1,150 loaves", "1,150") == [
        [("of ", ""), ("", " loaves"), ("of ", " loaves")]
    ]
    # "20" is no place in "420" or "2024"; "Figure 1" alone is the whole text.
    assert len(ink.occurrences("ordering 420 in 2024, then 20 more", "20")) == 1
    assert ink.occurrences("Figure 1", "Figure 1") == [[("", "")]]
    # What is glued to a token touches its ink, and is drawn with it.
    assert ink.occurrences("costs $0.25 per", "0.25") == [
        [("costs $", ""), ("$", " per"), ("costs $", " per")]
    ]
    assert ink.occurrences("(C) 100°", "100") == [[("(C) ", "°")]]
    # Glued to numbers on both sides, the glued text alone is tried first: the words
    # beyond it may lie across a line break or be a label drawn in another weight.
    assert ink.occurrences("(B) 80.0%,0.50 mol,0.05 mol", "0.50 mol")[0][0] == (
        "80.0%,",
        ",0.05",
    )


def _result(reasons: tuple[Reason, ...]) -> FieldResult:
    return FieldResult(0.9, reasons, RegionScore("question", "question", 0.9, "", "", {}))


def test_a_token_is_not_found_inside_a_longer_number() -> None:
    # The source says 20; the page shows 420 and 2024, never 20 alone.
    crop = _ink("ordering 420 loaves in 2024")
    found = ink.weigh([crop], RECORDED_PX, FAMILY, "20", [("", "")], ink.digit_rivals("20"))
    assert found is None or not found.shown, found and found.describe()


def test_a_token_the_source_shows_twice_must_be_shown_twice() -> None:
    # The second 40 was changed to 20 in the source; the page shows "20 ... 40".
    crop = _ink("pay 20 now and 40 later")
    field = Field("question", "pay 20 now and 20 later", (), ())
    reason = Reason("number_missing", "question", "20")
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert [r.code for r in kept.reasons] == ["number_missing"]


def test_a_token_located_over_another_of_the_fields_tokens_is_not_shown() -> None:
    # The source says "200 MPa" where the page shows "200 kPa"; its other "100 MPa," fits
    # the drawing of "= 200 MPa," but for a digit, and is that place's better match.
    crop = _ink("at a, s1 = 200 kPa,s2 = 100 MPa, then")
    field = Field("question", "at a, s1 = 200 MPa,s2 = 100 MPa, then", (), ())
    reason = Reason("unit_missing", "question", "200MPa", tokens=("200MPa",))
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert [r.code for r in kept.reasons] == ["unit_missing"], kept.region.measures


def test_a_repeated_token_is_drawn_only_with_the_words_of_its_own_place() -> None:
    # "I don't" is at both places: drawn so, the second place's ink would show the first.
    places = ink.occurrences("I don't know and I don't want", "don't")
    assert places == [[("", " know"), ("I ", " know")], [("", " want"), ("I ", " want")]]
    # A place with no context of its own keeps them all.
    assert ink.occurrences("x 1 x 1 x", "1") == [
        [("x ", ""), ("", " x"), ("x ", " x")],
        [("x ", ""), ("", " x"), ("x ", " x")],
    ]


def _lines(*lines: str, pitch: int = 0) -> np.ndarray:
    """Return lines of ink stacked as one crop, left-aligned, `pitch` px apart (0: no overlap)."""
    drawn = [_ink(line) for line in lines]
    width = max(d.shape[1] for d in drawn)
    step = pitch or drawn[0].shape[0]
    crop = np.full((step * (len(drawn) - 1) + drawn[0].shape[0], width), 255, np.uint8)
    for index, line in enumerate(drawn):
        rows = slice(index * step, index * step + line.shape[0])
        crop[rows, : line.shape[1]] = np.minimum(crop[rows, : line.shape[1]], line)
    return crop


@pytest.mark.parametrize(
    ("first", "second", "unit", "shown_as", "settled"),
    [
        # A line breaks between "300" and "kJ": each word is weighed on its own line.
        ("of gas. Now 300", " of heat is added", "kJ", "kJ", True),
        ("of gas. Now 300", " of heat is added", "kJ", "MJ", False),
        # "k = 90" / "N/m. Determine": a rival with a prefix ("MN/m") reaches left of the
        # source's drawing, where the line's blank margin shows no prefix, a drawn "M" does.
        ("stiffness k = 90", ". Determine the", "N/m", "N/m", True),
        ("stiffness k = 90", ". Determine the", "N/m", "MN/m", False),
    ],
)
def test_a_unit_on_the_line_after_its_number_is_weighed_word_by_word(
    first: str, second: str, unit: str, shown_as: str, settled: bool
) -> None:
    crop = _lines(first, f"{shown_as}{second}")
    field = Field("question", f"{first} {unit}{second}", (), ())
    token = f"{first.rsplit(' ', 1)[1]}{unit}"
    reason = Reason("unit_missing", "question", token, tokens=(token,))
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


@pytest.mark.parametrize(("shown_as", "settled"), [("mm", True), ("cm", False)])
@pytest.mark.parametrize("pitch", [0, 27])
def test_a_place_cut_by_a_line_break_is_looked_for_away_from_the_others(
    shown_as: str, settled: bool, pitch: int
) -> None:
    # "350" ends a line, "mm and" starts the next: the place's own contexts are cut, and its
    # unit's drawing "mm and" fits "600 mm and" two lines up best, where the first "mm" was
    # found. Looked for away from that spot, it is found at its own line's start; a line set
    # a little over an em below another (27 px at 23) is another place, not the same one.
    crop = _lines(
        "the distance is 600 mm and from",
        "B to C. Their lengths are 350",
        f"{shown_as} and 450 mm, respectively",
        pitch=pitch,
    )
    text = (
        "the distance is 600 mm and from B to C. Their lengths are 350 mm and 450 mm, respectively"
    )
    field = Field("question", text, (), ())
    reason = Reason("unit_missing", "question", "350mm", tokens=("350mm",))
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


@pytest.mark.parametrize(("shown_as", "settled"), [("0", True), ("8", False), ("6", False)])
def test_a_token_alone_on_its_line_is_found_there_only(shown_as: str, settled: bool) -> None:
    # The last "0" wraps onto a line of its own: its one context "= 0" fits the "= 0," above,
    # where the second "0" was found. Drawn alone, it is looked for only where no ink lies
    # an em beside it: not on the "o" of "so", which a changed last digit would leave to it.
    crop = _lines("and so x > 0, w = 0, y =", shown_as)
    field = Field("question", "and so x > 0, w = 0, y = 0", (), ())
    reason = Reason("number_missing", "question", "0, 0, 0", tokens=("0", "0", "0"))
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


@pytest.mark.parametrize(("shown_as", "settled"), [("EV71-", True), ("EV78-", False)])
def test_a_token_broken_after_its_hyphen_is_weighed_by_its_number(
    shown_as: str, settled: bool
) -> None:
    # The line breaks after "EV71-": the piece holding every digit is weighed at its line's
    # end, against its changed digits; "related" is a word for the word checks.
    crop = _lines(f"was the incidence of {shown_as}", "related hand, foot and mouth")
    field = Field("question", "was the incidence of EV71-related hand, foot and mouth", (), ())
    reason = Reason("number_missing", "question", "EV71-related", tokens=("EV71-related",))
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


def test_settling_drops_only_the_checks_the_ink_settles() -> None:
    field = Field("question", "an average of 1,150 loaves", (), ())
    crop = _ink("an average of 1,150 loaves")
    settled = settle_by_ink(
        field,
        [crop],
        RECORDED_PX,
        FAMILY,
        "",
        _result((Reason("number_missing", "question", "1,150"),)),
    )
    assert settled.reasons == ()
    assert "shown" in settled.region.measures["ink"][0]
    changed = Field("question", "an average of 1,190 loaves", (), ())
    kept = settle_by_ink(
        changed,
        [crop],
        RECORDED_PX,
        FAMILY,
        "",
        _result((Reason("number_missing", "question", "1,190"),)),
    )
    assert [r.detail for r in kept.reasons] == ["1,190"]


@pytest.mark.parametrize(("shown_as", "settled"), [("19th", True), ("18th", False)])
def test_a_number_is_shown_with_the_code_it_starts(shown_as: str, settled: bool) -> None:
    # "19th" read "lgth": the number "19" and the code "19th" are both missing. "19" has no
    # drawing of its own there; "19th" shown against every change of its digits shows it.
    field = Field("option:E", "racism in the 19th century.", (), (), "E")
    failed = _result((Reason("number_missing", "option:E", "19, 19th", ("19", "19th")),))
    crop = _ink(f"(E) racism in the {shown_as} century.")
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "(E)", failed)
    assert (kept.reasons == ()) is settled, kept.region.measures
    if not settled:
        assert {t for r in kept.reasons for t in r.tokens} >= {"19", "19th"}


def test_a_number_with_a_place_of_its_own_is_not_shown_by_its_code() -> None:
    # "in 19 cases in the 19th century" with the lone "19" changed to "18": "19th" shown is
    # no evidence for the other place, which must be shown on its own.
    field = Field("question", "in 19 cases in the 19th century", (), ())
    failed = _result((Reason("number_missing", "question", "19, 19th", ("19", "19th")),))
    kept = settle_by_ink(
        field, [_ink("in 18 cases in the 19th century")], RECORDED_PX, FAMILY, "", failed
    )
    assert [t for r in kept.reasons for t in r.tokens] == ["19"], kept.region.measures


def test_a_short_options_whole_text_is_weighed_against_the_other_options() -> None:
    # Every engine misread "Oslo" (text_mismatch); its ink shows it, set apart from its label.
    others = ["Lima", "Perth", "Dhaka"]
    failed = _result(
        (
            Reason("text_mismatch", "option:A", "accuracy 0.50"),
            Reason("short_option_missing", "option:A", "Oslo"),
        )
    )
    field = Field("option:A", "Oslo", (), (), "A")
    settled = settle_by_ink(field, [_ink("(A)   Oslo")], RECORDED_PX, FAMILY, "(A)", failed, others)
    assert settled.reasons == (), settled.region.measures
    # Options swapped: the place shows "Lima", one of the rivals, and stays failed.
    kept = settle_by_ink(field, [_ink("(A)   Lima")], RECORDED_PX, FAMILY, "(A)", failed, others)
    assert {r.code for r in kept.reasons} == {"text_mismatch", "short_option_missing"}


@pytest.mark.parametrize(
    ("shown_as", "settled"), [("-1", True), ("not exist", False), ("-2", False)]
)
def test_a_short_option_is_weighed_only_where_it_is_drawn(shown_as: str, settled: bool) -> None:
    # A rival far wider than "-1" reaches over the label beside it, ink the source's drawing
    # (set apart from its label) does not model: the two are compared where the source is.
    others = ["not exist", "0", "1/2"]
    failed = _result(
        (
            Reason("text_mismatch", "option:B", "accuracy 0.50"),
            Reason("short_option_missing", "option:B", "-1"),
        )
    )
    field = Field("option:B", "-1", (), (), "B")
    crop = _ink(f"(B)   {shown_as}")
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "(B)", failed, others)
    assert (kept.reasons == ()) is settled, kept.region.measures


@pytest.mark.parametrize(("shown_as", "settled"), [("2,2", True), ("2,7", False), ("4,2", False)])
def test_a_short_option_shown_whole_shows_its_numbers(shown_as: str, settled: bool) -> None:
    # "2,2" read "2.2": its second "2" has no place of its own to be found at, but the option
    # drawn whole, against every changed digit and the other options, shows both.
    failed = _result(
        (
            Reason("text_mismatch", "option:G", "accuracy 0.67"),
            Reason("number_missing", "option:G", "2, 2", ("2", "2")),
            Reason("short_option_missing", "option:G", "2,2"),
        )
    )
    field = Field("option:G", "2,2", (), (), "G")
    crop = _ink(f"(G)   {shown_as}")
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "(G)", failed, ["4,2", "3,3"])
    assert (kept.reasons == ()) is settled, kept.region.measures


MONO = "DejaVu Sans Mono"  # at 11 px its "(H)" and "(M)" differ by a stroke the ink barely shows


def _mono_label(text: str) -> np.ndarray:
    font = ImageFont.truetype(font_file(MONO), 11)
    image = Image.new("L", (int(font.getlength(text)) + 24, 22), 255)
    ImageDraw.Draw(image).text((12, 3), text, fill=20, font=font)
    return np.asarray(image.filter(ImageFilter.GaussianBlur(0.8)))


@pytest.mark.skipif(font_file(MONO) is None, reason="fonts-dejavu missing")
@pytest.mark.parametrize(
    ("drawn", "letters", "settled"),
    [
        ("(H)", "ABCDEFGHIJ", True),
        ("(H)", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", False),
        ("(J)", "ABCDEFGHIJ", False),
    ],
)
def test_a_labels_rivals_are_the_items_other_letters(
    drawn: str, letters: str, settled: bool
) -> None:
    # A label tells its option from the item's others: "(M)", which no option of a ten-option
    # item has, names none of them; "(J)" drawn in H's place names another option.
    failed = _result((Reason("letter_mismatch", "option:H", "label read as None"),))
    field = Field("option:H", "the cell wall", (), (), "H")
    crop = _mono_label(f"{drawn}   the cell wall")
    kept = settle_by_ink(field, [crop], 11.0, MONO, "(H)", failed, (), DEFAULT_THRESHOLDS, letters)
    assert (kept.reasons == ()) is settled, kept.region.measures


def test_a_token_drawn_like_a_reading_is_reported_as_ambiguous() -> None:
    # Both engines read "9 moI"; this face draws "l" and "I" alike, so the ink cannot tell.
    field = Field("option:D", "9 mol", (), (), "D")
    failed = (Reason("short_option_missing", "option:D", "9 mol"),)
    region = RegionScore("option:D", "option", 0.8, "9 mol", "(D) 9 moI", {})
    kept = settle_by_ink(
        field,
        [_ink("(D)   9 mol")],
        RECORDED_PX,
        FAMILY,
        "(D)",
        FieldResult(0.8, failed, region),
        ["7 mol"],
    )
    assert [r.code for r in kept.reasons] == ["short_option_missing", "glyph_ambiguity"]
    assert "'9 mol' no better than '9 moI'" in kept.reasons[1].detail


def test_a_field_failing_on_its_text_is_left_as_it_is() -> None:
    field = Field("question", "an average of 1,150 loaves", (), ())
    result = _result(
        (
            Reason("text_mismatch", "question", "accuracy 0.40"),
            Reason("number_missing", "question", "1,150"),
        )
    )
    assert (
        settle_by_ink(field, [_ink("an average of 1,150 loaves")], RECORDED_PX, FAMILY, "", result)
        is result
    )


def test_a_token_is_drawn_with_both_its_words_where_they_match_about_as_well() -> None:
    # "atm" is wider than "kJ": drawn without "per", it would lie over ink only it reaches.
    found = _weigh("supplied as 1200 kJ per kilogram", "1200 kJ", ink.unit_rivals("1200 kJ"))
    assert found.drawn == "as 1200 kJ per", found.describe()
    assert found.shown, found.describe()


def test_a_reading_with_a_unit_is_no_rival_of_a_bare_number() -> None:
    # The engines read "750 K" elsewhere in the field as "750kK": a number with a unit is
    # what another place shows, not what this number's place could.
    field = Field("question", "supplied as 1200 kJ per kilogram", (), ())
    region = RegionScore("question", "question", 0.9, field.text, "as [200 k) per 750kK", {})
    failed = FieldResult(0.9, (Reason("number_missing", "question", "1200"),), region)
    crop = _ink("supplied as 1200 kJ per kilogram")
    settled = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", failed)
    assert settled.reasons == (), settled.region.measures["ink"]
    assert "750kK" not in " ".join(settled.region.measures["ink"])


@pytest.mark.parametrize(
    ("drawn", "read", "settled"),
    [
        # "less than" fits the handwritten "loss then" well, "be less" the "he lets": the
        # source's drawing is located over other ink, while "more" fits its own place better.
        ("would be more than the cost, and we see the loss then at the end", "more", False),
        ("would be more than the cost, and he lets them go there by boat", "more", False),
        # The page shows the source; a misreading drawn in its place fits no better anywhere.
        ("would be less than the cost, and we see the loss then at the end", "lass", True),
    ],
)
def test_a_changed_word_is_not_settled_by_like_ink_at_another_place(
    drawn: str, read: str, settled: bool
) -> None:
    source = drawn.replace("more", "less")
    index = source.split().index("less")
    field = Field("question", source, (), ())
    reason = Reason(
        ReasonCode.WORD_CHANGED, "question", f"'less' read as {read!r}", tokens=(f"less@{index}",)
    )
    crop = _lines(drawn[:40], drawn[40:])
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


@pytest.mark.parametrize(
    ("lines", "source", "word", "read", "settled"),
    [
        # The page says "can": "Both can" fits its ink far better than "Both cannot", which
        # is still located there (its extra letters over the next word's ink).
        (("Both can be zero even after", "a very large value"), "cannot", "cannot", "can", False),
        # The page says "cannot" and an engine read "can": the source's drawing holds.
        (("Both cannot be zero even after", "a very large value"), "", "cannot", "can", True),
        # The page says "does", a word the source also has elsewhere ("where does"): that
        # place is no evidence, but "browser does" is drawn nowhere in the source.
        (
            ("his browser does know the address.", "Then where does the root go?"),
            "doesn't",
            "doesn't",
            "does",
            False,
        ),
        (
            ("his browser doesn't know the address.", "Then where does the root go?"),
            "",
            "doesn't",
            "does",
            True,
        ),
    ],
)
def test_a_shortened_word_is_not_settled_by_the_longer_drawing_located_over_it(
    lines: tuple[str, ...], source: str, word: str, read: str, settled: bool
) -> None:
    text = " ".join(lines)
    if source:
        text = text.replace(f" {read} ", f" {source} ", 1)
    index = text.split().index(word)
    field = Field("question", text, (), ())
    reason = Reason(
        ReasonCode.WORD_CHANGED,
        "question",
        f"{word!r} read as {read!r}",
        tokens=(f"{word}@{index}",),
    )
    kept = settle_by_ink(field, [_lines(*lines)], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


@pytest.mark.parametrize(("second", "settled"), [("do", False), ("don't", True)])
def test_a_word_the_source_shows_twice_is_not_settled_by_the_ink_of_its_first_place(
    second: str, settled: bool
) -> None:
    # "I don't know and don't want": the page may show "and do want". The first "don't"
    # is drawn well; its ink must not also stand for the second, located over it.
    field = Field("option:C", "I don't know and don't want to guess", (), ())
    reason = Reason(
        ReasonCode.WORD_CHANGED, "option:C", "\"don't\" read as 'do'", tokens=("don't@4",)
    )
    crop = _lines(f"I don't know and {second}", "want to guess")
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


def _bold_in_chromium(browser: Any, text: str, px: float) -> np.ndarray:
    """Return `text` set bold in the handwriting face by Chromium (which has no bold file of it)."""
    page = browser.new_page(viewport={"width": 480, "height": 60})
    page.set_content(
        f"<body style='margin:8px;background:#fff'><b style=\"font: {px}px "
        f"'{FAMILY}';color:#141414\">{text}</b></body>"
    )
    shot = page.screenshot()
    page.close()
    return np.asarray(Image.open(io.BytesIO(shot)).convert("L"))


def test_a_bold_the_browser_draws_for_a_face_without_one_is_drawn_as_it_draws_it(
    browser: Any,
) -> None:
    regular, emboldened = ink.faces(FAMILY)  # one file: its synthetic bold is the other face
    assert (regular.emboldened, emboldened.emboldened) == (False, True)
    px = 18.0
    text = "the saturation lines. Figure 1"
    blur = max(0.6, px / 24)
    shown = _bold_in_chromium(browser, text, px)
    page = ink._page(shown, blur, round(px))
    t = DEFAULT_THRESHOLDS
    fits = [
        ink._locate([page], [ink._ink_level(page, t)], text, face, ink._sizes(px), blur, t)
        for face in (regular, emboldened)
    ]
    assert fits[0] is not None and fits[1] is not None
    assert fits[1].score > fits[0].score + 0.02, [f.score for f in fits]
    # Weighed in it, the figure number is shown, and another one is not.
    found = ink.weigh([shown], px, FAMILY, "1", [("Figure ", "")], ink.digit_rivals("1"))
    assert found is not None and found.shown, found.describe()
    changed = _bold_in_chromium(browser, text.replace("1", "7"), px)
    found = ink.weigh([changed], px, FAMILY, "1", [("Figure ", "")], ink.digit_rivals("1"))
    assert found is not None and not found.shown, found.describe()


ECONOMICS_13 = (
    "Suppose that a typical market based in Japan consists of 200 Apples and 290 Textbooks. "
    "The table below shows data on prices for Apples and Textbooks in Japan for three years."
)  # validation_Economics_13's stem, as MMMU-Pro has it


def test_a_token_is_found_however_close_the_lines_above_and_below_it_are(browser: Any) -> None:
    # The handwriting face is set 1.5 times the nominal size on the nominal line pitch (0.9
    # em): the line above's descenders reach into the rows of a drawing's frame, beside its
    # ink's ends but above its glyphs, and are no glyph beside the token.
    page = browser.new_page(viewport={"width": 720, "height": 200})
    page.set_content(
        f"<body style='margin:8px;background:#fff'><p style=\"font: 33px '{FAMILY}';"
        f'line-height: 0.9;width: 674px;margin:0;color:#141414">{ECONOMICS_13}</p></body>'
    )
    shown = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("L"))
    page.close()
    contexts = ink.occurrences(ECONOMICS_13, "290")[0]
    found = ink.weigh([shown], 33.0, FAMILY, "290", contexts, ink.digit_rivals("290"))
    assert found is not None and found.shown, found and found.describe()
    # Beside its glyphs a token still stands alone: "20" is no place in "200" or "290".
    alone = ink.weigh([shown], 33.0, FAMILY, "20", [("", "")], ink.digit_rivals("20"))
    assert alone is None or not alone.shown, alone and alone.describe()


def test_a_number_whose_unit_is_read_as_a_digit_is_shown_with_its_unit() -> None:
    # A mono "1643 lb" read "16431b": the bare number's drawing fits no better than that
    # reading, so the number is weighed drawn with its unit, against every changed digit.
    weighed: list[tuple[str, list[str]]] = []

    def shown(token: str, rivals: list[str]) -> bool:
        weighed.append((token, rivals))
        return token == "1643 lb"

    assert _shown_with_unit("6857 lb, 1643 lb", "1643", shown)
    assert weighed == [("1643 lb", ink.digit_rivals("1643 lb"))]
    # A place of the number with no unit has nothing to tell it by.
    assert not _shown_with_unit("1643 lb, then 1643 more", "1643", shown)
    assert not _shown_with_unit("6857 lb, 1648 lb", "1648", shown)


def test_a_numbers_siblings_are_no_wider_than_it() -> None:
    # "2015" drawn for the "1" of "Figure 1" at a line's end lies over the next word's ink,
    # which the source's drawing leaves blank: it would win there whatever the "1" shows.
    from itemshot.verify.settlers.ink_settle import _siblings

    tokens = ["1", "2015", "6", "40", "15 kg"]
    assert _siblings("1", tokens) == ["6"]
    assert _siblings("40", tokens) == ["1", "6"]
    assert _siblings("15 kg", tokens) == []


@pytest.mark.parametrize(
    ("third", "settled"), [("market are bonded", False), ("blocks are bonded", True)]
)
def test_a_changed_word_is_not_settled_by_its_reading_drawn_on_the_line_above(
    third: str, settled: bool
) -> None:
    # validation_Materials_7: "The blocks are bonded" shown as "The market are bonded". A
    # handwriting face's lines are set less than its drawing's em apart, and "blocks are"
    # is located over the next line's "plates are"; "market are", the reading, fits its own
    # line better, and that line is another place, not the same one.
    lines = ("two blocks of rubber", "each with a height h. The", third, "plates are rigid")
    text = " ".join(lines).replace(third, "blocks are bonded")
    field = Field("question", text, (), ())
    index = text.split().index("blocks", 2)
    reason = Reason(
        ReasonCode.WORD_CHANGED,
        "question",
        "'blocks' read as 'market'",
        tokens=(f"blocks@{index}",),
    )
    crop = _lines(*lines, pitch=21)  # the drawing's em is 23 px
    kept = settle_by_ink(field, [crop], RECORDED_PX, FAMILY, "", _result((reason,)))
    assert (kept.reasons == ()) is settled, kept.region.measures


def test_a_unit_on_its_numbers_line_is_weighed_with_its_number() -> None:
    # validation_Energy_and_Power_25 in Noto Sans: "6081 kW" shown as "6081 W". The unit
    # drawn alone is for a line broken between the two; on the number's line a bold "kW"
    # lies with its "k" over the number's "1" (lead +0.06 over "mW"), so the span's own
    # drawing decides there, and "6081 W" fits the ink far better than "6081 kW".
    crop = np.asarray(Image.open(INK_CROPS / "option-6081-W.png").convert("L"))
    field = Field("option:C", "(1) 6081 kW, (2) 0.536", (), ())
    reason = Reason(ReasonCode.UNIT_MISSING, "option:C", "6081kW", tokens=("6081kW",))
    kept = settle_by_ink(field, [crop], 24.87, "Noto Sans", "(C)", _result((reason,)))
    assert kept.reasons == (reason,), kept.region.measures
