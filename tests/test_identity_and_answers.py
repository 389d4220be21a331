"""Option identity and answer types: what a reader cannot tell apart is one option; keys by type.

Options that differ only by characters that draw nothing (zero-width space,
joiners, soft hyphen, byte-order mark, direction marks) or by look-alike
characters (Cyrillic "А" for Latin "A") would show as the same option, so
the item is refused naming both. Answer keys are read by their type: a NaN
is missing, a number is an index and never an option's text, a boolean is
no key. Real files (JSONL, parquet written by pyarrow) go through
`itemshot.load` and `itemshot render`.
"""

from __future__ import annotations

import json
import math
import string
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import itemshot
from itemshot.factorial.design.option_sets import answer_check, inconsistencies, option_set
from itemshot.renderer.adapters import RawItem, build_item
from itemshot.renderer.identity import same_text, visible_form
from itemshot.renderer.items import Item, ItemError
from itemshot.renderer.output import read_jsonl
from tests.conftest import run_cli

QUESTION = "How many apples did the shop sell on Monday?"
NUMBERS = ["4501", "4510", "5401", "4015"]
# Characters that draw nothing: each beside the plain "4501" makes a second "4501".
INVISIBLE = {
    "zero-width-space": "\u200b",
    "zero-width-joiner": "\u200d",
    "word-joiner": "\u2060",
    "soft-hyphen": "\u00ad",
    "byte-order-mark": "\ufeff",
    "left-to-right-mark": "\u200e",
}
# Non-Cf default-ignorable characters (variation selector, grapheme joiner, Hangul filler, …).
OTHER_IGNORABLE = ["\ufe0f", "\u034f", "\u3164", "\u115f", "\u17b4", "\u180b", "\U000e0100"]
# (Latin, look-alike from another script)
HOMOGLYPHS = [
    ("A", "\u0410"),  # Cyrillic A
    ("B", "\u0412"),  # Cyrillic Ve
    ("C", "\u0421"),  # Cyrillic Es
    ("O", "\u041e"),  # Cyrillic O
    ("I", "\u0406"),  # Cyrillic Byelorussian-Ukrainian I
    ("a", "\u0430"),  # Cyrillic a
    ("p", "\u0440"),  # Cyrillic er
    ("v", "\u03bd"),  # Greek nu
    ("o", "\u03bf"),  # Greek omicron
]


def row(item_id: str, options: list[Any], answer: Any = "A", **fields: Any) -> dict[str, Any]:
    return {"id": item_id, "question": QUESTION, "options": options, "answer": answer} | fields


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def errors_of(items: itemshot.Items) -> dict[str, ItemError]:
    return {error.item_id: error for error in items.errors}


# --- the identity function --------------------------------------------------------------------


# No deadline: the first example also loads the confusables table; tests never time.
@settings(deadline=None)
@given(
    text=st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    char=st.one_of(st.characters(categories=("Cf",)), st.sampled_from(OTHER_IGNORABLE)),
    where=st.integers(min_value=0),
)
def test_a_character_that_draws_nothing_never_changes_identity(
    text: str, char: str, where: int
) -> None:
    at = where % (len(text) + 1)
    changed = text[:at] + char + text[at:]
    assert visible_form(changed) == visible_form(text)
    assert same_text(changed, text) and same_text(text, changed)


_ASCII = st.text(string.ascii_letters + string.digits + string.punctuation + " ", max_size=12)


@settings(deadline=None)
@given(a=_ASCII, b=_ASCII)
def test_distinct_ascii_texts_stay_distinct(a: str, b: str) -> None:
    """ "0"/"O", "1"/"l"/"I", "'"/"`" are different options; only spacing is folded."""
    assert same_text(a, b) == (a.split() == b.split())


@settings(deadline=None)
@given(
    text=st.text(string.ascii_letters + string.digits + " ", min_size=1, max_size=20),
    pair=st.sampled_from(HOMOGLYPHS),
    where=st.integers(min_value=0),
)
def test_a_look_alike_letter_is_the_same_option(
    text: str, pair: tuple[str, str], where: int
) -> None:
    latin, other = pair
    at = where % (len(text) + 1)
    plain = text[:at] + latin + text[at:]
    assert same_text(plain, text[:at] + other + text[at:])


@settings(deadline=None)
@given(
    text=st.text(st.characters(exclude_categories=("Cs",), exclude_characters="<"), max_size=30),
    char=st.sampled_from([*INVISIBLE.values(), *OTHER_IGNORABLE]),
    where=st.integers(min_value=0),
)
def test_an_invisible_difference_is_refused_by_the_item_check(
    text: str, char: str, where: int
) -> None:
    if not visible_form(text):
        text = "4501" + text
    at = where % (len(text) + 1)
    raw = RawItem(id="q", question=QUESTION, options=[text, text[:at] + char + text[at:]], answer=0)
    with pytest.raises(ItemError) as refused:
        build_item(raw, Path("."))
    assert refused.value.field == "options" and "options A" in refused.value.message


# --- options through the real loader ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_options_differing_by_an_invisible_character_are_refused(tmp_path: Path, name: str) -> None:
    char = INVISIBLE[name]
    rows = [
        row("good-before", NUMBERS),
        row(name, ["4510", f"4{char}501", "5401", "4501"]),
        row("good-after", NUMBERS, answer="D"),
    ]
    items = itemshot.load(write_jsonl(tmp_path / "data.jsonl", rows))
    assert [item.id for item in items] == ["good-before", "good-after"]
    [error] = items.errors
    assert (error.item_id, error.field) == (name, "options")
    escape = f"\\u{ord(char):04x}"
    assert f"options B '4{escape}501' and D '4501' would look the same" in error.message
    assert f"U+{ord(char):04X}" in error.message and "draws nothing" in error.message


def test_look_alike_and_compatibility_options_are_refused(tmp_path: Path) -> None:
    rows = [
        row("cyrillic", ["\u0410BC", "ABD", "ABC", "ACD"]),
        row("greek", ["v = 2", "\u03bd = 2", "v = 3", "v = 4"]),
        row("fullwidth", ["\uff14\uff15\uff10\uff11", "4510", "4501", "5401"]),
        row("minus", ["\u22125", "5", "-5", "0"]),
        row("good", NUMBERS),
    ]
    items = itemshot.load(write_jsonl(tmp_path / "data.jsonl", rows))
    assert [item.id for item in items] == ["good"]
    errors = errors_of(items)
    assert {e.field for e in errors.values()} == {"options"}
    assert errors["cyrillic"].message.startswith("options A '\\u0410BC' and C 'ABC'")
    assert "U+0410 CYRILLIC CAPITAL LETTER A looks like 'A'" in errors["cyrillic"].message
    assert "options A 'v = 2' and B '\\u03bd = 2'" in errors["greek"].message
    assert "FULLWIDTH DIGIT FOUR is a form of '4'" in errors["fullwidth"].message
    assert errors["fullwidth"].message.startswith("options A '\\uff14\\uff15\\uff10\\uff11' and C")
    assert "U+2212 MINUS SIGN looks like '-'" in errors["minus"].message


def test_distinct_ascii_and_meaningful_joiners_still_load(tmp_path: Path) -> None:
    rows = [
        row("zero-and-oh", ["0", "O", "o", "Q"]),
        row("one-ell-eye", ["1", "l", "I", "|"]),
        row("quotes", ["it's", "it`s", "its", "it s"]),
        # ZWNJ is part of Persian spelling; one option holding it is fine.
        row("persian", ["می\u200cخواهم", "خواهم", "می", "نه"]),
    ]
    items = itemshot.load(write_jsonl(tmp_path / "data.jsonl", rows))
    assert not items.errors
    assert items[3].options[0] == "می\u200cخواهم"  # the text renders as the dataset has it


def test_an_option_of_invisible_characters_only_is_empty(tmp_path: Path) -> None:
    rows = [row("blank", ["4501", "\u200b\u2060", "5401"]), row("good", NUMBERS)]
    items = itemshot.load(write_jsonl(tmp_path / "data.jsonl", rows))
    [error] = items.errors
    assert (error.item_id, error.field, error.message) == ("blank", "options", "option B is empty")


def test_the_original_four_option_set_is_checked_alike() -> None:
    mix = {
        "id": "mix-1",
        "question": QUESTION,
        "options": ["4501", "45\u200b01", "5401", "4015"],
        "answer": "A",
        "shuffled_options": NUMBERS,
        "shuffled_options_answer": "A",
    }
    items = itemshot.load([mix])
    [error] = items.errors
    assert (error.item_id, error.field) == ("mix-1", "options_4")


def test_answer_text_is_matched_by_identity(tmp_path: Path) -> None:
    rows = [
        row("zwsp-key", NUMBERS, answer="45\u200b10"),
        row("fullwidth-letter", NUMBERS, answer="\uff23"),
        row("cyrillic-letter", NUMBERS, answer="\u0412"),
        row("invisible-key", NUMBERS, answer="\u200b"),
    ]
    items = itemshot.load(write_jsonl(tmp_path / "data.jsonl", rows))
    assert {item.id: item.answer_letter for item in items} == {
        "zwsp-key": "B",
        "fullwidth-letter": "C",
    }
    errors = errors_of(items)
    assert errors["cyrillic-letter"].field == "answer"
    assert (
        "CYRILLIC CAPITAL LETTER VE looks like the letter 'B'" in errors["cyrillic-letter"].message
    )
    assert (errors["invisible-key"].field, errors["invisible-key"].message) == (
        "answer",
        "is empty; every item needs its answer key",
    )


def test_option_sets_compare_options_by_the_same_identity() -> None:
    """The 4-option set's "4\u200b501" is the 10-option set's "4501", not a missing distractor."""
    item = Item(
        id="sets",
        question=QUESTION,
        options=("4501", "4510", "5401", "4015", "1054", "1045"),
        answer=1,
        options_4=("4\u200b501", "\uff14\uff15\uff11\uff10", "5401", "4015"),
        answer_4=1,
    )
    assert [p.kind for p in inconsistencies(item)] == ["answer_text_format"]
    assert answer_check(item, option_set(item, 4, 0)) == "normalised"


# --- answer types through parquet ---------------------------------------------------------------

OPTIONS = ["10", "2", "30", "40"]  # option B's text is "2": an answer 2 must not pick it


def write_parquet(path: Path, ids: list[str], answers: pa.Array) -> Path:
    table = pa.table(
        {
            "id": ids,
            "question": [QUESTION] * len(ids),
            "options": pa.array([OPTIONS] * len(ids), pa.list_(pa.string())),
            "answer": answers,
        }
    )
    pq.write_table(table, path)
    return path


def test_float_answers_nan_is_missing_and_whole_numbers_are_indices(tmp_path: Path) -> None:
    """An integer column with gaps, as pandas writes it: float64 with NaN."""
    ids = ["f-nan", "f-two", "f-half", "f-zero", "f-inf"]
    answers = pa.array([math.nan, 2.0, 1.5, 0.0, math.inf], pa.float64())
    items = itemshot.load(write_parquet(tmp_path / "floats.parquet", ids, answers))
    assert {item.id: item.answer_letter for item in items} == {"f-two": "C", "f-zero": "A"}
    errors = errors_of(items)
    assert {(e.item_id, e.field) for e in errors.values()} == {
        ("f-nan", "answer"),
        ("f-half", "answer"),
        ("f-inf", "answer"),
    }
    assert errors["f-nan"].message == "is missing (NaN); every item needs its answer key"
    assert errors["f-half"].message.startswith("1.5 is not a whole number")


def test_nan_never_becomes_the_option_text_nan(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": ["nan-option", "good"],
            "question": [QUESTION, QUESTION],
            "options": [["1", "nan", "3"], ["1", "2", "3"]],
            "answer": pa.array([math.nan, 1.0], pa.float64()),
        }
    )
    pq.write_table(table, tmp_path / "data.parquet")
    items = itemshot.load(tmp_path / "data.parquet")
    assert [(item.id, item.answer) for item in items] == [("good", 1)]
    [error] = items.errors
    assert (error.item_id, error.field) == ("nan-option", "answer")
    assert "missing (NaN)" in error.message


def test_integer_answers_are_zero_based_indices_never_option_text(tmp_path: Path) -> None:
    ids = ["i-two", "i-null", "i-seven", "i-negative", "i-one", "i-zero"]
    answers = pa.array([2, None, 7, -1, 1, 0], pa.int64())
    items = itemshot.load(write_parquet(tmp_path / "ints.parquet", ids, answers))
    # 2 is option C ("30"), not option B whose text is "2".
    assert {item.id: item.answer_letter for item in items} == {
        "i-two": "C",
        "i-one": "B",
        "i-zero": "A",
    }
    errors = errors_of(items)
    assert {(e.item_id, e.field) for e in errors.values()} == {
        ("i-null", "answer"),
        ("i-seven", "answer"),
        ("i-negative", "answer"),
    }
    assert "missing (no value)" in errors["i-null"].message
    assert errors["i-seven"].message.startswith("index 7 is outside the 4 options (0–3")
    assert "answer_format=index1" in errors["i-seven"].message


def test_integer_answers_follow_the_answer_format(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "ints.parquet", ["a", "b"], pa.array([2, 4], pa.int64()))
    one_based = itemshot.load(path, mapping={"answer_format": "index1"})
    assert [item.answer_letter for item in one_based] == ["B", "D"]
    as_text = itemshot.load(path, mapping={"answer_format": "text"})
    assert not list(as_text)
    assert {(e.item_id, e.field) for e in as_text.errors} == {("a", "answer"), ("b", "answer")}
    assert "with answer_format=text it must be an option's text" in as_text.errors[0].message


def test_boolean_answers_are_refused(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "bools.parquet", ["yes", "no"], pa.array([True, False]))
    items = itemshot.load(path)
    assert not list(items)
    assert [(e.item_id, e.field) for e in items.errors] == [("yes", "answer"), ("no", "answer")]
    assert "true/false" in items.errors[0].message


def test_text_answers_letters_and_option_text(tmp_path: Path) -> None:
    ids = ["s-letter", "s-null", "s-empty", "s-text", "s-other"]
    answers = pa.array(["C", None, " ", "2", "7"], pa.string())
    items = itemshot.load(write_parquet(tmp_path / "text.parquet", ids, answers))
    # Text is text: "2" is option B's text (a typed number would be an index).
    assert {item.id: item.answer_letter for item in items} == {"s-letter": "C", "s-text": "B"}
    errors = errors_of(items)
    assert {(e.item_id, e.field) for e in errors.values()} == {
        ("s-null", "answer"),
        ("s-empty", "answer"),
        ("s-other", "answer"),
    }


def test_numpy_answers_in_memory_follow_the_same_rule() -> None:
    rows = [
        row("np-int", OPTIONS, answer=np.int64(2)),
        row("np-nan", OPTIONS, answer=np.float64("nan")),
        row("np-bool", OPTIONS, answer=np.bool_(True)),
        row("np-float", OPTIONS, answer=np.float32(1.0)),
    ]
    items = itemshot.load(rows)
    assert {item.id: item.answer_letter for item in items} == {"np-int": "C", "np-float": "B"}
    assert {(e.item_id, e.field) for e in items.errors} == {
        ("np-nan", "answer"),
        ("np-bool", "answer"),
    }


# --- the command line -------------------------------------------------------------------------

FLAGS = ("--scene", "plain", "--no-progress", "--no-verify")


def rendered(out: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    manifest = {r["item_id"]: r for r in read_jsonl(out / "manifest.jsonl")}
    return manifest, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_render_parquet_refuses_the_bad_rows_and_renders_the_rest(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": ["good", "nan-answer", "zwsp-options", "int-answer"],
            "question": [QUESTION] * 4,
            "options": [OPTIONS, OPTIONS, ["10", "2\u200b0", "20", "40"], OPTIONS],
            "answer": pa.array([1.0, math.nan, 0.0, 2.0], pa.float64()),
        }
    )
    pq.write_table(table, tmp_path / "data.parquet")
    status = run_cli("render", tmp_path / "data.parquet", "--out", tmp_path / "out", *FLAGS)
    assert status == 3
    manifest, summary = rendered(tmp_path / "out")
    assert manifest["good"]["status"] == "ok" and manifest["good"]["answer"] == "B"
    assert manifest["int-answer"]["status"] == "ok" and manifest["int-answer"]["answer"] == "C"
    assert (tmp_path / "out" / manifest["int-answer"]["image"]).is_file()
    failed = {f["item_id"]: f for f in summary["failed_items"]}
    assert {k: (f["field"], f["reason"]) for k, f in failed.items()} == {
        "nan-answer": ("answer", "invalid_item"),
        "zwsp-options": ("options", "invalid_item"),
    }
    error = manifest["zwsp-options"]["error"]
    assert manifest["zwsp-options"]["status"] == "failed" and error["field"] == "options"
    assert "options B '2\\u200b0' and C '20' would look the same" in error["message"]


def test_render_jsonl_refuses_look_alike_options_and_renders_the_rest(tmp_path: Path) -> None:
    rows = [
        row("good-1", NUMBERS),
        row("cyrillic", ["\u0421AT", "DOG", "CAT", "COW"], answer="C"),
        row("good-2", ["0", "O", "1", "l"], answer="B"),
    ]
    dataset = write_jsonl(tmp_path / "data.jsonl", rows)
    status = run_cli("render", dataset, "--out", tmp_path / "out", *FLAGS)
    assert status == 3
    manifest, summary = rendered(tmp_path / "out")
    assert manifest["good-1"]["status"] == manifest["good-2"]["status"] == "ok"
    [failure] = summary["failed_items"]
    assert (failure["item_id"], failure["field"]) == ("cyrillic", "options")
    assert "options A '\\u0421AT' and C 'CAT'" in failure["message"]
    assert "CYRILLIC CAPITAL LETTER ES looks like 'C'" in failure["message"]
