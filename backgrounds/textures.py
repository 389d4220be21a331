"""Procedural, seeded surface textures: desk, wood, table, wall, fabric and paper.

Every texture is a pure function of `(kind, width, height, seed)`; the seed also
picks the variant (oak, walnut or pine wood; white, grey or black desk; …).
Textures are built from low-resolution noise scaled up with OpenCV, so a
1024 px texture costs a few milliseconds. `surface_texture` serves many seeds
from a few cached bases per variant (a seeded cut, turn and tint of one), for
callers that need a fresh backdrop per image at the cost of a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import cv2
import numpy as np

from itemshot.backgrounds.noise import blur, fbm, grain, streaks
from itemshot.seeds import seed_hash

RGB = tuple[int, int, int]

# Variants per kind: name -> (base colour, second colour, fine grain strength).
VARIANTS: dict[str, dict[str, tuple[RGB, RGB, float]]] = {
    "wood": {
        "oak": ((196, 150, 98), (150, 104, 60), 6.0),
        "walnut": ((112, 74, 48), (70, 44, 28), 5.0),
        "pine": ((222, 188, 140), (190, 142, 88), 6.0),
        "cherry": ((160, 88, 58), (118, 58, 36), 5.0),
    },
    "desk": {
        "white": ((226, 224, 218), (206, 204, 198), 3.0),
        "grey": ((148, 150, 152), (128, 130, 134), 4.0),
        "black": ((46, 46, 48), (30, 30, 32), 4.0),
        "beech": ((214, 182, 140), (196, 160, 116), 4.0),
    },
    "table": {
        "marble": ((232, 230, 226), (150, 150, 156), 2.5),
        "granite": ((120, 116, 112), (40, 38, 36), 10.0),
        "painted": ((196, 214, 206), (170, 190, 182), 3.0),
    },
    "wall": {
        "white": ((232, 230, 224), (214, 212, 206), 3.0),
        "beige": ((222, 208, 184), (204, 190, 166), 3.0),
        "blue": ((176, 196, 212), (156, 176, 194), 3.0),
        "grey": ((168, 168, 164), (150, 150, 146), 3.0),
    },
    "fabric": {
        "denim": ((62, 86, 124), (38, 56, 88), 6.0),
        "linen": ((212, 200, 176), (186, 172, 146), 5.0),
        "felt": ((96, 108, 98), (72, 82, 74), 7.0),
        "red": ((150, 44, 48), (110, 30, 34), 6.0),
    },
    "paper": {
        "copy": ((246, 246, 242), (234, 234, 230), 2.0),
        "cream": ((244, 238, 222), (230, 222, 204), 2.5),
        "recycled": ((226, 222, 210), (206, 200, 186), 4.0),
    },
}

KINDS = tuple(VARIANTS)


def _mix(a: RGB, b: RGB, t: np.ndarray) -> np.ndarray:
    """Blend two colours by the field `t` (0 → a, 1 → b); return float32 HxWx3."""
    ca = np.asarray(a, np.float32)
    cb = np.asarray(b, np.float32)
    return ca + (cb - ca) * t[..., None]


def _wood(
    rng: np.random.Generator, w: int, h: int, colors: tuple[RGB, RGB, float], periodic: bool
) -> np.ndarray:
    base, dark, sigma = colors
    plank = int(rng.integers(max(h // 5, 40), max(h // 2, 80)))
    ys = np.arange(h, dtype=np.float32)[:, None]
    warp = fbm(rng, w, h, cells=3.0, octaves=3, periodic=periodic) * np.float32(rng.uniform(20, 60))
    period = rng.uniform(10, 26)
    offset = 0
    if periodic:  # whole planks and whole rings per tile, the tile edge mid-plank
        planks = max(1, round(h / plank))
        plank = h // planks
        period = h / max(1, round(h / period))
        offset = plank // 2
    freq = np.float32(2 * np.pi / period)
    rings = 0.5 + 0.5 * np.sin((ys + warp) * freq)
    streak = streaks(rng, w, h, along=60, across=1.5, periodic=periodic)
    rings = rings**3 * 0.7 + 0.3 * (0.5 + streak)
    image = _mix(base, dark, np.clip(rings, 0, 1))
    rows = np.arange(h) + offset
    seams = (rows % plank) < 2
    image[seams] *= np.float32(0.6)
    # each plank a little lighter or darker
    count = (rows[-1] if periodic else h) // plank + 1
    shade = 1 + 0.08 * (rng.random(count).astype(np.float32) - 0.5)
    if periodic:
        shade[rows[-1] // plank] = shade[0]  # the plank cut by the tile edge continues
    image *= shade[rows // plank][:, None, None]
    return image + grain(rng, w, h, sigma)[..., None]


def _flat(
    rng: np.random.Generator,
    w: int,
    h: int,
    colors: tuple[RGB, RGB, float],
    cells: float,
    periodic: bool,
) -> np.ndarray:
    base, second, sigma = colors
    mottle = np.clip(0.5 + 1.6 * fbm(rng, w, h, cells=cells, octaves=4, periodic=periodic), 0, 1)
    return _mix(base, second, mottle) + grain(rng, w, h, sigma)[..., None]


def _desk(
    rng: np.random.Generator, w: int, h: int, colors: tuple[RGB, RGB, float], periodic: bool
) -> np.ndarray:
    image = _flat(rng, w, h, colors, 2.5, periodic)
    image += (streaks(rng, w, h, along=120, across=2.0, periodic=periodic) * 10)[..., None]
    return image


def _table(
    rng: np.random.Generator, w: int, h: int, colors: tuple[RGB, RGB, float], periodic: bool
) -> np.ndarray:
    base, vein, sigma = colors
    field = fbm(rng, w, h, cells=4.0, octaves=5, periodic=periodic)
    veins = np.exp(-((field * 40) ** 2) / 2.0)  # thin lines along noise level sets
    image = _mix(base, vein, veins * np.float32(rng.uniform(0.4, 0.8)))
    speckle = (rng.random((h, w), dtype=np.float32) < 0.02 * sigma / 10).astype(np.float32)
    image -= (speckle * sigma * 4)[..., None]
    return image + grain(rng, w, h, sigma)[..., None]


def _wall(
    rng: np.random.Generator, w: int, h: int, colors: tuple[RGB, RGB, float], periodic: bool
) -> np.ndarray:
    image = _flat(rng, w, h, colors, 1.5, periodic)
    stipple = blur(grain(rng, w, h, 6.0), 1.2, 1.2, periodic)
    return image + stipple[..., None]


def _fabric(
    rng: np.random.Generator, w: int, h: int, colors: tuple[RGB, RGB, float], periodic: bool
) -> np.ndarray:
    base, dark, sigma = colors
    period = rng.uniform(3.0, 6.0)
    period_x = period_y = np.float32(period)
    if periodic:  # whole threads per tile
        period_x = np.float32(w / round(w / period))
        period_y = np.float32(h / round(h / period))
    xs = np.arange(w, dtype=np.float32)[None, :]
    ys = np.arange(h, dtype=np.float32)[:, None]
    wobble = fbm(rng, w, h, cells=6.0, octaves=2, periodic=periodic) * np.float32(3.0)
    weave = np.cos(2 * np.pi * (xs + wobble) / period_x) * np.cos(
        2 * np.pi * (ys - wobble) / period_y
    )
    mottle = fbm(rng, w, h, cells=8.0, octaves=3, periodic=periodic)
    t = np.clip(0.5 + 0.35 * weave + 0.8 * mottle, 0, 1)
    return _mix(base, dark, t) + grain(rng, w, h, sigma)[..., None]


def _paper(
    rng: np.random.Generator, w: int, h: int, colors: tuple[RGB, RGB, float], periodic: bool
) -> np.ndarray:
    image = _flat(rng, w, h, colors, 3.0, periodic)
    fibres = streaks(rng, w, h, along=12, across=1.0, periodic=periodic) + streaks(
        rng, w, h, along=4, across=1.0, periodic=periodic
    )
    return image + (fibres * colors[2] * 2.5)[..., None]


_MAKERS: dict[
    str, Callable[[np.random.Generator, int, int, tuple[RGB, RGB, float], bool], np.ndarray]
] = {
    "wood": _wood,
    "desk": _desk,
    "table": _table,
    "wall": _wall,
    "fabric": _fabric,
    "paper": _paper,
}


def variants(kind: str) -> tuple[str, ...]:
    """Return the variant names of a texture kind."""
    if kind not in VARIANTS:
        raise ValueError(f"unknown texture kind {kind!r}; known: {', '.join(KINDS)}")
    return tuple(VARIANTS[kind])


def _pick_variant(kind: str, rng: np.random.Generator, variant: str | None) -> str:
    """Return the variant to draw: `variant` if given, else the seed's pick.

    The seed's draw happens either way, so fixing the variant leaves every
    later draw (cut, turn, tint) where it was.
    """
    names = variants(kind)
    pick = names[int(rng.integers(len(names)))]
    if variant is not None:
        if variant not in names:
            raise ValueError(f"texture {kind!r} has no variant {variant!r}; known: {names}")
        pick = variant
    return pick


def make_texture(
    kind: str,
    width: int,
    height: int,
    seed: int,
    variant: str | None = None,
    periodic: bool = False,
) -> np.ndarray:
    """Return a seeded RGB uint8 texture of shape (height, width, 3).

    `variant` fixes the look (see `variants(kind)`); by default the seed picks it.
    A `periodic` texture tiles without seams (for a page that repeats it).
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"texture size must be positive, got {width}x{height}")
    rng = np.random.default_rng(seed)
    pick = _pick_variant(kind, rng, variant)
    image = _MAKERS[kind](rng, width, height, VARIANTS[kind][pick], periodic)
    return np.clip(image, 0, 255).astype(np.uint8)


BASES = 2  # cached base textures per (kind, variant, size bucket) behind `surface_texture`
_BUCKET = 64


@lru_cache(maxsize=96)
def _base(kind: str, variant: str, index: int, side: int) -> np.ndarray:
    """A square base texture, generated once per key and kept read-only."""
    seed = seed_hash(f"{kind}\x1f{variant}\x1f{index}\x1f{side}", "blake2b")
    base = make_texture(kind, side, side, seed, variant)
    base.setflags(write=False)
    return base


def surface_texture(
    kind: str, width: int, height: int, seed: int, variant: str | None = None
) -> np.ndarray:
    """Return a seeded RGB uint8 texture of shape (height, width, 3), cut from a cached base.

    The seed picks the variant (unless `variant` fixes it), one of `BASES` base
    textures, where to cut, a quarter turn or mirror, and a small per-channel
    tint; the bases depend only on kind, variant and a size bucket, so after
    the first calls this costs a copy instead of a texture synthesis.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"texture size must be positive, got {width}x{height}")
    rng = np.random.default_rng(seed)
    pick = _pick_variant(kind, rng, variant)
    side = -(-round(1.25 * max(width, height)) // _BUCKET) * _BUCKET
    base = _base(kind, pick, int(rng.integers(BASES)), side)
    if rng.random() < 0.5:
        base = base.transpose(1, 0, 2)
    x = int(rng.integers(side - width + 1))
    y = int(rng.integers(side - height + 1))
    cut = base[y : y + height, x : x + width]
    if rng.random() < 0.5:
        cut = cut[:, ::-1]
    if rng.random() < 0.5:
        cut = cut[::-1]
    tint = np.append(1.0 + rng.normal(0.0, 0.03, 3), 0.0)
    return cv2.multiply(np.ascontiguousarray(cut), tint, dtype=cv2.CV_8U)
