"""Presentation validation, constraints and seeded sampling."""

from __future__ import annotations

import random

import pytest

from itemshot.renderer.presentation import (
    SCENE_COLORS,
    Presentation,
    PresentationError,
    PresentationSpec,
)


def test_defaults_are_valid_and_sized() -> None:
    presentation = Presentation()
    assert presentation.css_size() == (768, 1024)
    assert Presentation(aspect="16:9").css_size() == (1024, 576)
    assert Presentation(resolution=2048).device_scale == 2.0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("scene", "moon"),
        ("font_size", 3),
        ("aspect", "5:1"),
        ("margin", "huge"),
        ("resolution", 99),
    ],
)
def test_invalid_values_name_the_field(field: str, value: object) -> None:
    with pytest.raises(PresentationError) as error:
        Presentation(**{field: value})
    assert error.value.field == field


def test_whiteboard_is_white() -> None:
    with pytest.raises(PresentationError, match="whiteboard"):
        Presentation(scene="whiteboard", color="light_green")


def test_random_fields_follow_the_seed_and_constraints() -> None:
    spec = PresentationSpec(scene="random", color="random", font_style="random")
    first = [spec.resolve(random.Random(seed)) for seed in range(50)]
    again = [spec.resolve(random.Random(seed)) for seed in range(50)]
    assert first == again
    assert len({p.scene for p in first}) > 1
    assert all(p.color in SCENE_COLORS[p.scene] for p in first)


def test_fixed_colour_narrows_random_scene() -> None:
    spec = PresentationSpec(scene="random", color="light_pink")
    scenes = {spec.resolve(random.Random(seed)).scene for seed in range(60)}
    assert "whiteboard" not in scenes and scenes
