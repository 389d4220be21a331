"""Nuisance measures of one image: what a contrast may change besides the factor it varies.

A presentation ablation is worth something only when each contrast changes one
thing. These are the things most often changed by accident, measured on every
image so that a design can check them (`factorial.design.confounds`):

- `x_height_px`: the ink height of an `x` in the item's text face, in pixels;
- `figure_area_px`: the summed area of the item's figure boxes, in pixels;
- `page_scale`: the scale the page was fitted at (1: the requested size);
- `options_shown`: the number of options drawn in the image;
- `line_count`: the lines the question and options are set on (`lines` per region).

The backend measures them on the clean render (`clean_measures`); `final_measures`
carries the pixel sizes through a capture (the regions' quads say how much the
capture scaled the page), so the manifest reports them as the model receives them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from itemshot.renderer.records import Layout, Quad, Region

# The smallest x-height, in delivered pixels, text is drawn at: the page's fit
# shrinks text no further, and light and medium captures hold the page's text
# at it (`degradations.capturing`). The verifier fails text under 6 px
# (`Thresholds.x_height_px`); a floor in CSS px (it was 11 px) left the
# reference face at 5.8 px, so clean renders of long items were drawn too small
# to pass. The margin covers the ink's pixel rounding.
MIN_X_HEIGHT_PX = 6.25

MEASURES = ("x_height_px", "figure_area_px", "page_scale", "options_shown", "line_count")


def clean_measures(
    regions: Sequence[Region],
    *,
    x_height_px: float,
    page_scale: float,
    held_scale: float,
    figure_scale: float,
    lines: Mapping[str, int],
    font_px: float,
) -> dict[str, Any]:
    """Return the measures of a clean render from its regions and the page's own readings."""
    figures = [r for r in regions if r.kind == "figure"]
    return {
        "x_height_px": round(float(x_height_px), 3),
        "figure_area_px": round(sum(_box_area(r.box) for r in figures), 1),
        "page_scale": round(float(page_scale), 4),
        "held_scale": round(float(held_scale), 4),
        "figure_scale": round(float(figure_scale), 4),
        "options_shown": sum(1 for r in regions if r.kind == "option"),
        "line_count": int(sum(lines.values())),
        "lines": {name: int(count) for name, count in lines.items()},
        "font_px": round(float(font_px), 2),
    }


def final_measures(layout: Layout) -> dict[str, Any]:
    """Return the layout's measures in final-image pixels (after any capture).

    Lengths scale by the linear factor the capture applied to the text
    regions (the square root of their quad area over their box area), areas by
    each figure's own quad area. Without a capture the two are the clean ones.
    """
    measures = dict(layout.measures)
    if not measures:
        return {}
    text = [r for r in layout.regions if r.kind in ("question", "option")]
    clean = sum(_box_area(r.box) for r in text)
    final = sum(_quad_area(r.quad) for r in text)
    factor = math.sqrt(final / clean) if clean > 0 else 1.0
    measures["x_height_px"] = round(float(measures.get("x_height_px", 0.0)) * factor, 3)
    figures = [r for r in layout.regions if r.kind == "figure"]
    measures["figure_area_px"] = round(sum(_quad_area(r.quad) for r in figures), 1)
    return measures


def _box_area(box: Sequence[float]) -> float:
    x0, y0, x1, y1 = box
    return max(0.0, x1 - x0) * max(0.0, y1 - y0)


def _quad_area(quad: Quad) -> float:
    """Return the area of a quad (shoelace formula over its four corners)."""
    total = 0.0
    for (x0, y0), (x1, y1) in zip(quad, (*quad[1:], quad[0]), strict=True):
        total += x0 * y1 - x1 * y0
    return abs(total) / 2.0
