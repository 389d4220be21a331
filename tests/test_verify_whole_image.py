"""Whole-image audit (no layout): labels as OCR misreads them, boxed and wrapped options.

Scenes that draw options as buttons or cards (TV quiz, game console, web
page) and long options that wrap used to fail clean renders: tesseract read a
box's edges as brackets and dropped the label inside, and an option's second
line was not read as its own. Real Chromium renders of those cases must now
pass, and still fail when the wrapped part of an option is erased.
"""

from __future__ import annotations

import json
from dataclasses import replace

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.records import Layout
from itemshot.verify.checks.labels import word_label
from itemshot.verify.modes.whole_image import audit_image, remove_frames
from tests.conftest import SAMPLE_DATA

CASES = (  # (item, scene): what each one exercises
    ("en-bakery-long", "exam_sheet"),  # ten options, option C wraps onto a second line
    ("ja-quadratic", "tv_quiz"),  # formula options inside rounded buttons
    ("ja-circuit", "game_console"),  # Japanese stem, short options inside buttons
    ("en-rainfall", "game_console"),  # pale grey buttons on a white card
    ("en-symmetry", "webpage"),  # image-only options: a lone label in each card
    ("en-parabola", "whiteboard"),  # a superscript tesseract cannot read (x^2)
)


@given(
    letter=st.sampled_from(LETTERS),
    # A rule the label stands against may be read in front of its bracket: "\(A)", "|(A)".
    opening=st.sampled_from(["", "(", "((", "[", "‘(", "\\(", "|(", "/["]),
    closing=st.sampled_from([")", ".", ":", "]"]),
    rest=st.text(alphabet="Oslo0.5A", max_size=6),
)
def test_a_label_word_gives_its_letter_and_the_text_stuck_to_it(
    letter: str, opening: str, closing: str, rest: str
) -> None:
    assert word_label(f"{opening}{letter}{closing}{rest}") == (letter, rest)


def test_label_misreadings_are_read_and_ordinary_words_are_not() -> None:
    misread = {"(Cc)": "C", "(c)": "C", "(©)": "C", "(!)": "I", "(l)": "I", "(1)": "I"}
    assert {word: word_label(word) for word in misread} == {
        word: (letter, "") for word, letter in misread.items()
    }
    # A rule's glyph counts only in front of a bracket: "/A." and "\\B)" are no labels.
    for word in ("(Ab)", "(a)", "i.e.", "e.g.", "Oslo", "(12)", "x", "/A.", "\\B)"):
        assert word_label(word) is None, word


def test_box_outlines_are_painted_out_and_letters_and_ruled_lines_kept() -> None:
    page = np.full((300, 700), 255, np.uint8)
    cv2.rectangle(page, (40, 30), (660, 110), 120, 3)  # an option button's outline
    cv2.putText(page, "(A) Oslo", (70, 85), cv2.FONT_HERSHEY_SIMPLEX, 1.3, 0, 3)
    cv2.line(page, (20, 220), (680, 220), 0, 2)  # a ruled line with a word sitting on it
    cv2.putText(page, "Lima", (70, 220), cv2.FONT_HERSHEY_SIMPLEX, 1.3, 0, 3)
    cleaned = remove_frames(page)
    assert cleaned[30:33, 40:660].min() >= 250 and cleaned[30:110, 658:661].min() >= 250
    letters = page[40:100, 60:400] < 128
    assert (cleaned[40:100, 60:400][letters] < 128).all()
    ruled = page[190:225, :] < 128
    assert (cleaned[190:225, :][ruled] == page[190:225, :][ruled]).all()


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[np.ndarray, Layout]]:
    """Return each case's clean Chromium render and layout, by item id."""
    items = {item.id: item for item in load_dataset(SAMPLE_DATA).items}
    requests = [JobRequest(items[i], PresentationSpec(scene=s)) for i, s in CASES]
    out = tmp_path_factory.mktemp("whole-image")
    assert run_jobs(plan(requests, 0), out, RunSettings(workers=2)).failed == 0
    found = {}
    for sidecar in (out / "images").glob("*.json"):
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        pixels = np.asarray(Image.open(out / record["manifest"]["image"]).convert("RGB"))
        found[record["manifest"]["item_id"]] = (pixels, Layout.from_dict(record["layout"]))
    return found


def _item(item_id: str) -> Item:
    return next(item for item in load_dataset(SAMPLE_DATA).items if item.id == item_id)


@pytest.mark.slow
@pytest.mark.parametrize(("item_id", "scene"), CASES)
def test_clean_renders_with_boxed_or_wrapped_options_pass(
    renders: dict[str, tuple[np.ndarray, Layout]], item_id: str, scene: str
) -> None:
    pixels, _layout = renders[item_id]
    result = audit_image(pixels, _item(item_id))
    assert [(r.code, r.region, r.detail) for r in result.reasons] == []
    options = [r for r in result.regions if r.kind == "option"]
    assert len(options) == len(_item(item_id).options)


@pytest.mark.slow
def test_an_option_cut_after_its_first_line_fails(
    renders: dict[str, tuple[np.ndarray, Layout]],
) -> None:
    pixels, layout = renders["en-bakery-long"]
    x0, y0, x1, y1 = (round(v) for v in layout.region("option:C").box)
    line = (y1 - y0) // 2  # option C is two lines tall: erase the second
    cut = pixels.copy()
    paper = np.median(pixels[y0:y1, x0:x1].reshape(-1, 3), axis=0)  # mostly background
    cut[y0 + line : y1, x0:x1] = paper.astype(np.uint8)
    reasons = {(r.code, r.region) for r in audit_image(cut, _item("en-bakery-long")).reasons}
    assert ("text_mismatch", "option:C") in reasons


@pytest.mark.slow
def test_a_number_changed_inside_a_formula_fails(
    renders: dict[str, tuple[np.ndarray, Layout]],
) -> None:
    pixels, _layout = renders["ja-quadratic"]
    item = _item("ja-quadratic")
    assert "6 = 0" in item.question and item.options[3] == "$x = -1, 6$"
    changed = replace(
        item,
        question=item.question.replace("6 = 0", "9 = 0"),
        options=(*item.options[:3], "$x = -1, 8$"),
    )
    reasons = {(r.code, r.region, r.detail) for r in audit_image(pixels, changed).reasons}
    assert ("number_missing", "question", "in a formula: 9") in reasons
    assert ("number_missing", "option:D", "in a formula: 8") in reasons


@pytest.mark.slow
def test_a_changed_superscript_tesseract_cannot_read_fails(
    renders: dict[str, tuple[np.ndarray, Layout]],
) -> None:
    # tesseract reads no superscript ("az?"); the second engine reads the stem's lines and
    # shows ax^2 inline ("ax2"), so a source that now says ax^3 is contradicted.
    pixels, _layout = renders["en-parabola"]
    item = _item("en-parabola")
    assert "ax^2" in item.question
    assert audit_image(pixels, item).passed
    changed = replace(item, question=item.question.replace("ax^2", "ax^3"))
    reasons = {(r.code, r.region) for r in audit_image(pixels, changed).reasons}
    assert ("number_missing", "question") in reasons
