"""Figure search without a layout: genuine figures pass, swapped figures fail.

Renders every sample item in three scenes with the real Chromium pipeline.
Each figure is searched in its clean render, in a lightly captured copy
(screenshot, phone photo, scan), and in copies whose figure box holds another
sample figure instead — the other bar chart in the same style (they share
axes, ticks and city names) and a line drawing.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from itemshot.degradations import capture
from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import PresentationSpec
from itemshot.renderer.records import Layout, quad_bounds
from itemshot.verify.checks.figure_search import FigureSearch, tile_score
from itemshot.verify.checks.figures import decode_figure
from itemshot.verify.pool import run_all
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.slow
SCENES = ("exam_sheet", "whiteboard", "tv_quiz")
CAPTURES = ("phone_photo_paper", "scan", "pc_screenshot")
FIGURES = SAMPLE_DATA.parent / "figures"
MINIMUM = DEFAULT_THRESHOLDS.figure_presence


def _png_figure(name: str) -> bytes:
    return (FIGURES / f"{name}.png").read_bytes()


def _swaps(own: bytes) -> list[str]:
    """Return two replacements: the other bar chart in the same style, and a line drawing."""
    chart = "rainfall_2024" if own == _png_figure("rainfall") else "rainfall"
    drawing = "circuit_ja" if own == _png_figure("triangle") else "triangle"
    return [chart, drawing]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, np.ndarray, bytes]]:
    """Return (kind, name, image, figure bytes) for every figure of every render."""
    dataset = load_dataset(SAMPLE_DATA)
    assert len(dataset.items) == 12
    requests = [JobRequest(i, PresentationSpec(scene=s)) for i in dataset.items for s in SCENES]
    out = tmp_path_factory.mktemp("figure-search")
    assert run_jobs(plan(requests, 0), out, RunSettings(workers=2)).failed == 0
    items: dict[str, Item] = {item.id: item for item in dataset.items}
    made: list[tuple[str, str, np.ndarray, bytes]] = []
    for sidecar in sorted((out / "images").glob("*.json")):
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        row = record["manifest"]
        item = items[row["item_id"]]
        if not item.figures:
            continue
        scene = row["presentation"]["scene"]
        pixels = np.asarray(Image.open(out / row["image"]).convert("RGB"))
        layout = Layout.from_dict(record["layout"])
        preset = CAPTURES[SCENES.index(scene)]
        captured = capture(pixels, layout.regions, preset, "light", 5).array()
        for region in layout.regions:
            if region.kind != "figure" or region.figure not in item.figures:
                continue
            own = item.figures[region.figure].data
            name = f"{item.id}/{scene}/figure {region.figure}"
            made.append(("genuine", name, pixels, own))
            made.append(("captured", f"{name}/{preset}", captured, own))
            x0, y0, x1, y1 = (round(v) for v in quad_bounds(region.quad))
            for other in _swaps(own):
                swapped = pixels.copy()
                pasted = Image.open(io.BytesIO(_png_figure(other))).convert("RGB")
                swapped[y0:y1, x0:x1] = np.asarray(pasted.resize((x1 - x0, y1 - y0)))
                made.append(("swapped", f"{name}→{other}", swapped, own))
    return made


def _score(case: tuple[str, str, np.ndarray, bytes]) -> tuple[str, str, float, str]:
    kind, name, image, figure = case
    found = FigureSearch(image).find(decode_figure(figure), MINIMUM)
    return kind, name, found.score, found.method


def test_genuine_figures_pass_and_swapped_figures_fail(
    cases: list[tuple[str, str, np.ndarray, bytes]],
) -> None:
    results = run_all(_score, cases, workers=2)
    by_kind: dict[str, list[float]] = {}
    for kind, _name, score, _method in results:
        by_kind.setdefault(kind, []).append(score)
    print()
    for kind, scores in by_kind.items():
        print(f"{kind:<9} n={len(scores):>3}  min {min(scores):.2f}  max {max(scores):.2f}")
    assert len(by_kind["genuine"]) == 3 * 12  # 12 figure boxes per scene
    wrong = [
        (kind, name, round(score, 2), method)
        for kind, name, score, method in results
        if (kind == "swapped") == (score >= MINIMUM)
    ]
    assert wrong == []


def test_tile_score_sees_a_local_change_a_correlation_would_forgive() -> None:
    """One bar of a chart made taller: globally almost the same picture, locally not."""
    chart = decode_figure(_png_figure("rainfall")).astype(np.float32)
    assert tile_score(chart, chart)[0] == pytest.approx(1.0)
    brighter = chart * 0.8 + 40  # another exposure: explained by gain and offset
    assert tile_score(chart, brighter)[0] > 0.95
    other = decode_figure(_png_figure("rainfall_2024")).astype(np.float32)
    correlation = np.corrcoef(chart.ravel(), other.ravel())[0, 1]
    assert correlation > 0.8  # what a global match would call the same figure
    assert tile_score(chart, other)[0] < MINIMUM


def test_nothing_is_found_in_a_blank_page() -> None:
    figure = decode_figure(_png_figure("parabola"))
    found = FigureSearch(np.full((800, 600, 3), 250, np.uint8)).find(figure, MINIMUM)
    assert found.score == 0.0
