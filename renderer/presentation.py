"""Presentation parameters: the validated look of one rendered item."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields
from typing import Any

RANDOM = "random"

SCENES = ("exam_sheet", "whiteboard", "webpage", "tv_quiz")
FONT_STYLES = ("regular", "bold", "thin", "handwritten", "comic", "serif", "mono")
MARGINS = ("small", "large")
ASPECTS = ("9:16", "16:9", "3:4", "1:1")
CAPTURES = ("none",)
SEVERITIES = ("light", "medium", "strong")

# Named background colours (JMMMU-Pro's six) and their CSS values.
COLORS: dict[str, str] = {
    "white": "#ffffff",
    "light_green": "#e3f4e1",
    "light_yellow": "#fdf7d7",
    "light_pink": "#fbe4ec",
    "light_gray": "#ececec",
    "light_blue": "#e1eefb",
}

# Colours a scene can take; a whiteboard is white.
SCENE_COLORS: dict[str, tuple[str, ...]] = {
    "exam_sheet": tuple(COLORS),
    "whiteboard": ("white",),
    "webpage": tuple(COLORS),
    "tv_quiz": tuple(COLORS),
}

FONT_SIZE_RANGE = (8, 64)
RESOLUTION_RANGE = (256, 4096)
REFERENCE_LONG_SIDE = 1024  # CSS px of the long side; resolution scales it.


class PresentationError(ValueError):
    """A presentation parameter outside its allowed values."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"presentation field {field!r}: {message}")


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise PresentationError(name, f"{value!r} is not one of {', '.join(allowed)}")


def _check_range(name: str, value: object, bounds: tuple[int, int]) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise PresentationError(name, f"{value!r} is not a whole number")
    low, high = bounds
    if not low <= value <= high:
        raise PresentationError(name, f"{value} is outside {low}..{high}")


@dataclass(frozen=True)
class Presentation:
    """The look of one image: scene, colour, font, size, margin, aspect, resolution."""

    scene: str = "exam_sheet"
    color: str = "white"
    font_style: str = "regular"
    font_size: int = 22
    margin: str = "small"
    aspect: str = "3:4"
    resolution: int = 1024
    capture: str = "none"
    severity: str = "medium"

    def __post_init__(self) -> None:
        _check_choice("scene", self.scene, SCENES)
        _check_choice("color", self.color, tuple(COLORS))
        _check_choice("font_style", self.font_style, FONT_STYLES)
        _check_range("font_size", self.font_size, FONT_SIZE_RANGE)
        _check_choice("margin", self.margin, MARGINS)
        _check_choice("aspect", self.aspect, ASPECTS)
        _check_range("resolution", self.resolution, RESOLUTION_RANGE)
        _check_choice("capture", self.capture, CAPTURES)
        _check_choice("severity", self.severity, SEVERITIES)
        if self.color not in SCENE_COLORS[self.scene]:
            allowed = ", ".join(SCENE_COLORS[self.scene])
            raise PresentationError(
                "color", f"scene {self.scene!r} takes only {allowed}, not {self.color!r}"
            )

    def css_size(self) -> tuple[int, int]:
        """Return the page size in CSS pixels (long side fixed at the reference)."""
        a, b = (int(part) for part in self.aspect.split(":"))
        long_side = REFERENCE_LONG_SIDE
        short_side = round(long_side * min(a, b) / max(a, b))
        return (long_side, short_side) if a >= b else (short_side, long_side)

    @property
    def device_scale(self) -> float:
        """Return the device pixel ratio that turns the CSS page into `resolution` pixels."""
        return self.resolution / REFERENCE_LONG_SIDE

    def as_dict(self) -> dict[str, Any]:
        """Return the parameters as a plain dict."""
        return asdict(self)


# Fields a user may leave to the seed, and how each is sampled.
_CHOICES: dict[str, tuple[Any, ...]] = {
    "scene": SCENES,
    "font_style": FONT_STYLES,
    "font_size": tuple(range(16, 31, 2)),
    "margin": MARGINS,
    "aspect": ASPECTS,
    "resolution": (1024,),
    "severity": SEVERITIES,
}


@dataclass(frozen=True)
class PresentationSpec:
    """A presentation request in which any field may be fixed, defaulted or `random`.

    `None` means the default (for colour: the scene's first allowed colour);
    `"random"` means sampled per job from the job's seed.
    """

    scene: str | None = None
    color: str | None = None
    font_style: str | None = None
    font_size: int | str | None = None
    margin: str | None = None
    aspect: str | None = None
    resolution: int | str | None = None
    capture: str | None = None
    severity: str | None = None

    def resolve(self, rng: random.Random) -> Presentation:
        """Return a concrete Presentation, sampling `random` fields from `rng` in field order."""
        chosen: dict[str, Any] = {}
        defaults = Presentation()
        for spec_field in fields(self):
            name = spec_field.name
            value = getattr(self, name)
            if name == "color":
                continue  # depends on the scene: resolved below
            if value == RANDOM:
                options = _CHOICES.get(name, (getattr(defaults, name),))
                if name == "scene" and self.color not in (None, RANDOM):
                    # A fixed colour narrows the scenes to those that allow it.
                    options = tuple(s for s in options if self.color in SCENE_COLORS[s])
                value = rng.choice(options)
            chosen[name] = getattr(defaults, name) if value is None else value
        allowed = SCENE_COLORS.get(chosen["scene"], tuple(COLORS))
        if self.color == RANDOM:
            chosen["color"] = rng.choice(allowed)
        elif self.color is None:
            chosen["color"] = allowed[0]
        else:
            chosen["color"] = self.color
        return Presentation(**chosen)

    def check(self) -> None:
        """Raise PresentationError now if a fixed field can never be valid."""
        self.resolve(random.Random(0))
