"""Checks from the render record: overflow, clipping, fonts, glyphs, math, designed contrast."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from itemshot.renderer.items import Item
from itemshot.renderer.records import Layout, Region, quad_bounds
from itemshot.verify.checks import expected as source
from itemshot.verify.checks.fonts import DEFAULT_X_HEIGHT, font_facts, uncovered
from itemshot.verify.page.contrast import css_contrast, pixel_contrast
from itemshot.verify.page.crops import paint_quads, rectify
from itemshot.verify.thresholds import Thresholds
from itemshot.verify.verdicts import Reason

MATH_FONT_PREFIX = "katex_"


def device_scale(layout: Layout, render: Mapping[str, Any] | None) -> float:
    """Return clean-render pixels per CSS px (the backend's device scale)."""
    if render and render.get("device_scale"):
        return float(render["device_scale"])
    if render and render.get("css_size"):
        return layout.width / max(1.0, float(render["css_size"][0]))
    return 1.0


def vertical_scale(region: Region) -> float:
    """Return final-image px per clean-render px across the region's lines.

    The quad is the region in final pixels after every capture step (resize,
    perspective, lens); the box is the same region on the clean render. The
    shorter of the quad's two sides is used: under keystone the far side of
    a line is the smaller text.
    """
    box_h = max(1e-6, region.box[3] - region.box[1])
    p = np.asarray(region.quad, dtype=np.float64)
    left, right = np.linalg.norm(p[3] - p[0]), np.linalg.norm(p[2] - p[1])
    return float(min(left, right)) / box_h


def final_font_px(region: Region, layout: Layout, render: Mapping[str, Any] | None) -> float:
    """Return the region's font size in final-image pixels.

    `font_px` is in CSS px; the device scale turns it into clean-render px
    and the region's own quad against its box gives what any capture did to
    it since. (The final image's width says nothing about the text: a photo
    or a desktop screenshot puts the page into a larger frame.)
    """
    return region.font_px * device_scale(layout, render) * vertical_scale(region)


def final_drawn_px(region: Region, layout: Layout, render: Mapping[str, Any] | None) -> float:
    """Return the size the region's face is drawn at in final-image pixels.

    A face with a small x-height is set larger than the reference-equivalent
    `font_px` (see `Region.drawn_px`): its glyphs, and its own x-height ratio,
    are at the size it was set at.
    """
    return final_font_px(region, layout, render) * region.drawn_px / max(region.font_px, 1e-6)


# Chromium names a face by family plus weight ("Noto Sans CJK JP Light",
# "Klee One SemiBold"); the family is what was requested.
_WEIGHT_WORDS = (
    "thin", "extralight", "ultralight", "light", "demilight", "semilight", "regular",
    "book", "medium", "semibold", "demibold", "bold", "extrabold", "ultrabold", "black",
    "heavy",
)  # fmt: skip


def _family(face: str) -> str:
    """Return a platform face name lower-cased and without trailing weight words."""
    words = face.lower().split()
    while len(words) > 1 and words[-1] in _WEIGHT_WORDS:
        words.pop()
    return " ".join(words)


def x_height_px(region: Region, layout: Layout, render: Mapping[str, Any] | None) -> float:
    """Return the x-height of a region's main font in final-image pixels."""
    primary = primary_font(region)
    facts = font_facts(primary) if primary else None
    return final_drawn_px(region, layout, render) * (facts.x_height if facts else DEFAULT_X_HEIGHT)


def text_regions(layout: Layout, thresholds: Thresholds) -> list[Region]:
    """Return the question and option regions that hold text of their own.

    An option that shows only a figure (or its placeholder) records the
    figure's text as its own; with the figure painted out its crop holds no
    text ink but its label, so a contrast measured there is the background's
    against itself. Its label is checked by the readings (`letter_mismatch`).
    """
    return [
        r
        for r in layout.regions
        if r.kind in ("question", "option") and _own_text(r, layout, thresholds).strip()
    ]


def _own_text(region: Region, layout: Layout, thresholds: Thresholds) -> str:
    """Return a region's text without that of the figures drawn inside its box."""
    text = region.text
    tolerance = thresholds.clip_tolerance_px
    for figure in layout.regions:
        if figure.kind == "figure" and figure.text and _inside(figure.box, region.box, tolerance):
            text = text.replace(figure.text, "", 1)
    return text


def _inside(inner: tuple[float, ...], outer: tuple[float, ...], tolerance: float) -> bool:
    """Return whether box `inner` lies within box `outer`, `tolerance` px aside."""
    return (
        inner[0] >= outer[0] - tolerance
        and inner[1] >= outer[1] - tolerance
        and inner[2] <= outer[2] + tolerance
        and inner[3] <= outer[3] + tolerance
    )


def primary_font(region: Region) -> str | None:
    """Return the family that drew most of a region's glyphs (None when not recorded)."""
    if not region.fonts:
        return None
    return max(region.fonts.items(), key=lambda kv: kv[1])[0]


def layout_reasons(
    image: np.ndarray,
    item: Item,
    layout: Layout,
    thresholds: Thresholds,
    render: Mapping[str, Any] | None = None,
) -> list[Reason]:
    """Return every failed layout check of an image with a layout record."""
    reasons: list[Reason] = []
    height, width = image.shape[:2]
    # Recorded coverage fallbacks were chosen on purpose, so they count as requested.
    requested = {f.lower() for f in (*layout.fonts_requested, *layout.fonts_fallback)}
    for region in layout.regions:
        if region.overflow:
            reasons.append(Reason("overflow", region.name, "content overflows its box"))
        x0, y0, x1, y1 = quad_bounds(region.quad)
        within = _inside((x0, y0, x1, y1), (0.0, 0.0, width, height), thresholds.clip_tolerance_px)
        if not within:
            reasons.append(
                Reason("clipped", region.name, f"quad {x0:.0f},{y0:.0f},{x1:.0f},{y1:.0f}")
            )
    for message in layout.math_errors:
        reasons.append(Reason("math_error", "", message[:120]))
    reasons.extend(_math_presence(item, layout))
    painted = paint_quads(image, [r.quad for r in layout.regions if r.kind == "figure"])
    for region in text_regions(layout, thresholds):
        used = [f for f in region.fonts if not f.lower().startswith(MATH_FONT_PREFIX)]
        fallback = [f for f in used if requested and _family(f) not in requested]
        if fallback:
            reasons.append(Reason("font_fallback", region.name, ", ".join(fallback)))
        missing = uncovered(region.text, list(region.fonts))
        if missing:
            reasons.append(Reason("missing_glyph", region.name, "".join(missing[:20])))
        contrast = css_contrast(region.color, region.background)
        if contrast is None:
            contrast = pixel_contrast(rectify(painted, region.quad, 0))
        if contrast is not None and contrast < thresholds.contrast:
            reasons.append(Reason("low_contrast", region.name, f"ratio {contrast:.2f}"))
    return reasons


def _math_presence(item: Item, layout: Layout) -> list[Reason]:
    """Return a reason for each field whose formulas are not all in its regions."""
    reasons: list[Reason] = []
    stem = source.stem(item)
    drawn = sum(len(r.math) for r in layout.regions if r.kind == "question")
    if len(stem.math) > drawn:
        reasons.append(
            Reason("math_error", "question", f"{len(stem.math)} formulas, {drawn} drawn")
        )
    regions = {r.name: r for r in layout.regions}
    for field in source.options(item):
        region = regions.get(field.name)
        if field.math and region is not None and len(region.math) < len(field.math):
            reasons.append(Reason("math_error", field.name, "formula not drawn"))
    return reasons
