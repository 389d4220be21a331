"""A digit changed inside a formula: subscripts and coefficients, read with real tesseract.

Renders the sample's combustion item (`\\ce{CH4 + 2O2 -> CO2 + 2H2O}`, then
"… when 3 mol of methane burn") with the real Chromium pipeline in a look whose
subscripts tesseract reads as digits, and checks that the clean render passes
both audits while a subscript changed (CO2 → CO7) or a coefficient changed
into a number the sentence also shows (2H2O → 3H2O) fails both.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.verify.modes.regions import verify_image
from itemshot.verify.modes.whole_image import audit_image
from tests import defects
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def combustion(tmp_path_factory: pytest.TempPathFactory) -> defects.Case:
    """Render the combustion item once on a plain page in the thin face."""
    items = {i.id: i for i in load_dataset(SAMPLE_DATA).items}
    item = items["en-combustion"]
    out = tmp_path_factory.mktemp("formula-digits")
    spec = PresentationSpec(scene="plain", font_style="thin")
    summary = run_jobs(plan([JobRequest(item, spec)], 0), out, RunSettings(workers=1))
    assert summary.failed == 0
    (case,) = defects.clean_cases(out, {item.id: item})
    return case


def _verdicts(case: defects.Case, question: str) -> tuple[list[str], list[str]]:
    item = replace(case.item, question=question)
    region = verify_image(case.image, item, case.layout, render=case.render, image_name=case.name)
    whole = audit_image(case.image, item, image_name=case.name)
    return region.codes, whole.codes


def test_the_clean_render_passes_both_audits(combustion: defects.Case) -> None:
    assert _verdicts(combustion, combustion.item.question) == ([], [])


@pytest.mark.parametrize(("old", "new"), [("CO2", "CO7"), ("2H2O", "3H2O")])
def test_a_digit_changed_in_a_formula_fails_both_audits(
    combustion: defects.Case, old: str, new: str
) -> None:
    assert old in combustion.item.question
    region, whole = _verdicts(combustion, combustion.item.question.replace(old, new))
    assert "number_missing" in region
    assert "number_missing" in whole
