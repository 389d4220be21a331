"""The page's plane around the page: how far it is drawn, and textures cut from one sheet.

A backdrop (a desk, a wall) is drawn over the part of the plane the camera
sees, which differs per photo. Its texture is cut from one sheet covering the
whole reachable plane, so the sheet's size depends only on the page's size
and the cached texture bases are reused from photo to photo.
"""

from __future__ import annotations

import cv2
import numpy as np

from itemshot.backgrounds.textures import surface_texture

Box = list[int]


SHEET_SCALE = 3.0  # plane px per texture px: a surface is soft detail, drawn small


def reach(width: int, height: int) -> tuple[float, float, float, float]:
    """Return the plane rectangle a backdrop may cover: half a page beyond each edge.

    Every photo shows the page large enough (a fill of at least 0.7 of the
    frame) that the camera never sees farther than this.
    """
    return (-0.5 * width, -0.5 * height, 1.5 * width, 1.5 * height)


def pixels(box: Box, scale: float) -> tuple[int, int]:
    """Return the (width, height) in pixels of `box` drawn at `scale` plane px per pixel."""
    return (
        max(8, int(np.ceil((box[2] - box[0]) / scale))),
        max(8, int(np.ceil((box[3] - box[1]) / scale))),
    )


def texture_over(
    kind: str,
    seed: int,
    box: Box,
    scale: float,
    extent: tuple[float, float, float, float],
    rows: tuple[int, int] | None = None,
) -> np.ndarray:
    """Return the part over `box` (optionally only pixel `rows`) of a texture sheet on `extent`.

    The sheet is drawn at `SHEET_SCALE` and the cut resized to `scale` pixels.
    """
    sheet_box = [int(np.floor(extent[0])), int(np.floor(extent[1])),
                 int(np.ceil(extent[2])), int(np.ceil(extent[3]))]  # fmt: skip
    sheet_w, sheet_h = pixels(sheet_box, SHEET_SCALE)
    width, height = pixels(box, scale)
    cut_w, cut_h = pixels(box, SHEET_SCALE)
    cut_w, cut_h = min(cut_w, sheet_w), min(cut_h, sheet_h)
    x0 = int(np.clip(round((box[0] - sheet_box[0]) / SHEET_SCALE), 0, sheet_w - cut_w))
    y0 = int(np.clip(round((box[1] - sheet_box[1]) / SHEET_SCALE), 0, sheet_h - cut_h))
    sheet = surface_texture(kind, sheet_w, sheet_h, seed)
    cut = sheet[y0 : y0 + cut_h, x0 : x0 + cut_w]
    if (cut_w, cut_h) != (width, height):
        cut = cv2.resize(cut, (width, height), interpolation=cv2.INTER_LINEAR)
    top, bottom = rows if rows else (0, height)
    return cut[top:bottom]
