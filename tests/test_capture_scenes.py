"""The capture scenes keep their promises on a synthetic page: framing, delivery, clear edges.

No browser here: a page of dark text lines on white, with one region per
line, is enough to check what each new step guarantees: the delivered size,
the screen photo's page share, objects that stay clear of the content, a
moiré that follows the screen pitch and the camera distance, and points that
move exactly with every geometric step.
"""

from __future__ import annotations

import numpy as np
import pytest

from itemshot.degradations import PRESETS, SEVERITIES, capture, replay
from itemshot.degradations.capturing import Frame
from itemshot.degradations.deliver import Crop, Deliver
from itemshot.degradations.occluder import Occluder
from itemshot.degradations.photo_geometry import moire
from itemshot.degradations.seeding import rng_for
from itemshot.degradations.warp import beat_phases, coarse_maps
from itemshot.renderer.records import Region, box_to_quad


def page(width: int = 768, height: int = 1024) -> tuple[np.ndarray, list[Region]]:
    """A white page with six dark bars (text lines), each one region."""
    image = np.full((height, width, 3), 250, np.uint8)
    regions = []
    for index in range(6):
        y0 = 120 + index * 130
        box = (60.0, float(y0), width - 60.0, float(y0 + 40))
        image[y0 : y0 + 40, 60 : width - 60] = 30
        regions.append(Region(f"option:{'ABCDEF'[index]}", "option", box, box_to_quad(box)))
    return image, regions


def quad_area(quad: np.ndarray) -> float:
    """Return the shoelace area of a polygon."""
    x, y = quad[:, 0], quad[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


@pytest.mark.parametrize("preset", PRESETS)
def test_delivered_long_side_and_recorded(preset: str) -> None:
    image, regions = page()
    for severity in SEVERITIES:
        default = capture(image, regions, preset, severity, seed=3)
        assert max(default.width, default.height) == 1024
        small = capture(image, regions, preset, severity, seed=3, deliver_size=512)
        assert max(small.width, small.height) == 512
        assert small.params["deliver"] == {"long_side": 512, "requested": 512}
        assert replay(image, regions, small.params).image == small.image
        for region in small.regions:  # every region stays inside the frame
            quad = np.asarray(region.quad)
            assert quad.min() >= 0 and (quad[:, 0] <= small.width).all()
            assert (quad[:, 1] <= small.height).all()


def test_deliver_size_is_checked() -> None:
    image, regions = page()
    with pytest.raises(ValueError, match="deliver size"):
        capture(image, regions, "scan", "light", seed=0, deliver_size=10)


@pytest.mark.parametrize("shape", [(768, 1024), (1024, 576), (1024, 1024)])
def test_screen_photo_page_fills_55_to_85_percent(shape: tuple[int, int]) -> None:
    image, regions = page(*shape)
    for severity in SEVERITIES:
        for seed in range(5):
            shot = capture(image, regions, "phone_photo_screen", severity, seed=seed)
            share = quad_area(np.asarray(shot.page)) / (shot.width * shot.height)
            assert 0.55 <= share <= 0.85, (severity, seed, share)
            # a portrait page is photographed in portrait, a landscape one in landscape
            assert (shot.height >= shot.width) == (shape[1] >= shape[0])


def test_crop_and_deliver_move_points_exactly() -> None:
    image, regions = page()
    points = np.array([regions[0].quad[0], [700.0, 900.0], *box_to_quad((0, 0, 768, 1024))])
    frame = Frame(image, points, deliver=400)
    cropped = Crop.apply(frame, {"box": [10, 20, 700, 1000]})
    assert np.allclose(cropped.points, points - [10, 20])
    assert cropped.image.shape[:2] == (980, 690)
    delivered = Deliver.apply(cropped, Deliver().sample(rng_for(0, "d"), cropped))
    assert max(delivered.width, delivered.height) == 400
    scale = np.array([delivered.width / 690, delivered.height / 980])
    assert np.allclose(delivered.points, (points - [10, 20]) * scale)


def test_objects_at_the_edge_never_reach_the_content() -> None:
    image, regions = page()
    points = np.array([c for r in regions for c in r.quad] + list(box_to_quad((0, 0, 768, 1024))))
    frame = Frame(image, points, deliver=1024)
    step = Occluder({"p": 1.0})
    drawn = 0
    for seed in range(60):
        params = step.sample(rng_for(seed, "occluder"), frame)
        if params["kind"] is None:
            continue
        drawn += 1
        out = Occluder.apply(frame, params)
        for region in regions:
            x0, y0, x1, y1 = (int(v) for v in region.box)
            assert np.array_equal(out.image[y0:y1, x0:x1], image[y0:y1, x0:x1]), params["kind"]
    assert drawn >= 40  # the page leaves room at its edges: most draws place an object


def test_moire_follows_pitch_and_distance() -> None:
    spec = {"sensor_long": (4000, 4000), "optics": (0.4, 0.4), "subpixel": (0.4, 0.4),
            "row_gap": (0.5, 0.5), "max_strength": 1.0, "deliver": 1024}  # fmt: skip
    periods = set()
    for density in (1.0, 1.3, 1.7, 2.2):
        for zoom in (1.1, 1.25, 1.4):  # plane px per output px: the camera's distance
            record = moire(rng_for(0, "m"), np.diag([zoom, zoom]), density, spec)
            if record["period_columns"]:
                periods.add(round(record["period_columns"], 2))
            # beats finer than two output pixels are averaged away
            if record["period_columns"] and record["period_columns"] < 2.0:
                assert record["strength"] == 0.0
    assert len(periods) >= 8  # not one fixed pattern


def test_moire_phase_beats_at_the_recorded_period() -> None:
    stages = [{"kind": "homography", "matrix": [[0.8, 0.0, 10.0], [0.0, 0.8, 12.0], [0, 0, 1]]}]
    coarse, _ = coarse_maps(stages, 640, 480, 8)
    spec = {"sensor_long": (3200, 3200), "optics": (0.4, 0.4), "subpixel": (0.4, 0.4),
            "row_gap": (0.5, 0.5), "max_strength": 1.0, "deliver": 640}  # fmt: skip
    record = moire(rng_for(1, "m"), np.diag([1.25, 1.25]), 1.9, spec)
    phases = beat_phases(coarse, (640, 480), 8, record)
    slope = float(np.median(np.diff(phases[240, :, 0])))  # cycles per output px along a row
    assert record["period_columns"] == pytest.approx(1 / abs(slope), rel=1e-3)
