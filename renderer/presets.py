"""Presets: named ways to choose each item's presentation (`itemshot render --preset`).

- `jmmmu_pro` samples JMMMU-Pro's six parameters per item from the run seed:
  scene (nine), background colour (six, within the scene's constraints), font
  look (five), margin (two), capture state (three: screenshot, photo of a
  screen, photo of a print — applied through the matching capture preset and
  recorded in the condition) and aspect (four).
- `mmmu_pro` reproduces, per item, the font (open look-alike), size and
  background the MMMU-Pro tool recorded in `mix_data.jsonl` (adapter keys
  `font`, `fontSize`, `background`, `category` in `Item.meta`), on the `plain`
  scene; its photo backgrounds map to procedural textures; `category`
  (screenshot/photo) is recorded in the condition, and a `photo` item — in
  MMMU-Pro a phone photo of the screenshot on a monitor — goes through the
  `phone_photo_screen` capture at medium severity.
- `uniform` is one fixed look.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from itemshot.fonts.catalogue import FACE_KEYS, LOOKALIKES
from itemshot.renderer.items import Item, ItemError
from itemshot.renderer.presentation import (
    ASPECTS,
    FONT_SIZE_RANGE,
    MARGINS,
    SAMPLED_SCENES,
    SCENE_COLORS,
    PresentationError,
    PresentationSpec,
)
from itemshot.renderer.seeds import derive_seed

# JMMMU-Pro's five font looks as catalogue roles.
JMMMU_FONT_LOOKS = {
    "handwritten": "handwritten",
    "computer": "regular",
    "thick": "bold",
    "thin": "thin",
    "manga": "comic",
}
JMMMU_CAPTURES = ("screenshot", "photo_of_screen", "photo_of_print")
# The capture preset of `degradations` applied for each JMMMU-Pro capture state.
CAPTURE_PRESETS = {
    "screenshot": "pc_screenshot",
    "photo_of_screen": "phone_photo_screen",
    "photo_of_print": "phone_photo_paper",
}
# Scenes shown on a screen cannot be a photo of a print, and vice versa.
SCREEN_SCENES = ("webpage", "projector", "tablet_notebook", "game_console", "tv_quiz")

# MMMU-Pro's nine photo backgrounds → procedural texture names (see fonts/README.md).
MMMU_PHOTO_TEXTURES = {
    f"background_images/background{n}.jpg": name
    for n, name in enumerate(
        (
            "paper-0",
            "paper-1",
            "paper-2",
            "wall-0",
            "wall-1",
            "ruled-0",
            "grid-0",
            "wall-2",
            "ruled-1",
        ),
        start=1,
    )
}
_HEX = re.compile(r"#[0-9a-fA-F]{6}")
_PX = re.compile(r"([0-9]{1,3})px")


@dataclass(frozen=True)
class PresetChoice:
    """A preset's decision for one item: the presentation and extra condition fields."""

    spec: PresentationSpec
    condition: Mapping[str, Any]


def _jmmmu_pro(item: Item, seed: int) -> PresetChoice:
    rng = random.Random(derive_seed(seed, "jmmmu_pro", item.id))
    scene = rng.choice(SAMPLED_SCENES)
    look = rng.choice(tuple(JMMMU_FONT_LOOKS))
    capture = rng.choice(JMMMU_CAPTURES)
    if capture == "photo_of_print" and scene in SCREEN_SCENES:
        capture = "photo_of_screen"
    elif capture == "photo_of_screen" and scene not in SCREEN_SCENES:
        capture = "photo_of_print"
    spec = PresentationSpec(
        scene=scene,
        color=rng.choice(SCENE_COLORS[scene]),
        font_style=JMMMU_FONT_LOOKS[look],
        margin=rng.choice(MARGINS),
        aspect=rng.choice(ASPECTS),
        capture=CAPTURE_PRESETS[capture],
    )
    return PresetChoice(spec, {"preset": "jmmmu_pro", "font_look": look, "capture": capture})


def _mmmu_pro(item: Item, seed: int) -> PresetChoice:
    meta = item.meta
    font = str(meta.get("font", ""))
    if font not in LOOKALIKES:
        raise ItemError(item.id, "font", f"no open look-alike for MMMU-Pro font {font!r}")
    size_match = _PX.fullmatch(str(meta.get("fontSize", "")))
    if size_match is None:
        raise ItemError(item.id, "fontSize", f"{meta.get('fontSize')!r} is not like '24px'")
    size = int(size_match.group(1))
    low, high = FONT_SIZE_RANGE
    if not low <= size <= high:
        raise ItemError(item.id, "fontSize", f"{size}px is outside {low}..{high}")
    background = str(meta.get("background", ""))
    color, texture = "white", "none"
    if _HEX.fullmatch(background):
        color = background.lower()
    elif background in MMMU_PHOTO_TEXTURES:
        texture = MMMU_PHOTO_TEXTURES[background]
    else:
        raise ItemError(item.id, "background", f"unknown MMMU-Pro background {background!r}")
    face = next(key for key, name in FACE_KEYS.items() if name == font)
    category = str(meta.get("category", "screenshot"))
    spec = PresentationSpec(
        scene="plain",
        color=color,
        font_style=LOOKALIKES[font][0],
        font_face=face,
        font_size=size,
        texture=texture,
        capture="phone_photo_screen" if category == "photo" else "none",
        severity="medium",
    )
    return PresetChoice(spec, {"preset": "mmmu_pro", "category": category})


def _uniform(item: Item, seed: int) -> PresetChoice:
    spec = PresentationSpec(
        scene="exam_sheet",
        color="white",
        font_style="regular",
        font_size=22,
        margin="small",
        aspect="3:4",
    )
    return PresetChoice(spec, {"preset": "uniform"})


PRESETS: dict[str, Callable[[Item, int], PresetChoice]] = {
    "jmmmu_pro": _jmmmu_pro,
    "mmmu_pro": _mmmu_pro,
    "uniform": _uniform,
}
PRESET_NAMES = tuple(PRESETS)


def preset_choice(name: str, item: Item, seed: int) -> PresetChoice:
    """Return the presentation a preset gives `item`; raise ItemError naming the bad field."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    choice = PRESETS[name](item, seed)
    try:
        choice.spec.check()
    except PresentationError as error:
        raise ItemError(item.id, error.field, str(error)) from None
    return choice
