"""The names of the scene textures and their served files (no image code, cheap to import).

Each texture is `<kind>-<variant>` with variants 0, 1, 2.
"""

from __future__ import annotations

VARIANTS = 3
CACHE_VERSION = 2  # bump when a generator changes its pixels (2: periodic, seamless tiles)
TILE = 512
OPAQUE_KINDS = ("paper", "ruled", "grid", "wood", "wall", "fabric", "desk")
OVERLAY_KINDS = ("grain", "chalk", "smudge")
KINDS = OPAQUE_KINDS + OVERLAY_KINDS
TEXTURE_NAMES = tuple(f"{kind}-{v}" for kind in KINDS for v in range(VARIANTS))
# Light, low-contrast textures that dark text may sit on directly.
TEXT_SAFE = tuple(f"{kind}-{v}" for kind in ("paper", "ruled", "grid", "wall") for v in range(3))


def texture_file(name: str) -> str:
    """Return the served file name of a texture: JPEG for opaque tiles, PNG for overlays."""
    kind = name.split("-", 1)[0]
    return f"{name}.png" if kind in OVERLAY_KINDS else f"{name}.jpg"


def texture_stem(file_name: str) -> str:
    """Return the texture name of a served file name like `chalk-1.png`; ValueError else."""
    stem = file_name.rpartition(".")[0]
    if stem not in TEXTURE_NAMES or texture_file(stem) != file_name:
        raise ValueError(f"unknown texture file {file_name!r}")
    return stem
