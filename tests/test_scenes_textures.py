"""Scene textures: seeded, three variants per kind, served only under their exact names."""

from __future__ import annotations

import numpy as np
import pytest

from itemshot.backgrounds.scene_textures import texture_array
from itemshot.backgrounds.texture_names import KINDS, TEXTURE_NAMES, texture_file
from itemshot.renderer.assets import AssetNotAllowed, static_asset


def test_each_kind_has_three_distinct_deterministic_variants() -> None:
    for kind in KINDS:
        tiles = [texture_array(f"{kind}-{v}") for v in range(3)]
        assert all(np.array_equal(t, texture_array(f"{kind}-{v}")) for v, t in enumerate(tiles))
        assert not np.array_equal(tiles[0], tiles[1]) and not np.array_equal(tiles[1], tiles[2])


def test_textures_are_served_by_exact_name_only() -> None:
    for name in TEXTURE_NAMES:
        body, mime = static_asset(f"/static/textures/{texture_file(name)}")
        assert body and mime in ("image/png", "image/jpeg")
    for bad in (
        "/static/textures/chalk-7.png",
        "/static/textures/chalk-1.jpg",
        "/static/textures/../../etc/passwd",
        "/static/textures/%2e%2e/x.png",
        "/static/textures/wood-0.jpg/x",
    ):
        with pytest.raises(AssetNotAllowed):
            static_asset(bad)
