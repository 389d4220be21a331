"""Region crops: rectify a quad to an upright rectangle and prepare it for OCR."""

from __future__ import annotations

import cv2
import numpy as np

Quad = tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]


def is_axis_aligned(quad: Quad, tolerance: float = 0.5) -> bool:
    """Return whether the quad is an upright rectangle (within `tolerance` px)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = quad
    return (
        abs(y0 - y1) <= tolerance
        and abs(y2 - y3) <= tolerance
        and abs(x0 - x3) <= tolerance
        and abs(x1 - x2) <= tolerance
    )


def quad_size(quad: Quad) -> tuple[int, int]:
    """Return the (width, height) of the rectangle a quad rectifies to."""
    p = np.asarray(quad, dtype=np.float64)
    width = max(np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[3]))
    height = max(np.linalg.norm(p[3] - p[0]), np.linalg.norm(p[2] - p[1]))
    return max(1, round(width)), max(1, round(height))


def rectify(image: np.ndarray, quad: Quad, pad: int = 0) -> np.ndarray:
    """Return the quad's content as an upright rectangle, grown by `pad` px on each side.

    Axis-aligned quads are sliced directly (no resampling); others are
    perspective-warped from the four corners.
    """
    height, width = image.shape[:2]
    if is_axis_aligned(quad):
        x0 = max(0, int(np.floor(quad[0][0])) - pad)
        y0 = max(0, int(np.floor(quad[0][1])) - pad)
        x1 = min(width, int(np.ceil(quad[2][0])) + pad)
        y1 = min(height, int(np.ceil(quad[2][1])) + pad)
        return image[y0:y1, x0:x1].copy()
    out_w, out_h = quad_size(quad)
    src = np.asarray(quad, dtype=np.float32)
    dst = np.asarray(
        [[pad, pad], [pad + out_w, pad], [pad + out_w, pad + out_h], [pad, pad + out_h]],
        dtype=np.float32,
    )
    matrix = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(
        image,
        matrix,
        (out_w + 2 * pad, out_h + 2 * pad),
        flags=cv2.INTER_CUBIC,
        borderMode=cv2.BORDER_REPLICATE,
    )


def gray(image: np.ndarray) -> np.ndarray:
    """Return a single-channel copy of an RGB(A) or grey image."""
    if image.ndim == 2:
        return image
    if image.shape[2] == 4:
        image = image[:, :, :3]
    return cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


def ink_is_light(grey: np.ndarray, font_px: float = 0.0) -> bool:
    """Return whether a text crop's ink is lighter than its background (chalk, dark themes).

    The background is the median (text covers far less than half a region);
    the ink is the few pixels far from it, so it lies on the side the
    distribution is skewed to (the sign of the third moment about the
    median). Fixed percentiles would miss it: a label alone in a wide
    image-option region is under 1% of its pixels, and the 1st and 99th
    percentiles then measure only paper noise. Given the text's size, the
    lighting is taken out first (the crop less its blur over an em): a soft
    shadow's edge across a photographed option is a wide swing of its own,
    which outweighs the strokes and turns the crop's polarity. (A median or
    a top-hat over an em would keep a sharp edge out too, but takes an
    option box's outline for a swing the other way.)
    """
    values = grey.astype(np.float64)
    if font_px > 0:
        values = values - cv2.GaussianBlur(values, (0, 0), font_px)
    deviation = values - float(np.median(values))
    return float(np.mean(deviation**3)) > 0.0


INK_LEVEL = 0.8  # a pixel under this share of its background's brightness is ink


def _odd(value: float) -> int:
    return max(3, round(value) | 1)


def normalise_text(grey: np.ndarray, font_px: float) -> np.ndarray:
    """Return a text crop as dark ink on a white background, whatever it was drawn or shot on.

    Polarity comes from the crop's own statistics (light chalk on green is
    inverted); the background is estimated by a grey closing wider than any
    stroke and divided out, which removes tints, paper texture, vignetting
    and lighting gradients; the contrast is then stretched so the darkest ink
    is black and the background white. OCR engines are trained on such
    input: stacked on one white canvas, a grey (inverted dark-scene) or
    tinted crop reads as nothing.
    """
    if grey.size == 0 or min(grey.shape) < 2:
        return grey
    if ink_is_light(grey, font_px):
        grey = 255 - grey
    size = _odd(max(5.0, 0.6 * font_px))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (size, size))
    background = cv2.morphologyEx(grey, cv2.MORPH_CLOSE, kernel, borderType=cv2.BORDER_REPLICATE)
    background = cv2.blur(background, (size, size))
    flat = grey.astype(np.float32) / np.maximum(background.astype(np.float32), 1.0)
    flat = np.clip(flat, 0.0, 1.0)
    dark = flat[flat < INK_LEVEL]
    if dark.size < 4:  # nothing darker than the background's own noise: no ink to stretch
        return np.full_like(grey, 255)
    ink = float(np.percentile(dark, 10))
    paper = 0.97
    stretched = (flat - ink) / max(1e-3, paper - ink)
    return (np.clip(stretched, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)


def _ink_mask(grey: np.ndarray) -> np.ndarray:
    """Return a boolean mask of ink (dark on light) pixels by Otsu's threshold."""
    _, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    return binary > 0


def clean_text_crop(grey: np.ndarray, margin: int = 6, font_px: float = 0.0) -> np.ndarray:
    """Return a dark-on-light grey crop without box borders or specks, trimmed to its ink.

    Large components touching the crop's edge, or within EDGE_SLACK em of it
    (the frame of an option box, a rule, a box's side: as tall as the crop and
    narrower than SIDE_SHAPE of its height) are painted over with the background,
    except the glyphs joined to them (with `font_px`: what is neither a
    straight stroke over RULE_LENGTH em nor within FRAME_END em of the
    frame's ends, nor a rounded corner's arc); glyphs that merely touch
    the edge of a tight (warped) crop are kept. With `font_px`, specks (a scan's
    dust, a photo's sensor noise) are painted over too: a component far
    smaller than a glyph and farther than SPECK_GAP em from any larger one
    (SPECK_GAP_ALONG em along the line, where punctuation follows its glyph).
    Every real small mark (a period, a comma, an i's dot, a minus, a degree
    sign) sits next to a glyph, so only marks no text owns go. What is left is
    trimmed to its bounding box, which also shrinks what OCR has to look at.
    """
    if grey.size == 0:
        return grey
    if float(np.median(grey)) < 128:
        grey = 255 - grey
    ink = _ink_mask(grey)
    if float(np.ptp(grey)) < 40 or not ink.any():
        return np.full((8, 8), 255, dtype=np.uint8)
    h, w = grey.shape
    out = grey.copy()
    background = int(np.median(grey[~ink])) if (~ink).any() else 255
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), 8)
    # Rules (a notebook's lines, a grid, a box's sides) are painted stroke by stroke: a
    # glyph touching one (a descender on a box's bottom edge, a label on a grid line) is
    # one component with it, and painting the component would take the glyph along.
    rules = _rules(ink, font_px) if font_px > 0 else np.zeros_like(ink)
    ends = max(1, round(FRAME_END * font_px))
    # A frame a pixel or two inside the crop (a page scaled into a screenshot) is still one.
    slack = round(EDGE_SLACK * font_px)
    for label in range(1, count):
        x, y, cw, ch, _area = stats[label]
        touches = x <= slack or y <= slack or x + cw >= w - slack or y + ch >= h - slack
        # As tall as the crop: a box's side is a stroke; a glyph group as tall (a handwritten
        # "dy" joined from ascender to descender in a line's tight crop) is wide as letters.
        frame_like = cw > 0.5 * w or (ch > 0.9 * h and cw < SIDE_SHAPE * ch)
        if touches and frame_like:
            frame = labels == label
            if font_px > 0:  # what is neither a rule nor near the box's ends is a glyph
                glyph = frame & ~rules
                glyph[:, : x + ends] = False  # the frame's own ends, not the crop's
                glyph[:, max(0, x + cw - ends) :] = False
                frame &= ~_glyph_pieces(glyph, font_px, (x, y, cw, ch))
            out[frame] = background
            ink[frame] = False
    out[rules] = background
    ink &= ~rules
    if font_px > 0:
        _paint_specks(out, ink, labels, stats, font_px, background)
    if not ink.any():
        return np.full((8, 8), 255, dtype=np.uint8)
    ys, xs = np.nonzero(ink)
    y0, y1 = max(0, ys.min() - margin), min(h, ys.max() + 1 + margin)
    x0, x1 = max(0, xs.min() - margin), min(w, xs.max() + 1 + margin)
    return out[y0:y1, x0:x1]


EDGE_SLACK = 0.15  # em: a component this close to the crop's edge touches it
SIDE_SHAPE = 1 / 3  # a piece as tall as the crop and narrower than this share of its height
RULE_LENGTH = 2.5  # em: a straight stroke this long is a rule, not part of a glyph
FRAME_END = 0.75  # em: a frame's rounded ends lie this close to its own left and right


RIM = 0.5  # em: a piece a frame leaves wholly this close to its top or bottom...
CORNER = 2.0  # em: ...and this close to its left or right side is a rounded corner's arc


def _glyph_pieces(mask: np.ndarray, font_px: float, box: tuple[int, int, int, int]) -> np.ndarray:
    """Return the pieces of `mask` (what a frame leaves once its sides are gone) that are glyphs.

    A rounded box's corners leave arcs in the frame's corners once its
    straight sides are gone; a letter joined to the box (a descender on its
    bottom edge) reaches up into the text by at least its x-height, and the
    tip of one below the edge lies away from the corners. The rims are the
    frame's own (`box`: x, y, width, height), not the crop's: a crop taken
    with a margin holds the frame a few pixels in.
    """
    _count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    x, y, width, height = box
    rim, corner = RIM * font_px, CORNER * font_px
    top, left = stats[:, cv2.CC_STAT_TOP], stats[:, cv2.CC_STAT_LEFT]
    bottom, right = top + stats[:, cv2.CC_STAT_HEIGHT], left + stats[:, cv2.CC_STAT_WIDTH]
    in_rim = (bottom <= y + rim) | (top >= y + height - rim)
    at_side = (right <= x + corner) | (left >= x + width - corner)
    glyph = ~(in_rim & at_side)
    glyph[0] = False
    return glyph[labels]


def _rules(ink: np.ndarray, font_px: float) -> np.ndarray:
    """Return the mask of horizontal and vertical ink strokes longer than RULE_LENGTH em."""
    length = max(15, round(RULE_LENGTH * font_px))
    mask = ink.astype(np.uint8)
    found = np.zeros_like(mask)
    for size in ((length, 1), (1, length)):
        kernel = cv2.getStructuringElement(cv2.MORPH_RECT, size)
        found |= cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
    return found > 0


SPECK_AREA = 0.02  # em²: under this a component is no glyph (a 22 px font: under 10 px)
GLYPH_EXTENT = 0.3  # em: a glyph (or a piece of one) is at least this tall or wide
SPECK_GAP = 0.3  # em: a mark this close to a glyph belongs to the text
# Punctuation sits beside its glyphs along the line ("No.", "is .. ?"), and a monospaced
# face sets it in the middle of its cell: JetBrains Mono's "No." has 0.3-0.35 em of page
# between "o" and ".". An ellipse, not a strip on the glyphs' rows: on `rephrased` a strip
# (rightwards, or both ways) lost the ".." of "is .. ?" and one scan's reading more.
SPECK_GAP_ALONG = 0.45  # em: so along the line a mark this close belongs to the text


def _paint_specks(
    out: np.ndarray,
    ink: np.ndarray,
    labels: np.ndarray,
    stats: np.ndarray,
    font_px: float,
    background: int,
) -> None:
    """Paint over small ink components no glyph or frame is near (in place, `out` and `ink`)."""
    small = SPECK_AREA * font_px * font_px
    areas = stats[:, cv2.CC_STAT_AREA].copy()
    areas[0] = 0  # the background
    kept = np.bincount(labels[ink], minlength=len(areas)) > 0  # not painted as a frame
    # A glyph is no dot: a dark page's scan strews 3-4 px blobs over 0.02 em² that owned
    # the specks around them and stayed, hundreds to a paragraph. What is compact as well
    # as small is a mark, kept only beside a glyph (a period, a degree sign, an i's dot).
    extent = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    glyph = (areas >= small) & (extent >= GLYPH_EXTENT * font_px)
    # A frame painted over still owns the marks beside it: a descender it took leaves its
    # word's period next to nothing else.
    glyphs = glyph[labels]
    if not glyphs.any():
        return
    along, across = _odd(2 * SPECK_GAP_ALONG * font_px), _odd(2 * SPECK_GAP * font_px)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (along, across))
    near = cv2.dilate(glyphs.astype(np.uint8), kernel) > 0
    owned = np.bincount(labels[near], minlength=len(areas)) > 0
    specks = kept & ~glyph & ~owned
    specks[0] = False
    mask = specks[labels]
    out[mask] = background
    ink[mask] = False


def despeckled(grey: np.ndarray, font_px: float) -> np.ndarray:
    """Return a dark-on-light crop with the ink components under SPECK_AREA em² painted over.

    Unlike the specks `clean_text_crop` removes, these may sit among the
    glyphs (a dusty scan's specks between letters, read as accents and
    stray punctuation), so periods and commas go too; only a dot right
    above a stem (an i's, a j's) is kept. A reading of this crop is one
    more reading, weighed beside the others, not the crop.
    """
    ink = _ink_mask(grey)
    if not ink.any() or ink.all():
        return grey
    _count, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), 8)
    small = stats[:, cv2.CC_STAT_AREA] < SPECK_AREA * font_px * font_px
    small[0] = False  # the background
    stem = ~small & (stats[:, cv2.CC_STAT_WIDTH] <= STEM_WIDTH * font_px)
    stem[0] = False
    gap = max(2, round(DOT_GAP * font_px))
    # Dilating with a column anchored at its top marks every pixel with a stem under it.
    column = np.ones((gap + 1, 1), np.uint8)
    above_stem = cv2.dilate(stem[labels].astype(np.uint8), column, anchor=(0, 0)) > 0
    dotted = np.bincount(labels[above_stem & ink], minlength=len(small)) > 0
    specks = small & ~dotted
    out = grey.copy()
    out[specks[labels]] = int(np.median(grey[~ink]))
    return out


DOT_GAP = 0.2  # em: an i's dot sits this close above its stem
STEM_WIDTH = 0.35  # em: an i's or j's stem (serifs included) is no wider


def scaled(grey: np.ndarray, scale: float) -> np.ndarray:
    """Return the grey crop resized by `scale` (unchanged when close to 1)."""
    if abs(scale - 1.0) <= 0.05 or grey.size == 0:
        return grey
    interpolation = cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA
    return cv2.resize(grey, None, fx=scale, fy=scale, interpolation=interpolation)


def paint_quads(image: np.ndarray, quads: list[Quad]) -> np.ndarray:
    """Return a copy of the image with each quad filled by the colour just around it.

    The colour is the median of a ring on all four sides: a figure whose box
    ends a few pixels above its card's border has that border in one side
    of the ring, and a fill in the border's colour would turn a page of
    dark text on white into white text on a dark block.
    """
    out = image.copy()
    channels = out.shape[2] if out.ndim == 3 else 1
    for quad in quads:
        points = np.asarray(quad, dtype=np.int32)
        x0, y0 = np.maximum(points.min(axis=0) - 3, 0)
        x1, y1 = points.max(axis=0) + 3
        sides = (
            out[y0 : y0 + 2, x0:x1],
            out[max(y0, y1 - 2) : y1, x0:x1],
            out[y0:y1, x0 : x0 + 2],
            out[y0:y1, max(x0, x1 - 2) : x1],
        )
        ring = np.concatenate([side.reshape(-1, channels) for side in sides])
        colour = np.median(ring, axis=0) if ring.size else 255
        cv2.fillConvexPoly(out, points, tuple(int(c) for c in np.atleast_1d(colour)))
    return out


def otsu(grey: np.ndarray) -> np.ndarray:
    """Return the grey crop binarised with Otsu's threshold (black text on white)."""
    _, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return binary
