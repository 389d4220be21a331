"""The MMMU-Pro tool fixture in every scene and aspect: boxes, fonts and figures."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.output import read_jsonl
from tests.conftest import run_cli

SCENES = ("exam_sheet", "whiteboard", "webpage", "tv_quiz")
ASPECTS = ("9:16", "16:9", "3:4", "1:1")


@pytest.fixture(scope="module")
def rendered(tool_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    out = tmp_path_factory.mktemp("fixture")
    status = run_cli(
        "render",
        tool_data,
        "--out",
        out,
        "--scene",
        ",".join(SCENES),
        "--aspect",
        ",".join(ASPECTS),
        "--no-progress",
        "--no-verify",
    )
    rows = read_jsonl(out / "manifest.jsonl")
    assert status == 0, [r["error"] for r in rows if r["status"] != "ok"]
    return out, rows


def sidecar(out: Path, row: dict) -> dict:
    return json.loads((out / row["layout"]).read_text(encoding="utf-8"))


def test_every_item_in_every_scene_and_aspect(rendered: tuple[Path, list]) -> None:
    _, rows = rendered
    combos = {(r["item_id"], r["presentation"]["scene"], r["presentation"]["aspect"]) for r in rows}
    assert len(rows) == 21 * 16 == len(combos)
    assert all(r["status"] == "ok" for r in rows)


def test_region_boxes_lie_inside_the_image(rendered: tuple[Path, list]) -> None:
    out, rows = rendered
    for row in rows:
        with Image.open(out / row["image"]) as image:
            width, height = image.size
        layout = sidecar(out, row)["layout"]
        assert (layout["width"], layout["height"]) == (width, height)
        names = {r["name"] for r in layout["regions"]}
        assert "question" in names
        assert {f"option:{chr(65 + i)}" for i in range(row["n_options"])} <= names
        for region in layout["regions"]:
            x0, y0, x1, y1 = region["box"]
            assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height, (row["item_id"], region)
            assert not region["overflow"], (row["item_id"], region["name"])


def test_fonts_used_are_the_fonts_asked_for(rendered: tuple[Path, list]) -> None:
    out, rows = rendered
    for row in rows:
        layout = sidecar(out, row)["layout"]
        requested = set(layout["fonts_requested"])
        for region in layout["regions"]:
            if region["kind"] in ("question", "option") and region["text"].strip():
                assert set(region["fonts"]) <= requested, (row["item_id"], region["fonts"])
                assert region["fonts"], (row["item_id"], region["name"])


def test_figures_appear_where_the_layout_says(rendered: tuple[Path, list], tool_data: Path) -> None:
    out, rows = rendered
    items = {i.id: i for i in load_dataset(tool_data).items}
    checked = 0
    for row in rows:
        item = items[row["item_id"]]
        with Image.open(out / row["image"]) as image:
            page = np.asarray(image.convert("L"), dtype=np.float32)
        for region in sidecar(out, row)["layout"]["regions"]:
            if region["kind"] != "figure":
                continue
            x0, y0, x1, y1 = (round(v) for v in region["box"])
            crop = page[y0:y1, x0:x1]
            source = Image.open(io.BytesIO(item.figures[region["figure"]].data)).convert("L")
            expected = np.asarray(source.resize((crop.shape[1], crop.shape[0])), dtype=np.float32)
            a, b = crop - crop.mean(), expected - expected.mean()
            correlation = float((a * b).sum() / (np.sqrt((a * a).sum() * (b * b).sum()) + 1e-6))
            assert correlation > 0.8, (row["item_id"], region["name"], correlation)
            checked += 1
    expected = sum(len(item.referenced_figures()) for item in items.values())
    assert checked == 16 * expected
