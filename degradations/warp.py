"""Geometric steps: one fused remap for all warp stages, and plain resizing.

`Warp` composes its stages (see `geometry`) into a single backward map, built
on a coarse grid and interpolated, so a photo's curl, perspective and lens
distortion cost one `cv2.remap`. What the page does not cover shows a
background (a `backgrounds` texture or a flat colour). Optional extras that
live in source coordinates are drawn during the same pass: shading of a bent
page and the subpixel pattern of a display (whose aliasing by the output grid
is the moiré of a photographed screen).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.backgrounds.textures import surface_texture
from itemshot.degradations import geometry
from itemshot.degradations.frame import Frame, Params, Transform, register


def _coarse_positions(size: int, cells: int) -> np.ndarray:
    """Index coordinates whose linear resize from `cells` to `size` samples is exact."""
    return (np.arange(cells, dtype=np.float64) + 0.5) * size / cells - 0.5


def _coarse_grid(width: int, height: int, grid: int) -> np.ndarray:
    """Edge coordinates (N×2) of a coarse grid that `cv2.resize` interpolates exactly."""
    gw = max(2, -(-width // grid))
    gh = max(2, -(-height // grid))
    grid_x, grid_y = np.meshgrid(
        _coarse_positions(width, gw) + 0.5, _coarse_positions(height, gh) + 0.5
    )
    return np.stack([grid_x.ravel(), grid_y.ravel()], axis=1).reshape(gh, gw, 2)


def coarse_maps(
    stages: list[dict[str, Any]], width: int, height: int, grid: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the backward map on a coarse grid (gh×gw×2 float32 index coordinates) and shading."""
    points = _coarse_grid(width, height, grid)
    gh, gw = points.shape[:2]
    source, shade = geometry.backward(stages, points.reshape(-1, 2))
    coarse = (source - 0.5).reshape(gh, gw, 2).astype(np.float32)
    return coarse, shade.reshape(gh, gw).astype(np.float32)


def full_maps(coarse: np.ndarray, width: int, height: int) -> np.ndarray:
    """Return the coarse 2-channel map interpolated to every output pixel (float32)."""
    return cv2.resize(coarse, (width, height), interpolation=cv2.INTER_LINEAR)


def build_maps(
    stages: list[dict[str, Any]], width: int, height: int, grid: int, shading: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Return full-size float32 maps (source index coordinates) and, if asked, the shading.

    These are the maps `Warp` remaps with (it converts them to fixed point).
    """
    coarse, shade = coarse_maps(stages, width, height, grid)
    map_x, map_y = cv2.split(full_maps(coarse, width, height))
    full_shade = None
    if shading:
        full_shade = cv2.resize(shade, (width, height), interpolation=cv2.INTER_LINEAR)
    return map_x, map_y, full_shade


def source_shading(stages: list[dict[str, Any]], width: int, height: int, grid: int) -> np.ndarray:
    """Return the page's shading factor on a coarse grid of the source (gh×gw float32).

    A bent page is shaded where it turns; the factor lives on the page, so it is
    applied to the source before the remap and moves with the page.
    """
    points = _coarse_grid(width, height, grid)
    gh, gw = points.shape[:2]
    current = points.reshape(-1, 2)
    shade = np.ones(current.shape[0])
    bends = [i for i, stage in enumerate(stages) if stage["kind"] == "bend"]
    for index, stage in enumerate(stages[: bends[-1] + 1] if bends else []):
        if stage["kind"] == "bend":
            shade *= geometry.bend_shading(stage, current)
        if index < bends[-1]:
            current = geometry.forward([stage], current)
    return shade.reshape(gh, gw).astype(np.float32)


def shade_source(image: np.ndarray, shade: np.ndarray) -> np.ndarray:
    """Return a copy of `image` multiplied by the coarse `shade` field where it is not 1."""
    changed = np.abs(shade - 1.0) > 1e-6
    if not changed.any():
        return image
    gh, gw = shade.shape
    height, width = image.shape[:2]
    rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
    # grid cell k covers pixels around (k + 0.5)·size/cells; one cell of margin each side
    y0 = max(0, (int(rows[0]) - 1) * height // gh)
    y1 = min(height, -(-(int(rows[-1]) + 2) * height // gh))
    x0 = max(0, (int(cols[0]) - 1) * width // gw)
    x1 = min(width, -(-(int(cols[-1]) + 2) * width // gw))
    # the field at full size, then read per channel from the interleaved row (h × 3w)
    field = cv2.resize(shade, (width, height), interpolation=cv2.INTER_LINEAR)[y0:y1, x0:x1]
    field3 = cv2.resize(field, (3 * (x1 - x0), y1 - y0), interpolation=cv2.INTER_NEAREST)
    out = image.copy()
    block = np.ascontiguousarray(image[y0:y1, x0:x1]).reshape(y1 - y0, 3 * (x1 - x0))
    out[y0:y1, x0:x1] = cv2.multiply(block, field3, dtype=cv2.CV_8U).reshape(y1 - y0, x1 - x0, 3)
    return out


def background(spec: dict[str, Any], width: int, height: int) -> np.ndarray:
    """Return the backdrop behind a warped page: a texture (made small, scaled up) or a colour."""
    if "rgb" in spec:
        return np.full((height, width, 3), spec["rgb"], np.uint8)
    scale = float(spec.get("scale", 1.0))
    small_w, small_h = max(8, round(width / scale)), max(8, round(height / scale))
    texture = surface_texture(spec["texture"], small_w, small_h, int(spec["seed"]))
    if (small_w, small_h) == (width, height):
        return texture
    return cv2.resize(texture, (width, height), interpolation=cv2.INTER_LINEAR)


_COS = (0.5 - 0.5 * np.cos(np.linspace(0, 2 * np.pi, 256, endpoint=False))).astype(np.float32)


def _phase(coordinate: np.ndarray, pitch: float) -> np.ndarray:
    """Return the position within the pixel period as a byte (256 steps per `pitch`)."""
    return (coordinate * np.float32(256.0 / pitch)).astype(np.int32).astype(np.uint8)


def subpixel_mask(map_x: np.ndarray, map_y: np.ndarray, spec: dict[str, Any]) -> np.ndarray:
    """Return a 3-channel multiplicative mask of RGB stripes and row gaps in source space."""
    pitch = float(spec["pitch"])
    strength = np.float32(spec["strength"])
    gap = np.float32(spec["row_gap"])
    steps = np.arange(256)
    # channel c is lit at its third of the period: a table per channel, indexed by phase
    stripes = np.stack(
        [_COS[(steps + (256 * c) // 3 + 128) & 255] for c in range(3)], axis=1
    ).astype(np.float32)
    stripes = (np.float32(1.0) - strength * (np.float32(1.0) - stripes)).reshape(256, 1, 3)
    rows = np.float32(1.0) - gap * np.abs(_COS - np.float32(0.5)) * np.float32(2.0)
    phase = _phase(map_x, pitch)
    factor = cv2.LUT(cv2.merge([phase, phase, phase]), stripes)
    row_term = cv2.LUT(_phase(map_y, pitch), rows.reshape(256, 1))
    return cv2.multiply(factor, cv2.merge([row_term, row_term, row_term]))


@register
class Warp(Transform):
    """Fused geometric warp onto a new canvas: stages sampled by a preset-specific sampler."""

    name = "warp"

    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return size, stages, background and extras drawn by the preset's sampler."""
        return self.sampler(rng, frame)

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Remap the frame through every stage onto the output canvas."""
        width, height = params["size"]
        stages = params["stages"]
        grid = int(params.get("grid", 8))
        coarse, _ = coarse_maps(stages, width, height, grid)
        maps = full_maps(coarse, width, height)
        fixed, frac = cv2.convertMaps(maps, None, cv2.CV_16SC2)
        source = frame.image
        if params.get("shading"):
            shade = source_shading(stages, frame.width, frame.height, grid)
            source = shade_source(source, shade)
        image = background(params["background"], width, height)
        if not params.get("subpixel"):
            cv2.remap(
                source, fixed, frac, cv2.INTER_LINEAR, dst=image, borderMode=cv2.BORDER_TRANSPARENT
            )
        else:
            map_x, map_y = cv2.split(maps)
            factor = subpixel_mask(map_x, map_y, params["subpixel"])
            page = cv2.remap(source, fixed, frac, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
            page = cv2.multiply(page, factor, dtype=cv2.CV_8U)
            inside = cv2.bitwise_and(
                cv2.inRange(map_x, -0.5, source.shape[1] - 0.5),
                cv2.inRange(map_y, -0.5, source.shape[0] - 0.5),
            )
            cv2.copyTo(page, inside, image)
        points = geometry.forward(stages, frame.points)
        return frame.with_image(image, points)


def resize_image(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Resize with area averaging when shrinking and bicubic when enlarging."""
    if (width, height) == (image.shape[1], image.shape[0]):
        return image
    shrinking = width < image.shape[1]
    method = cv2.INTER_AREA if shrinking else cv2.INTER_CUBIC
    return cv2.resize(image, (width, height), interpolation=method)


def paste(canvas: np.ndarray, image: np.ndarray, x: int, y: int) -> None:
    """Copy `image` into `canvas` at (x, y), clipped to the canvas."""
    h, w = image.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, canvas.shape[1]), min(y + h, canvas.shape[0])
    if x1 > x0 and y1 > y0:
        canvas[y0:y1, x0:x1] = image[y0 - y : y1 - y, x0 - x : x1 - x]


def place_points(
    points: np.ndarray, scale_x: float, scale_y: float, x: float, y: float
) -> np.ndarray:
    """Return points scaled then moved by (x, y): the mapping of `resize_image` + `paste`."""
    return points * np.array([scale_x, scale_y]) + np.array([x, y])


@register
class Downscale(Transform):
    """Shrink the whole frame by a factor (screenshots shared or saved at lower size)."""

    name = "downscale"

    def __init__(self, factor: tuple[float, float] = (1.0, 1.0)) -> None:
        self.factor = factor

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the target size for a factor drawn from the range."""
        low, high = self.factor
        factor = float(rng.uniform(low, high)) if high > low else float(low)
        return {
            "factor": factor,
            "size": [max(1, round(frame.width * factor)), max(1, round(frame.height * factor))],
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Resize to `size` and scale the points by the exact ratios."""
        width, height = params["size"]
        image = resize_image(frame.image, width, height)
        points = place_points(frame.points, width / frame.width, height / frame.height, 0, 0)
        return frame.with_image(image, points)
