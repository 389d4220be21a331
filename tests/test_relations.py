"""Comparisons: options that differ only in a relation ("q = 0" and "q > 0") are two answers.

With them, the token checks whose look-alikes were measured in the same round: scripts of
one base, upright strokes in codes, negative numbers.

String tests of the relation tokens and their judgment, then real Chromium
renders read by real tesseract (and the second engine): an image whose
options show each other's comparison fails in region and whole-image mode,
and the clean render passes.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.records import Layout
from itemshot.verify.checks import relations
from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.scoring import score_option
from itemshot.verify.checks.tokens import (
    contradicted_formula_scripts,
    leading_number,
    missing_numbers,
)
from itemshot.verify.modes.regions import verify_image
from itemshot.verify.modes.whole_image import audit_image
from itemshot.verify.page.images import load_rgb
from itemshot.verify.reading.text import word_recall
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS
from itemshot.verify.verdicts import ReasonCode, Verdict

# --- tokens and judgments, on strings -------------------------------------------------------


def test_a_relation_is_its_symbol_with_one_glyph_each_side() -> None:
    assert relations.relations("q = 0, w > 0, x <= -1") == ["q=0", "w>0", "x≤-1"]
    # A formula's commands are no glyphs: `\Delta U` is drawn "ΔU", compared at "U".
    assert relations.relations("\n", ["\\Delta U \\geq 0", "a \\neq b"]) == ["U≥0", "a≠b"]
    # No operand on one side: a value to find, an arrow.
    assert relations.relations("n = ? and A -> B") == []


def test_a_reading_with_another_relation_between_the_same_operands_changes_it() -> None:
    assert relations.changed("q = 0, w > 0", (), "q > 0, w > 0") == {"q=0": "q>0"}
    assert relations.changed("\n", ("\\Delta U > 0",), "AU <0") == {"U>0": "U<0"}


def test_a_symbol_read_as_no_relation_or_as_a_lookalike_is_no_evidence() -> None:
    assert relations.changed("q = 0", (), "q - 0") == {}  # unread: neither shown nor changed
    assert relations.changed("x ≥ 2", (), "x > 2") == {}  # the underline lost
    assert relations.changed("x ≤ 2", (), "x < 2") == {}


def test_a_rival_the_source_itself_shows_elsewhere_is_no_evidence() -> None:
    # "U>0" unread in its place, "U<0" read where the source has it too.
    assert (
        relations.changed(
            "U > 0 when heated, U < 0 when cooled", (), "U 0 when heated, U<0 when cooled"
        )
        == {}
    )


def test_a_relation_finding_is_settled_only_by_a_reading_that_shows_the_source() -> None:
    option = Field("option:D", "q = 0, w > 0", (), (), "D")
    (reason,) = [
        r
        for r in score_option(option, "(D) q > 0, w > 0", DEFAULT_THRESHOLDS, "", "ABCD").reasons
        if r.code == ReasonCode.RELATION_CHANGED
    ]
    assert (reason.tokens, reason.detail) == (("q=0",), "'q=0' read as 'q>0'")
    assert not relations.shown("q=0", ["q>0, w>0", "q 0, w>0"])
    assert relations.shown("q=0", ["q>0, w>0", "q=0, w>0"])


# --- real renders ---------------------------------------------------------------------------

ITEM = Item(
    id="relations",
    question=(
        "An ideal gas expands into an evacuated vessel through an open stopcock; the walls are "
        "adiabatic. Which values of heat q, work w and internal energy change hold?"
    ),
    options=(
        "q = 0, w > 0, ΔU = 0",
        "q > 0, w = 0, ΔU > 0",
        "q = 0, w = 0, ΔU = 0",
        "q > 0, w > 0, ΔU = 0",
    ),
    answer=2,
)
SWAPPED = replace(ITEM, options=(ITEM.options[3], *ITEM.options[1:3], ITEM.options[0]))
FACES = ("regular", "handwritten")


def _verify_in_each_face(
    out: Path, item: Item, swapped: Item
) -> dict[str, tuple[Verdict, Verdict]]:
    """Render `item` in each face; verify each image against it and against `swapped`."""
    requests = [
        JobRequest(
            replace(item, id=f"{item.id}-{face}"), PresentationSpec(scene="plain", font_style=face)
        )
        for face in FACES
    ]
    summary = run_jobs(plan(requests, 0), out, RunSettings(workers=1))
    assert summary.failed == 0
    found: dict[str, tuple[Verdict, Verdict]] = {}
    for row in read_jsonl(out / "manifest.jsonl"):
        face = row["item_id"].removeprefix(f"{item.id}-")
        image = load_rgb(out / row["image"])
        sidecar = json.loads((out / row["image"]).with_suffix(".json").read_text(encoding="utf-8"))
        layout, render = Layout.from_dict(sidecar["layout"]), sidecar["render"]
        for name, source in (("clean", item), ("swapped", swapped)):
            region = verify_image(image, source, layout, render=render)
            found[f"{name}-{face}"] = (region, audit_image(image, source))
    return found


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Verdict, Verdict]]:
    """The relations item in each face, verified against itself and against its swap."""
    return _verify_in_each_face(tmp_path_factory.mktemp("relations"), ITEM, SWAPPED)


def _relation_tokens(verdict: Verdict) -> set[str]:
    return {t for r in verdict.reasons if r.code == ReasonCode.RELATION_CHANGED for t in r.tokens}


@pytest.mark.slow
@pytest.mark.parametrize("face", FACES)
def test_options_showing_each_others_comparison_fail_in_both_modes(
    verdicts: dict, face: str
) -> None:
    for verdict in verdicts[f"swapped-{face}"]:
        assert {r.region for r in verdict.reasons} == {"option:A", "option:D"}, verdict.reasons
    # Region mode names the comparison each swapped option shows otherwise.
    region, whole = verdicts[f"swapped-{face}"]
    assert _relation_tokens(region) == {"q=0", "q>0"}, region.reasons
    if face == "regular":
        assert _relation_tokens(whole) == {"q=0", "q>0"}, whole.reasons
    # In the handwriting face the page reading takes "q" for "4", so no operand is matched
    # there: the options fail on their short text, which no reading in place shows either.


@pytest.mark.slow
@pytest.mark.parametrize("face", FACES)
def test_the_clean_render_shows_every_relation(verdicts: dict, face: str) -> None:
    for verdict in verdicts[f"clean-{face}"]:
        assert not _relation_tokens(verdict), (verdict.mode, verdict.reasons)
        assert verdict.passed, (verdict.mode, verdict.reasons)


# --- the token checks these tests rely on beside relations -----------------------------------


def test_a_script_read_as_a_sibling_of_the_same_base_contradicts_nothing() -> None:
    # "L1, L2, L3" read "Li, Lz, Ls" and "L4" read right: the 4 after "L" is the source's own.
    formulas = ["L_{1}", "L_{2}", "L_{3}", "L_{4}"]
    assert contradicted_formula_scripts(formulas, "Li, Lz, Ls, and L4") == []
    assert contradicted_formula_scripts(["L_{1}", "L_{4}"], "L7 and L4") == ["L_1"]


def test_a_code_shows_its_upright_strokes_whichever_an_engine_reads() -> None:
    # No reader tells l, I and 1 apart in "l(b)" or "2-II" by anything but serifs.
    assert missing_numbers("l.(a) =2(a);l(b)<l,(b)", "I.(a) =2(a);1(b)<1,(b)") == []
    assert missing_numbers("1-IV, 2-II", "1-lV, 2-1l") == []
    assert missing_numbers("1-IV, 2-II", "1-lV, 3-1l") == ["2", "2-II"]
    # Nor an O from a 0: a subscript zero is read as a letter ("P0" read "PO").
    assert missing_numbers("air at P0, T0 with", "air at PO, To with") == []
    assert missing_numbers("air at P0, T0 with", "air at P8, TO with") == ["P0"]


def test_a_semicolon_separates_the_quantities_it_lists() -> None:
    # "0.6 kg;2*10^6 μg;1" lists three quantities: each number is checked, not "kg;2*10^6" as
    # one code an engine reading ";" as ":" never shows.
    source = "7.5 Calories/g;0.6 kg;2*10^6 μg;1"
    assert missing_numbers(source, "7.5 Calories/g:0.6 kg:2*10^6 μg:1") == []
    assert missing_numbers(source, "7.5 Calories/g:0.6 kg:2*10^5 μg:1") == ["6"]
    # Where the "μ" formula stood the text has a line break.
    with_formula = "7.5 Calories/g;0.6 kg;2*10^6\ng;1"
    assert word_recall(with_formula, "(A) 7.5 Calories/g:0.6 kg:2*10^6\ng:1") == 1.0


def test_a_code_is_read_whatever_case_its_letters_are_drawn_in() -> None:
    # A handwriting face draws the "psi" of "55.549psi" with capital-sized strokes.
    source = "σf=55.549psi;σh=870.647psi"
    assert missing_numbers(source, "σf=55.549Psiiσh=870.647PSi") == []
    # A relation joins two tokens ("σh" and "870.647psi"), each checked on its own.
    assert missing_numbers(source, "σf=55.549Psiiσh=875.647PSi") == ["870.647", "870.647psi"]
    # Where case is another quantity it still counts: milli and mega.
    assert missing_numbers("x2=5mA", "x2=5MA") == ["5mA"]


def test_a_numbers_sign_is_part_of_it() -> None:
    # Two options a sign apart exchanged: each place shows the other's numbers.
    assert missing_numbers("e = -1 (turnover of -9)", "e = 1 (turnover of 9)") == ["-1", "-9"]
    assert missing_numbers("e = 1 (turnover of 9)", "e = -1 (turnover of -9)") == ["1", "9"]
    assert missing_numbers("e = -1 (turnover of -9)", "e = -1 (turnover of -9)") == []
    # A minus between two operands is no sign: "x - 2" has the number 2.
    assert missing_numbers("from x - 2 to y-3", "from x - 2 to y-3") == []


def test_a_negative_number_leads_its_token() -> None:
    assert [leading_number(t) for t in ("-50", "-5kg", "300kJ/kg", "x")] == ["-50", "-5", "300", ""]


# --- options that are one letter --------------------------------------------------------------

LETTERED = Item(
    id="lettered",
    question=(
        "The circuit shown supplies a variable potential difference (pd) to another circuit. "
        "Which graph shows how the pd varies as the contact is moved from P to Q?"
    ),
    options=("D", "A", "B", "C"),
    answer=0,
)


@pytest.mark.slow
def test_options_that_are_one_letter_swapped_fail_in_both_modes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Options that are one letter each, two of them exchanged, fail in both modes; clean passes.

    Their text is a letter the stem also holds ("d" of "pd"): an option is
    judged on what is read where its own label stands, never on the closest
    text anywhere on the page.
    """
    summary = run_jobs(
        plan([JobRequest(LETTERED, PresentationSpec(scene="plain", font_style="regular"))], 0),
        tmp_path,
        RunSettings(workers=1),
    )
    assert summary.failed == 0
    (row,) = read_jsonl(tmp_path / "manifest.jsonl")
    image = load_rgb(tmp_path / row["image"])
    sidecar = json.loads((tmp_path / row["image"]).with_suffix(".json").read_text("utf-8"))
    layout = Layout.from_dict(sidecar["layout"])
    swapped = replace(LETTERED, options=("A", "D", "B", "C"))
    for verdict in (verify_image(image, swapped, layout), audit_image(image, swapped)):
        assert {r.region for r in verdict.reasons} == {"option:A", "option:B"}, verdict.reasons
    for verdict in (verify_image(image, LETTERED, layout), audit_image(image, LETTERED)):
        assert verdict.passed, (verdict.mode, verdict.reasons)


# --- options a sign apart -----------------------------------------------------------------------

SIGNED = Item(
    id="signed",
    question="Determine the price elasticity of demand in the special case shown.",
    options=(
        "e = 3 (constant turnover of 27)",
        "e = -1 (constant turnover of -9)",
        "e = 0.5 (constant turnover of 4.5)",
        "e = 1 (constant turnover of 9)",
    ),
    answer=3,
)
SIGN_SWAPPED = replace(
    SIGNED, options=(SIGNED.options[0], SIGNED.options[3], SIGNED.options[2], SIGNED.options[1])
)


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Verdict, Verdict]]:
    """The item with options a sign apart in each face, verified against itself and its swap."""
    return _verify_in_each_face(tmp_path_factory.mktemp("signed"), SIGNED, SIGN_SWAPPED)


@pytest.mark.slow
@pytest.mark.parametrize("face", FACES)
def test_options_a_sign_apart_swapped_fail_in_both_modes(signed: dict, face: str) -> None:
    """Options that differ only by their numbers' signs, exchanged, fail where they stand."""
    for verdict in signed[f"swapped-{face}"]:
        failing = {r.region for r in verdict.reasons if r.code != ReasonCode.GLYPH_AMBIGUITY}
        assert failing and failing <= {"option:B", "option:D"}, (verdict.mode, verdict.reasons)


@pytest.mark.slow
@pytest.mark.parametrize("face", FACES)
def test_the_clean_render_shows_every_sign(signed: dict, face: str) -> None:
    for verdict in signed[f"clean-{face}"]:
        assert verdict.passed, (verdict.mode, verdict.reasons)
