"""Formula ink: a digit changed where no OCR engine reads it, seen on the pixels of real renders.

Renders an item whose options are formulas tesseract reads poorly (a
superscript unit, subscripts, a fraction the ink check leaves to OCR) with the
real Chromium pipeline in two faces, crops each option where its layout
record puts it, and asks the ink whether it shows each script part of the
option's formula or the same part with one digit changed.
The whole-image audit, which has no layout record, must then pass the
render against its item and fail it against an item whose formula says
another digit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.verify.checks.expected import Field
from itemshot.verify.checks.scoring import FORMULA_PREFIX, FieldResult
from itemshot.verify.checks.tokens import formula_numbers
from itemshot.verify.modes.regions import located_crops
from itemshot.verify.modes.whole_image import audit_image
from itemshot.verify.settlers.formula_ink import digit_rivals, script_parts, weigh_formula
from itemshot.verify.settlers.ink_settle import settle_by_ink
from itemshot.verify.verdicts import Reason, RegionScore
from tests import defects

pytestmark = pytest.mark.slow

ITEM = Item(
    id="ink-formulas",
    question="Which expression gives the plate's area, its voltage or its transfer function?",
    options=(
        "$A = 2.5\\ ft^{2}$",
        "$V_{3} = 4\\ V$",
        "$\\frac{400}{3s^{2}+8s}$",
        "$x_{2} + y_{5}$",
    ),
    answer=0,
)


def _render(face: str, tmp_path_factory: pytest.TempPathFactory) -> defects.Case:
    out = tmp_path_factory.mktemp(f"formula-ink-{face}")
    spec = PresentationSpec(scene="plain", font_style=face)
    summary = run_jobs(plan([JobRequest(ITEM, spec)], 0), out, RunSettings(workers=1))
    assert summary.failed == 0
    (case,) = defects.clean_cases(out, {ITEM.id: ITEM})
    return case


@pytest.fixture(scope="module", params=["regular", "handwritten"])
def render(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> defects.Case:
    """Render the item once per face on a plain page."""
    return _render(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def regular(tmp_path_factory: pytest.TempPathFactory) -> defects.Case:
    """Render the item in the regular face, whose V_{3} no engine reads."""
    return _render("regular", tmp_path_factory)


def _options(case: defects.Case) -> list[tuple[str, np.ndarray, float]]:
    """Return (formula, crop, font px) of each option, cropped where the layout record puts it."""
    regions = [r for r in case.layout.regions if r.kind == "option"]
    crops = located_crops(case.image, regions)
    return [(r.math[0], crop, r.font_px) for r, crop in zip(regions, crops, strict=True)]


def test_the_ink_shows_each_source_formula(render: defects.Case) -> None:
    for latex, crop, font_px in _options(render):
        parts = script_parts(latex)
        for part in parts:
            evidence = weigh_formula(crop, font_px, part, others=tuple(parts))
            assert evidence is not None, part
            assert not evidence.contradicted(), evidence.describe()


def test_the_ink_contradicts_most_changed_script_digits(render: defects.Case) -> None:
    # The image shows the source, so each rival is what a source saying it is checked
    # against: the ink must show the source's digit instead, for most of them. A subscript
    # drawn on its own (x_{2}) is told from every rival; a digit among others in a fraction,
    # or a superscript mathtext kerns otherwise than KaTeX (ft^{2}), often is not, and then
    # the image is not failed: the ink evidence only ever adds a failure.
    told, asked = {}, {}
    for latex, crop, font_px in _options(render):
        parts = script_parts(latex)
        for part in parts:
            for rival in digit_rivals(part):
                others = tuple(rival if p == part else p for p in parts)
                evidence = weigh_formula(crop, font_px, rival, others=others)
                told[part] = told.get(part, 0) + bool(evidence and evidence.contradicted())
                asked[part] = asked.get(part, 0) + 1
    assert told["x_{2}"] >= 8 and told["y_{5}"] >= 8, told
    assert sum(told.values()) >= sum(asked.values()) // 2, (told, asked)


def test_the_whole_image_audit_passes_the_render(render: defects.Case) -> None:
    assert audit_image(render.image, ITEM).passed


def test_the_whole_image_audit_fails_a_subscript_no_engine_reads(regular: defects.Case) -> None:
    # Neither engine reads V_{3}'s subscript here: only the ink tells it from V_{8}. (In the
    # handwritten face the ink does not tell them apart either, and the image passes.)
    changed = replace(ITEM, options=(ITEM.options[0], "$V_{8} = 4\\ V$", *ITEM.options[2:]))
    reasons = audit_image(regular.image, changed).reasons
    assert [(r.code, r.region) for r in reasons] == [("formula_changed", "option:B")], reasons
    assert reasons[0].detail == "'V_{8}' drawn as 'V_{3}' (ink)"


@pytest.mark.parametrize("formula", ["$A = 2.5\\ ft^{2}$", "$V_{3} = 4\\ V$"])
def test_a_formula_number_no_engine_read_is_settled_only_where_the_ink_shows_it(
    regular: defects.Case, formula: str
) -> None:
    # Say every engine missed the formula's baseline numbers (whole-image mode reads a page
    # with no record of what was typeset): its drawing, not a reading, must show them. The
    # same ink asked for the formula with a number changed shows the page's, not that one.
    letter = "AB"[ITEM.options.index(formula)]
    region = next(r for r in regular.layout.regions if r.name == f"option:{letter}")
    (crop,) = located_crops(regular.image, [region])
    for latex, expect in ((formula, True), (formula.replace("5", "9").replace("4", "7"), False)):
        field = Field(region.name, "\n", (latex.strip("$"),), (), letter)
        numbers = tuple(n for m in field.math for n in formula_numbers(m))
        reason = Reason("number_missing", region.name, FORMULA_PREFIX + ", ".join(numbers), numbers)
        result = FieldResult(0.9, (reason,), RegionScore(region.name, "option", 0.9, "", "", {}))
        settled = settle_by_ink(field, [crop], region.drawn_px, "", "", result)
        assert (settled.reasons == ()) is expect, (latex, settled.reasons)
        assert settled.region.measures["formula_ink"], settled.region.measures


def test_a_place_showing_a_sibling_script_is_no_evidence() -> None:
    # Ink showing only `k_{6}`: against a field whose formula holds `k_{6}` too (inside
    # `R^2{(k_{6})}`), the place found for `k_{5}` may be that script's, not a changed digit.
    from itemshot.verify.settlers.formula_ink import formula_drawing, sibling_scripts

    ink = formula_drawing("k_{6}", 26, 0.6)
    assert ink is not None
    crop = np.pad(255 - np.clip(ink, 0, 255), 20, constant_values=255).astype(np.uint8)
    alone = weigh_formula(crop, 22, "k_{5}")
    assert alone is not None and alone.contradicted() and alone.rival == "k_{6}"
    siblings = tuple(sibling_scripts("k_{5} + R^2{(k_{6})}"))
    assert siblings == ("k_{5}", "R^{2}", "k_{6}")
    assert weigh_formula(crop, 22, "k_{5}", siblings=siblings) is None


def test_a_formula_the_field_has_twice_must_be_shown_at_two_places() -> None:
    # The source says x_{2} twice; the ink shows x_{2} once and x_{7} where the second was.
    from itemshot.verify.settlers.formula_ink import formula_drawing

    ink = formula_drawing("x_{2}\\ \\ +\\ \\ x_{7}", 26, 0.6)
    assert ink is not None
    crop = np.pad(255 - np.clip(ink, 0, 255), 20, constant_values=255).astype(np.uint8)
    once = weigh_formula(crop, 22, "x_{2}")
    assert once is not None and not once.contradicted(), once and once.describe()
    twice = weigh_formula(crop, 22, "x_{2}", others=("x_{2}", "x_{2}"))
    assert twice is not None and twice.contradicted() and twice.rival == "x_{7}", twice


def test_a_formula_shown_more_often_than_the_field_has_it_stands_for_a_changed_one() -> None:
    # The source says I_1 and I_2; the ink shows I_2 twice. Each place fits I_2 better than
    # I_1, but the field has I_2 once: the second place is I_1's, drawn with another digit.
    from itemshot.verify.settlers.formula_ink import formula_drawing

    parts = ("I_1", "I_2")
    shown = formula_drawing("I_2\\ \\ +\\ \\ I_2", 26, 0.6)
    source = formula_drawing("I_1\\ \\ +\\ \\ I_2", 26, 0.6)
    assert shown is not None and source is not None
    crops = [
        np.pad(255 - np.clip(ink, 0, 255), 20, constant_values=255).astype(np.uint8)
        for ink in (shown, source)
    ]
    changed = weigh_formula(crops[0], 22, "I_1", others=parts)
    assert changed is not None and changed.contradicted() and changed.rival == "I_2", changed
    clean = weigh_formula(crops[1], 22, "I_1", others=parts)
    assert clean is None or not clean.contradicted(), clean.describe()
