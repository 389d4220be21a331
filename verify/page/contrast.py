"""Text/background contrast: the WCAG 2 ratio, from CSS colours or measured from pixels."""

from __future__ import annotations

import re

import numpy as np

_RGB = re.compile(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+))?\s*\)")


def parse_css_colour(value: str) -> tuple[float, float, float] | None:
    """Return an opaque `rgb()`/`rgba()` colour as 0-255 floats; None for anything else."""
    match = _RGB.fullmatch(value.strip())
    if not match:
        return None
    alpha = match.group(4)
    if alpha is not None and float(alpha) < 1.0:
        return None
    return (float(match.group(1)), float(match.group(2)), float(match.group(3)))


def _linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


_LINEAR_BYTES = _linear(np.arange(256, dtype=np.float64) / 255.0)  # 8-bit pixels: a table


def luminance(rgb: np.ndarray | tuple[float, float, float]) -> np.ndarray:
    """Return WCAG relative luminance of sRGB colour(s) given in 0-255."""
    array = np.asarray(rgb)
    linear = _LINEAR_BYTES[array] if array.dtype == np.uint8 else _linear(array / 255.0)
    return linear[..., 0] * 0.2126 + linear[..., 1] * 0.7152 + linear[..., 2] * 0.0722


def ratio(l1: float, l2: float) -> float:
    """Return the WCAG contrast ratio of two relative luminances."""
    high, low = max(l1, l2), min(l1, l2)
    return (high + 0.05) / (low + 0.05)


def css_contrast(color: str, background: str) -> float | None:
    """Return the contrast of two CSS colours, or None when either is not a plain opaque colour."""
    fg, bg = parse_css_colour(color), parse_css_colour(background)
    if fg is None or bg is None:
        return None
    return ratio(float(luminance(fg)), float(luminance(bg)))


def pixel_contrast(crop: np.ndarray) -> float | None:
    """Return the contrast measured in a text crop: background = median, text = stroke cores.

    The background is the median luminance; text is the 1% of pixels farthest
    from it (the cores of the strokes, not their anti-aliased edges).
    """
    if crop.ndim != 3 or crop.shape[0] < 3 or crop.shape[1] < 3:
        return None
    lum = luminance(crop[..., :3].reshape(-1, 3))
    background = float(np.median(lum))
    distance = np.abs(lum - background)
    cutoff = np.quantile(distance, 0.99)
    strokes = lum[distance >= cutoff]
    if strokes.size == 0:
        return None
    return ratio(background, float(np.median(strokes)))
