"""Backgrounds: seeded procedural surface textures (desk, wood, table, wall, fabric, paper).

`make_texture(kind, width, height, seed, variant)` draws one; `KINDS` and
`variants(kind)` list what exists. `texture_names` names the scene tiles the
rendering page may load and `scene_textures` draws them.
"""

from __future__ import annotations

from itemshot.lazy import lazy_exports

_EXPORTS = {
    "KINDS": "itemshot.backgrounds.textures",
    "make_texture": "itemshot.backgrounds.textures",
    "variants": "itemshot.backgrounds.textures",
}

__all__ = ["KINDS", "make_texture", "variants"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
