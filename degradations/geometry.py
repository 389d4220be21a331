"""Point mappings of the geometric stages, forward (source → output) and backward.

Coordinates are continuous "edge" coordinates: pixel (i, j) covers [i, i+1) ×
[j, j+1), so a box from the DOM maps without half-pixel shifts. Each stage is
a dict of parameters with a `kind`:

- `homography`: `matrix` (3×3, source → output);
- `lens`: radial distortion, defined by its explicit backward map
  `ideal = c + (d − c)(1 + k1 ρ² + k2 ρ⁴)`, ρ = |d − c| / `norm`; the forward map
  (ideal → distorted) is solved by fixed-point iteration;
- `bend`: a page curl (`mode` `curl`: the part beyond `start` along the unit
  `normal` rolls onto a cylinder of `radius`) or fold (`mode` `fold`: that part
  tilts by `angle`), seen from above; forward and backward are both analytic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

Stage = Mapping[str, Any]
OUTSIDE = -1.0e6  # coordinate given to output points that see no source


def apply_homography(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Return `points` (N×2) mapped by the 3×3 `matrix`."""
    ones = np.ones((points.shape[0], 1))
    mapped = np.hstack([points, ones]) @ np.asarray(matrix, np.float64).T
    return mapped[:, :2] / mapped[:, 2:3]


def _lens_factor(stage: Stage, offset: np.ndarray) -> np.ndarray:
    rho2 = (offset**2).sum(axis=1, keepdims=True) / float(stage["norm"]) ** 2
    return 1.0 + float(stage["k1"]) * rho2 + float(stage["k2"]) * rho2 * rho2


def _lens_backward(stage: Stage, points: np.ndarray) -> np.ndarray:
    centre = np.asarray(stage["centre"], np.float64)
    offset = points - centre
    return centre + offset * _lens_factor(stage, offset)


def _lens_forward(stage: Stage, points: np.ndarray, iterations: int = 30) -> np.ndarray:
    centre = np.asarray(stage["centre"], np.float64)
    ideal = points - centre
    guess = ideal.copy()
    for _ in range(iterations):
        guess = ideal / _lens_factor(stage, guess)
    return centre + guess


def _bend_profile(stage: Stage, t: np.ndarray) -> np.ndarray:
    """Apparent distance beyond the bend line for true distance `t` ≥ 0."""
    if stage["mode"] == "curl":
        radius = float(stage["radius"])
        return radius * np.sin(np.minimum(t / radius, np.pi / 2))
    return t * np.cos(float(stage["angle"]))


def _bend_inverse(stage: Stage, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """True distance for apparent distance `t` ≥ 0, and whether it exists."""
    if stage["mode"] == "curl":
        radius = float(stage["radius"])
        ratio = t / radius
        valid = ratio <= 1.0
        return radius * np.arcsin(np.clip(ratio, 0.0, 1.0)), valid
    return t / np.cos(float(stage["angle"])), np.ones(t.shape, bool)


def _bend(stage: Stage, points: np.ndarray, forward: bool) -> tuple[np.ndarray, np.ndarray]:
    normal = np.asarray(stage["normal"], np.float64)
    s = points @ normal - float(stage["start"])
    beyond = s > 0
    t = np.where(beyond, s, 0.0)
    if forward:
        moved, valid = _bend_profile(stage, t), np.ones(t.shape, bool)
    else:
        moved, valid = _bend_inverse(stage, t)
    shifted = points + ((moved - t) * beyond)[:, None] * normal
    return shifted, valid | ~beyond


def bend_shading(stage: Stage, source: np.ndarray) -> np.ndarray:
    """Return the brightness factor of page points (source coordinates) on a bent page."""
    normal = np.asarray(stage["normal"], np.float64)
    t = np.maximum(source @ normal - float(stage["start"]), 0.0)
    if stage["mode"] == "curl":
        tilt = np.minimum(t / float(stage["radius"]), np.pi / 2)
    else:
        tilt = np.where(t > 0, float(stage["angle"]), 0.0)
    # light from the side of `light` (+1: the bent part faces it, −1: faces away)
    return (
        1.0
        + float(stage["light"]) * float(stage["shade"]) * np.sin(tilt)
        - float(stage["shade"]) * (1 - np.cos(tilt))
    )


def forward(stages: Sequence[Stage], points: np.ndarray) -> np.ndarray:
    """Map source points through every stage to output coordinates."""
    out = np.asarray(points, np.float64).reshape(-1, 2)
    for stage in stages:
        kind = stage["kind"]
        if kind == "homography":
            out = apply_homography(np.asarray(stage["matrix"]), out)
        elif kind == "lens":
            out = _lens_forward(stage, out)
        elif kind == "bend":
            out = _bend(stage, out, forward=True)[0]
        else:
            raise ValueError(f"unknown geometric stage {kind!r}")
    return out


def backward(stages: Sequence[Stage], points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map output points back to source points; also return a shading factor per point."""
    out = np.asarray(points, np.float64).reshape(-1, 2)
    valid = np.ones(out.shape[0], bool)
    shade = np.ones(out.shape[0])
    for stage in reversed(stages):
        kind = stage["kind"]
        if kind == "homography":
            out = apply_homography(np.linalg.inv(np.asarray(stage["matrix"])), out)
        elif kind == "lens":
            out = _lens_backward(stage, out)
        elif kind == "bend":
            out, ok = _bend(stage, out, forward=False)
            valid &= ok
            shade *= bend_shading(stage, out)
        else:
            raise ValueError(f"unknown geometric stage {kind!r}")
    out[~valid] = OUTSIDE
    return out, shade


def scale_translate(sx: float, sy: float, tx: float, ty: float) -> list[list[float]]:
    """Return the 3×3 matrix of `x' = sx·x + tx`, `y' = sy·y + ty`."""
    return [[sx, 0.0, tx], [0.0, sy, ty], [0.0, 0.0, 1.0]]


def index_matrix(matrix: Sequence[Sequence[float]]) -> np.ndarray:
    """Convert an edge-coordinate homography to OpenCV's pixel-index convention."""
    to_edge = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]], np.float64)
    to_index = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]], np.float64)
    return to_index @ np.asarray(matrix, np.float64) @ to_edge
