"""Seeded scene textures served to the rendering page as PNG tiles.

Each texture is `<kind>-<variant>` with variants 0, 1, 2 (the variant is the
seed). Opaque kinds (paper, ruled, grid, wood, wall, fabric, desk) are
full-colour tiles; overlay kinds (grain, chalk, smudge) are RGBA tiles of low
alpha that a scene lays over its own background colour, so they tint any
validated colour. Every tile is periodic (its right edge continues into its
left, its bottom into its top), so a repeated tile shows no seam. Generation
is pure; the renderer caches the encoded tiles.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import numpy as np
from PIL import Image

from itemshot.backgrounds.noise import blur, fbm, grain
from itemshot.backgrounds.texture_names import (
    KINDS,
    OVERLAY_KINDS,
    TEXTURE_NAMES,
    TILE,
)
from itemshot.backgrounds.textures import make_texture

_NAME = re.compile(r"^([a-z]+)-([0-9])$")

# The parent texture module's named variants used for each of our three.
_BORROWED: dict[str, tuple[str, tuple[str, str, str]]] = {
    "paper": ("paper", ("copy", "cream", "recycled")),
    "wood": ("wood", ("oak", "walnut", "pine")),
    "wall": ("wall", ("white", "beige", "grey")),
    "fabric": ("fabric", ("linen", "felt", "denim")),
    "desk": ("desk", ("beech", "grey", "white")),
}


def _lines(variant: int, grid: bool) -> np.ndarray:
    paper = make_texture(
        "paper", TILE, TILE, 100 + variant, ("copy", "cream", "copy")[variant], periodic=True
    )
    image = paper.astype(np.float32)
    step = (32, 28, 32)[variant]  # divides the tile, so the pattern repeats seamlessly
    ink = np.array([(150, 180, 215), (160, 190, 205), (170, 200, 170)][variant], np.float32)
    mask = np.zeros((TILE, TILE), np.float32)
    mask[step - 1 :: step, :] = 0.85
    if grid:
        mask[:, step - 1 :: step] = 0.85
    return image * (1 - mask[..., None]) + ink * mask[..., None]


def _overlay(kind: str, variant: int) -> np.ndarray:
    rng = np.random.default_rng(1000 * KINDS.index(kind) + variant)
    if kind == "grain":
        alpha = np.clip(np.abs(grain(rng, TILE, TILE, 10.0)) * 1.4, 0, 30)
        color = np.zeros((TILE, TILE, 3), np.float32) + 90
    elif kind == "chalk":
        dust = fbm(rng, TILE, TILE, cells=2.5, octaves=4, periodic=True)
        dust = np.clip(0.5 + 1.8 * dust, 0, 1) * 26
        strokes = blur(np.abs(grain(rng, TILE, TILE, 1.0)), 3.0, 0.6, periodic=True)
        alpha = dust + np.clip(strokes * 40 - 8, 0, 18) + np.abs(grain(rng, TILE, TILE, 5.0))
        color = np.zeros((TILE, TILE, 3), np.float32) + 235
    else:  # whiteboard smudges: faint grey-blue wipes
        field = fbm(rng, TILE, TILE, cells=1.8, octaves=3, periodic=True)
        field = np.clip(0.4 + 2.0 * field, 0, 1)
        wipes = blur(np.abs(grain(rng, TILE, TILE, 1.0)), 14.0, 1.5, periodic=True)
        alpha = field * 14 + np.clip(wipes * 60 - 10, 0, 10)
        color = np.full((TILE, TILE, 3), (120, 130, 150), np.float32)
    rgba = np.dstack([color, np.clip(alpha, 0, 255)])
    return rgba


def _opaque(kind: str, variant: int) -> np.ndarray:
    if kind in ("ruled", "grid"):
        return _lines(variant, grid=kind == "grid")
    base, names = _BORROWED[kind]
    texture = make_texture(base, TILE, TILE, 200 + variant, names[variant], periodic=True)
    return texture.astype(np.float32)


_MAKERS: dict[bool, Callable[[str, int], np.ndarray]] = {True: _overlay, False: _opaque}


def texture_array(name: str) -> np.ndarray:
    """Return the uint8 tile (RGB, or RGBA for overlays) of a texture name like `chalk-1`."""
    match = _NAME.match(name)
    if match is None or name not in TEXTURE_NAMES:
        raise ValueError(f"unknown texture {name!r}")
    kind, variant = match.group(1), int(match.group(2))
    array = _MAKERS[kind in OVERLAY_KINDS](kind, variant)
    return np.clip(array, 0, 255).astype(np.uint8)


def encode_texture(name: str) -> tuple[bytes, str]:
    """Return (encoded bytes, mime type) of a texture tile: JPEG when opaque, PNG with alpha."""
    array = texture_array(name)
    buffer = io.BytesIO()
    if array.shape[2] == 4:
        Image.fromarray(array, "RGBA").save(buffer, format="PNG", compress_level=1)
        return buffer.getvalue(), "image/png"
    Image.fromarray(array, "RGB").save(buffer, format="JPEG", quality=88)
    return buffer.getvalue(), "image/jpeg"


def mean_color(name: str) -> str:
    """Return the mean colour of an opaque texture as `#rrggbb` (for contrast checks)."""
    array = texture_array(name)[..., :3].reshape(-1, 3).mean(axis=0)
    return "#" + "".join(f"{round(float(v)):02x}" for v in array)
