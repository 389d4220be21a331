"""Word-level accounting: an image that says something other than its source fails.

Unit tests of the word alignment and its judgments on strings, then real
Chromium renders read by real tesseract (and the second engine where a field
is rejected): each image is rendered from an item with one thing changed and
verified against the original item, as a benchmark builder's image with a
changed word would be.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.records import Layout
from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.formula_record import formula_reasons
from itemshot.verify.checks.meaning import (
    WORD_CODES,
    adds_negation,
    align,
    findings,
    negated_by_prefix,
    respelled,
    split_words,
    token_shown,
    word_reasons,
)
from itemshot.verify.checks.scoring import FieldResult, score_option, score_stem
from itemshot.verify.modes.regions import (
    SETTLERS,
    _options_read_as_others,
    _Page,
    _words_left,
    verify_image,
)
from itemshot.verify.modes.whole_image import audit_image
from itemshot.verify.page.images import load_rgb
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS
from itemshot.verify.verdicts import Reason, ReasonCode, RegionScore, Verdict
from tests.conftest import SAMPLE_DATA

# --- the alignment and its judgments, on strings -------------------------------------------


def test_each_source_word_is_placed_against_the_reading() -> None:
    source = split_words("Which is most consistent with the data?")
    placed = align(source, split_words("Which is least consistent with the data?"))
    assert [(p.word, p.read) for p in placed if p.word != p.read] == [("most", "least")]


def test_ocr_spacing_is_no_content() -> None:
    merged = align(split_words("A stroke of the pen"), split_words("Astroke of the pen"))
    assert all(p.read == p.word for p in merged)
    split = align(split_words("the figure shows"), split_words("the fig ure shows"))
    assert all(p.read == p.word for p in split)


def test_a_word_read_as_another_real_word_is_changed_naming_both() -> None:
    (found,) = findings(
        "Which of the following is most consistent with the data?",
        "Which of the following is least consistent with the data?",
    )
    assert found.code is ReasonCode.WORD_CHANGED
    assert (found.word, found.read) == ("most", "least")
    assert found.describe() == "'most' read as 'least'"


def test_a_content_word_changed_fails_too() -> None:
    (found,) = findings(
        "The patient presents with a fever and a rash.",
        "The patient presents with a fever and a cough.",
    )
    assert (found.word, found.read) == ("rash", "cough")


def test_a_rare_word_the_item_uses_elsewhere_is_a_word_a_person_reads() -> None:
    # Two options a word apart, swapped: each shows the other's rare word. Too rare to be
    # taken for a word on its own, "opiates" is one of the item's own words.
    source = "Individuals addicted to methamphetamines and treated after release."
    read = "Individuals addicted to opiates and treated after release."
    assert findings(source, read) == []
    words = frozenset(split_words(source) + split_words("addicted to opiates"))
    (found,) = findings(source, read, vocabulary=words)
    assert (found.word, found.read) == ("methamphetamines", "opiates")


def test_a_changed_word_beside_math_the_source_text_lacks_is_paired_with_its_replacement() -> None:
    # "below" and "above" share no letter in place: pairing "below" with the stray "N"
    # (a typeset symbol the source text does not spell) must not hide the change.
    found = findings(
        "The point P lies below the line when the load exceeds the limit.",
        "The point P lies above N the line when the load exceeds the limit.",
    )
    assert [(f.word, f.read) for f in found] == [("below", "above")]


def test_a_changed_word_is_not_paired_with_a_letter_beside_it_that_its_reading_shares() -> None:
    # validation_Physics_17: "current I in" shown as "species I in", read "species Tin".
    # "species" holds the "i" of the letter "I": one shared letter makes no closer pairing
    # than "current", or the changed word would be read as a word not read at all.
    found = findings(
        "How does power P vary with current I in a component that obeys Ohm's law?",
        "How does power P vary with species\nTin a component that obeys Ohm's law?",
    )
    assert [(f.word, f.read) for f in found] == [("current", "species")]
    # A letter read inside a short run ("ΔU =" read "aue") is still that run's.
    assert findings("q > 0, w > 0, \nU = 0", "(0) 4>° w>o aue=0") == []


def test_a_referent_letter_read_as_another_letter_is_changed() -> None:
    # Options that differ only in the letter they point at: "a)" shown as "b)" is a swap.
    source = "There is an asymmetric centre at the position labelled a)"
    (found,) = findings(source, source.replace("a)", "b)"))
    assert (found.code, found.word, found.read) == (ReasonCode.WORD_CHANGED, "a", "b")
    (capital,) = findings(
        "the angle at point B of the triangle", "the angle at point D of the triangle"
    )
    assert (capital.word, capital.read) == ("b", "d")
    # An article or a lowercase variable is no referent: one engine's "a" for "o" is no swap.
    assert findings("a ball of mass m rolls", "o ball of mass n rolls") == []


def test_a_dropped_negation_and_an_added_one_fail() -> None:
    (dropped,) = findings("Which does NOT contain an error?", "Which does contain an error?")
    assert (dropped.code, dropped.word) == (ReasonCode.WORD_DROPPED, "not")
    (added,) = findings("Which does contain an error?", "Which does not contain an error?")
    assert (added.code, added.read) == (ReasonCode.WORD_ADDED, "not")


def test_a_negating_prefix_read_where_the_source_has_none_changes_the_word() -> None:
    # A handwritten "incorrect" read "incovvect" is no word, but it is "incorrect", not "correct".
    (found,) = findings("Which statement is correct?", "Which statement is incovvect?")
    assert (found.code, found.word, found.read) == (ReasonCode.WORD_CHANGED, "correct", "incorrect")
    (dropped,) = findings("Which statement is incorrect?", "Which statement is covvect?")
    assert (dropped.word, dropped.read) == ("incorrect", "correct")
    # A glyph run lost at a word's start is no prefix: "index" read "dex", "unit" read "it".
    assert negated_by_prefix("index", "dex", "en") is None
    assert negated_by_prefix("unit", "it", "en") is None
    assert findings("Which statement is correct?", "Which statement is covvect?") == []


def test_a_reading_one_glyph_from_another_word_stands_for_that_word() -> None:
    # A handwritten "growth" read "gvowth": no word, but one glyph from "growth" and six from
    # the source's "vessel". The ink then weighs "growth" against the source's drawing.
    (found,) = findings("new blood vessel formation", "new blood gvowth formation")
    assert (found.code, found.word, found.read) == (ReasonCode.WORD_CHANGED, "vessel", "growth")
    assert respelled("vessel", "gvowth", "en") == "growth"
    # A misread of the source word itself is nearer the source than any other word.
    assert findings("new blood vessel formation", "new blood vcssel formation") == []
    assert respelled("treatment", "treatmcnt", "en") is None
    # A short reading is too often one glyph from some word.
    assert respelled("cell", "ceil", "en") is None


def test_misread_glyphs_are_no_other_word() -> None:
    # Look-alike glyph runs, a non-word and a short function word misread: engine slips.
    assert findings("the most likely cause", "the rnost likely cause") == []
    assert findings("the most likely cause", "the mosl likely cause") == []
    assert findings("put it on the table", "put it in the table") == []
    assert findings("Résumé of the case", "Resume of the case") == []
    # A possessive's apostrophe lost is no other word; a negating "n't" lost is.
    assert findings("the candidate's score", "the candidate score") == []
    assert findings("the candidates' scores", "the candidates scores") == []
    assert findings("it can't be so", "it can be so") != []


def test_a_reason_names_its_words_as_tokens_a_settler_can_drop() -> None:
    text = "Which is most consistent with the data?"
    (reason,) = word_reasons("question", text, "Which is least consistent with the data?", "eng")
    assert reason.code == "word_changed"
    assert reason.tokens == ("most@2",)
    assert reason.as_dict()["tokens"] == ["most@2"]
    assert not token_shown(text, "most@2", ["Which is least consistent with the data?"])
    assert token_shown(text, "most@2", ["Which is leasl", "Which is most consistent"])
    # Japanese is not accounted by the English word list.
    assert word_reasons("question", "最も多い", "最も少ない", "jpn") == []


def test_a_stray_glyph_run_in_a_critical_words_place_does_not_show_it() -> None:
    # "except" dropped from a stem's end, where a figure reference left a "p" behind.
    text = "seen with all of the following except"
    (finding,) = findings(text, "seen with all of the following p")
    assert (finding.code, finding.word) == ("word_dropped", "except")
    # A misreading that keeps most of the word's letters is the word, misread.
    assert findings(text, "seen with all of the following cxccpt") == []
    assert findings("which is not true", "which is nol true") == []


def test_words_run_together_show_each_its_own_piece() -> None:
    # A tight line read without its spaces: "and do want to" run together hides a dropped
    # "n't" unless the read word is cut into the words it runs together.
    text = "I don't know and don't want to guess"
    (finding,) = findings(text, "|don't know anddowantto guess")
    assert (finding.code, finding.word, finding.read) == ("word_changed", "don't", "do")
    assert findings(text, "|don't know anddon'twantto guess") == []
    # Only a read word close to the words' run is cut: "available" is no "a result".
    source = split_words("options is not a result")
    placed = align(source, split_words("image not available"))
    assert [p.read for p in placed if p.word == "a"] == [None]


def test_a_word_is_shown_only_where_a_neighbour_places_it() -> None:
    # A box that takes in a figure placeholder below the stem: the engine garbled the
    # stem's end, and the alignment puts the placeholder's "not" in the dropped "not"'s place.
    text = "As innovation adds more functions, which of the following options is not a result?"
    index = split_words(text).index("not")
    garbled = "As innovation adds more rs a it? Figure 1 (image not available)"
    assert not token_shown(text, f"not@{index}", [garbled])
    # Read in place, between its own words, a misread glyph or so around it, it is shown.
    assert token_shown(text, f"not@{index}", ["options is not a resu1t"])
    assert token_shown(text, f"not@{index}", ["optlons ls not"])
    # A one-word field has no neighbour to ask.
    assert token_shown("None", "none@0", ["(A) None"])


def test_an_options_label_is_no_word_that_shows_a_dropped_one() -> None:
    # Option B with its second "not" dropped, as the two engines read it: each reading
    # lacks that "not"; tesseract's label "B" must not shift its words onto the source's,
    # and its run-together "AAnotB" shows the third "not" in its place.
    option = Field("option:B", "not B ^ not A + A ^ not B", (), (), "B")
    readings = ["(B) not BAA+AAnotB", "(B) not B ^ A + A ^ not B"]
    results = [
        score_option(option, reading, DEFAULT_THRESHOLDS, "", "ABCD") for reading in readings
    ]
    found = [{t for x in r.reasons if x.code in WORD_CODES for t in x.tokens} for r in results]
    assert found == [{"not@2"}, {"not@2"}]
    (left,) = _words_left(option, results, readings)
    assert (left.code, left.tokens) == (ReasonCode.WORD_DROPPED, ("not@2",))


def test_a_reading_that_drops_a_negating_prefix_settles_nothing() -> None:
    # "is incorrect" read "is correct" by one engine: a dropped prefix is a likelier misread
    # than an invented one, so that reading does not settle the change; the ink decides.
    stem = Field("question", "Which statement is correct?", (), ())
    readings = ["Which statement is incorrect?", "Which statement is correct?"]
    results = [score_stem(stem, reading, DEFAULT_THRESHOLDS) for reading in readings]
    (left,) = _words_left(stem, results, readings)
    assert (left.code, left.tokens) == (ReasonCode.WORD_CHANGED, ("correct@3",))
    # Another word changed is settled by a reading that shows the source's word.
    stem = Field("question", "Which statement is most consistent?", (), ())
    readings = ["Which statement is least consistent?", "Which statement is most consistent?"]
    results = [score_stem(stem, reading, DEFAULT_THRESHOLDS) for reading in readings]
    assert _words_left(stem, results, readings) == ()
    assert adds_negation("correct", "incorrect") and not adds_negation("incorrect", "correct")


def test_a_formula_typeset_from_other_tex_fails() -> None:
    field = Field("option:A", "\n", ("s^{2}",), ())
    (reason,) = formula_reasons(field, ["s^{6}"])
    assert reason.code == "formula_changed"
    assert reason.tokens == ("s^{2}",)
    assert formula_reasons(field, ["s^{ 2 }"]) == []


def test_the_settlers_are_one_named_ordered_list() -> None:
    assert [s.name for s in SETTLERS] == ["second_engine", "unread_scripts", "reread", "ink"]


# --- real renders ---------------------------------------------------------------------------

UNIT_ITEM = Item(
    id="unit-item",
    question="A solution of 1.00 M HCl is diluted tenfold with water. What is its concentration?",
    options=("0.100 M", "0.0100 M", "10.0 M", "1.00 M"),
    answer=0,
)
FORMULA_ITEM = Item(
    id="formula-item",
    question="In the matrix the entry $\\alpha_{23}$ is the largest. Which expression equals it?",
    options=("$s^{2}$", "$s^{3}$", "$2s$", "$s + 1$"),
    answer=0,
)


def _sample() -> dict[str, Item]:
    return {i.id: i for i in load_dataset(SAMPLE_DATA).items}


def _cases() -> dict[str, tuple[Item, Item, str]]:
    """Return name -> (source item, item the image is rendered from, font style)."""
    items = _sample()
    rainfall, figures, change = items["en-rainfall"], items["en-two-figures"], items["en-change"]
    negated = replace(
        figures,
        question=figures.question.replace("Which city shows", "Which city does NOT show"),
    )
    cases = {
        "word": (rainfall, replace(rainfall, question=rainfall.question.replace("highest", "lowest")), "regular"),
        "negation": (negated, replace(negated, question=negated.question.replace(" NOT", "")), "regular"),
        "unit": (UNIT_ITEM, replace(UNIT_ITEM, question=UNIT_ITEM.question.replace("1.00 M", "1.00 mM")), "regular"),
        "formula-stem": (FORMULA_ITEM, replace(FORMULA_ITEM, question=FORMULA_ITEM.question.replace("23", "28")), "regular"),
        "formula-option": (FORMULA_ITEM, replace(FORMULA_ITEM, options=("$s^{6}$", *FORMULA_ITEM.options[1:])), "regular"),
    }  # fmt: skip
    for name in ("en-rainfall", "en-two-figures", "en-change", "en-combustion", "en-triangle"):
        cases[f"clean-{name}"] = (items[name], items[name], "handwritten")
    cases["clean-negated"] = (negated, negated, "handwritten")
    cases["clean-unit"] = (UNIT_ITEM, UNIT_ITEM, "handwritten")
    del change
    return cases


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Verdict, Verdict]]:
    """Render every case once on a plain page; verify each image against its source item."""
    cases = _cases()
    out = tmp_path_factory.mktemp("meaning")
    requests = [
        JobRequest(replace(shown, id=name), PresentationSpec(scene="plain", font_style=font))
        for name, (_source, shown, font) in cases.items()
    ]
    summary = run_jobs(plan(requests, 0), out, RunSettings(workers=1))
    assert summary.failed == 0
    found: dict[str, tuple[Verdict, Verdict]] = {}
    for row in read_jsonl(out / "manifest.jsonl"):
        source = cases[row["item_id"]][0]
        image = load_rgb(out / row["image"])
        layout = _layout(out, row["image"])
        region = verify_image(image, source, layout, render=_render(out, row["image"]))
        found[row["item_id"]] = (region, audit_image(image, source))
    assert set(found) == set(cases)
    return found


def _sidecar(out: Path, image: str) -> dict:
    import json

    return json.loads((out / image).with_suffix(".json").read_text(encoding="utf-8"))


def _layout(out: Path, image: str) -> Layout:
    return Layout.from_dict(_sidecar(out, image)["layout"])


def _render(out: Path, image: str) -> dict:
    return _sidecar(out, image)["render"]


def _reasons(verdict: Verdict, code: str) -> list[Reason]:
    return [r for r in verdict.reasons if r.code == code]


@pytest.mark.slow
def test_a_changed_word_fails_naming_both_words(verdicts: dict) -> None:
    for verdict in verdicts["word"]:
        assert not verdict.passed
        details = " ".join(r.detail for r in _reasons(verdict, "word_changed"))
        assert "'highest' read as 'lowest'" in details, verdict.reasons


@pytest.mark.slow
def test_a_dropped_negation_fails(verdicts: dict) -> None:
    for verdict in verdicts["negation"]:
        assert not verdict.passed
        assert any("'not'" in r.detail for r in _reasons(verdict, "word_dropped")), verdict.reasons


@pytest.mark.slow
def test_a_changed_unit_prefix_fails(verdicts: dict) -> None:
    for verdict in verdicts["unit"]:
        assert not verdict.passed
        assert any("1.00M" in r.tokens for r in _reasons(verdict, "unit_missing")), verdict.reasons


@pytest.mark.slow
@pytest.mark.parametrize("case", ["formula-stem", "formula-option"])
def test_a_changed_formula_digit_fails_in_region_mode(verdicts: dict, case: str) -> None:
    region, _whole = verdicts[case]
    (reason,) = _reasons(region, "formula_changed")
    assert reason.tokens == (("\\alpha_{23}",) if case == "formula-stem" else ("s^{2}",))


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    ["en-rainfall", "en-two-figures", "en-change", "en-combustion", "en-triangle", "negated"],
)
def test_clean_handwritten_renders_still_pass(verdicts: dict, case: str) -> None:
    region, _whole = verdicts[f"clean-{case}"]
    assert region.passed, region.reasons


@pytest.mark.slow
def test_no_word_or_formula_is_called_changed_on_a_clean_handwritten_render(verdicts: dict) -> None:
    for name, pair in verdicts.items():
        if name.startswith("clean-"):
            for verdict in pair:
                codes = set(verdict.codes) & {
                    "word_changed",
                    "word_dropped",
                    "word_added",
                    "formula_changed",
                }
                assert not codes, (name, verdict.mode, verdict.reasons)


def test_an_option_the_ink_showed_is_not_read_as_another_options_text() -> None:
    # validation_Computer_Science_17 in a thin face: option D "s**" read "s*" (option I's
    # text) by both engines, but its ink, weighed against every other option, shows "s**".
    options = tuple(Field(f"option:{k}", t, (), (), k) for k, t in (("D", "s**"), ("I", "s*")))
    readings = {"tesseract": "(D) s*", "pp-ocrv5": "(D)s*"}
    page = _Page("eng", DEFAULT_THRESHOLDS, "DI", "Noto Sans", options, True)

    def entry(settled: list[dict[str, object]]) -> tuple[Field, list[object], FieldResult]:
        measures = {"readings": readings, "settled": settled}
        region = RegionScore("option:D", "option", 0.67, "s**", "(D) s*", measures)
        return options[0], [object()], FieldResult(0.67, (), region)

    read_as = _options_read_as_others([entry([])], page)  # type: ignore[list-item]
    assert [r.detail for r in read_as] == ["read as option I's text"]
    by_ink = [{"settler": "ink", "passed": ["short_option_missing: s**"]}]
    assert _options_read_as_others([entry(by_ink)], page) == []  # type: ignore[list-item]


def test_reason_codes_are_typed_and_still_plain_strings() -> None:
    reason = Reason(ReasonCode.WORD_CHANGED, "question", "'a' read as 'b'", ("a@0",))
    assert reason.code == "word_changed"
    assert reason.as_dict() == {
        "code": "word_changed",
        "region": "question",
        "detail": "'a' read as 'b'",
        "tokens": ["a@0"],
    }
    assert Reason("text_mismatch").as_dict() == {
        "code": "text_mismatch",
        "region": "",
        "detail": "",
    }
    assert np.all([isinstance(c, str) for c in ReasonCode])
