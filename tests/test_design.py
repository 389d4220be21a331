"""Design files, option sets and balance checks on the MMMU-Pro mix fixture (no rendering)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from itemshot.factorial.design.balance import balance_report
from itemshot.factorial.design.conditions import expand
from itemshot.factorial.design.controller import plan_sweep
from itemshot.factorial.design.design import (
    Design,
    DesignError,
    load_design,
    parse_design,
    with_dataset,
)
from itemshot.factorial.design.option_sets import (
    AS_IS,
    ORIGINAL_4,
    SEEDED,
    answer_check,
    inconsistencies,
    normalise_option,
    option_set,
)
from itemshot.renderer.adapters import Dataset, load_dataset
from itemshot.renderer.items import Item
from itemshot.renderer.sample import sample_jsonl
from tests.conftest import MIX_DATA as MIX

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ROOT / "designs"

# Rows of the mix file whose 10-option set repeats an option (the adapter refuses them).
DUPLICATE_OPTION_ITEMS = {
    "test_Pharmacy_140",
    "validation_Computer_Science_12",
    "validation_Basic_Medical_Science_1",
    "test_Computer_Science_61",
    "validation_Geography_1",
    "validation_Music_13",
    "validation_Mechanical_Engineering_7",
    "test_Finance_96",
    "validation_Electronics_13",
}
# Answer text of the original (4-option) set differs from the 10-option set's.
ANSWER_TEXT_DIFFERS = {"test_Electronics_16"}
# ... only by `$` math delimiters.
ANSWER_TEXT_FORMAT_ONLY = {"test_Electronics_247", "test_Electronics_68"}
# A distractor of the original set is missing from the 10-option set.
DISTRACTOR_MISSING = {
    "test_Psychology_15",
    "test_Computer_Science_227",
}


@pytest.fixture(scope="module")
def mix() -> Dataset:
    """Return the 1,730-row MMMU-Pro mix file, figures as placeholders."""
    return load_dataset(MIX, missing_images="placeholder")


@pytest.fixture(scope="module")
def design_2x2() -> Design:
    """Return the shipped 2x2 design."""
    return load_design(DESIGNS / "mmmu_pro_2x2.yaml")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "design.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_mix_fixture_loads_all_but_the_duplicate_option_rows(mix: Dataset) -> None:
    assert len(mix.entries) == 1730
    assert {error.item_id for error in mix.errors} == DUPLICATE_OPTION_ITEMS
    assert all(error.field == "options" and "identical" in error.message for error in mix.errors)
    assert len(mix.items) == 1721


def test_answer_text_is_identical_across_sets_for_every_item(mix: Dataset) -> None:
    differs: set[str] = set()
    format_only: set[str] = set()
    for item in mix.items:
        four, ten = option_set(item, 4, 0), option_set(item, 10, 0)
        assert four.policy == ORIGINAL_4 and ten.policy == AS_IS
        assert ten.answer_text == item.options[item.answer]
        check = answer_check(item, four)
        if check == "differs":
            differs.add(item.id)
        elif check == "normalised":
            format_only.add(item.id)
    assert differs == ANSWER_TEXT_DIFFERS
    assert format_only == ANSWER_TEXT_FORMAT_ONLY
    found = {(p.item_id, p.kind) for item in mix.items for p in inconsistencies(item)}
    assert {i for i, kind in found if kind == "answer_text"} == ANSWER_TEXT_DIFFERS
    assert {i for i, kind in found if kind == "answer_text_format"} == ANSWER_TEXT_FORMAT_ONLY
    assert {i for i, kind in found if kind == "distractor_not_in_larger_set"} == DISTRACTOR_MISSING


def test_seeded_distractors_keep_the_answer_and_reletter(mix: Dataset) -> None:
    ten = [item for item in mix.items if len(item.options) == 10]
    for item in ten[:200]:
        bare = dataclasses.replace(item, options_4=None, answer_4=None)
        chosen = option_set(bare, 4, 7)
        assert chosen.policy == SEEDED and len(chosen.options) == 4
        assert chosen.answer_text == item.options[item.answer]
        assert set(chosen.options) <= set(item.options)
        assert chosen == option_set(bare, 4, 7)
    letters = {option_set(dataclasses.replace(i, options_4=None), 4, 7).answer_letter for i in ten}
    assert letters == {"A", "B", "C", "D"}


def test_normalise_option_folds_space_and_math_delimiters() -> None:
    assert normalise_option("$x  + 1$.") == normalise_option("x + 1.")


def test_shipped_designs_validate() -> None:
    names = {path.stem for path in DESIGNS.glob("*.yaml")}
    assert {"mmmu_pro_2x2", "controls", "presentation_ablation"} <= names
    for path in DESIGNS.glob("*.yaml"):
        design = load_design(path)
        # A fresh checkout has no dataset beside it: shipped designs read the embedded sample.
        assert design.dataset.path == sample_jsonl() and design.dataset.path.is_file(), path
        assert load_dataset(design.dataset.path).items, path


def test_dataset_given_apart_from_the_design_replaces_only_the_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = load_design(DESIGNS / "mmmu_pro_2x2.yaml")
    monkeypatch.chdir(MIX.parent)
    mixed = with_dataset(shipped, MIX.name)  # relative to the current directory
    assert mixed.dataset.path.resolve() == MIX
    assert mixed.dataset.missing_images == shipped.dataset.missing_images == "placeholder"
    assert dataclasses.replace(mixed, dataset=shipped.dataset) == shipped
    assert with_dataset(mixed, "itemshot:sample").dataset == shipped.dataset
    hub = with_dataset(shipped, "MMMU/MMMU_Pro")  # no such folder here: a Hub id
    assert hub.dataset.path == Path("MMMU/MMMU_Pro")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("dataset: {path: x.jsonl}\nfactors: {format: [visoin]}", "factors.format"),
        ("dataset: {path: x.jsonl}\nfactors: {n_options: [5]}", "factors.n_options"),
        ("dataset: {path: x.jsonl}\nfactors: {scene: [moon]}", "factors.scene"),
        ("dataset: {path: x.jsonl}\nfactors: {font_size: [2]}", "factors.font_size"),
        ("dataset: {path: x.jsonl}\nfactors: {shoe: [1]}", "factors.shoe"),
        ("dataset: {path: x.jsonl}\ndesign: fractional", "design"),
        ("dataset: {path: x.jsonl}\nseed: one", "seed"),
        ("dataset: {path: x.jsonl, missing_images: skip}", "dataset.missing_images"),
        ("dataset: {path: x.jsonl}\ncolour: red", "colour"),
        ("factors: {}", "dataset"),
        (
            "dataset: {path: x.jsonl}\nfactors: {scene: [webpage]}\nreference: {scene: tv_quiz}",
            "reference.scene",
        ),
        (
            "dataset: {path: x.jsonl}\npresentation: {scene: webpage}\nfactors: {scene: [webpage]}",
            "presentation.scene",
        ),
        ("dataset: {path: x.jsonl}\ngroups: [0]", "groups"),
    ],
)
def test_design_errors_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(DesignError) as caught:
        load_design(_write(tmp_path, text))
    assert caught.value.key == key
    assert f"key {key!r}" in str(caught.value)


def test_design_defaults_and_relative_dataset_path(tmp_path: Path) -> None:
    design = load_design(_write(tmp_path, "dataset: {path: data/x.jsonl}"))
    assert design.dataset.path == tmp_path / "data" / "x.jsonl"
    assert design.factors == (("format", ("vision",)), ("n_options", ("all",)))
    assert design.type == "full" and design.name == "design"


def _small_items(mix: Dataset, count: int) -> list[Item]:
    return mix.items[:count]


def test_full_and_one_at_a_time_cells(mix: Dataset) -> None:
    raw = {
        "dataset": {"path": str(MIX)},
        "design": "one_at_a_time",
        "factors": {
            "format": ["vision"],
            "scene": ["exam_sheet", "webpage", "tv_quiz"],
            "font_size": [22, 30],
        },
    }
    design = parse_design(raw, ROOT)
    cells = expand(design, _small_items(mix, 3))
    per_item = [c.condition for c in cells if c.item.id == mix.items[0].id]
    assert per_item[0] == {
        "format": "vision",
        "n_options": "all",
        "scene": "exam_sheet",
        "font_size": 22,
    }
    assert len(per_item) == 1 + 2 + 1
    full = expand(dataclasses.replace(design, type="full"), _small_items(mix, 3))
    assert len(full) == 3 * 6


def test_text_rows_are_deduplicated_across_presentation_levels(mix: Dataset) -> None:
    raw = {
        "dataset": {"path": str(MIX), "missing_images": "placeholder"},
        "factors": {
            "format": ["standard", "vision"],
            "n_options": [4],
            "scene": ["exam_sheet", "webpage"],
        },
    }
    design = parse_design(raw, ROOT)
    small = Dataset(mix.path, mix.format, tuple(_small_items(mix, 5)))
    plan = plan_sweep(design, small)
    assert len(plan.cells) == 5 * 4
    assert len(plan.jobs) == 5 * 2
    assert len(plan.rows) == 5 * 3
    text = [row for row in plan.rows if row.job is None]
    assert all(row.condition == {"format": "standard", "n_options": 4} for row in text)
    assert all(row.extra["scene"] is None for row in text)


@pytest.mark.parametrize("design_type", ["balanced", "latin_square"])
def test_balanced_designs_pass_their_checks_on_the_mix(
    mix: Dataset, design_2x2: Design, design_type: str
) -> None:
    factors = design_2x2.factors
    if design_type == "balanced":
        factors = (*factors, ("scene", ("exam_sheet", "webpage", "tv_quiz")))
    design = dataclasses.replace(design_2x2, type=design_type, factors=factors)
    cells = expand(design, mix.items)
    report = balance_report(design.type, design.factors, cells, design.seed)
    assert report.passed, report.as_dict()
    for factor in report.factors:
        assert factor.max_spread_within_subject <= 1
        assert factor.p_subject is not None and factor.p_subject >= 0.05
    if design_type == "balanced":
        assert len(cells) == len(mix.items)
        by_name = {f.factor: f for f in report.factors}
        assert by_name["scene"].p_letter is not None and by_name["scene"].p_letter >= 0.05
        assert by_name["format"].p_letter is not None and by_name["format"].p_letter >= 0.05
    else:
        assert len(cells) == len(mix.items) * 4
        assert "every item sees every condition exactly once" in report.notes


def test_balance_check_fails_on_an_unbalanced_assignment(mix: Dataset, design_2x2: Design) -> None:
    design = dataclasses.replace(design_2x2, type="balanced")
    cells = expand(design, mix.items)
    skewed = [
        dataclasses.replace(c, condition={**c.condition, "format": "vision"})
        if c.item.subject == "Music"
        else c
        for c in cells
    ]
    report = balance_report(design.type, design.factors, skewed, design.seed)
    assert not report.passed
    assert {f.factor: f.passed for f in report.factors}["format"] is False
