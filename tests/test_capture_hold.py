"""Light and medium captures hold the page's text at the renderer's floor; strong does not."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from itemshot.cli import main as itemshot
from itemshot.degradations import PRESETS, capture, replay
from itemshot.renderer.measures import MIN_X_HEIGHT_PX
from itemshot.renderer.records import Layout
from itemshot.verify.checks.layout_checks import vertical_scale
from tests.conftest import TOOL_DATA

# `_fit` may slide a held photo a few pixels back into the frame after it was
# grown, which moves the page against the lens by a fraction of a percent.
SLIDE = 0.99
# A photo's page fills at most 98% of the frame (`photo_geometry.FIT_MARGIN`)
# and a lens shrinks its corners: text set within 4% of the floor is held as
# far as the frame allows, not to the floor.
HOLDABLE_PX = MIN_X_HEIGHT_PX / 0.96


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, Layout]:
    """Render the first fixture item with the real renderer."""
    out = tmp_path_factory.mktemp("hold")
    status = itemshot(["render", str(TOOL_DATA), "--out", str(out), "--limit", "1",
                       "--no-progress", "--no-verify"])  # fmt: skip
    assert status == 0
    png = next((out / "images").glob("*.png"))
    sidecar = json.loads(png.with_suffix(".json").read_text())
    return png.read_bytes(), Layout.from_dict(sidecar["layout"])


def _smallest_text(regions: tuple, clean_x_height: float) -> float:
    """Return the smallest x-height of the page's text as the verifier measures it (final px)."""
    texts = [r for r in regions if r.kind in ("question", "option") and r.text.strip()]
    return min(vertical_scale(r) for r in texts) * clean_x_height


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("severity", ["light", "medium"])
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**31 - 1), x_height=st.floats(HOLDABLE_PX, 8.0))
@example(seed=2**31 - 1, x_height=7.0)  # a curled paper page: the hold measures the bend too
def test_light_and_medium_keep_small_text_at_the_floor(
    page: tuple[bytes, Layout], preset: str, severity: str, seed: int, x_height: float
) -> None:
    png, layout = page
    captured = capture(png, layout.regions, preset, severity, seed, text_x_height=x_height)
    assert captured.params["hold"]["floor_px"] == MIN_X_HEIGHT_PX
    assert _smallest_text(captured.regions, x_height) >= MIN_X_HEIGHT_PX * SLIDE
    again = replay(png, layout.regions, json.loads(json.dumps(captured.params)))
    assert again.image == captured.image


def test_without_a_hold_the_same_captures_draw_small_text_under_it(
    page: tuple[bytes, Layout],
) -> None:
    """The property above is the hold's doing: the drawn framings shrink the page."""
    png, layout = page
    smallest = [
        _smallest_text(capture(png, layout.regions, preset, "medium", seed).regions, 6.5)
        for preset in ("phone_screenshot", "phone_photo_paper", "phone_photo_screen")
        for seed in range(3)
    ]
    assert max(smallest) < MIN_X_HEIGHT_PX


@pytest.mark.parametrize("preset", PRESETS)
def test_a_page_whose_text_clears_the_floor_is_framed_as_drawn(
    page: tuple[bytes, Layout], preset: str
) -> None:
    png, layout = page
    held = capture(png, layout.regions, preset, "medium", 7, text_x_height=14.0)
    free = capture(png, layout.regions, preset, "medium", 7)
    assert held.image == free.image
    # An item's design cells share their sampled capture: nothing held, one step record.
    assert held.params["steps"] == free.params["steps"]
    assert held.params["hold"]["page_scale"] < 0.5 and free.params["hold"] is None


def test_held_steps_record_what_they_kept(page: tuple[bytes, Layout]) -> None:
    png, layout = page
    photo = capture(png, layout.regions, "phone_photo_paper", "medium", 3, text_x_height=6.5)
    warp = photo.params["steps"][0]["params"]["held"]
    assert warp["drawn"] < warp["need"] <= warp["stretch"] / SLIDE
    assert 0.0 <= warp["pose"] <= 1.0 and warp["grow"] >= 1.0
    shot = capture(png, layout.regions, "phone_screenshot", "medium", 3, text_x_height=6.5)
    crop = next(s for s in shot.params["steps"] if s["name"] == "crop")["params"]
    assert 0.0 <= crop["held"] < 1.0


def test_strong_is_not_held(page: tuple[bytes, Layout]) -> None:
    png, layout = page
    captured = capture(png, layout.regions, "phone_screenshot", "strong", 1, text_x_height=6.5)
    assert captured.params["hold"] is None
    assert _smallest_text(captured.regions, 6.5) < MIN_X_HEIGHT_PX
