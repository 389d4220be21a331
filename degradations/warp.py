"""Geometric steps: one fused remap for all warp stages, and plain resizing.

`Warp` composes its stages (see `geometry`) into a single backward map, built
on a coarse grid and interpolated, so a photo's curl, perspective and lens
distortion cost one `cv2.remap`. Around the page lies its plane's backdrop (a
desk texture, or a display and the room around it), drawn in the page's own
coordinates and seen through the same map, so it tilts with the page.
Optional extras are drawn in the same pass: shading of a bent page and the
moiré of a photographed screen (the beat between the screen's pixel grid and
the camera's colour lattice).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.degradations import geometry, plane
from itemshot.degradations.frame import Frame, Params, Transform, register
from itemshot.degradations.screen_scene import draw_scene


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


def plane_box(coarse: np.ndarray, limit: tuple[float, float, float, float]) -> list[int]:
    """Return the plane rectangle (x0, y0, x1, y1, edge coordinates) the output frame sees.

    Taken from the coarse backward map, grown by a grid cell, clipped to `limit`
    (far perspective can reach far away; nothing beyond the limit is drawn).
    """
    xs, ys = coarse[..., 0] + 0.5, coarse[..., 1] + 0.5
    valid = (xs > geometry.OUTSIDE / 2) & (ys > geometry.OUTSIDE / 2)
    if not valid.any():
        return [0, 0, 1, 1]
    cell = float(
        max(np.abs(np.diff(xs, axis=1)).max(initial=1), np.abs(np.diff(ys, axis=0)).max(initial=1))
    )
    x0 = max(limit[0], float(xs[valid].min()) - cell)
    y0 = max(limit[1], float(ys[valid].min()) - cell)
    x1 = min(limit[2], float(xs[valid].max()) + cell)
    y1 = min(limit[3], float(ys[valid].max()) + cell)
    return [int(np.floor(x0)), int(np.floor(y0)), max(int(np.ceil(x1)), int(np.floor(x0)) + 1),
            max(int(np.ceil(y1)), int(np.floor(y0)) + 1)]  # fmt: skip


def draw_surface(
    spec: dict[str, Any], box: list[int], scale: float, extent: tuple[float, float, float, float]
) -> np.ndarray:
    """Return a surface texture (desk, table, wall, …) or flat colour covering `box` at `scale`."""
    if "rgb" in spec:
        width, height = plane.pixels(box, scale)
        return np.full((height, width, 3), spec["rgb"], np.uint8)
    return plane.texture_over(spec["texture"], int(spec["seed"]), box, scale, extent)


def remap_backdrop(
    backdrop: np.ndarray, coarse: np.ndarray, size: tuple[int, int], box: list[int], scale: float
) -> np.ndarray:
    """Return the plane backdrop (drawn over `box` at `scale`) seen through the coarse map.

    A backdrop is soft detail, drawn at `scale` plane px per pixel: it is
    remapped at that reduced resolution and enlarged to the output.
    """
    width, height = size
    reduce = max(1.0, min(3.0, scale))
    half = (max(2, round(width / reduce)), max(2, round(height / reduce)))
    to_backdrop = (coarse + np.float32(0.5) - np.array(box[:2], np.float32)) * np.float32(
        1.0 / scale
    ) - np.float32(0.5)
    maps = full_maps(to_backdrop, *half)
    small = cv2.remap(backdrop, maps, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)


_COS = (0.5 - 0.5 * np.cos(np.linspace(0, 2 * np.pi, 256, endpoint=False))).astype(np.float32)


def _phase_byte(theta: np.ndarray) -> np.ndarray:
    """Return the fractional part of `theta` (cycles) as a byte: 256 steps per cycle."""
    return (theta * np.float32(256.0)).astype(np.int32).astype(np.uint8)


def beat_phases(
    coarse: np.ndarray, size: tuple[int, int], grid: int, spec: dict[str, Any]
) -> np.ndarray:
    """Return the moiré's column and row phases (cycles, h×w×2) at every output pixel.

    The screen's pixel grid (`density` screen px per plane px) is sampled by
    the camera's colour lattice (`lattice` sensor px, `sensor_scale` sensor px
    per output px); what survives is the beat between the two: the grid's
    phase minus the nearest lattice harmonic `alias` (one integer vector for
    columns, one for rows), which varies slowly where the two nearly agree.
    Both terms are smooth, so the phase is computed on the warp's coarse grid
    and interpolated like the map itself.
    """
    width, height = size
    centres = _coarse_grid(width, height, grid)  # output edge coordinates
    sensor = centres * np.float32(spec["sensor_scale"] / spec["lattice"])
    theta = (coarse.astype(np.float64) + 0.5) * spec["density"]
    for channel, alias in enumerate((spec["alias_columns"], spec["alias_rows"])):
        theta[..., channel] -= sensor[..., 0] * alias[0] + sensor[..., 1] * alias[1]
    return full_maps(theta.astype(np.float32), width, height)


def _byte_table(values: np.ndarray) -> np.ndarray:
    return np.clip(np.round(values * 255), 0, 255).astype(np.uint8)


def moire_mask(phases: np.ndarray, spec: dict[str, Any]) -> np.ndarray:
    """Return a 3-channel multiplicative mask (uint8, 255 = 1): colour stripes and row bands."""
    columns, rows = cv2.split(phases)
    strength = float(spec["strength"])
    gap = float(spec["row_strength"])
    steps = np.arange(256)
    # channel c is lit at its third of the period: a table per channel, indexed by phase
    stripes = np.stack([_COS[(steps + (256 * c) // 3 + 128) & 255] for c in range(3)], axis=1)
    stripes = _byte_table(1.0 - strength * (1.0 - stripes)).reshape(256, 1, 3)
    bands = _byte_table(1.0 - gap * np.abs(_COS - 0.5) * 2.0).reshape(256, 1)
    phase = _phase_byte(columns)
    factor = cv2.LUT(cv2.merge([phase, phase, phase]), stripes)
    row_term = cv2.LUT(_phase_byte(rows), bands)
    return cv2.multiply(factor, cv2.merge([row_term, row_term, row_term]), scale=1 / 255)


def _inside(coarse: np.ndarray, rect: list[float], size: tuple[int, int]) -> np.ndarray:
    """Return the 3-channel weight (uint8) of output pixels whose plane point lies in `rect`.

    Found on the coarse grid and interpolated: the boundary is soft over a
    grid cell, which the bezel's dark edge hides.
    """
    x0, y0, x1, y1 = rect
    weight = cv2.bitwise_and(
        cv2.inRange(coarse[..., 0], x0 - 0.5, x1 - 0.5),
        cv2.inRange(coarse[..., 1], y0 - 0.5, y1 - 0.5),
    )
    weight = cv2.resize(weight, size, interpolation=cv2.INTER_LINEAR)
    return cv2.merge([weight, weight, weight])


@register
class Warp(Transform):
    """Fused geometric warp onto a new canvas: stages sampled by a preset-specific sampler.

    The page lies in a plane (a desk, a screen) whose backdrop is drawn in the
    same coordinates and seen through the same camera, so the desk tilts and
    bends with the camera exactly as the page does; `plane_stages` are the
    stages the backdrop goes through (the page's, less any bend of the paper).
    """

    name = "warp"

    def __init__(self, sampler: Any) -> None:
        self.sampler = sampler

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return size, stages, backdrop and extras drawn by the preset's sampler."""
        return self.sampler(rng, frame)

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Remap the backdrop and the page through every stage onto the output canvas."""
        width, height = params["size"]
        stages = params["stages"]
        grid = int(params.get("grid", 8))
        coarse, _ = coarse_maps(stages, width, height, grid)
        maps = full_maps(coarse, width, height)
        plane_stages = params.get("plane_stages")
        plane_coarse = (
            coarse if plane_stages is None else coarse_maps(plane_stages, width, height, grid)[0]
        )
        source = frame.image
        if params.get("shading"):
            shade = source_shading(stages, frame.width, frame.height, grid)
            source = shade_source(source, shade)
        backdrop = params["backdrop"]
        scale = float(backdrop.get("scale", 1.0))
        w, h = frame.width, frame.height
        extent = plane.reach(w, h)
        box = plane_box(plane_coarse, extent)
        if backdrop["kind"] == "screen":
            drawn = draw_scene(backdrop, box, scale, extent)
        else:
            drawn = draw_surface(backdrop, box, scale, extent)
        image = remap_backdrop(drawn, plane_coarse, (width, height), box, scale)
        fixed, frac = cv2.convertMaps(maps, None, cv2.CV_16SC2)
        cv2.remap(
            source, fixed, frac, cv2.INTER_LINEAR, dst=image, borderMode=cv2.BORDER_TRANSPARENT
        )
        moire = params.get("moire")
        if moire and moire["strength"] + moire["row_strength"] > 0:
            phases = beat_phases(plane_coarse, (width, height), grid, moire)
            mask = moire_mask(phases, moire)
            # outside the screen the mask fades to 1: mask' = 255 − (255 − mask)·weight
            screen = _inside(plane_coarse, backdrop["screen"]["rect"], (width, height))
            darkening = cv2.multiply(cv2.subtract(255, mask), screen, scale=1 / 255)
            image = cv2.multiply(image, cv2.subtract(255, darkening), scale=1 / 255)
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
