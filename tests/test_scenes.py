"""Every scene × {English, Japanese} × 4 aspects × 2 margins renders cleanly (real Chromium).

Checks per image: rendered, no region overflows, every font Chromium used is a
requested family or a recorded coverage fallback, and text/background
contrast ≥ 4.5:1 — from the region's CSS colours and from the pixels under it
(textures, gradients and overlays included). Prints the table.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from itemshot.outputs import MANIFEST
from itemshot.pipeline import RunSettings, run_jobs
from itemshot.renderer.adapters import load_dataset
from itemshot.renderer.jobs import JobRequest, plan
from itemshot.renderer.presentation import (
    ASPECTS,
    FONT_STYLES,
    MARGINS,
    SAMPLED_SCENES,
    SCENE_COLORS,
    PresentationSpec,
    contrast_ratio,
)

SAMPLE = Path(__file__).resolve().parents[1] / "renderer" / "sample" / "sample.jsonl"
ITEMS = ("en-triangle", "ja-circuit")
MIN_CONTRAST = 4.5
# Chromium names the face it used: a family's weight faces ("Klee One SemiBold",
# "Noto Sans CJK JP Light") are that family, not a fallback.
_FACE_SUFFIX = re.compile(
    r"(?: (?:Thin|ExtraLight|UltraLight|Light|DemiLight|Regular|Medium|SemiBold|DemiBold"
    r"|Bold|ExtraBold|Black|Italic))+"
)
_RGB = re.compile(r"rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)")


def _hex(css: str) -> str:
    match = _RGB.fullmatch(css)
    assert match, css
    return "#" + "".join(f"{int(v):02x}" for v in match.groups()[:3])


def _family(platform_name: str, allowed: set[str]) -> str:
    """Return the family a platform font name belongs to (itself when it is not a face)."""
    if platform_name in allowed:
        return platform_name
    for family in allowed:
        rest = platform_name.removeprefix(family)
        if rest != platform_name and _FACE_SUFFIX.fullmatch(rest):
            return family
    return platform_name


def _pixel_background(image: np.ndarray, box: list[float]) -> str:
    """Return the median colour of a region's pixels: the background under sparse text."""
    x0, y0, x1, y1 = (round(v) for v in box)
    crop = image[max(y0, 0) : max(y1, y0 + 1), max(x0, 0) : max(x1, x0 + 1)].reshape(-1, 3)
    return "#" + "".join(f"{int(v):02x}" for v in np.median(crop, axis=0))


def _check(out: Path, row: dict[str, Any]) -> dict[str, Any]:
    sidecar = json.loads((out / row["layout"]).read_text(encoding="utf-8"))["layout"]
    allowed = set(sidecar["fonts_requested"]) | set(sidecar["fonts_fallback"])
    image = np.asarray(Image.open(out / row["image"]).convert("RGB"))
    worst, used, problems = 99.0, set(), []
    for region in sidecar["regions"]:
        if region["overflow"]:
            problems.append(f"{region['name']} overflows")
        if region["kind"] == "figure":
            continue
        families = {_family(name, allowed) for name in region["fonts"]}
        used |= families
        stray = families - allowed
        if stray:
            problems.append(f"{region['name']} fell back to {sorted(stray)}")
        text = _hex(region["color"])
        css = contrast_ratio(text, _hex(region["background"]))
        pixels = contrast_ratio(text, _pixel_background(image, region["box"]))
        worst = min(worst, css, pixels)
    if worst < MIN_CONTRAST:
        problems.append(f"contrast {worst:.2f} < {MIN_CONTRAST}")
    return {"contrast": worst, "fonts": sorted(used), "problems": problems}


@pytest.mark.slow
def test_every_scene_aspect_margin_and_language(tmp_path: Path) -> None:
    dataset = load_dataset(SAMPLE)
    items = {e.id: e for e in dataset.entries if getattr(e, "id", None) in ITEMS}
    assert set(items) == set(ITEMS)
    requests = []
    combos = list(itertools.product(SAMPLED_SCENES, ITEMS, ASPECTS, MARGINS))
    for index, (scene, item_id, aspect, margin) in enumerate(combos):
        colors = SCENE_COLORS[scene]
        spec = PresentationSpec(
            scene=scene,
            color=colors[index % len(colors)],
            font_style=FONT_STYLES[index % len(FONT_STYLES)],
            aspect=aspect,
            margin=margin,
        )
        requests.append(JobRequest(items[item_id], spec))
    planned = plan(requests, 0)
    assert len(planned) == 144
    summary = run_jobs(planned, tmp_path, RunSettings(workers=2, pages_per_worker=2))
    rows = [json.loads(line) for line in (tmp_path / MANIFEST).read_text().splitlines()]
    print(
        f"\n{'scene':16} {'item':12} {'aspect':6} {'margin':6} {'style':12} "
        f"{'contrast':>8}  fonts / problems"
    )
    failures = []
    for row in rows:
        p = row["presentation"]
        if row["status"] != "ok":
            failures.append(f"{p['scene']} {row['item_id']} {p['aspect']}: {row['error']}")
            continue
        result = _check(tmp_path, row)
        print(
            f"{p['scene']:16} {row['item_id']:12} {p['aspect']:6} {p['margin']:6} "
            f"{p['font_style']:12} {result['contrast']:8.2f}  "
            f"{', '.join(result['fonts'])} {'; '.join(result['problems'])}"
        )
        failures += [
            f"{p['scene']} {row['item_id']} {p['aspect']}: {m}" for m in result["problems"]
        ]
    print(f"{summary.rendered} rendered, {summary.failed} failed, {len(failures)} problems")
    assert summary.rendered == 144
    assert not failures, "\n".join(failures)
