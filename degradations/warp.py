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

from backgrounds import make_texture
from degradations import geometry
from degradations.frame import Frame, Params, Transform, register


def _coarse_positions(size: int, cells: int) -> np.ndarray:
    """Index coordinates whose linear resize from `cells` to `size` samples is exact."""
    return (np.arange(cells, dtype=np.float64) + 0.5) * size / cells - 0.5


def build_maps(
    stages: list[dict[str, Any]], width: int, height: int, grid: int, shading: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Return full-size float32 maps (source index coordinates) and, if asked, the shading."""
    gw = max(2, -(-width // grid))
    gh = max(2, -(-height // grid))
    xs = _coarse_positions(width, gw)
    ys = _coarse_positions(height, gh)
    grid_x, grid_y = np.meshgrid(xs + 0.5, ys + 0.5)
    points = np.stack([grid_x.ravel(), grid_y.ravel()], axis=1)
    source, shade = geometry.backward(stages, points)
    map_x = (source[:, 0] - 0.5).reshape(gh, gw).astype(np.float32)
    map_y = (source[:, 1] - 0.5).reshape(gh, gw).astype(np.float32)
    shade_map = shade.reshape(gh, gw).astype(np.float32)
    size = (width, height)
    full_shade = None
    if shading:
        full_shade = cv2.resize(shade_map, size, interpolation=cv2.INTER_LINEAR)
    return (
        cv2.resize(map_x, size, interpolation=cv2.INTER_LINEAR),
        cv2.resize(map_y, size, interpolation=cv2.INTER_LINEAR),
        full_shade,
    )


def background(spec: dict[str, Any], width: int, height: int) -> np.ndarray:
    """Return the backdrop behind a warped page: a texture (made small, scaled up) or a colour."""
    if "rgb" in spec:
        return np.full((height, width, 3), spec["rgb"], np.uint8)
    scale = float(spec.get("scale", 1.0))
    small_w, small_h = max(8, round(width / scale)), max(8, round(height / scale))
    texture = make_texture(spec["texture"], small_w, small_h, int(spec["seed"]))
    if (small_w, small_h) == (width, height):
        return texture
    return cv2.resize(texture, (width, height), interpolation=cv2.INTER_LINEAR)


_COS = (0.5 - 0.5 * np.cos(np.linspace(0, 2 * np.pi, 256, endpoint=False))).astype(np.float32)


def subpixel_mask(map_x: np.ndarray, map_y: np.ndarray, spec: dict[str, Any]) -> np.ndarray:
    """Return a 3-channel multiplicative mask of RGB stripes and row gaps in source space."""
    pitch = float(spec["pitch"])
    strength = np.float32(spec["strength"])
    gap = np.float32(spec["row_gap"])
    phase = (map_x * np.float32(256.0 / pitch)).astype(np.int32)
    rows = _COS[(map_y * np.float32(256.0 / pitch)).astype(np.int32) & 255]
    row_term = np.float32(1.0) - gap * np.abs(rows - np.float32(0.5)) * np.float32(2.0)
    channels = []
    for channel in range(3):
        stripe = _COS[(phase + (256 * channel) // 3 + 128) & 255]  # channel lit at its third
        channels.append((np.float32(1.0) - strength * (np.float32(1.0) - stripe)) * row_term)
    return cv2.merge(channels)


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
        shading = bool(params.get("shading"))
        map_x, map_y, shade = build_maps(stages, width, height, int(params.get("grid", 8)), shading)
        fixed, frac = cv2.convertMaps(map_x, map_y, cv2.CV_16SC2)
        source = frame.image
        factor = None
        if params.get("subpixel"):
            factor = subpixel_mask(map_x, map_y, params["subpixel"])
        if shade is not None:
            shaded = cv2.merge([shade, shade, shade])
            factor = shaded if factor is None else factor * shaded
        image = background(params["background"], width, height)
        if factor is None:
            cv2.remap(
                source, fixed, frac, cv2.INTER_LINEAR, dst=image, borderMode=cv2.BORDER_TRANSPARENT
            )
        else:
            page = cv2.remap(source, fixed, frac, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
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
