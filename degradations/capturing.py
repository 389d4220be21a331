"""capture() and replay(): a clean render in, a captured image with its full record out."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from itemshot.degradations.encoding import decode, encode, sample_encoding, to_rgb
from itemshot.degradations.frame import Compose, Frame, Params, json_ready
from itemshot.degradations.presets import pipeline
from itemshot.degradations.seeding import rng_for
from itemshot.renderer.measures import MIN_X_HEIGHT_PX
from itemshot.renderer.records import Layout, Region

# 3: delivered size, legibility-defined severities, new scene steps;
# 4: strong photos eased to stay readable (blur, noise, JPEG, roll, keystone);
# 5: light and medium hold the page's text at the readable floor (`hold`); scan
#    dropouts only inside strokes, not in a page's dark fills.
PARAMS_VERSION = 5
# The severities that promise easy reading: their framing never draws the
# page's text under the floor the renderer itself keeps (`MIN_X_HEIGHT_PX`).
HELD_SEVERITIES = ("light", "medium")


@dataclass(frozen=True)
class Captured:
    """A captured image: encoded bytes, every applied parameter, and regions in its pixels."""

    image: bytes
    format: str
    params: dict[str, Any]
    regions: tuple[Region, ...]
    width: int
    height: int
    page: tuple[tuple[float, float], ...] = ()  # the clean page's corners in the final image

    def array(self) -> np.ndarray:
        """Return the decoded RGB image."""
        return decode(self.image)

    @property
    def suffix(self) -> str:
        """Return the file suffix for the format (`.png` or `.jpg`)."""
        return ".jpg" if self.format == "jpeg" else ".png"


def _pixels(image: bytes | np.ndarray) -> np.ndarray:
    if isinstance(image, bytes | bytearray | memoryview):
        return decode(bytes(image))
    return to_rgb(np.asarray(image))


def _points(regions: Sequence[Region], width: int, height: int) -> np.ndarray:
    """Every region corner, then the page corners (clockwise from top-left)."""
    corners = [corner for region in regions for corner in region.quad]
    corners += [
        (0.0, 0.0),
        (float(width), 0.0),
        (float(width), float(height)),
        (0.0, float(height)),
    ]
    return np.asarray(corners, np.float64)


def _mapped(regions: Sequence[Region], points: np.ndarray) -> tuple[Region, ...]:
    out = []
    for index, region in enumerate(regions):
        corners = points[4 * index : 4 * index + 4]
        quad = tuple((float(x), float(y)) for x, y in corners)
        out.append(region.with_quad(quad))  # type: ignore[arg-type]
    return tuple(out)


def _finish(frame: Frame, regions: Sequence[Region], params: Params) -> Captured:
    data = encode(frame.image, params["encode"])
    return Captured(
        image=data,
        format=params["encode"]["format"],
        params=params,
        regions=_mapped(regions, frame.points[:-4]),
        width=frame.width,
        height=frame.height,
        page=tuple((float(x), float(y)) for x, y in frame.page),
    )


def _start(pixels: np.ndarray, regions: Sequence[Region], deliver: int, hold: float = 0.0) -> Frame:
    height, width = pixels.shape[:2]
    return Frame(pixels, _points(regions, width, height), deliver, hold)


def text_hold(
    severity: str, text_x_height: float | None, clean_long: int, deliver: int
) -> dict[str, float] | None:
    """Return the page scale a capture must keep for its text to stay at the floor.

    `text_x_height` is the x-height of the page's text on the clean render
    (clean px). The page scale is the page's long side in the final image
    over the delivered long side, as the preset table gives it; text drawn
    at `page_scale` is `MIN_X_HEIGHT_PX` high. None when the severity does
    not hold (strong) or the text size is unknown.
    """
    if severity not in HELD_SEVERITIES or not text_x_height or text_x_height <= 0:
        return None
    scale = MIN_X_HEIGHT_PX * clean_long / (float(text_x_height) * deliver)
    return {"floor_px": MIN_X_HEIGHT_PX, "x_height_px": float(text_x_height), "page_scale": scale}


def delivered_long_side(width: int, height: int, deliver_size: int | None) -> int:
    """Return the final image's long side: `deliver_size`, or by default the clean image's."""
    if deliver_size is None:
        return max(width, height)
    if isinstance(deliver_size, bool) or not isinstance(deliver_size, int) or deliver_size < 64:
        raise ValueError(
            f"deliver size must be a whole number of pixels >= 64, got {deliver_size!r}"
        )
    return deliver_size


def capture(
    image: bytes | np.ndarray,
    regions: Sequence[Region],
    preset: str,
    severity: str,
    seed: int,
    deliver_size: int | None = None,
    text_x_height: float | None = None,
) -> Captured:
    """Simulate capturing a clean render with `preset` at `severity`, seeded only by `seed`.

    `image` is encoded bytes or an RGB(A) uint8 array; each region's `quad` must
    be in the clean image's pixels and comes back mapped to the captured image.
    The captured image's long side is `deliver_size` (the size the model will
    receive; by default the clean image's): severities are defined by what
    they leave legible at that size. Given the x-height of the page's text
    (clean px), light and medium frame the page no smaller than keeps it at
    the readable floor (`text_hold`; recorded as `hold`, and each framing
    step records how far it was held).
    """
    pixels = _pixels(image)
    deliver = delivered_long_side(pixels.shape[1], pixels.shape[0], deliver_size)
    hold = text_hold(severity, text_x_height, max(pixels.shape[:2]), deliver)
    steps, encode_spec = pipeline(preset, severity)
    start = _start(pixels, regions, deliver, hold["page_scale"] if hold else 0.0)
    frame, records = steps(start, seed)
    params = json_ready(
        {
            "version": PARAMS_VERSION,
            "preset": preset,
            "severity": severity,
            "seed": int(seed),
            "deliver": {"long_side": deliver, "requested": deliver_size},
            "hold": hold,
            "input": {
                "width": int(pixels.shape[1]),
                "height": int(pixels.shape[0]),
                "sha256": hashlib.sha256(memoryview(pixels).cast("B")).hexdigest(),
            },
            "steps": records,
            "encode": sample_encoding(rng_for(seed, "encode"), encode_spec),
        }
    )
    return _finish(frame, regions, params)


def replay(
    image: bytes | np.ndarray, regions: Sequence[Region], params: Mapping[str, Any]
) -> Captured:
    """Re-apply a stored `Captured.params` record to the same clean image: identical bytes."""
    if params.get("version") != PARAMS_VERSION:
        raise ValueError(f"unsupported capture params version {params.get('version')!r}")
    pixels = _pixels(image)
    expected = params["input"]
    if [pixels.shape[1], pixels.shape[0]] != [expected["width"], expected["height"]]:
        raise ValueError(
            f"clean image is {pixels.shape[1]}x{pixels.shape[0]}, the record was made on "
            f"{expected['width']}x{expected['height']}"
        )
    frame = Compose.replay(_start(pixels, regions, params["deliver"]["long_side"]), params["steps"])
    return _finish(frame, regions, json_ready(params))


def capture_layout(
    image: bytes | np.ndarray,
    layout: Layout,
    preset: str,
    severity: str,
    seed: int,
    deliver_size: int | None = None,
) -> tuple[Captured, Layout]:
    """Capture a clean render and return the result with its layout moved to the new pixels.

    The layout's measured x-height (`measures`) is the text the capture holds.
    """
    text_x_height = layout.measures.get("x_height_px") if layout.measures else None
    captured = capture(image, layout.regions, preset, severity, seed, deliver_size, text_x_height)
    moved = replace(layout, width=captured.width, height=captured.height, regions=captured.regions)
    return captured, moved
