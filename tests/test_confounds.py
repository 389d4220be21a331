"""Contrasts that change one thing: matched x-heights, held decorations, the confound check.

A font-style ablation of the real MMMU-Pro tool items, swept through real
Chromium: every face's text has the reference face's x-height (±5%), the
scene furniture is the same pixels in every cell of an item, and the confound
check passes; a font-size ablation that claims to hold the x-height fails it.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itemshot.factorial.analysis.analysis import AnalysisResults
from itemshot.factorial.design.confounds import (
    TOLERANCES,
    confound_report,
    held_measures,
    read_confounds,
)
from itemshot.factorial.design.design import DesignError, parse_design
from itemshot.factorial.report.report import write_report
from itemshot.fonts.catalogue import base_faces
from itemshot.fonts.metrics import face_x_height
from itemshot.renderer.backends.chromium import ChromiumBackend
from itemshot.renderer.items import Item
from itemshot.renderer.jobs import JobRequest, make_job
from itemshot.renderer.output import read_jsonl
from itemshot.renderer.presentation import PresentationSpec
from tests.conftest import run_cli

STYLES = ["regular", "handwritten", "serif", "mono"]
FACTORS = [("format", ["vision"]), ("n_options", ["all"]), ("font_style", STYLES)]


def _design(folder: Path, dataset: Path, factors: str, extra: str = "") -> Path:
    path = folder / "design.yaml"
    path.write_text(
        "name: confounds\n"
        f"dataset:\n  path: {dataset}\n"
        "design: one_at_a_time\n"
        f"factors:\n  format: [vision]\n  n_options: [all]\n{factors}"
        "presentation:\n  scene: exam_sheet\n  aspect: '3:4'\n  margin: small\n"
        f"seed: 7\n{extra}",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def font_sweep(tool_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("font-ablation")
    design = _design(folder, tool_data, f"  font_style: [{', '.join(STYLES)}]\n  font_size: [22]\n")
    status = run_cli("sweep", design, "--out", folder / "out", "--no-progress")
    rows = read_jsonl(folder / "out" / "manifest.jsonl")
    assert status == 0, [r.get("error") for r in rows if r["status"] != "ok"]
    return folder / "out", rows


def _by_item(rows: list) -> dict[str, dict[str, dict]]:
    cells: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in rows:
        cells[row["item_id"]][row["condition"]["font_style"]] = row
    return cells


def test_every_face_has_the_reference_x_height_for_every_item(font_sweep) -> None:
    _, rows = font_sweep
    cells = _by_item(rows)
    assert len(cells) == 21 and all(set(c) == set(STYLES) for c in cells.values())
    for item, by_style in cells.items():
        reference = by_style["regular"]["measures"]["x_height_px"]
        assert reference > 8, item
        for style in STYLES[1:]:
            measured = by_style[style]["measures"]["x_height_px"]
            assert abs(measured / reference - 1) <= 0.05, (item, style, measured, reference)
        # The nominal size of the other faces differs: the x-height is what is matched.
        sizes = {by_style[s]["measures"]["font_px"] for s in STYLES}
        assert len(sizes) == len(STYLES), (item, sizes)


def test_at_one_nominal_size_the_faces_would_differ_by_more_than_the_tolerance() -> None:
    # Why the match is needed: the faces' own x-heights, from their outlines.
    reference = face_x_height(base_faces("regular", "en").faces[0])
    for style in ("handwritten", "serif"):
        ratio = face_x_height(base_faces(style, "en").faces[0]) / reference
        assert abs(ratio - 1) > 0.05, (style, ratio)


def test_figure_boxes_page_scale_and_options_are_the_same_in_every_cell(font_sweep) -> None:
    _, rows = font_sweep
    for item, by_style in _by_item(rows).items():
        reference = by_style["regular"]["measures"]
        for style in STYLES[1:]:
            measures = by_style[style]["measures"]
            assert measures["options_shown"] == reference["options_shown"], (item, style)
            assert measures["figure_scale"] == reference["figure_scale"], (item, style)
            area, ref_area = measures["figure_area_px"], reference["figure_area_px"]
            assert abs(area - ref_area) <= 0.001 * max(ref_area, 1), (item, style, area)


def _mask(layouts: list[dict], shape: tuple[int, int], pad: int = 3) -> np.ndarray:
    """Return True outside every region box of every layout (widened by `pad` pixels)."""
    keep = np.ones(shape, bool)
    for layout in layouts:
        for region in layout["regions"]:
            x0, y0, x1, y1 = region["box"]
            keep[
                max(0, int(y0) - pad) : int(np.ceil(y1)) + pad,
                max(0, int(x0) - pad) : int(np.ceil(x1)) + pad,
            ] = False
    return keep


def test_decoration_is_pixel_identical_across_the_cells_of_an_item(font_sweep) -> None:
    out, rows = font_sweep
    numbers = set()
    for item, by_style in _by_item(rows).items():
        sidecars = {s: json.loads((out / r["layout"]).read_text()) for s, r in by_style.items()}
        decors = [sidecars[s]["render"]["decor"] for s in STYLES]
        assert all(d == decors[0] for d in decors), item
        numbers.add(decors[0]["number"])
        pixels = {
            s: np.asarray(Image.open(out / by_style[s]["image"]).convert("RGB")) for s in STYLES
        }
        mask = _mask([sidecars[s]["layout"] for s in STYLES], pixels["regular"].shape[:2])
        # The header, "Question N (points)", the footer and the sheet: everything but
        # the item's own text blocks and figures.
        assert mask.mean() > 0.25, item
        for style in STYLES[1:]:
            differ = np.any(pixels[style] != pixels["regular"], axis=2) & mask
            assert not differ.any(), (item, style, np.argwhere(differ)[:5].tolist())
    assert len(numbers) > 5  # seeded per item: different items, different numbers


def test_the_confound_check_passes_on_the_font_ablation(font_sweep) -> None:
    out, rows = font_sweep
    report = confound_report(rows, FACTORS, {"font_style": "regular"})
    assert report.passed, report.lines()
    assert [c.level for c in report.contrasts] == STYLES[1:]
    for contrast in report.contrasts:
        assert contrast.pairs == 21
        spreads = {m.measure: m for m in contrast.measures}
        assert spreads["x_height_px"].held and spreads["page_scale"].held
        assert not spreads["line_count"].held  # a face's widths may break lines elsewhere
        assert abs(spreads["x_height_px"].worst) <= TOLERANCES["x_height_px"].limit
    # The sweep writes the same check beside its balance report.
    written = json.loads((out / "confounds.json").read_text(encoding="utf-8"))
    assert written == report.as_dict()


def test_the_report_shows_the_confound_check(font_sweep, tmp_path: Path) -> None:
    out, _ = font_sweep
    results = AnalysisResults("strict", (), 0, (), confounds=read_confounds([out]))
    written = write_report(results, tmp_path / "report")
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert f"confound check of {out.name}: passed" in report
    for style in STYLES[1:]:
        line = next(r for r in report.splitlines() if r.startswith(f"| font_style={style} vs"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[1] == "21" and cells[-1] == "ok", line
        assert cells[2].endswith("%") and cells[6].endswith("free"), line  # x-height; lines
    assert json.loads(written[2].read_text(encoding="utf-8"))["confounds"][0][0] == out.name


def test_the_confound_check_fails_a_design_that_claims_a_varied_size_held(
    tool_data: Path, tmp_path: Path
) -> None:
    # A font-size contrast changes the x-height by its nature; this design says
    # its font-size contrast holds it, and the check holds it to that.
    design = _design(
        tmp_path,
        tool_data,
        "  font_size: [22, 28]\n",
        "held:\n  font_size: [x_height_px, options_shown]\n",
    )
    status = run_cli("sweep", design, "--out", tmp_path / "out", "--limit", "4", "--no-progress")
    rows = read_jsonl(tmp_path / "out" / "manifest.jsonl")
    assert all(r["status"] == "ok" for r in rows)
    written = json.loads((tmp_path / "out" / "confounds.json").read_text(encoding="utf-8"))
    assert status == 0 and written["passed"] is False  # reported, as the balance check is
    factors = [("format", ["vision"]), ("n_options", ["all"]), ("font_size", [22, 28])]
    report = confound_report(rows, factors, held={"font_size": ["x_height_px", "options_shown"]})
    assert not report.passed
    (contrast, spread), *rest = report.failures
    assert (contrast.factor, contrast.level, spread.measure) == ("font_size", 28, "x_height_px")
    # Larger type, less of the page fits: the scale drops, the x-height still grows.
    assert spread.beyond == 4 and 0.05 < spread.worst <= 28 / 22 - 1 + 0.01
    assert not rest
    # Without the claim the same rows pass: a size contrast may change the size.
    assert confound_report(rows, factors).passed
    assert "x_height_px" not in held_measures("font_size")


def _band_heights(png: bytes, box: tuple[float, ...]) -> list[int]:
    """Return the heights of the ink bands (rows with dark pixels, between blank rows) in `box`."""
    x0, y0, x1, y1 = (round(v) for v in box)
    gray = np.asarray(Image.open(io.BytesIO(png)).convert("L"))[y0:y1, x0:x1]
    inked = (gray < 128).any(axis=1)
    heights, run = [], 0
    for row in inked:
        if row:
            run += 1
        elif run:
            heights, run = [*heights, run], 0
    return [*heights, run] if run else heights


def test_the_recorded_x_height_is_the_ink_height_of_the_letters_on_the_page() -> None:
    # One line per x-height letter: the median of the lines' ink heights is the
    # x-height as the page records it, read back from the pixels.
    letters = "acemnorsuvwxz"
    item = Item("letters", "\n".join(letter * 8 for letter in letters), ("x", "z"), 0)

    async def render() -> dict[str, tuple[bytes, tuple[float, ...], float]]:
        shown = {}
        async with ChromiumBackend(1, 1) as backend:
            for style in STYLES:
                spec = PresentationSpec(font_style=style, font_size=30)
                rendered = await backend.render(make_job(JobRequest(item, spec), 0))
                layout = rendered.layout
                question = layout.region("question").box
                shown[style] = (rendered.image, question, layout.measures["x_height_px"])
        return shown

    recorded_by_style = {}
    for style, (png, box, recorded) in asyncio.run(render()).items():
        bands = _band_heights(png, box)
        assert len(bands) == len(letters), (style, bands)
        # Whole ink rows against an outline height: within a pixel and a half.
        assert abs(float(np.median(bands)) - recorded) <= 1.5, (style, bands, recorded)
        recorded_by_style[style] = recorded
    reference = recorded_by_style["regular"]
    assert all(abs(v / reference - 1) <= 0.02 for v in recorded_by_style.values())


def test_a_design_says_what_a_factor_holds_in_known_measures(tmp_path: Path) -> None:
    base = {
        "dataset": {"path": "itemshot:sample"},
        "design": "one_at_a_time",
        "factors": {"font_size": [22, 28]},
    }
    design = parse_design({**base, "held": {"font_size": ["x_height_px"]}}, tmp_path)
    assert design.held == {"font_size": ("x_height_px",)}
    assert held_measures("font_size", design.held) == ("x_height_px",)
    with pytest.raises(DesignError, match=r"held\.font_size.*'x_height' is not one of"):
        parse_design({**base, "held": {"font_size": ["x_height"]}}, tmp_path)
    with pytest.raises(DesignError, match=r"held\.scene.*not a factor"):
        parse_design({**base, "held": {"scene": ["line_count"]}}, tmp_path)


def test_a_captured_ablation_keeps_each_items_capture_and_random_fields(
    tool_data: Path, tmp_path: Path
) -> None:
    # What the design leaves to chance (the scene here) and the capture's sampled
    # geometry are drawn per item: the two font cells of an item share them.
    path = tmp_path / "design.yaml"
    path.write_text(
        "name: captured\n"
        f"dataset:\n  path: {tool_data}\n"
        "design: one_at_a_time\n"
        "factors:\n  font_style: [regular, handwritten]\n"
        "presentation:\n  scene: random\n  capture: phone_photo_paper\n  severity: light\n"
        "seed: 3\n",
        encoding="utf-8",
    )
    assert run_cli("sweep", path, "--out", tmp_path / "out", "--limit", "3", "--no-progress") == 0
    out = tmp_path / "out"
    rows = read_jsonl(out / "manifest.jsonl")
    scenes = set()
    for item, by_style in _by_item(rows).items():
        regular, handwritten = (by_style[s] for s in ("regular", "handwritten"))
        assert regular["presentation"]["scene"] == handwritten["presentation"]["scene"], item
        scenes.add(regular["presentation"]["scene"])
        captures = [
            json.loads((out / r["layout"]).read_text())["capture"] for r in by_style.values()
        ]
        assert captures[0]["steps"] == captures[1]["steps"], item
        assert captures[0]["seed"] == captures[1]["seed"], item
    report = confound_report(rows, [("font_style", ["regular", "handwritten"])])
    spreads = {m.measure: m for m in report.contrasts[0].measures}
    assert report.contrasts[0].pairs == 3
    assert spreads["x_height_px"].passed and spreads["figure_area_px"].passed, report.lines()
