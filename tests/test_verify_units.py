"""Unit tests of the verifier's text, token, label, contrast, font and report pieces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemshot.fonts.catalogue import STYLES
from itemshot.renderer.items import Item
from itemshot.renderer.markup import Math, paragraphs
from itemshot.verify.checks.expected import Field, options, stem
from itemshot.verify.checks.fonts import font_facts, uncovered
from itemshot.verify.checks.labels import split_label
from itemshot.verify.checks.scoring import read_as_another_option, score_caption
from itemshot.verify.checks.tokens import (
    codes,
    formula_numbers,
    missing_formula_numbers,
    missing_numbers,
    missing_units,
    prefixed_units,
    short_option_found,
    shown_in_place,
)
from itemshot.verify.modes.whole_image import _align, _without_references
from itemshot.verify.page.contrast import css_contrast, pixel_contrast
from itemshot.verify.page.crops import paint_quads
from itemshot.verify.reading.align import best_window
from itemshot.verify.reading.text import (
    accuracy,
    missing_ends,
    normalise,
    ocr_accuracy,
    word_recall,
    words_and_numbers,
)
from itemshot.verify.report import audit_html, diff_html
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS
from itemshot.verify.verdicts import Reason, RegionScore, verdict


def test_normalise_folds_width_quotes_dashes_spaces_and_cjk_spacing() -> None:
    assert normalise("ＡＢＣ１２３  “x” – y\n z") == 'ABC123 "x" - y z'
    assert normalise("図 1 の 回 路 で") == "図1の回路で"
    assert normalise("fill in ______ here") == "fill in here"
    # A rule read as dashes is the same blank.
    assert normalise("sx=______ n=______") == normalise("sx=—— n=———") == "sx= n="
    assert normalise("E is .. ?") == normalise("E is … ?") == "E is ?"
    # One glyph in two scripts: the Latin phi of a source is the Greek phi a reader sees.
    assert normalise("ɸ(x1, x2)") == normalise("φ(x1, x2)")


def test_accuracy_is_one_minus_levenshtein_over_max_length() -> None:
    assert accuracy("abcd", "abce") == pytest.approx(0.75)
    assert accuracy("", "") == 1.0
    assert ocr_accuracy("A stroke.", "Astroke.") == 1.0
    # An elision's dots are not content: a short stem read without them is read.
    assert ocr_accuracy("Figure 1 E is .. ?", "Figure 1 Eis ?") == 1.0


def test_a_changed_number_is_a_missing_critical_token_despite_high_similarity() -> None:
    source, read = "The budget is 4,500 dollars", "The budget is 4,600 dollars"
    assert ocr_accuracy(source, read) > 0.9
    assert missing_numbers(source, read) == ["4,500"]
    assert missing_numbers("at 100 kPa, 300 K", "at 100kPa, 300 K") == []
    assert missing_units("at 100 kPa", "at 100 Pa") == ["100kPa"]
    assert missing_numbers("Fig. P2.79", "Fig. P2.19") == ["P2.79"]


def test_a_number_whose_sentence_runs_into_the_next_is_the_number_as_read() -> None:
    # "x =8.If": a number, a point and the next sentence's "If", read "8.1f" or "8.if".
    source = "has horizontal tangents at x = 4 and x =8.If f(x)"
    assert codes(source) == []
    assert missing_numbers(source, "tangents at x = 4 and x =8.1f f(x)") == []
    assert missing_numbers(source, "tangents at x = 4 and x =8.if f(x)") == []
    assert missing_numbers(source, "tangents at x = 4 and x =6.1f f(x)") == ["8"]
    assert missing_numbers(source, "tangents at x = 4 and x =8.7f f(x)") == ["8"]
    assert missing_numbers("costs 8.5 dollars", "costs 8.1 dollars") == ["8.5"]


def test_formula_numbers_are_the_baseline_digits_ocr_can_read() -> None:
    assert formula_numbers("x^2 - 5x + 6 = 0") == ["5", "6", "0"]
    assert formula_numbers(r"x = 180^\circ - (\angle A + \angle B).") == ["180"]
    assert formula_numbers(r"\ce{CH4 + 2O2 -> CO2 + 2H2O}") == ["2", "2"]
    assert formula_numbers(r"a = 2,\ b = -3") == ["2", "3"]
    assert formula_numbers("E_{12} + x^{10}") == []
    # A fraction's digits are stacked above and below its line, not on the baseline.
    assert formula_numbers(r"\frac{1}{2} + \dfrac{3}{4x} = 5") == ["5"]
    assert formula_numbers(r"\frac12 + \frac{\frac{1}{2}}{3} + 7") == ["7"]


def test_a_changed_formula_number_is_missing_from_its_reading() -> None:
    read = "二次方程式 z2 - 5z 二 6=0 の解として"  # how tesseract reads the rendered formula
    assert missing_formula_numbers(["x^2 - 5x + 6 = 0"], read) == []
    assert missing_formula_numbers(["x^2 - 5x + 9 = 0"], read) == ["9"]
    assert missing_formula_numbers(["x = 1, 6"], "z = 1,6") == []


def test_a_formula_number_read_as_another_after_its_relation_is_changed() -> None:
    # The source says t=1; the page shows t=5, and a "1" elsewhere proves nothing.
    text = "Calculate the return for Figure 1 from (\n to \n)"
    read = "Calculate the return for Figure 1 from (t=5 to t=2)"
    assert missing_formula_numbers(["t=1", "t=2"], read, text) == ["1"]
    assert missing_formula_numbers(["t=1", "t=2"], read.replace("5", "1"), text) == []
    # After a relation and its bracket; glyphs read otherwise are no evidence either way.
    assert missing_formula_numbers(["V_1(s) = (1 / s)"], "if Vi(s) = (3/s) and") == ["1"]
    assert missing_formula_numbers(["V_1(s) = (1 / s)"], "if Vi(s) = (1/s) and") == []
    assert missing_formula_numbers(["x = 2"], "where X = 5 and 2") == []


def test_a_number_the_text_sets_after_a_relation_is_a_plain_number() -> None:
    # "k = 90" in the sentence, no formula: read "k = 9" with a "90" elsewhere, it is changed,
    # as a number of the text (which a reading in place or the text's ink may settle), not
    # as a formula's (which only the formula's ink may).
    text = "a spring of stiffness k = 90 N/m and a mass of 90 g"
    read = "a spring of stiffness k = 9 N/m and a mass of 90 g"
    assert missing_formula_numbers([], read, text) == []
    assert missing_numbers(text, read) == ["90"]
    assert missing_numbers(text, text) == []


# How tesseract read the rendered `\\ce{CH4 + 2O2 -> CO2 + 2H2O}` stem in three looks: the
# subscripts come out as digits, specks or nothing; the coefficients as digits.
COMBUSTION = r"\ce{CH4 + 2O2 -> CO2 + 2H2O}"
COMBUSTION_TEXT = "Methane burns as \n. How many moles of water form when 3 mol of methane burn?"
COMBUSTION_READS = (
    "Methane burns as CH, + 202 —> CO» + 2H,O. How many\nmoles of water form when 3 mol of",
    "Methane burns as CHy + 202 —> CO2 + 2H2O. How many moles of\nwater form when 3 mol of",
    "Methane burns as CH, + 202 —> CO2 + 220. How many moles of water\nform when 3 mol of",
)


def test_a_formula_reading_passes_however_its_subscripts_come_out() -> None:
    for read in COMBUSTION_READS:
        assert missing_formula_numbers([COMBUSTION], read, COMBUSTION_TEXT) == []


def test_a_changed_subscript_read_as_its_old_digit_is_missing() -> None:
    changed = COMBUSTION.replace("CO2", "CO7")
    assert missing_formula_numbers([changed], COMBUSTION_READS[1], COMBUSTION_TEXT) == ["CO7"]
    assert missing_formula_numbers([changed], COMBUSTION_READS[2], COMBUSTION_TEXT) == ["CO7"]
    # A subscript read as a speck shows no number: no evidence either way.
    assert missing_formula_numbers([changed], COMBUSTION_READS[0], COMBUSTION_TEXT) == []
    assert missing_formula_numbers([r"\mathrm{CO_7}"], "a CO2 molecule") == ["CO_7"]
    assert missing_formula_numbers([r"\mathrm{CO_2}"], "a CO2 molecule") == []


def test_formula_numbers_are_a_multiset_shared_with_the_fields_text() -> None:
    # The coefficient 2 became 3; the sentence's own "3 mol" does not stand in for it.
    changed = COMBUSTION.replace("2H2O", "3H2O")
    for read in COMBUSTION_READS:
        assert missing_formula_numbers([changed], read, COMBUSTION_TEXT) == ["3"]
    assert missing_formula_numbers(["x = 2, 2"], "x = 2, 3") == ["2"]
    # A number read more often than written is no defect ("Figure 1" in the stem and caption).
    assert missing_formula_numbers(["x = 1"], "Figure 1 shows x = 1. Figure 1", "Figure 1") == []


def test_short_options_must_be_read_exactly() -> None:
    assert short_option_found("0.45, 0.56", "0.45,0.56")
    assert not short_option_found("0.45, 0.56", "0.45, 0.66")


def test_truncated_text_misses_its_end() -> None:
    text = "Find the first- and second-law efficiencies of the heat engine shown here."
    assert missing_ends(text, text) == []
    assert missing_ends(text, text[:50]) == ["end"]


def test_word_recall_splits_at_formula_gaps() -> None:
    assert (
        word_recall(
            "二次方程式\nの解として正しいものはどれか。",
            "二次方程式 x2-5x+6=0 の解として正しいものはどれか。",
        )
        == 1.0
    )


def test_word_recall_wants_words_not_a_digit_and_its_comma() -> None:
    # Handwritten "q > 0, w = 0, ΔU = 0" read without its commas: no word is lost.
    assert word_recall("q > 0, w = 0, \nU = 0", "(A)q>0W=0ΔU=0") == 1.0
    # A word of two letters not read still is.
    assert word_recall("L cos \n", "(A) L") == 0.0


def test_marks_read_as_their_look_alikes_are_the_marks() -> None:
    # A caret read as the apostrophe it sits as high as; a handwritten x read as a cross.
    assert word_recall("L sin^2 \n", "(8) L sin’2 9") == 1.0
    assert missing_numbers("L sin^2 \n", "(8) L sin’2 9") == []
    strain = "of \n_xy=40*10^(-6)x+20*10^(-6)y, where"
    assert missing_numbers(strain, "of γ ×y=40*10^(-6)×+20*10^(-6)y, where") == []
    assert (
        missing_ends(
            "Calculate the following: \n=______ sx=______ n=______",
            "Calculate the following: xbar=___——-\nS×=—n=———",
        )
        == []
    )
    # The digits are still compared.
    assert "sin^2" in missing_numbers("L sin^2 \n", "(8) L sin’3 9")
    assert missing_numbers(strain, "of γ ×y=40*10^(-5)×+20*10^(-6)y, where") != []


def test_bare_strokes_are_compared_as_one_glyph_and_counted_by_the_number_checks() -> None:
    # test_Marketing_63 in a thin face: "1-III, 2-I, 3-IV, 4-II", each "I" a bare stroke,
    # read with "1" for "I" and a stroke lost or merged.
    source = "1-III, 2-I, 3-IV, 4-II"
    assert ocr_accuracy(source, "1-, 2-1, 3-1V, 4-1") >= 0.9
    assert ocr_accuracy(source, "1-111, 2-1, 3-1V, 4-11") == 1.0
    # The number checks still count the strokes: another option's text shown is caught.
    assert missing_numbers(source, "1-IV, 2-I, 3-II, 4-III") != []
    assert missing_numbers(source, "1-111, 2-1, 3-1V, 4-11") == []


def test_an_option_read_as_another_options_text_shows_that_option() -> None:
    # validation_Public_Health_17: options a sign apart, swapped on the page.
    texts = {"A": "(48.0-25.4) /48.0", "B": "(48.0+25.4) /48.0", "C": "(48.0*25.4) /48.0"}
    options = [Field(f"option:{k}", v, (), (), k) for k, v in texts.items()]
    swapped = read_as_another_option(options[2], ["(C) (48.0+25.4) /48.0"], options)
    assert swapped is not None and swapped.detail == "read as option B's text"
    # Read as its own, or nearer its own than the other's by another engine: no reason.
    assert read_as_another_option(options[2], ["(C) (48.0*25.4) /48.0"], options) is None
    both = ["(C) (48.0+25.4) /48.0", "(C) (48.0*25.4)/48.0"]
    assert read_as_another_option(options[2], both, options) is None
    # A misreading that is no option's text is the text checks' to weigh.
    assert read_as_another_option(options[2], ["(C) (48.0°25.4) /48.0"], options) is None


def test_option_labels_with_common_misreadings() -> None:
    assert split_label("(A) 0.74,0.32") == ("A", "0.74,0.32")
    assert split_label("(1) E1 + E3")[0] == "I"
    assert split_label("(c) E3")[0] == "C"
    assert split_label("no label")[0] is None
    # Specks of a scan read as marks in front of the label are not part of it.
    assert split_label(": “(C). . .") == ("C", ". . .")
    assert split_label(". (D) 4") == ("D", "4")
    assert split_label("-5 apples") == (None, "-5 apples")


def test_expected_text_replaces_figure_tags_and_drops_math() -> None:
    item = Item("q", "See <image 1>: solve $x^2=4$ now", ("<image 2>", "two"), 0)
    assert stem(item).text == "See Figure 1: solve \n now"
    assert stem(item).math == ("x^2=4",)
    assert [o.text for o in options(item)] == ["", "two"]
    assert stem(Item("j", "<image 1>を見よ", ("a", "b"), 0, language="ja")).text == "図1を見よ"


def test_a_stem_of_figures_only_reads_as_the_references_the_page_shows() -> None:
    # The page draws a stem's references as text whatever else it holds (an option of
    # figures only draws the figures instead): MMMU-Pro's "<image 1><image 2>" stems.
    item = Item("q", "<image 1><image 2>", ("box 1", "<image 3>"), 0)
    assert stem(item).text == "Figure 1 Figure 2"
    assert stem(item, drop_figure_refs=True).text == ""
    assert [o.text for o in options(item)] == ["box 1", ""]


def test_wcag_contrast_from_css_and_from_pixels() -> None:
    assert css_contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    assert css_contrast("rgb(0, 0, 0)", "linear-gradient(red, blue)") is None
    crop = np.full((20, 60, 3), 255, dtype=np.uint8)
    crop[8:12, 10:50] = (119, 119, 119)  # #777 on white: 4.48
    assert pixel_contrast(crop) == pytest.approx(4.48, abs=0.05)


def test_glyph_coverage_uses_installed_font_files() -> None:
    facts = font_facts("DejaVu Sans")
    assert facts is not None and 0.3 < facts.x_height < 0.7
    assert uncovered("abc", ["DejaVu Sans"]) == []
    assert uncovered("日本", ["DejaVu Sans"]) == ["日", "本"]


def test_report_escapes_item_text_and_marks_the_diff() -> None:
    assert diff_html("a <b>", "a <c>") == "a &lt;<del>b</del><ins>c</ins>&gt;"
    bad = verdict(
        "images/x.png",
        "<script>alert(1)</script>",
        "regions",
        "eng",
        [Reason("text_mismatch", "question", "accuracy 0.5")],
        [RegionScore("question", "question", 0.5, "<img src=x>", "ok")],
    )
    good = verdict("images/y.png", "ok", "regions", "eng", [], [])
    page = audit_html([good, bad], {"total": 2, "by_reason": {"text_mismatch": 1}}, Path("/r"))
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;img src=x&gt;" in page
    assert page.index("FAIL") < page.index("PASS")


def test_thresholds_reject_unknown_names() -> None:
    assert DEFAULT_THRESHOLDS.updated({"contrast": "3"}).contrast == 3.0
    with pytest.raises(ValueError, match="unknown threshold"):
        DEFAULT_THRESHOLDS.updated({"nope": 1})


def test_thresholds_moved_out_of_the_modules_reach_the_checks_that_use_them() -> None:
    from dataclasses import replace

    from itemshot.verify.checks.tokens import is_short
    from itemshot.verify.settlers.ink import Evidence

    assert not is_short("a" * 13)
    assert is_short("a" * 13, DEFAULT_THRESHOLDS.updated({"short_option_chars": 13}))
    text = "The quick brown fox jumps over the lazy dog, then rests under an old oak tree."
    assert missing_ends(text, text[:40]) == ["end"]
    assert (
        missing_ends(
            text, text[:40], thresholds=DEFAULT_THRESHOLDS.updated({"ends_from_chars": 999})
        )
        == []
    )
    found = Evidence("1", "Figure 1", 0.85, "7", 0.70, 0.15)
    assert found.shown
    assert not replace(found, thresholds=DEFAULT_THRESHOLDS.updated({"ink_min_match": 0.9})).shown
    assert replace(found, thresholds=DEFAULT_THRESHOLDS.updated({"ink_margin": 0.2})).ambiguous


def test_alignment_spans_figure_references_and_formulas_the_source_lacks() -> None:
    page = (
        "Question 3\nThe curve in Figure 1 has the form y = az? + b. What are the values\n"
        "of a and b?\nFigure 1\n240 192 Oslo Lima"
    )
    stem = "The curve in  has the form \n. What are the values of \n and \n?"
    window = _align(stem, page)
    assert (
        window == "The curve in Figure 1 has the form y = az? + b. What are the values of a and b?"
    )
    start, end, cost = best_window("abc", "xxABCxx")
    assert (start, end, cost) == (2, 5, 0.0)


def test_figure_reference_words_are_dropped_before_scoring() -> None:
    assert (
        _without_references("Compare Figure 1 and Fig. 2. Which", (1, 2)) == "Compare and . Which"
    )
    assert _without_references("図1のグラフ", (1,)) == "のグラフ"
    assert _without_references("Figure 10 shows 1", (1,)) == "Figure 10 shows 1"


def test_lookalike_glyphs_are_measured_per_font() -> None:
    """Nanum Pen Script draws 1, l and I as one stroke; Noto Sans's 1 has a flag and a foot."""
    from itemshot.verify.checks.glyphs import groups, lookalikes, read_as_drawn

    assert any({"1", "l", "I", "|"} <= g for g in groups(lookalikes("Nanum Pen Script")))
    assert not any("1" in g for g in groups(lookalikes("Noto Sans")))
    assert read_as_drawn("Figure |, then", "Figure 1, then", "Nanum Pen Script") == (
        "Figure 1, then"
    )
    # Only into the source's own numbers: a changed digit still differs, the word "I" stays.
    assert read_as_drawn("Figure |", "Figure 7", "Nanum Pen Script") == "Figure |"
    assert read_as_drawn("I saw 1", "I saw 1", "Nanum Pen Script") == "I saw 1"
    assert read_as_drawn("Figure |", "Figure 1", "Noto Sans") == "Figure |"


def test_a_bare_stroke_run_into_the_next_word_is_the_sources_number_and_word() -> None:
    """A handwritten "Figure 1 E is" read "Figure IE is": the "1" and the "E" as the source spaces them."""
    from itemshot.verify.checks.glyphs import read_as_drawn

    source = "Figure 1 E is .. ?"
    assert read_as_drawn("Figure IE is.?", source, "Nanum Pen Script") == ("Figure 1 E is.?")
    # Never into another number, never where the source has the pair as read, never in a
    # face whose 1 is drawn otherwise.
    assert read_as_drawn("Figure IE is", "Figure 7 E is", "Nanum Pen Script") == ("Figure IE is")
    assert read_as_drawn("see IE and 1 E", "see IE and 1 E", "Nanum Pen Script") == (
        "see IE and 1 E"
    )
    assert read_as_drawn("Figure IE is", source, "Noto Sans") == "Figure IE is"


def test_a_letter_whose_cases_share_a_shape_is_read_either_way_in_a_code() -> None:
    """A handwritten "EV71" read "Ev7I": its "V" is its "v" drawn larger, its "1" an upright stroke."""
    from itemshot.verify.checks.glyphs import lookalikes, read_as_drawn

    assert ("v", "V") in lookalikes("Nanum Pen Script")
    assert ("c", "C") in lookalikes("Nanum Pen Script")
    assert not any("m" in pair for pair in lookalikes("Nanum Pen Script"))  # "mL" is not "ML"
    assert ("a", "A") not in lookalikes("Noto Sans")
    source = "the EV71 vaccine and EV71-related disease"
    read = "the Ev7I vaccine and Ev7I-\nrelated disease"  # broken at its hyphen
    assert read_as_drawn(read, source, "Nanum Pen Script") == (
        "the EV71 vaccine and EV71-\nrelated disease"
    )
    assert missing_numbers(source, read_as_drawn(read, source, "Nanum Pen Script")) == []
    # Another digit still differs.
    assert read_as_drawn("the Ev7Z vaccine", source, "Nanum Pen Script") == "the Ev7Z vaccine"
    # A roman numeral is a number too: an option "I" read as "1".
    assert read_as_drawn("1", "I", "Nanum Pen Script") == "I"
    assert read_as_drawn("1", "I", "Noto Sans") == "1"


def test_a_units_case_counts_only_where_it_names_another_quantity() -> None:
    assert missing_units("at 196.9 psi", "at 196.9PSi") == []  # "p" of "psi" is no prefix
    assert missing_units("a 240 bp band", "a 240bP band") == []
    assert missing_units("a 5 pF cap", "a 5 PF cap") == ["5pF"]  # pico, peta
    assert missing_units("a 5 mm gap", "a 5 Mm gap") == ["5mm"]  # milli, mega
    assert missing_units("at 3 kPa", "at 3 kpa") == []


def test_glyphs_of_one_height_need_less_likeness_to_be_read_alike() -> None:
    """Nanum Pen Script's "0" is as small as its "o": "l7o" is the "170" it draws, "13o" is not."""
    from itemshot.verify.checks.glyphs import lookalikes, read_as_drawn

    assert ("0", "o") in lookalikes("Nanum Pen Script")
    assert ("0", "o") not in lookalikes("Noto Sans")
    source = "identify the 170 structure."
    assert read_as_drawn("identify the l7o structure.", source, "Nanum Pen Script") == source
    assert read_as_drawn("the l3o structure", source, "Nanum Pen Script") == "the l3o structure"


def test_a_changed_formula_number_fails_region_scoring() -> None:
    """A stem whose formula's baseline number changed is a number_missing in region mode too."""
    from itemshot.verify.modes.regions import _score

    item = Item("q", "Solve $x^2 - 5x + 8 = 0$.", ("2", "3"), 0)
    field = stem(item)
    read = "Solve z2 - 5z + 6 = 0."  # the image shows 6 where the source says 8
    result = _score(field, read, DEFAULT_THRESHOLDS, [], "AB")
    # x read as z: its superscript shows under no x, which sends the field to the second engine.
    assert [(r.code, r.detail) for r in result.reasons] == [
        ("number_missing", "in a formula: 8"),
        ("script_unread", "x^2"),
    ]
    passing = _score(field, "Solve z2 - 5z + 8 = 0.", DEFAULT_THRESHOLDS, [], "AB")
    assert [r.code for r in passing.reasons] == ["script_unread"]  # provisional, never a verdict


def test_units_are_not_the_next_sentence() -> None:
    from itemshot.verify.checks.tokens import number_units

    assert number_units("see Figure 1 What is 5 cm or 100 kPa?") == ["5cm", "100kPa"]


def test_a_common_word_after_a_number_is_no_unit() -> None:
    # "only", "per", "and" are words of the sentence; "mm", "min", "cups" are units however
    # often written, and a unit counted a word ("5 in") is still checked as a word.
    from itemshot.verify.checks.tokens import number_units

    assert number_units("Statements 1 and 3 only, 10 per box, 5 in all") == []
    assert number_units("the 1st measure of the 5th line") == []
    assert number_units("5 mm, 3 min, 4 cups, 1 mA") == ["5mm", "3min", "4cups", "1mA"]


def test_a_figures_number_has_no_unit() -> None:
    # "<image 1> E is": the page draws "Figure 1 E is", whose "E" is no unit of the figure.
    from itemshot.verify.checks.tokens import number_units

    assert number_units("The organism in Figure 1 E is what?") == []
    assert number_units("図2 m を見よ") == []
    assert number_units("a 5 m rod as in Figure 3 A") == ["5m"]


def test_edge_width_grows_with_blur_and_text_too_small_follows_geometry() -> None:
    """Crisp text rises over about a pixel; a Gaussian blur widens its edges in proportion."""
    import cv2

    from itemshot.verify.checks.legibility import edge_width

    crisp = np.full((60, 300), 255, np.uint8)
    cv2.putText(crisp, "legible 123", (5, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2, cv2.LINE_AA)
    blurred = cv2.GaussianBlur(crisp, (0, 0), 3.0)
    sharp, soft = edge_width(crisp), edge_width(blurred)
    assert sharp is not None and soft is not None
    assert sharp < 1.6 and soft > 2.5 * sharp


def test_specks_no_glyph_owns_are_painted_over_and_periods_kept() -> None:
    """A scan's dust beside the text goes; the decimal point and comma between digits stay."""
    import cv2

    from itemshot.verify.page.crops import clean_text_crop

    page = np.full((40, 260), 255, np.uint8)
    cv2.putText(page, "0.45, 0.56", (6, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 0, 2, cv2.LINE_AA)
    text = page.copy()
    rng = np.random.default_rng(3)
    for x, y in zip(rng.integers(175, 255, 25), rng.integers(2, 38, 25), strict=True):
        page[y : y + 2, x : x + 2] = 60  # dust: 2×2 px specks right of the text
    cleaned = clean_text_crop(page, font_px=22)
    untouched = clean_text_crop(text)  # the text alone, nothing painted over
    assert cleaned.shape == untouched.shape  # trimmed to the text alone
    assert np.array_equal(cleaned < 128, untouched < 128)  # every glyph, point and comma kept
    assert clean_text_crop(page).shape[1] > cleaned.shape[1]  # without a font size: kept
    # A dark page's scan strews larger blobs (3×3 px: over 0.02 em² at 20 px), close enough
    # to own each other; compact as dots, they are no glyph and go too.
    blobs = text.copy()
    for x in range(180, 252, 6):  # 3 px apart: each within 0.3 em of the next
        for y in range(4, 36, 6):
            blobs[y : y + 3, x : x + 3] = 60
    cleaned = clean_text_crop(blobs, font_px=20)
    assert np.array_equal(cleaned < 128, clean_text_crop(text) < 128)


@pytest.mark.parametrize("size", [14, 20, 28])
@pytest.mark.parametrize("style", STYLES)
def test_a_short_options_closing_period_is_kept_in_every_face(style: str, size: int) -> None:
    """A period after a word is no speck: a monospaced face sets it mid-cell, 0.3 em away.

    JetBrains Mono's "No." lost its period, so "(E) No" read no better than
    the option "No, unless ..." beside it.
    """
    from PIL import Image, ImageDraw, ImageFont

    from itemshot.fonts.catalogue import choose_fonts
    from itemshot.fonts.files import font_file as weighted_file
    from itemshot.verify.page.crops import clean_text_crop

    face = choose_fonts(style, "en").faces[0]
    font = ImageFont.truetype(weighted_file(face.family, face.weight)[0], size)
    image = Image.new("L", (round(font.getlength("(E) No.")) + 2 * size, 2 * size), 255)
    ImageDraw.Draw(image).text((size, size // 3), "(E) No.", fill=20, font=font)
    page = np.asarray(image)
    # The crop's size is its x-height's in the reference face: JetBrains Mono's 19.7 is 20.2.
    font_px = 1.03 * size
    cleaned = clean_text_crop(page, font_px=font_px)
    assert cleaned.shape == clean_text_crop(page).shape  # trimmed past the period
    dust = page.copy()
    row = size // 3 + size // 2
    dust[row, -4:-2] = 20  # a speck along the line but most of an em on: dust
    assert clean_text_crop(dust, font_px=font_px).shape == cleaned.shape


@given(
    edge=st.integers(0, 120),
    shade=st.floats(0.5, 0.8),
    soft=st.floats(4.0, 20.0),
    chalk=st.booleans(),
)
@settings(max_examples=60, deadline=None)
def test_polarity_holds_across_a_shadows_edge(
    edge: int, shade: float, soft: float, chalk: bool
) -> None:
    """A photographed option part in shadow: the shadow's edge is no ink, whichever side.

    As the capture presets cast one: darkness 0.2–0.5, its edge soft over a few px or more.
    """
    import cv2

    from itemshot.verify.page.crops import ink_is_light

    rng = np.random.default_rng(5)
    paper = np.clip(rng.normal(235, 3.0, (34, 120)), 0, 255).astype(np.uint8)
    cv2.putText(paper, "75.6 kip", (8, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.7, 60, 2, cv2.LINE_AA)
    page = 255 - paper if chalk else paper
    light = shade + (1 - shade) / (1 + np.exp((np.arange(120) - edge) / soft))
    shot = np.clip(page * light[None, :], 0, 255).astype(np.uint8)
    assert ink_is_light(shot, 20.0) is chalk


def test_polarity_follows_a_label_alone_in_a_wide_region() -> None:
    """A label under 1% of an image option's region, on noisy paper or on a board, keeps its side."""
    import cv2

    from itemshot.verify.page.crops import ink_is_light, normalise_text

    rng = np.random.default_rng(5)
    paper = np.clip(rng.normal(242, 2.0, (184, 335)), 0, 255).astype(np.uint8)
    cv2.putText(paper, "(D)", (150, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.7, 20, 2, cv2.LINE_AA)
    assert np.mean(paper < 128) < 0.01  # the 1st percentile is paper noise
    assert not ink_is_light(paper)
    assert ink_is_light(255 - paper)  # chalk on a board
    for crop in (paper, 255 - paper):
        normalised = normalise_text(crop, 22.0)
        assert np.mean(normalised < 128) < 0.01  # dark ink on white: no dark halo around it


def test_a_changed_unit_is_reported_even_when_another_number_is_misread() -> None:
    """The veto compares checks one by one: a unit check must not be skipped for a misread number."""
    from itemshot.verify.checks.scoring import score_stem

    item = Item("q", "Air at 100 MPa, 300 K enters.", ("a", "b"), 0)
    read = "Air at l00 kPa, 3oo K enters. Later 100 kPa."  # 300 misread, the unit is kPa
    codes = {(r.code, r.detail) for r in score_stem(stem(item), read, DEFAULT_THRESHOLDS).reasons}
    # A unit whose number this reading misses is not shown with it either: both are listed.
    assert ("unit_missing", "100MPa, 300K") in codes
    assert ("number_missing", "300") in codes


def test_kanji_variant_forms_are_one_character() -> None:
    """An engine's traditional form (德) of a Japanese standard character (徳) is no misread."""
    assert normalise("德川慶喜") == "徳川慶喜"
    assert ocr_accuracy("豊臣秀吉", "豐臣秀吉") == 1.0
    assert ocr_accuracy("徳川慶喜", "徳川庆喜") < 1.0  # a simplified form is another shape


def test_a_formula_fields_plain_ends_are_checked() -> None:
    """A stem cut after its displayed formula loses "What is x?": its plain end is missing."""
    text = stem(Item("t", r"The angle at C satisfies $$x = 180^\circ - A.$$ What is x?", ("1",), 0))
    assert missing_ends(text.text, "The angle at C satisfies x = 180° - A. What is x?") == []
    assert missing_ends(text.text, "The angle at C satisfies x = 180° - A.") == ["end"]
    # Short stems too: a quarter cut off a 40-character question still leaves its end unread.
    question = "Which shape has exactly three lines of symmetry?"
    assert missing_ends(question, "Which shape has exactly three lines of") == ["end"]


def test_a_superscript_read_inline_is_no_baseline_number() -> None:
    """`= 0` changed to `= 2`: the only 2 read is x^2's, so the 2 is missing."""
    read = "二次方程式 x2 - 5x + 6 = 0 の解"
    assert missing_formula_numbers(["x^2 - 5x + 6 = 2"], read) == ["2"]
    assert missing_formula_numbers(["x^2 - 5x + 6 = 0"], read) == []


def test_unread_and_contradicted_scripts() -> None:
    from itemshot.verify.checks.tokens import contradicted_formula_scripts, unread_formula_scripts

    assert unread_formula_scripts(["y = ax^3 + b"], "y = ax? + b") == ["ax^3"]
    assert unread_formula_scripts(["y = ax^3 + b"], "y = ax3 + b") == []
    assert contradicted_formula_scripts(["y = ax^3 + b"], "y = ax² + b") == ["ax^3"]
    assert contradicted_formula_scripts(["y = ax^3 + b"], "y = ax? + b") == []


def test_a_script_one_engine_reads_otherwise_is_changed_however_the_other_read_it() -> None:
    """tesseract shows no superscript, the second engine shows x² where the source says x³."""
    from itemshot.verify.checks.scoring import FieldResult
    from itemshot.verify.modes.regions import _script_evidence, _settle_unread_scripts

    field = stem(Item("p", "It has the form $y = ax^3 + b$.", ("1",), 0))
    evidence = _script_evidence(
        field, "It has the form y = ax? + b.", "It has the form y = ax² + b."
    )
    assert [(r.code, r.detail) for r in evidence] == [("number_missing", "in a formula: ax^3")]
    assert _script_evidence(field, "y = ax? + b", "y = ax + b") == ()  # read by neither
    provisional = Reason("script_unread", "question", "ax^3")
    settled = _settle_unread_scripts(
        FieldResult(1.0, (provisional,), RegionScore("question", "question", 1.0))
    )
    assert settled.reasons == ()
    assert settled.region.measures["unchecked_scripts"] == "ax^3"


def test_a_token_either_engine_reads_is_shown() -> None:
    """One engine misses 1200, the other 800: no number is missing from both readings."""
    from itemshot.verify.modes.regions import _shared

    first = Reason("number_missing", "question", "1200, 300")
    assert _shared(first, (Reason("number_missing", "question", "800"),)) is None
    kept = _shared(first, (Reason("number_missing", "question", "300, 800"),))
    assert kept is not None and kept.detail == "300"
    formula = Reason("number_missing", "question", "in a formula: 300")
    assert _shared(formula, (first,)) is None  # a text number is another check
    label = Reason("letter_mismatch", "option:A", "label read as 'B'")
    assert _shared(label, (Reason("letter_mismatch", "option:A", "label read as None"),)) == label


def test_a_formula_fields_words_either_engine_reads_are_shown() -> None:
    """A handwritten "mv sin θ": tesseract reads "wv sin", the second engine "mv sīn".

    Each reading shows one of the two plain words, so each fails the word
    recall; every word is shown by one of them. A word neither shows still fails.
    """
    from itemshot.verify.checks.expected import Field
    from itemshot.verify.modes.regions import _formula_words_shown

    field = Field("option:F", "mv sin \n", ("\\theta",), ())
    recall = Reason("text_mismatch", "option:F", "word recall 0.50")
    label = Reason("letter_mismatch", "option:F", "label read as None")
    readings = ["(F) wv sin 6", "(F) mv s\u012bn \u03b8"]
    kept, shown = _formula_words_shown(field, (recall, label), readings, DEFAULT_THRESHOLDS)
    assert kept == (label,) and shown == 1.0
    kept, shown = _formula_words_shown(
        field, (recall,), ["(F) wv sin", "(F) wv"], DEFAULT_THRESHOLDS
    )
    assert kept == (recall,) and shown == 0.5


def test_a_texts_end_one_engine_reads_is_shown_whatever_the_others_similarity() -> None:
    """tesseract misses the stem's end ("n=______"); the second engine reads it but garbles a line.

    The end and the word recall are two checks, each passed by one reading.
    """
    from itemshot.verify.checks.scoring import ends_reason
    from itemshot.verify.modes.regions import _shared

    end = ends_reason("question", ["end"])
    low = Reason("text_mismatch", "question", "word recall 0.70")
    assert _shared(end, (low,)) is None
    assert _shared(low, (end,)) is None
    assert _shared(low, (Reason("text_mismatch", "question", "word recall 0.60"),)) == low
    both = ends_reason("question", ["start", "end"])
    kept = _shared(both, (end,))
    assert kept == end and kept.detail == "end of the text not read"


def test_a_token_a_retry_reads_in_its_place_is_shown() -> None:
    """Each re-reading misreads its own token; one misread elsewhere shows nothing."""
    from itemshot.verify.checks.expected import Field
    from itemshot.verify.checks.scoring import FieldResult
    from itemshot.verify.modes.regions import _tokens_in_place

    field = Field(
        "question", "carry at most 300 loaves of 1,150 ordered; costs $5 and $6 each", (), ()
    )
    reasons = (
        Reason("number_missing", "question", "300, 1,150, 6"),
        Reason("number_missing", "question", "in a formula: 2"),
        Reason("text_mismatch", "question", "accuracy 0.80"),
    )
    result = FieldResult(0.8, reasons, RegionScore("question", "question", 0.8, field.text, ""))
    readings = [
        "carry at most 360 loaves of 1,150 ordered",
        "at most 300 loaves of 1 150",
        "costs $6 and $3 each",
    ]
    kept = _tokens_in_place(field, result, readings).reasons
    assert [(r.code, r.detail) for r in kept] == [
        ("number_missing", "6"),  # read only where the source has $5
        ("number_missing", "in a formula: 2"),  # a formula's numbers are another check
        ("text_mismatch", "accuracy 0.80"),
    ]


def test_list_commas_of_a_short_option_may_go_unread() -> None:
    assert short_option_found("0.45, 0.56", "(B) 0.45 0.56")
    assert not short_option_found("0.45, 0.56", "(B) 0.45 0.57")
    assert not short_option_found("1,150", "1 150")  # a comma inside a number is read


def test_japanese_sentences_are_no_letter_digit_codes() -> None:
    from itemshot.verify.checks.tokens import codes

    assert codes("図1の回路で、電源の電圧は12 V. See Fig. P2.79 and E1.") == ["P2.79", "E1"]


def test_a_handwritten_letter_drawn_as_a_digit_is_read_as_the_source_has_it() -> None:
    """Nanum Pen Script's "l" and "1" are one stroke: "1.(a)" shows the source's "l.(a)"."""
    from itemshot.verify.checks.glyphs import read_as_drawn

    source = "l.(a) >L(a);l(b)>l,(b)"
    read = "1.(a)>L(a);1(b)>1,(b)"
    assert read_as_drawn(read, source, "Nanum Pen Script") == "l.(a)>L(a);l(b)>l,(b)"
    assert read_as_drawn(read, source, "Noto Sans") == read
    # A piece the source has as read is never rewritten: its "1(b)" is a number.
    assert read_as_drawn("see 1(b) and 1(a)", "see 1(b) and l(a)", "Nanum Pen Script") == (
        "see 1(b) and 1(a)"
    )


def test_handwritten_2_and_z_are_one_glyph() -> None:
    """Nanum Pen Script's "2" is its "z" (both engines read "1200" as "Izoo")."""
    from itemshot.verify.checks.glyphs import read_as_drawn

    read = "supplied as Izoo kJ per kilogram"
    source = "supplied as 1200 kJ per kilogram"
    assert read_as_drawn(read, source, "Nanum Pen Script") == source
    assert read_as_drawn(read, source, "Noto Sans") == read


def test_a_caption_line_under_a_figure_is_not_the_stems_reference() -> None:
    """ "Figure 1" alone below a gap (the figure) is a caption; after a wrapped line it is text."""
    from itemshot.verify.modes.whole_image import _without_captions
    from itemshot.verify.reading.ocr import Word

    def word(text: str, top: int, line: int, left: int = 40) -> Word:
        return Word(text, left, top, 60, 20, 95.0, (1, line, 1))

    stem_line = [word("Name", 40, 1), word("the", 40, 1, 110)]
    caption = [word("Figure", 300, 2, 300), word("1", 300, 2, 370)]
    kept = _without_captions([*stem_line, *caption])
    assert [w.text for w in kept] == ["Name", "the"]
    wrapped = [word("Figure", 68, 2), word("1.", 68, 2, 110)]
    assert len(_without_captions([*stem_line, *wrapped])) == 4


def test_a_single_line_question_is_cut_by_its_ink_not_its_box() -> None:
    """A short line in a wide ruled box loses the right 40% of its text, not blank paper."""
    import random

    from itemshot.renderer.records import Layout, Region, box_to_quad
    from tests.defects import question_truncated

    image = np.full((50, 600, 3), 250, dtype=np.uint8)
    image[40, :, :] = 120  # a notebook's rule across the whole box
    image[15:35, 20:220, :] = 20  # the text: a dark run of ink 200 px wide
    box = (0.0, 0.0, 600.0, 50.0)
    region = Region(
        "question", "question", box, box_to_quad(box), text="A short question?", font_px=22.0
    )
    layout = Layout(width=600, height=50, regions=(region,))
    item = Item("s", "A short question?", ("a", "b"), 0)
    made = question_truncated(image, item, layout, random.Random(1))
    assert made is not None
    cut = made[0]
    assert (cut[15:35, 20:130] == 20).all()  # the first 60% of the text stays
    assert (cut[15:35, 150:220] != 20).all()  # the rest is painted over


def test_unit_case_counts_only_where_it_changes_the_quantity() -> None:
    assert missing_units("at 750 K", "at 750 k") == []
    assert missing_units("0.61 W/m K", "0.61 w/m k") == []
    assert missing_units("a 5 MW plant", "a 5 mW plant") == ["5MW"]  # mega is not milli
    assert missing_units("at 300 K", "at 300 °C") == ["300K"]


def test_a_reading_that_adds_a_unit_prefix_contradicts_the_source() -> None:
    source = "in 1.00 M Au(NO3)3 and 1.00 M CuNO3"
    assert prefixed_units(source, "in 1.00 mM Au(NO3)3 and 1.00 M CuNO3") == ["1.00M"]
    assert prefixed_units("a 5 g mass", "a 5 kg mass") == ["5g"]
    # A dropped glyph, another unit or a prefix the source has there too: no added prefix.
    assert prefixed_units(source, "in 1.00 Au(NO3)3 and 1.00 M CuNO3") == []
    assert prefixed_units("at 300 K", "at 300 °C") == []
    assert prefixed_units("1.00 M and 1.00 mM", "1.00 M and 1.00 mM") == []


def test_a_number_after_an_abbreviations_point_is_a_whole_number() -> None:
    # Compacted, "W.C.B. 7°16'" is "W.C.B.7°16'": its 7 starts a number, not one ".7" ends.
    bearing = "Slope 1 in 7.64 rising, W.C.B. 7°16'26.7\""
    assert missing_units(bearing, f"(A) {bearing}") == []
    assert missing_units("a bend of 10.7°", "a bend of 0.7°") == ["10.7°"]


def test_a_unit_is_placed_by_its_numbers_digits_not_its_separators() -> None:
    # The point is the number check's: "101 148 m" shows the unit of "101.148 m".
    assert missing_units("height = 101.148 m", "height = 101 148\nm") == []
    assert missing_units("height = 101.148 m", "height = 101 148 km") == ["101.148m"]
    assert missing_units("a 1,500 kg load", "a 1500 kg load") == []


def test_a_glyph_touching_a_box_edge_or_a_rule_is_kept() -> None:
    """The box's edges and a grid line go; the descender on the edge and the label on the line stay."""
    import cv2

    from itemshot.verify.page.crops import clean_text_crop

    text = np.full((44, 300), 255, np.uint8)
    cv2.putText(text, "(D) planula", (30, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 0, 2, cv2.LINE_AA)
    rows = np.nonzero((text < 128).any(axis=1))[0]
    boxed = text.copy()
    bottom = int(rows.max())  # the box's bottom edge runs through the descender's tip
    boxed[bottom - 1 : bottom + 1, :] = 0
    boxed[1:3, :] = 0
    boxed[:, 0:2] = 0
    boxed[:, -2:] = 0
    boxed[20, :] = 90  # a notebook's rule through the text
    cleaned = clean_text_crop(boxed, font_px=22)
    kept = clean_text_crop(text, font_px=22)
    # The glyphs survive but for the rows the rules crossed.
    assert cleaned.shape[0] >= kept.shape[0] - 2
    glyph_ink = (kept < 128).sum()
    assert (cleaned < 128).sum() >= 0.85 * glyph_ink
    assert (cleaned[:, :4] < 128).sum() == 0  # the box's left side went


def test_a_rounded_boxs_corners_go_when_the_crop_has_a_margin() -> None:
    """An image option's card: its arcs lie a few pixels in, and only the label is left."""
    import cv2

    from itemshot.verify.page.crops import clean_text_crop

    card = np.full((202, 328), 255, np.uint8)
    # Its sides run along the crop's edges; its corners are tv_quiz's (radius 1.2 em of a
    # 16.5 px font, 2 px stroke), so their arcs reach past the sides' masked ends.
    radius, inset = 20, 1
    x0, y0, x1, y1 = inset, inset, 327 - inset, 201 - inset
    for (cx, cy), start in (
        ((x0 + radius, y0 + radius), 180),
        ((x1 - radius, y0 + radius), 270),
        ((x1 - radius, y1 - radius), 0),
        ((x0 + radius, y1 - radius), 90),
    ):
        cv2.ellipse(card, (cx, cy), (radius, radius), 0, start, start + 90, 0, 2, cv2.LINE_AA)
    cv2.line(card, (x0 + radius, y0), (x1 - radius, y0), 0, 2)
    cv2.line(card, (x0 + radius, y1), (x1 - radius, y1), 0, 2)
    cv2.line(card, (x0, y0 + radius), (x0, y1 - radius), 0, 2)
    cv2.line(card, (x1, y0 + radius), (x1, y1 - radius), 0, 2)
    cv2.putText(card, "(B)", (146, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.6, 0, 2, cv2.LINE_AA)
    cleaned = clean_text_crop(card, font_px=16.5)
    label = clean_text_crop(card[8:40, 120:220], font_px=16.5)
    assert cleaned.shape == label.shape  # nothing but the label is left to trim to


def test_a_short_options_closing_period_is_punctuation() -> None:
    assert short_option_found("A stroke.", "(I) A stroke")
    assert not short_option_found("A stroke.", "(I) A strike")


def test_a_lookalike_is_read_as_the_source_word_glyph_for_glyph() -> None:
    """Nanum Pen Script's 1 is its I: "I-msquare" is the source's "1-msquare", q stays q."""
    from itemshot.verify.checks.glyphs import read_as_drawn

    source = "Gate ABC in Fig. P2.79 is 1-msquare and hinged"
    read = "Gate ABC in Fig. P2.79 is I-msquare and hinged"
    assert read_as_drawn(read, source, "Nanum Pen Script") == source
    assert read_as_drawn("is I-msquire", source, "Nanum Pen Script") == "is I-msquire"


def test_numbers_right_after_kana_or_kanji_are_numbers() -> None:
    """Japanese puts no space before a number: 電圧は19 V changed from 12 V is a missing 19."""
    assert missing_numbers("電源の電圧は19 Vである。", "電 源 の 電圧 は 12 V で ある 。") == ["19"]
    assert missing_numbers("電圧は12 Vで、x2", "電圧は12Vで、x2") == []


def test_a_unit_one_reading_checks_and_the_other_misses_the_number_of_is_missing() -> None:
    """ "100 kPa" read where the source says 100 MPa; the other reading loses the 100 itself."""
    from itemshot.verify.modes.regions import _shared

    unit = Reason("unit_missing", "question", "100MPa")
    assert _shared(unit, (Reason("number_missing", "question", "100, 800"),)) == unit
    assert _shared(unit, (Reason("text_mismatch", "question", "accuracy 0.8"),)) is None


def test_a_number_read_only_elsewhere_is_not_shown_in_its_place() -> None:
    """One reading's misread "$5" as "$6" does not show the "$6" another reading misses."""
    source = "A notebook costs $5 and a pen costs $6. Maya pays with a $20 note."
    assert not shown_in_place(source, "6", ["A notebook costs $6 and a pen costs $3. Maya"])
    assert shown_in_place(source, "6", ["a pen costs $6. Maya pays with"])
    assert not shown_in_place(source, "20", ["pays with a $200 note."])  # a longer number
    units = "a heat transfer loss of 300 kJ/kg air occurs"
    assert shown_in_place(units, "300kJ/kg", ["loss of 300 kJ/kg air"])
    assert not shown_in_place(units, "300kJ/kg", ["loss of 300 kJ/kg"])  # no word after it
    # Every place the source has the token: a cut "Figure 1" is not shown by "is 1-m".
    twice = "Gate P2.79 is 1-m square and hinged. Figure 1"
    assert not shown_in_place(twice, "1", ["Gate P2.79 is 1-m square and hinged. Figure"])
    assert shown_in_place(twice, "1", ["P2.79 is 1-m square", "hinged. Figure 1"])


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


@given(
    before=st.lists(WORD, min_size=1, max_size=4),
    after=st.lists(WORD, min_size=1, max_size=4),
    number=st.integers(0, 99999),
    other=st.integers(0, 99999),
)
def test_a_reading_shows_a_number_in_place_only_if_it_reads_that_number_there(
    before: list[str], after: list[str], number: int, other: int
) -> None:
    """The source itself shows each of its numbers in place; a reading with another there does not."""
    source = " ".join([*before, str(number), *after])
    assert shown_in_place(source, str(number), [source])
    misread = " ".join([*before, str(other), *after])
    assert shown_in_place(source, str(number), [misread]) == (other == number)


def test_dust_among_the_glyphs_is_painted_over_for_a_despeckled_reading() -> None:
    """Specks between letters go (periods too); the glyphs stay and tesseract reads the words."""
    import cv2
    from PIL import Image, ImageDraw, ImageFont

    from itemshot.verify.page.crops import SPECK_AREA, despeckled
    from itemshot.verify.reading.ocr import join_words, words

    font_px = 22
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", font_px)
    text = "has no anomalies within three days following birth"
    image = Image.new("L", (int(font.getlength(text)) + 24, 2 * font_px), 255)
    ImageDraw.Draw(image).text((12, 8), text, fill=30, font=font)
    clean = np.asarray(image).copy()
    dusty = clean.copy()
    rng = np.random.default_rng(11)
    for x, y in zip(
        rng.integers(12, dusty.shape[1] - 12, 90), rng.integers(4, 36, 90), strict=True
    ):
        dusty[y : y + 2, x : x + 2] = 40  # a scan's dust, over and between the letters
    out = despeckled(dusty, font_px)

    def specks(crop: np.ndarray) -> int:
        _, ink = cv2.threshold(crop, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
        _count, _labels, stats, _ = cv2.connectedComponentsWithStats(ink, 8)
        return int((stats[1:, cv2.CC_STAT_AREA] < SPECK_AREA * font_px * font_px).sum())

    # What is left: the i-dots, and dust that landed right above a stem (as an i-dot does).
    assert specks(out) < 0.2 * specks(dusty)
    glyphs = clean < 128
    assert np.mean((out < 128)[glyphs]) > 0.97  # the letters' ink is kept

    def read(crop: np.ndarray) -> str:
        return join_words(words(cv2.resize(crop, None, fx=1.5, fy=1.5), "eng", psm=7))

    # An i without its dot is still read close to the word; a dusty line is not.
    assert ocr_accuracy(text, read(out)) >= 0.95 > ocr_accuracy(text, read(dusty))


def test_a_caption_is_compared_on_its_words_and_number_not_on_dust_read_as_periods() -> None:
    caption = Field("caption:1", "Figure 1", (), ())
    dusty = score_caption(caption, "·Figure. 1.", DEFAULT_THRESHOLDS)
    assert dusty.reasons == () and dusty.score == 1.0
    renumbered = score_caption(caption, "·Figure. 6.", DEFAULT_THRESHOLDS)
    assert [r.code for r in renumbered.reasons] == ["caption_mismatch"]
    reworded = score_caption(caption, "Fig. 1", DEFAULT_THRESHOLDS)
    assert [r.code for r in reworded.reasons] == ["caption_mismatch"]


@given(st.text(max_size=30))
def test_words_and_numbers_keep_every_letter_and_digit_in_order(text: str) -> None:
    kept = words_and_numbers(text)
    assert [c for c in kept if c != " "] == [c for c in normalise(text) if c.isalnum()]
    assert kept == kept.strip() and "  " not in kept


def test_a_figure_is_painted_out_in_the_colour_around_it_not_its_cards_border() -> None:
    # A white card with a dark 3 px border, whose figure box ends a pixel above the border: the
    # ring under the box is border, the other three sides are the card's white.
    page = np.full((120, 160, 3), 255, np.uint8)
    page[98:101, :] = 40
    page[20:98, 30:130] = 200  # the figure
    painted = paint_quads(page, [((30, 20), (129, 20), (129, 97), (30, 97))])
    assert painted[60, 80].tolist() == [255, 255, 255]
    assert painted[99, 80].tolist() == [40, 40, 40]  # the border is left as drawn


def test_a_pill_a_pixel_inside_the_crop_is_a_frame() -> None:
    """A page scaled into a screenshot puts an option's pill-shaped box a pixel or two in."""
    import cv2

    from itemshot.verify.page.crops import clean_text_crop

    pill = np.full((33, 308), 255, np.uint8)
    cv2.line(pill, (16, 2), (291, 2), 0, 2)
    cv2.line(pill, (16, 30), (291, 30), 0, 2)
    cv2.ellipse(pill, (16, 16), (14, 14), 0, 90, 270, 0, 2, cv2.LINE_AA)
    cv2.ellipse(pill, (291, 16), (14, 14), 0, -90, 90, 0, 2, cv2.LINE_AA)
    cv2.putText(pill, "(B) fifth", (40, 23), cv2.FONT_HERSHEY_SIMPLEX, 0.5, 0, 1, cv2.LINE_AA)
    cleaned = clean_text_crop(pill, font_px=19)
    text = clean_text_crop(pill[6:28, 30:200], font_px=19)
    assert cleaned.shape[1] == text.shape[1]  # the pill's rounded ends went


def test_a_stems_formulas_are_the_ones_the_renderer_typesets_paragraph_by_paragraph() -> None:
    # A bare formula the renderer finds on one line never runs over the line break: the
    # source's math is what the page typeset, so the layout record agrees with it.
    question = "Subject to: S_{i-1} = 3S_i - d_1 i = 1, 2, 3,\n S_i ≧ d_i ≧ 0 \nwhere r_1 = 3d_1"
    typeset = [s.latex for p in paragraphs(question) for s in p if isinstance(s, Math)]
    field = stem(Item("m", question, ("a", "b"), 0))
    assert list(field.math) == typeset
    assert all("\n" not in latex for latex in field.math)


def test_specks_between_every_pair_of_lines_leave_the_lines_apart() -> None:
    """A paragraph with dust in every gap is still read line by line by the second engine."""
    from PIL import Image, ImageDraw, ImageFont

    from itemshot.verify.checks.fonts import font_file
    from itemshot.verify.reading import second_reader

    lines = ["the cat sat on the mat", "and the dog lay by the door", "while rain fell outside"]
    px, pitch = 20, 26
    font = ImageFont.truetype(font_file("DejaVu Sans"), px)
    image = Image.new("L", (340, pitch * len(lines) + 12), 255)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((6, 6 + row * pitch), line, fill=0, font=font)
    pixels = np.asarray(image).copy()
    inked = np.flatnonzero((pixels < 128).any(axis=1))
    gaps = [r for r in range(inked[0], inked[-1]) if not (pixels[r] < 128).any()]
    assert gaps, "the lines are drawn apart"
    for index, row in enumerate(gaps):  # one 2-px speck on every empty row, far from the text
        pixels[row : row + 2, 320 - (index % 3) * 4 : 322 - (index % 3) * 4] = 0
    assert (pixels[inked[0] : inked[-1]] < 128).any(axis=1).all(), "no row is left empty"
    found = second_reader.split_lines(pixels, px)
    assert len(found) == len(lines)
    # A speck in a line's margin may be read as its full stop; the words are the lines'.
    assert [line.rstrip(" .") for line in second_reader.read(pixels, px).split("\n")] == lines


def test_a_word_joined_to_a_number_by_a_relation_is_no_code() -> None:
    """A relation joins two tokens: "p-values=0.000" is a word and a number, each checked alone.

    As one code it failed whenever a letter of "values" was misread ("p-valves=0.000"),
    though the number was read exactly and the word is the word checks' to judge.
    """
    source = "both are significant (p-values=0.000), every 10%increase in E1"
    assert (
        missing_numbers(source, "both are significant (p-valves=0.000), every 10%lncrease in E1")
        == []
    )
    assert missing_numbers(
        source, "both are significant (p-values=0.008), every 10%increase in E1"
    ) == ["0.000"]
    assert missing_numbers(
        source, "both are significant (p-values=0.000), every 10%increase in E7"
    ) == ["E1"]
