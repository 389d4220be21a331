"""Seeded value-noise fields: the building block of every procedural texture."""

from __future__ import annotations

import cv2
import numpy as np


def value_noise(rng: np.random.Generator, width: int, height: int, cells: float) -> np.ndarray:
    """Return smooth noise in [0, 1] of shape (height, width) with about `cells` blobs across."""
    cells = max(cells, 1.0)
    gw = max(2, round(cells) + 1)
    gh = max(2, round(cells * height / max(width, 1)) + 1)
    grid = rng.random((gh, gw), dtype=np.float32)
    return cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)


def fbm(
    rng: np.random.Generator,
    width: int,
    height: int,
    cells: float,
    octaves: int = 4,
    gain: float = 0.5,
) -> np.ndarray:
    """Return fractal (multi-octave) value noise normalised to zero mean, unit-ish range."""
    total = np.zeros((height, width), np.float32)
    amplitude = 1.0
    norm = 0.0
    for octave in range(octaves):
        total += amplitude * value_noise(rng, width, height, cells * (2**octave))
        norm += amplitude
        amplitude *= gain
    total /= norm
    return total - np.float32(0.5)


def grain(rng: np.random.Generator, width: int, height: int, sigma: float) -> np.ndarray:
    """Return per-pixel Gaussian grain of standard deviation `sigma` (float32)."""
    return rng.standard_normal((height, width), dtype=np.float32) * np.float32(sigma)


def streaks(
    rng: np.random.Generator, width: int, height: int, along: int, across: float
) -> np.ndarray:
    """Return noise stretched horizontally: fibres or grain lines `along` px long."""
    small_w = max(2, width // max(along, 1))
    small_h = max(2, int(height / max(across, 0.5)))
    field = rng.random((small_h, small_w), dtype=np.float32) - np.float32(0.5)
    return cv2.resize(field, (width, height), interpolation=cv2.INTER_LINEAR)
