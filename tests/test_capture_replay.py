"""Capture records replay byte-for-byte, seeds alone decide the output, and inputs are checked."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from itemshot.cli import main as itemshot
from itemshot.degradations import PRESETS, SEVERITIES, capture, capture_layout, replay
from itemshot.renderer.records import Layout
from tests.conftest import TOOL_DATA


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[bytes, Layout]]:
    """Render the first two fixture items with the real renderer."""
    out = tmp_path_factory.mktemp("renders")
    status = itemshot(["render", str(TOOL_DATA), "--out", str(out), "--limit", "2",
                       "--no-progress", "--no-verify"])  # fmt: skip
    assert status == 0
    pairs = []
    for png in sorted((out / "images").glob("*.png")):
        sidecar = json.loads(png.with_suffix(".json").read_text())
        pairs.append((png.read_bytes(), Layout.from_dict(sidecar["layout"])))
    assert len(pairs) == 2
    return pairs


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("severity", SEVERITIES)
def test_replay_reproduces_identical_bytes(
    renders: list[tuple[bytes, Layout]], preset: str, severity: str
) -> None:
    for index, (png, layout) in enumerate(renders):
        captured = capture(png, layout.regions, preset, severity, seed=1000 + index)
        stored = json.loads(json.dumps(captured.params))  # as read back from a sidecar
        again = replay(png, layout.regions, stored)
        assert again.image == captured.image
        assert again.regions == captured.regions
        assert (again.width, again.height, again.format) == (
            captured.width, captured.height, captured.format,
        )  # fmt: skip
        assert captured.array().shape == (captured.height, captured.width, 3)


def test_params_record_every_step_and_encoding(renders: list[tuple[bytes, Layout]]) -> None:
    png, layout = renders[0]
    captured = capture(png, layout.regions, "phone_photo_paper", "strong", seed=3)
    names = [step["name"] for step in captured.params["steps"]]
    assert names == [
        "warp", "occluder", "lighting", "tone_balance", "camera_blur", "sensor_noise", "deliver",
    ]  # fmt: skip
    warp = captured.params["steps"][0]["params"]
    homography = next(s for s in warp["stages"] if s["kind"] == "homography")
    assert np.asarray(homography["matrix"]).shape == (3, 3)
    assert captured.params["encode"]["format"] == captured.format == "jpeg"
    assert captured.params["input"]["width"] == layout.width


def test_same_seed_same_bytes_other_seed_other_image(renders: list[tuple[bytes, Layout]]) -> None:
    png, layout = renders[0]
    first = capture(png, layout.regions, "phone_photo_screen", "medium", seed=11)
    second = capture(png, layout.regions, "phone_photo_screen", "medium", seed=11)
    other = capture(png, layout.regions, "phone_photo_screen", "medium", seed=12)
    assert first.image == second.image
    assert first.params == second.params
    assert other.params["steps"] != first.params["steps"]


def test_array_input_matches_png_input(renders: list[tuple[bytes, Layout]]) -> None:
    png, layout = renders[0]
    from_png = capture(png, layout.regions, "scan", "medium", seed=5)
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    from_array = capture(pixels, layout.regions, "scan", "medium", seed=5)
    assert from_png.image == from_array.image


def test_capture_layout_moves_regions_and_size(renders: list[tuple[bytes, Layout]]) -> None:
    png, layout = renders[1]
    captured, moved = capture_layout(png, layout, "pc_screenshot", "light", seed=2)
    assert (moved.width, moved.height) == (captured.width, captured.height)
    assert [r.name for r in moved.regions] == [r.name for r in layout.regions]
    assert moved.region("question").quad != layout.region("question").quad
    assert moved.region("question").box == layout.region("question").box


def test_replay_rejects_another_image_size(renders: list[tuple[bytes, Layout]]) -> None:
    png, layout = renders[0]
    captured = capture(png, layout.regions, "scan", "light", seed=1)
    with pytest.raises(ValueError, match="record was made on"):
        replay(np.zeros((10, 10, 3), np.uint8), layout.regions, captured.params)


def test_unknown_preset_and_severity_are_named() -> None:
    image = np.full((40, 30, 3), 255, np.uint8)
    with pytest.raises(ValueError, match="unknown capture preset 'fax'"):
        capture(image, [], "fax", "light", seed=0)
    with pytest.raises(ValueError, match="unknown severity 'extreme'"):
        capture(image, [], "scan", "extreme", seed=0)


def test_blur_draws_the_same_from_concurrent_threads() -> None:
    """The executor's worker threads share the blur step: each draw depends on its seed alone."""
    from concurrent.futures import ThreadPoolExecutor

    from itemshot.degradations.blur import CameraBlur
    from itemshot.degradations.frame import Frame

    blur = CameraBlur({"weights": {"motion": 1, "defocus": 1, "gaussian": 1},
                       "motion": [3, 9], "defocus": [1, 3], "gaussian": [0.5, 1.5]})  # fmt: skip
    frame = Frame(image=np.zeros((8, 8, 3), np.uint8), points=np.zeros((4, 2)), deliver=8)

    def draw(seed: int) -> str:
        return json.dumps(blur.sample(np.random.default_rng(seed), frame), sort_keys=True)

    serial = [draw(seed) for seed in range(400)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        concurrent = list(pool.map(draw, range(400)))
    assert concurrent == serial
