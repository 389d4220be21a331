"""Scene tiles repeat without seams: each tile edge continues into the opposite one.

The rendering page repeats every texture tile (CSS `background-repeat`), so a
tile whose last row does not continue into its first shows a line every tile.
The check smooths along each edge (iid grain cancels, a step does not) and
compares the step across the wrap with the steps between neighbouring rows
inside the tile: a seam stands far above them (the pre-periodic chalk tile
scored 3-12 times the interior's 99th percentile, smudges 20-85 times).
"""

from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
from PIL import Image

from itemshot.backgrounds.scene_textures import encode_texture, texture_array
from itemshot.backgrounds.texture_names import TEXTURE_NAMES

SEAM_RATIO = 1.25  # wrap step at most this times the interior's 99th percentile


def edge_steps(tile: np.ndarray, axis: int) -> tuple[float, float]:
    """Return (step across the wrap, 99th percentile of interior steps) along `axis`."""
    field = tile.astype(np.float32)
    field = field[..., 3:4] if field.shape[2] == 4 else field  # overlays: the alpha is the pattern
    if axis == 1:
        field = field.transpose(1, 0, 2)
    smooth = cv2.GaussianBlur(np.ascontiguousarray(field), (0, 0), sigmaX=6, sigmaY=0.01)
    smooth = smooth.reshape(field.shape)
    steps = np.abs(smooth - np.roll(smooth, -1, axis=0)).mean(axis=(1, 2))
    return float(steps[-1]), float(np.percentile(steps[:-1], 99))


@pytest.mark.parametrize("name", TEXTURE_NAMES)
def test_tile_edges_continue_into_each_other(name: str) -> None:
    served, _mime = encode_texture(name)
    tiles = {"generated": texture_array(name), "served": np.asarray(Image.open(io.BytesIO(served)))}
    for label, tile in tiles.items():
        for axis, edge in ((0, "top/bottom"), (1, "left/right")):
            wrap, interior = edge_steps(tile, axis)
            assert wrap <= SEAM_RATIO * interior, (
                f"{name} ({label}) {edge} seam: step {wrap:.2f} vs interior p99 {interior:.2f}"
            )


def test_check_finds_a_seam() -> None:
    """A smooth gradient cut by the tile edge (a non-periodic field) is caught."""
    ramp = np.linspace(0, 80, 512, dtype=np.float32)[:, None, None]
    tile = np.broadcast_to(ramp, (512, 512, 3)) + np.random.default_rng(0).normal(
        0, 2, (512, 512, 3)
    )
    wrap, interior = edge_steps(np.clip(tile, 0, 255).astype(np.uint8), 0)
    assert wrap > 10 * interior
