"""Presentation parameters: the validated look of one rendered item."""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from itemshot.backgrounds.texture_names import TEXT_SAFE
from itemshot.fonts.catalogue import FACE_KEYS

RANDOM = "random"

# The nine JMMMU-Pro scenes, then `plain` (text straight on a colour or texture,
# the MMMU-Pro screenshot tool's look; used by the mmmu_pro preset).
SCENES = (
    "exam_sheet",
    "workbook",
    "whiteboard",
    "blackboard",
    "projector",
    "tablet_notebook",
    "webpage",
    "game_console",
    "tv_quiz",
    "plain",
)
SAMPLED_SCENES = SCENES[:9]
FONT_STYLES = ("regular", "bold", "thin", "handwritten", "comic", "serif", "mono")
MARGINS = ("small", "large")
ASPECTS = ("9:16", "16:9", "3:4", "1:1")
# Capture presets of `degradations` ("none" keeps the clean render).
CAPTURES = (
    "none",
    "pc_screenshot",
    "phone_screenshot",
    "phone_photo_paper",
    "phone_photo_screen",
    "scan",
)
SEVERITIES = ("light", "medium", "strong")

# Named background colours (JMMMU-Pro's six) and their CSS values.
COLORS: dict[str, str] = {
    "white": "#ffffff",
    "light_green": "#e3f4e1",
    "light_yellow": "#fdf7d7",
    "light_pink": "#fbe4ec",
    "light_gray": "#ececec",
    "light_blue": "#e1eefb",
    # Chalkboard colours: light chalk text sits on them.
    "board_green": "#27423a",
    "board_black": "#22272a",
    "board_blue": "#1f3347",
}
LIGHT_COLORS = (
    "white",
    "light_green",
    "light_yellow",
    "light_pink",
    "light_gray",
    "light_blue",
)
BOARD_COLORS = ("board_green", "board_black", "board_blue")
# Any `#rrggbb` colour (MMMU-Pro's backgrounds), only where the scene's text is dark.
HEX_COLOR = re.compile(r"#[0-9a-f]{6}")
HEX_SCENES = ("plain",)
DARK_TEXT = "#111111"
MIN_CONTRAST = 4.5
# Textures a `plain` page may use instead of a colour (light enough for dark text).
TEXTURES = ("none", *TEXT_SAFE)
FONT_FACES = ("auto", *FACE_KEYS)

# Colours a scene can take; a whiteboard is white.
SCENE_COLORS: dict[str, tuple[str, ...]] = {
    "exam_sheet": LIGHT_COLORS,
    "workbook": LIGHT_COLORS,
    "whiteboard": ("white",),
    "blackboard": BOARD_COLORS,
    "projector": LIGHT_COLORS,
    "tablet_notebook": LIGHT_COLORS,
    "webpage": LIGHT_COLORS,
    "game_console": LIGHT_COLORS,
    "tv_quiz": LIGHT_COLORS,
    "plain": LIGHT_COLORS,
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


def relative_luminance(hex_color: str) -> float:
    """Return the WCAG relative luminance of a `#rrggbb` colour."""
    channels = [int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(first: str, second: str) -> float:
    """Return the WCAG contrast ratio of two `#rrggbb` colours."""
    a, b = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (a + 0.05) / (b + 0.05)


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
    font_face: str = "auto"
    texture: str = "none"
    deliver_size: int | None = None  # long side of a captured image; None: the render's

    def __post_init__(self) -> None:
        _check_choice("scene", self.scene, SCENES)
        _check_choice("font_face", self.font_face, FONT_FACES)
        _check_choice("texture", self.texture, TEXTURES)
        if self.texture != "none" and self.scene != "plain":
            raise PresentationError(
                "texture", f"only the plain scene takes a texture, not {self.scene!r}"
            )
        if isinstance(self.color, str) and HEX_COLOR.fullmatch(self.color):
            self._check_hex()
            return self._check_rest()
        _check_choice("color", self.color, tuple(COLORS))
        self._check_rest()
        if self.color not in SCENE_COLORS[self.scene]:
            allowed = ", ".join(SCENE_COLORS[self.scene])
            raise PresentationError(
                "color", f"scene {self.scene!r} takes only {allowed}, not {self.color!r}"
            )

    def _check_hex(self) -> None:
        if self.scene not in HEX_SCENES:
            raise PresentationError(
                "color", f"scene {self.scene!r} takes named colours only, not {self.color!r}"
            )
        if contrast_ratio(self.color, DARK_TEXT) < MIN_CONTRAST:
            raise PresentationError(
                "color", f"{self.color} is too dark for dark text (contrast < {MIN_CONTRAST}:1)"
            )

    def _check_rest(self) -> None:
        _check_choice("font_style", self.font_style, FONT_STYLES)
        _check_range("font_size", self.font_size, FONT_SIZE_RANGE)
        _check_choice("margin", self.margin, MARGINS)
        _check_choice("aspect", self.aspect, ASPECTS)
        _check_range("resolution", self.resolution, RESOLUTION_RANGE)
        _check_choice("capture", self.capture, CAPTURES)
        _check_choice("severity", self.severity, SEVERITIES)
        if self.deliver_size is not None:
            _check_range("deliver_size", self.deliver_size, RESOLUTION_RANGE)

    def css_color(self) -> str:
        """Return the background colour as CSS `#rrggbb` (validated, never free text)."""
        return self.color if self.color.startswith("#") else COLORS[self.color]

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
    "scene": SAMPLED_SCENES,
    "font_style": FONT_STYLES,
    "font_size": tuple(range(16, 31, 2)),
    "margin": MARGINS,
    "aspect": ASPECTS,
    "resolution": (1024,),
    "capture": CAPTURES,
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
    font_face: str | None = None
    texture: str | None = None
    deliver_size: int | None = None

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
