"""Backgrounds: seeded procedural surface textures (desk, wood, table, wall, fabric, paper)."""

from backgrounds.textures import KINDS, make_texture, variants

__all__ = ["KINDS", "make_texture", "variants"]
