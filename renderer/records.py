"""Layout records: what was drawn where, in final-image pixels, and how."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

Point = tuple[float, float]
Quad = tuple[Point, Point, Point, Point]  # top-left, top-right, bottom-right, bottom-left


def box_to_quad(box: Sequence[float]) -> Quad:
    """Return the four corners (clockwise from top-left) of an axis-aligned box."""
    x0, y0, x1, y1 = box
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def quad_bounds(quad: Quad) -> tuple[float, float, float, float]:
    """Return the axis-aligned bounding box (x0, y0, x1, y1) of a quad."""
    xs = [p[0] for p in quad]
    ys = [p[1] for p in quad]
    return (min(xs), min(ys), max(xs), max(ys))


@dataclass(frozen=True)
class Region:
    """One laid-out part of the image: the question, an option or a figure.

    `kind` is `question`, `option`, `figure` or `caption` (a figure's "Figure N"
    line; `figure` holds N for both). `text` is the DOM text as
    rendered, without math; `math` keeps each formula's LaTeX source. `fonts`
    maps each family actually used for the text to its glyph count. `font_px`
    is the text's size in final-render px as the reference face's size of the
    same x-height (a face set larger to match it reads as the nominal size);
    `set_px` is the size it was set at, in the same px: what its glyphs are
    drawn at. `quad` is the region in final-image pixels (after any capture
    warp); `box` its axis-aligned bounds on the clean render.
    """

    name: str
    kind: str
    box: tuple[float, float, float, float]
    quad: Quad
    text: str = ""
    math: tuple[str, ...] = ()
    label: str = ""
    letter: str = ""
    figure: int | None = None
    placeholder: bool = False
    fonts: Mapping[str, int] = field(default_factory=dict)
    font_px: float = 0.0
    set_px: float = 0.0  # the size the face was set at, in font_px's px (0: not recorded)
    color: str = ""
    background: str = ""
    overflow: bool = False

    @property
    def drawn_px(self) -> float:
        """Return the size the face's glyphs are drawn at (records before version 5: `font_px`)."""
        return self.set_px or self.font_px

    def with_quad(self, quad: Quad) -> Region:
        """Return a copy whose quad is moved to new final-image coordinates."""
        return replace(self, quad=quad)

    def as_dict(self) -> dict[str, Any]:
        """Return the region as a JSON-ready dict."""
        record = asdict(self)
        record["quad"] = [list(p) for p in self.quad]
        record["box"] = list(self.box)
        record["math"] = list(self.math)
        record["fonts"] = dict(self.fonts)
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Region:
        """Rebuild a region from `as_dict` output."""
        data = dict(record)
        data["box"] = tuple(data["box"])
        data["quad"] = tuple(tuple(p) for p in data["quad"])
        data["math"] = tuple(data.get("math", ()))
        return cls(**data)


@dataclass(frozen=True)
class Layout:
    """Everything the backend knows about one clean render."""

    width: int
    height: int
    regions: tuple[Region, ...]
    font_scale: float = 1.0
    fonts_requested: tuple[str, ...] = ()
    math_errors: tuple[str, ...] = ()
    fonts_fallback: Mapping[str, str] = field(default_factory=dict)  # family -> characters
    fonts_uncovered: str = ""
    # What a presentation contrast may change besides its factor, measured on the
    # clean render (see `renderer.measures`): x-height, figure area, scale, lines.
    measures: Mapping[str, Any] = field(default_factory=dict)

    def region(self, name: str) -> Region:
        """Return the region called `name` (e.g. `question`, `option:B`, `figure:1`)."""
        for region in self.regions:
            if region.name == name:
                return region
        raise KeyError(name)

    def as_dict(self) -> dict[str, Any]:
        """Return the layout as a JSON-ready dict."""
        return {
            "width": self.width,
            "height": self.height,
            "font_scale": self.font_scale,
            "fonts_requested": list(self.fonts_requested),
            "math_errors": list(self.math_errors),
            "fonts_fallback": dict(self.fonts_fallback),
            "fonts_uncovered": self.fonts_uncovered,
            "measures": dict(self.measures),
            "regions": [r.as_dict() for r in self.regions],
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Layout:
        """Rebuild a layout from `as_dict` output."""
        return cls(
            width=record["width"],
            height=record["height"],
            font_scale=record.get("font_scale", 1.0),
            fonts_requested=tuple(record.get("fonts_requested", ())),
            math_errors=tuple(record.get("math_errors", ())),
            fonts_fallback=dict(record.get("fonts_fallback", {})),
            fonts_uncovered=record.get("fonts_uncovered", ""),
            measures=dict(record.get("measures", {})),
            regions=tuple(Region.from_dict(r) for r in record["regions"]),
        )
