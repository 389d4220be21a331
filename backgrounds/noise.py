"""Seeded value-noise fields: the building block of every procedural texture.

Every field can be made `periodic`: its last row and column continue into its
first, so a tile of it repeats without a seam (the scene tiles the rendering
page repeats are made that way).
"""

from __future__ import annotations

import cv2
import numpy as np


def _wrap_weights(size: int, cells: int, cubic: bool) -> np.ndarray:
    """Return the (size × cells) interpolation matrix of a periodic grid of `cells` knots."""
    t = (np.arange(size, dtype=np.float64) + 0.5) * cells / size - 0.5
    base = np.floor(t).astype(int)
    frac = t - base
    weights = np.zeros((size, cells), np.float64)
    rows = np.arange(size)
    if cubic:  # Catmull-Rom: passes through the knots, continuous slope
        taps = (
            ((-frac + 2) * frac - 1) * frac / 2,
            ((3 * frac - 5) * frac * frac + 2) / 2,
            ((-3 * frac + 4) * frac + 1) * frac / 2,
            (frac - 1) * frac * frac / 2,
        )
        offsets = (-1, 0, 1, 2)
    else:
        taps, offsets = (1 - frac, frac), (0, 1)
    for offset, tap in zip(offsets, taps, strict=True):
        np.add.at(weights, (rows, (base + offset) % cells), tap)
    return weights.astype(np.float32)


def _upsample(grid: np.ndarray, width: int, height: int, cubic: bool, periodic: bool) -> np.ndarray:
    """Return a small random grid interpolated to (height, width), wrapping when `periodic`."""
    if not periodic:
        method = cv2.INTER_CUBIC if cubic else cv2.INTER_LINEAR
        return cv2.resize(grid, (width, height), interpolation=method)
    gh, gw = grid.shape
    rows = _wrap_weights(height, gh, cubic)
    cols = _wrap_weights(width, gw, cubic)
    return rows @ grid @ cols.T


def value_noise(
    rng: np.random.Generator, width: int, height: int, cells: float, periodic: bool = False
) -> np.ndarray:
    """Return smooth noise in [0, 1] of shape (height, width) with about `cells` blobs across."""
    cells = max(cells, 1.0)
    extra = 0 if periodic else 1  # a periodic grid's last knot is its first
    gw = max(2, round(cells) + extra)
    gh = max(2, round(cells * height / max(width, 1)) + extra)
    grid = rng.random((gh, gw), dtype=np.float32)
    return _upsample(grid, width, height, cubic=True, periodic=periodic)


def fbm(
    rng: np.random.Generator,
    width: int,
    height: int,
    cells: float,
    octaves: int = 4,
    gain: float = 0.5,
    periodic: bool = False,
) -> np.ndarray:
    """Return fractal (multi-octave) value noise normalised to zero mean, unit-ish range."""
    total = np.zeros((height, width), np.float32)
    amplitude = 1.0
    norm = 0.0
    for octave in range(octaves):
        total += amplitude * value_noise(rng, width, height, cells * (2**octave), periodic)
        norm += amplitude
        amplitude *= gain
    total /= norm
    return total - np.float32(0.5)


def grain(rng: np.random.Generator, width: int, height: int, sigma: float) -> np.ndarray:
    """Return per-pixel Gaussian grain of standard deviation `sigma` (float32)."""
    return rng.standard_normal((height, width), dtype=np.float32) * np.float32(sigma)


def streaks(
    rng: np.random.Generator,
    width: int,
    height: int,
    along: int,
    across: float,
    periodic: bool = False,
) -> np.ndarray:
    """Return noise stretched horizontally: fibres or grain lines `along` px long."""
    small_w = max(2, width // max(along, 1))
    small_h = max(2, int(height / max(across, 0.5)))
    field = rng.random((small_h, small_w), dtype=np.float32) - np.float32(0.5)
    return _upsample(field, width, height, cubic=False, periodic=periodic)


def blur(field: np.ndarray, sigma_x: float, sigma_y: float, periodic: bool = False) -> np.ndarray:
    """Return a Gaussian blur of a 2-D field; a periodic field is blurred across its wrap."""
    if not periodic:
        return cv2.GaussianBlur(field, (0, 0), sigmaX=sigma_x, sigmaY=sigma_y)
    pad_y, pad_x = (
        min(s, int(np.ceil(3 * sig)) + 1)
        for s, sig in zip(field.shape, (sigma_y, sigma_x), strict=True)
    )
    padded = np.pad(field, ((pad_y, pad_y), (pad_x, pad_x)), mode="wrap")
    out = cv2.GaussianBlur(padded, (0, 0), sigmaX=sigma_x, sigmaY=sigma_y)
    return out[pad_y : pad_y + field.shape[0], pad_x : pad_x + field.shape[1]]
