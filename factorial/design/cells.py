"""One name for each cell of a design, used by the analysis, every export and harness task names.

A cell is a condition: its format, its option level and the level of every
other factor of the design, in name order: `vision·10`,
`vision·10·font_style=mono`. Harnesses that allow only `[a-z0-9_]` in a
task name get `cell_slug` of that name (`vision_10_font_style_mono`), so a
task's name is always derived from the cell's, never spelled separately.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

CORE_FACTORS = ("format", "n_options")  # part of every cell; the other factors follow them
# Condition fields that are never factors of a cell (older manifests wrote some of them).
NOT_FACTORS = frozenset({*CORE_FACTORS, "seed", "item_id", "job_key"})
SEPARATOR = "·"
UNPARSED = "unparsed"  # the one name of an answer no option letter could be read from

_SLUG = re.compile(r"[^a-z0-9]+")


def cell_factors(condition: Mapping[str, Any]) -> dict[str, str]:
    """Return a condition's factors besides format and options, as text, in name order."""
    return {
        str(name): str(value)
        for name, value in sorted(condition.items())
        if name not in NOT_FACTORS and isinstance(value, str | int | float | bool)
    }


def cell_id(fmt: str, level: int | str, factors: Mapping[str, Any] | None = None) -> str:
    """Return the cell's name, e.g. `vision·10` or `vision·10·font_style=mono`."""
    named = cell_factors(factors or {})
    return SEPARATOR.join([fmt, str(level), *(f"{k}={v}" for k, v in named.items())])


def cell_slug(cell: str) -> str:
    """Return a cell name in `[a-z0-9_]` only (harness task names): `vision_10_font_style_mono`."""
    return _SLUG.sub("_", cell.lower()).strip("_")


def check_slugs(cells: Iterable[str]) -> None:
    """Raise ValueError when two cells would get the same slug (their tasks would collide)."""
    seen: dict[str, str] = {}
    for cell in cells:
        slug = cell_slug(cell)
        if seen.setdefault(slug, cell) != cell:
            raise ValueError(f"cells {seen[slug]!r} and {cell!r} both become task name {slug!r}")
