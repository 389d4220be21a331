"""The item-side defect builders make the edit they claim, and only that edit.

Pure text level, on real MMMU-Pro mix items (outside the verifier's tuning
and held-out sets) and one constructed item: each edit changes one span of
one field into what its kind says (an antonym, a dropped negation, another
digit inside a formula, another unit prefix), leaves every other field and
the figure tags alone, and is the same on every call with the same seed.
"""

from __future__ import annotations

import re

import pytest

from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.items import LETTERS, Item
from itemshot.renderer.jobs import JobRequest, make_job
from itemshot.renderer.markup import Math, parse_inline
from itemshot.renderer.presentation import PresentationSpec
from tests import defects
from tests.conftest import ROOT
from tests.item_edits import ANTONYMS, EDIT_KINDS, PREFIX_SWAPS, Edit, edit_item

# Two verbatim mix rows the verifier's split leaves unused.
MIX = ROOT / "tests" / "data" / "mmmu-pro" / "mix" / "edit_items.jsonl"
PIPE = "test_Mechanical_Engineering_382"  # "at least 11 m^3/h … the maximum roughness", formulas
ISOTOPES = "test_Chemistry_287"  # "Choose the group that does NOT contain isotopes …"

CONSTRUCTED = Item(
    id="constructed",
    question="Which solution is NOT at 1.00 M after the $2^{3}$ dilution shown in <image 1>?",
    options=("$s^{2}$", "the left beaker", "2.5 kg of salt", "none of them"),
    answer=0,
)


@pytest.fixture(scope="module")
def mix() -> dict[str, Item]:
    """Return the two mix items the tests edit (figures as placeholders)."""
    return {i.id: i for i in load_dataset(MIX, missing_images="placeholder").items}


def _field(item: Item, field: str) -> str:
    return item.question if field == "question" else item.options[LETTERS.index(field[-1])]


def _fields(item: Item) -> dict[str, str]:
    return {
        "question": item.question,
        **{f"option:{LETTERS[i]}": o for i, o in enumerate(item.options)},
    }


def _check_one_span(original: Item, edit: Edit) -> None:
    """The edit replaced `old` at `start` by `new` in its field, and changed nothing else."""
    before = _field(original, edit.field)
    assert before[edit.start : edit.start + len(edit.old)] == edit.old
    after = before[: edit.start] + edit.new + before[edit.start + len(edit.old) :]
    assert _field(edit.item, edit.field) == after != before
    others = {k: v for k, v in _fields(original).items() if k != edit.field}
    assert others == {k: v for k, v in _fields(edit.item).items() if k != edit.field}
    assert (edit.item.id, edit.item.answer) == (original.id, original.answer)
    assert re.findall(r"<image\s*\d+>", after) == re.findall(r"<image\s*\d+>", before)


def _formulas(text: str) -> list[str]:
    return [s.latex for s in parse_inline(text) if isinstance(s, Math)]


def test_word_changed_swaps_a_meaning_word_for_its_opposite(mix: dict[str, Item]) -> None:
    """ "least" in the stem becomes "most"; the constructed stem's "left"-free words the same way."""
    item = mix[PIPE]
    edit = edit_item(item, "word_changed")
    assert edit is not None and edit.field == "question"
    _check_one_span(item, edit)
    assert edit.old.lower() in ANTONYMS and ANTONYMS[edit.old.lower()] == edit.new.lower()
    assert edit.old in ("least", "maximum")  # the stem's two meaning words
    assert {edit_item(item, "word_changed", seed).old for seed in range(8)} == {"least", "maximum"}
    upper = Item("u", "Which is the MOST likely cause?", ("a", "b"), 0)
    shouted = edit_item(upper, "word_changed", seed=3)
    assert shouted is not None and shouted.new.isupper()
    assert shouted.new.lower() == ANTONYMS[shouted.old.lower()]


def test_negation_dropped_removes_the_not(mix: dict[str, Item]) -> None:
    """'does NOT contain' becomes 'does contain'; an item without a negation gets no edit."""
    item = mix[ISOTOPES]
    edit = edit_item(item, "negation_dropped")
    assert edit is not None
    _check_one_span(item, edit)
    assert (edit.field, edit.old, edit.new) == ("question", "NOT ", "")
    assert "does contain isotopes" in edit.item.question
    assert edit_item(Item("n", "What is shown?", ("one", "two"), 0), "negation_dropped") is None


def test_formula_digit_changes_a_digit_inside_math_only(mix: dict[str, Item]) -> None:
    """One digit of one formula differs; the text outside every formula is unchanged."""
    for item in (mix[PIPE], CONSTRUCTED):
        edit = edit_item(item, "formula_digit")
        assert edit is not None
        _check_one_span(item, edit)
        assert edit.old.isdigit() and edit.new.isdigit() and edit.old != edit.new
        before, after = _field(item, edit.field), _field(edit.item, edit.field)
        changed = [
            (a, b) for a, b in zip(_formulas(before), _formulas(after), strict=True) if a != b
        ]
        assert len(changed) == 1
        assert re.sub(r"\$[^$]*\$", "", before) == re.sub(r"\$[^$]*\$", "", after)


def test_unit_prefix_changes_the_unit_after_a_number() -> None:
    """'1.00 M' or '2.5 kg' takes another prefix ('mM', 'g'); units inside math are left alone."""
    seen = set()
    for seed in range(12):
        edit = edit_item(CONSTRUCTED, "unit_prefix", seed)
        assert edit is not None
        _check_one_span(CONSTRUCTED, edit)
        assert PREFIX_SWAPS[edit.old] == edit.new
        assert re.search(r"\d\s?$", _field(CONSTRUCTED, edit.field)[: edit.start])
        seen.add((edit.field, edit.old, edit.new))
    assert seen == {("question", "M", "mM"), ("option:C", "kg", "g")}


def test_edits_are_seeded_per_item_and_kind(mix: dict[str, Item]) -> None:
    """The same (seed, item, kind) gives the same edit; the item's other kinds do not move it."""
    for kind in EDIT_KINDS:
        first = edit_item(CONSTRUCTED, kind, seed=5)
        assert first is not None, kind
        assert edit_item(CONSTRUCTED, kind, seed=5) == first


def test_edited_request_keeps_the_job_seed_and_presentation() -> None:
    """The edited item's job has the original's seed and resolved look; only its key differs."""
    request = JobRequest(CONSTRUCTED, PresentationSpec(scene="random", font_style="random"))
    made = defects.edited_request(request, "negation_dropped", seed=1)
    assert made is not None
    edited, edit = made
    original_job, edited_job = make_job(request, 7), make_job(edited, 7)
    assert edited_job.seed == original_job.seed
    assert edited_job.presentation == original_job.presentation
    assert edited_job.key != original_job.key
    assert edited_job.item.question == edit.item.question
    assert "NOT" not in edited_job.item.question
