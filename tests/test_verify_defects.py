"""Defect suite: the verifier flags one-defect images and passes their clean originals.

Renders the 21 MMMU-Pro tool fixture items in four scenes once with the real
Chromium pipeline, makes at least 20 images of each defect kind by editing
those renders' pixels (or, for the digit change, the item's source text), and
verifies all of them with real tesseract.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.verify.modes.regions import verify_image
from itemshot.verify.pool import run_all
from tests import defects
from tests.conftest import TOOL_DATA

SCENES = ("exam_sheet", "whiteboard", "webpage", "tv_quiz")
PER_KIND = 20
# Kinds the fixture can supply fewer cases of: only 3 of its items have a number with a unit.
MIN_CASES = {"unit_changed": 12}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> list[defects.Case]:
    """Render every fixture item in every scene once; return the clean cases."""
    dataset = load_dataset(TOOL_DATA)
    requests = [
        JobRequest(item, PresentationSpec(scene=s)) for item in dataset.items for s in SCENES
    ]
    out = tmp_path_factory.mktemp("verify-defects")
    summary = run_jobs(plan(requests, 0), out, RunSettings(workers=2))
    assert summary.failed == 0
    return defects.clean_cases(out, {item.id: item for item in dataset.items})


def _defective(cases: list[defects.Case]) -> list[defects.Case]:
    made = defects.defective_cases(cases, PER_KIND, random.Random(7))
    for kind in defects.KINDS:
        count = sum(c.kind == kind for c in made)
        assert count >= MIN_CASES.get(kind, PER_KIND), f"only {count} images for {kind}"
    return made


def _verify(case: defects.Case) -> tuple[str, str, bool, list[str]]:
    verdict = verify_image(
        case.image, case.item, case.layout, render=case.render, image_name=case.name
    )
    return case.kind, case.name, verdict.passed, verdict.codes


@pytest.fixture(scope="module")
def clean_results(renders: list[defects.Case]) -> list[tuple[str, str, bool, list[str]]]:
    """Verify every clean render once."""
    return run_all(_verify, renders, workers=2)


def test_defect_suite_flags_defects_and_passes_clean(
    renders: list[defects.Case], clean_results: list[tuple[str, str, bool, list[str]]]
) -> None:
    """≥ 95% of defective images fail and ≥ 95% of their clean originals pass."""
    defective = _defective(renders)
    originals = {c.name for c in defective}
    clean = [r for r in clean_results if r[1] in originals]
    results = clean + run_all(_verify, defective, workers=2)
    table: dict[str, Counter[str]] = {}
    for kind, _name, passed, _codes in results:
        table.setdefault(kind, Counter())["pass" if passed else "fail"] += 1
    print("\nkind                 n   flagged  passed")
    for kind in ("clean", *defects.KINDS):
        row = table[kind]
        print(f"{kind:<20}{sum(row.values()):>3}  {row['fail']:>7}  {row['pass']:>6}")
    for kind, name, passed, codes in results:
        if (kind == "clean") != passed:
            print(f"  miss: {kind} {name} {codes}")
    flagged = sum(table[k]["fail"] for k in defects.KINDS)
    total = sum(sum(table[k].values()) for k in defects.KINDS)
    assert flagged / total >= 0.95
    assert table["clean"]["pass"] / sum(table["clean"].values()) >= 0.95
    for kind in defects.KINDS:
        assert sum(table[kind].values()) >= MIN_CASES.get(kind, PER_KIND)
        assert table[kind]["fail"] / sum(table[kind].values()) >= 0.9, kind


def test_every_clean_render_passes(clean_results: list[tuple[str, str, bool, list[str]]]) -> None:
    """All fixture items in all four scenes pass (the ≥ 99% clean target)."""
    results = clean_results
    failed = [(name, codes) for _k, name, passed, codes in results if not passed]
    print(
        f"\nclean pass rate {1 - len(failed) / len(results):.3f} ({len(results)} images): {failed}"
    )
    assert len(results) == len(SCENES) * 21
    assert (len(results) - len(failed)) / len(results) >= 0.99


def test_pixel_defects_on_captures_are_captured_again_with_the_stored_record(
    renders: list[defects.Case],
) -> None:
    """A captured case's pixel defect is made on its clean page and replayed through its capture.

    The replay returns an encoded capture record; the suite takes its decoded
    pixels (shaped like the capture), and refuses a recapture returning
    anything else instead of handing the verifier a record.
    """
    from dataclasses import replace

    from itemshot.degradations import capture_layout, replay

    clean = renders[0]
    captured, moved = capture_layout(clean.image, clean.layout, "phone_photo_paper", "medium", 5)
    case = replace(
        clean, image=captured.array(), layout=moved, clean=clean.image, capture=captured.params
    )

    def pixels(image, regions, params):  # type: ignore[no-untyped-def]
        return replay(image, regions, params).array()

    made = defects.defective_cases([case], 1, random.Random(1), pixels)
    pixel_kinds = {c.kind for c in made} - set(defects.ITEM_DEFECTS)
    assert {"option_removed", "question_truncated", "illegible"} <= pixel_kinds
    for made_case in made:
        assert made_case.image.shape == case.image.shape
        verdict = verify_image(made_case.image, made_case.item, made_case.layout)
        assert "image_mismatch" not in verdict.codes
    with pytest.raises(TypeError, match="captured pixels"):
        defects.defective_cases([case], 1, random.Random(1), replay)  # type: ignore[arg-type]
