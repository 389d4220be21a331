"""OCR through the mapped quads: the question is where the record says, and severity hurts.

Every fixture item is rendered by the real renderer, captured with every preset
at every severity, and its question region is cut out of the captured image by
warping the mapped quad back to a rectangle; tesseract reads the crop and the
verifier's similarity (1 − Levenshtein / max length, normalised) compares it to
the DOM text. The captures are checked to have run every step of every preset
and every optional part of a step (a bent page, an object at the edge, a
visible moiré, a back page showing through, a re-save), so the quads are
tested through all of them.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from statistics import mean

import cv2
import numpy as np
import pytesseract
import pytest

from itemshot.cli import main as itemshot
from itemshot.degradations import PRESETS, SEVERITIES, capture
from itemshot.renderer.records import Layout, Region
from itemshot.verify.reading.text import accuracy
from tests.conftest import TOOL_DATA

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one core per tesseract process
PAD = 6.0  # clean-render pixels added around the question box before cutting
MIN_TEXT = 15  # questions shorter than this (figure-only) are not scored

pytestmark = pytest.mark.slow


def crop_region(
    image: np.ndarray, clean: Region, captured: Region, zoom: float = 2.0
) -> np.ndarray:
    """Warp the captured region's quad (padded) back to an upright rectangle."""
    x0, y0, x1, y1 = clean.box
    box = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
    to_captured = cv2.getPerspectiveTransform(box, np.asarray(captured.quad, np.float32))
    padded = np.array(
        [[x0 - PAD, y0 - PAD], [x1 + PAD, y0 - PAD], [x1 + PAD, y1 + PAD], [x0 - PAD, y1 + PAD]],
        np.float32,
    )
    source = cv2.perspectiveTransform(padded[None], to_captured)[0]
    width, height = round((x1 - x0 + 2 * PAD) * zoom), round((y1 - y0 + 2 * PAD) * zoom)
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    matrix = cv2.getPerspectiveTransform(source, target)
    return cv2.warpPerspective(
        image, matrix, (width, height), flags=cv2.INTER_CUBIC, borderValue=(255, 255, 255)
    )


def read(crop: np.ndarray) -> str:
    """Return tesseract's reading of a text block."""
    return pytesseract.image_to_string(crop, lang="eng", config="--psm 6")


def exercised(params: dict) -> set[str]:
    """Return the steps, and the optional parts of steps, that a capture record ran."""
    found = set()
    for step in params["steps"]:
        name, values = step["name"], step["params"]
        found.add(name)
        if name == "warp" and any(s["kind"] == "bend" for s in values["stages"]):
            found.add("warp:bend")
        if name == "warp" and (values.get("moire") or {}).get("strength", 0) > 0:
            found.add("warp:moire")
        if name == "occluder" and values["kind"]:
            found.add(f"occluder:{values['kind']}")
        if name == "deliver" and values["via"]:
            found.add("deliver:resave")
    return found


EXPECTED_PARTS = {
    "warp", "warp:bend", "warp:moire", "occluder", "occluder:hand", "occluder:pen",
    "occluder:phone", "deliver", "deliver:resave", "crop", "browser_window", "phone_screen",
    "lighting", "tone_balance", "glare", "focus_falloff", "camera_blur", "sensor_noise",
    "paper_grain", "bleed_through", "scan_resolution", "toner_noise",
}  # fmt: skip


@pytest.fixture(scope="module")
def scores(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], list[float]]:
    """Similarity of the question crop per (preset, severity), one value per fixture item."""
    out = tmp_path_factory.mktemp("renders")
    status = itemshot(["render", str(TOOL_DATA), "--out", str(out), "--no-progress", "--no-verify"])
    assert status == 0
    jobs = []
    scored = 0
    parts: set[str] = set()
    for index, png in enumerate(sorted((out / "images").glob("*.png"))):
        layout = Layout.from_dict(json.loads(png.with_suffix(".json").read_text())["layout"])
        question = layout.region("question")
        if len(question.text.strip()) < MIN_TEXT:
            continue
        scored += 1
        data = png.read_bytes()
        for preset in PRESETS:
            for severity in SEVERITIES:
                captured = capture(data, [question], preset, severity, seed=500 + index)
                parts |= exercised(captured.params)
                crop = crop_region(captured.array(), question, captured.regions[0])
                jobs.append(((preset, severity), question.text, crop))
    # Every fixture item with a text question (all but figure-only stems) is scored.
    assert scored >= 18 and len(jobs) == scored * len(PRESETS) * len(SEVERITIES)
    assert parts >= EXPECTED_PARTS, f"steps never run: {sorted(EXPECTED_PARTS - parts)}"
    with ThreadPoolExecutor(max_workers=2) as pool:
        texts = list(pool.map(lambda job: read(job[2]), jobs))
    table: dict[tuple[str, str], list[float]] = {}
    for (key, expected, _), observed in zip(jobs, texts, strict=True):
        table.setdefault(key, []).append(accuracy(expected, observed))
    print("\nquestion OCR similarity (mean over items)")
    print(f"{'preset':20s}" + "".join(f"{s:>9s}" for s in SEVERITIES))
    for preset in PRESETS:
        row = "".join(f"{mean(table[(preset, s)]):9.3f}" for s in SEVERITIES)
        print(f"{preset:20s}{row}")
    return table


@pytest.mark.parametrize("preset", PRESETS)
def test_mapped_quad_holds_the_question(
    scores: dict[tuple[str, str], list[float]], preset: str
) -> None:
    worst = min(scores[(preset, "light")])
    assert worst >= 0.6, f"{preset}/light: a question crop read only {worst:.2f}"
    assert mean(scores[(preset, "medium")]) >= 0.6


@pytest.mark.parametrize("preset", PRESETS)
def test_similarity_falls_with_severity(
    scores: dict[tuple[str, str], list[float]], preset: str
) -> None:
    light, medium, strong = (mean(scores[(preset, s)]) for s in SEVERITIES)
    assert light >= medium >= strong, f"{preset}: {light:.3f} {medium:.3f} {strong:.3f}"
    assert light > strong
