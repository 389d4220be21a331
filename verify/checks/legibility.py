"""Legibility of a text region, measured on the final image's own pixels.

Three measures per region, each in final-image terms:

- x-height (px): the font's x-height at the rendered size, times the vertical
  scale the capture applied at that region (the quad's shorter side against
  the clean box's height), so a scan shrunk to half or a photo of a page
  filling 60% of the frame reports the size its pixels really have;
- edge width (px): how many pixels a stroke edge spreads over, from the
  steepest edges against the ink-to-background step (Δ / max gradient: 1 for
  crisp text, ≈ 2.5σ for a Gaussian blur of σ); it is what a blur, a
  downscale-and-upscale or a motion smear does to text;
- contrast: WCAG ratio of the stroke cores to the background, measured.

The *resolved* x-height, x-height / max(1, edge width), is how many distinct
pixels a lower-case letter spans once blur is accounted for: text with an
x-height of 12 px blurred over 6 px resolves as little as 2 px text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from itemshot.renderer.records import Layout
from itemshot.verify.checks.layout_checks import text_regions, x_height_px
from itemshot.verify.page.contrast import pixel_contrast
from itemshot.verify.page.crops import gray, ink_is_light, paint_quads, rectify
from itemshot.verify.thresholds import DEFAULT_THRESHOLDS, Thresholds
from itemshot.verify.verdicts import Reason


@dataclass(frozen=True)
class Legibility:
    """What a person's eye gets from a text region: size, sharpness and contrast."""

    x_height_px: float
    edge_width_px: float | None
    contrast: float | None

    @property
    def resolved_x_height(self) -> float:
        """Return the x-height in resolvable pixels (x-height over the edge width when blurred)."""
        return self.x_height_px / max(1.0, self.edge_width_px or 1.0)

    def as_dict(self) -> dict[str, float | None]:
        """Return the measures, rounded, for the verdict record."""
        return {
            "x_height_px": round(self.x_height_px, 2),
            "edge_width_px": None if self.edge_width_px is None else round(self.edge_width_px, 2),
            "resolved_x_height_px": round(self.resolved_x_height, 2),
            "contrast": None if self.contrast is None else round(self.contrast, 2),
        }


def edge_width(grey: np.ndarray, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> float | None:
    """Return the width in px over which the region's stroke edges rise (None without ink).

    The ink-to-background step Δ is the spread between the background
    (median) and the ink cores (the 1% farthest from it); the steepest
    edges are the 99.5th percentile of the central-difference gradient.
    A sharp edge rises over about one pixel (Δ over the steepest gradient is
    `sharp_edge` there, and is divided by it); blur widens it in proportion.
    """
    if grey.size < 64 or min(grey.shape) < 5:
        return None
    values = grey.astype(np.float32)
    if ink_is_light(grey):
        values = 255.0 - values
    background = float(np.median(values))
    core = float(np.percentile(values, 1))
    step = background - core
    if step < 12.0:  # no ink to speak of
        return None
    gx = cv2.Sobel(values, cv2.CV_32F, 1, 0, ksize=1) / 2.0
    gy = cv2.Sobel(values, cv2.CV_32F, 0, 1, ksize=1) / 2.0
    steepest = float(np.percentile(np.hypot(gx, gy), 99.5))
    if steepest <= 0:
        return None
    return max(1.0, step / (thresholds.sharp_edge * steepest))


def measure(crop: np.ndarray, x_height_px: float, thresholds: Thresholds) -> Legibility:
    """Return the legibility measures of one rectified RGB text crop of the final image."""
    return Legibility(x_height_px, edge_width(gray(crop), thresholds), pixel_contrast(crop))


def region_legibility(
    image: np.ndarray,
    layout: Layout,
    render: Mapping[str, Any] | None,
    thresholds: Thresholds,
) -> tuple[list[Reason], dict[str, Legibility]]:
    """Return the legibility reasons of an image with a layout record, and each region's measures.

    `text_too_small`: the x-height in final pixels is under `x_height_px`.
    `illegible`: blur leaves fewer than `resolved_x_height_px` resolvable
    pixels of x-height, or the measured contrast is under `legible_contrast`.
    """
    figures = [r.quad for r in layout.regions if r.kind == "figure"]
    painted = paint_quads(image, figures) if figures else image
    reasons: list[Reason] = []
    measures: dict[str, Legibility] = {}
    for region in text_regions(layout, thresholds):
        if region.font_px <= 0:
            continue
        x_height = x_height_px(region, layout, render)
        found = measure(rectify(painted, region.quad, 0), x_height, thresholds)
        measures[region.name] = found
        if found.x_height_px < thresholds.x_height_px:
            detail = f"x-height {found.x_height_px:.1f} px"
            reasons.append(Reason("text_too_small", region.name, detail))
        elif found.resolved_x_height < thresholds.resolved_x_height_px:
            detail = (
                f"blurred: x-height {found.x_height_px:.1f} px over edges "
                f"{found.edge_width_px:.1f} px wide resolves to {found.resolved_x_height:.1f} px"
            )
            reasons.append(Reason("illegible", region.name, detail))
        elif found.contrast is not None and found.contrast < thresholds.legible_contrast:
            detail = f"measured contrast {found.contrast:.2f}"
            reasons.append(Reason("illegible", region.name, detail))
    return reasons, measures


def marginal_reasons(name: str, measured: list[Legibility], thresholds: Thresholds) -> list[Reason]:
    """Return `hard_to_read` for a field no engine reads whose text is at the edge of legibility.

    Called only for a field that failed its text checks in every reading.
    Its text passed the legibility floors (`text_too_small`, `illegible`)
    but sits under one of the comfort levels — x-height under
    `marginal_x_height_px`, resolved x-height under `marginal_resolved_px`,
    measured contrast under `marginal_contrast` (WCAG AA for body text) —
    so a person may well read it where both engines do not: the reason says
    so beside the text reasons, for the reviewer to decide.
    """
    found = []
    for m in measured:
        if m.x_height_px < thresholds.marginal_x_height_px:
            found.append(f"x-height {m.x_height_px:.1f} px")
        if m.resolved_x_height < thresholds.marginal_resolved_px:
            found.append(f"blur leaves {m.resolved_x_height:.1f} px of x-height")
        if m.contrast is not None and m.contrast < thresholds.marginal_contrast:
            found.append(f"measured contrast {m.contrast:.2f}")
    if not found:
        return []
    detail = "no engine reads it, at the edge of legibility: " + ", ".join(dict.fromkeys(found))
    return [Reason("hard_to_read", name, detail)]
