"""Geometric stages map points exactly; textures are seeded, sized and varied."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemshot.backgrounds import KINDS, make_texture, variants
from itemshot.degradations import geometry
from itemshot.degradations.warp import build_maps


def _stages(k1: float, curl: bool) -> list[dict]:
    bend = {"kind": "bend", "normal": [0.6, 0.8], "start": 700.0, "light": 1.0, "shade": 0.2}
    bend |= {
        "mode": "curl",
        "radius": 400.0,
    }  # page stays within a quarter turn if curl else {"mode": "fold", "angle": 0.2}
    return [
        bend,
        {"kind": "homography", "matrix": [[0.8, 0.06, 50], [0.02, 0.85, 40], [2e-5, 3e-5, 1]]},
        {"kind": "lens", "centre": [400.0, 520.0], "norm": 650.0, "k1": k1, "k2": 0.0},
    ]


@settings(max_examples=60, deadline=None)
@given(x=st.floats(0, 768), y=st.floats(0, 1024), k1=st.floats(0, 0.08), curl=st.booleans())
def test_forward_then_backward_is_identity(x: float, y: float, k1: float, curl: bool) -> None:
    stages = _stages(k1, curl)
    out = geometry.forward(stages, np.array([[x, y]]))
    back, _ = geometry.backward(stages, out)
    assert np.allclose(back, [[x, y]], atol=1e-6)


def test_remap_maps_agree_with_point_mapping() -> None:
    stages = _stages(0.05, curl=True)
    map_x, map_y, _ = build_maps(stages, 900, 1100, grid=8)
    source = np.array([[100.5, 200.5], [400.5, 300.5], [600.5, 650.5]])
    for point in geometry.forward(stages, source):
        col, row = int(point[0]), int(point[1])  # pixel whose centre is near the point
        centre = np.array([[col + 0.5, row + 0.5]])
        expected, _ = geometry.backward(stages, centre)
        got = np.array([map_x[row, col] + 0.5, map_y[row, col] + 0.5])
        assert np.allclose(got, expected[0], atol=0.05)


def test_index_matrix_converts_pixel_convention() -> None:
    matrix = geometry.scale_translate(2.0, 2.0, 0.0, 0.0)
    index = geometry.index_matrix(matrix)
    # pixel 0's centre (edge 0.5) lands on edge 1.0, index 0.5
    assert np.allclose(geometry.apply_homography(index, np.array([[0.0, 0.0]])), [[0.5, 0.5]])


@pytest.mark.parametrize("kind", KINDS)
def test_textures_are_seeded_sized_and_varied(kind: str) -> None:
    first = make_texture(kind, 96, 64, seed=4)
    assert first.shape == (64, 96, 3) and first.dtype == np.uint8
    assert np.array_equal(first, make_texture(kind, 96, 64, seed=4))
    names = variants(kind)
    assert len(names) >= 3
    means = {name: make_texture(kind, 64, 64, 1, variant=name).mean(axis=(0, 1)) for name in names}
    distinct = {tuple(np.round(m / 8)) for m in means.values()}
    assert len(distinct) == len(names)
    assert first.std() > 0.5  # a texture, not a flat fill


def test_texture_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown texture kind 'lava'"):
        make_texture("lava", 10, 10, 0)
    with pytest.raises(ValueError, match="no variant 'gold'"):
        make_texture("wood", 10, 10, 0, variant="gold")
