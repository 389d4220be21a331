"""Frames, transforms and their composition: each step samples params, then applies them.

A transform is albumentations-like but splits the two halves: `sample` draws
every parameter from a seeded generator into a JSON-ready dict, and the class
method `apply` turns a frame and such a dict into a new frame. Replaying a
stored record therefore needs no random state at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from itemshot.degradations.seeding import rng_for

Params = dict[str, Any]


@dataclass(frozen=True)
class Frame:
    """An RGB uint8 image with the points it carries (N×2, edge coordinates).

    The points are the corners of every region and, last, the four corners of
    the clean page, so a step can see where the page is now. `deliver` is the
    long side of the final image (the size the model will receive). `hold` is
    the smallest page scale (the page's long side in the final image over
    `deliver`) that keeps the page's text at the readable floor; a step that
    frames the page draws no smaller (0: nothing is held).
    """

    image: np.ndarray
    points: np.ndarray
    deliver: int = 0
    hold: float = 0.0

    @property
    def page(self) -> np.ndarray:
        """Return the page's four corners (4×2) in this frame's pixels."""
        return self.points[-4:]

    @property
    def width(self) -> int:
        """Return the image width in pixels."""
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        """Return the image height in pixels."""
        return int(self.image.shape[0])

    def with_image(self, image: np.ndarray, points: np.ndarray | None = None) -> Frame:
        """Return a frame with a new image and, if given, moved points."""
        return replace(self, image=image, points=self.points if points is None else points)


def _plain(value: Any) -> Any:
    """Convert numpy scalars and arrays to plain Python for JSON."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not JSON-ready: {type(value).__name__}")


def json_ready(params: Mapping[str, Any]) -> Params:
    """Return `params` as it reads back from JSON (so capture and replay see the same values)."""
    return json.loads(json.dumps(params, default=_plain))


class Transform:
    """One capture step: `sample` draws its parameters, `apply` uses only them."""

    name: ClassVar[str] = ""

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return every parameter this step will use on `frame`, JSON-ready."""
        raise NotImplementedError

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Return the frame transformed with exactly `params`."""
        raise NotImplementedError


REGISTRY: dict[str, type[Transform]] = {}


def register(cls: type[Transform]) -> type[Transform]:
    """Class decorator: make a transform replayable by its `name`."""
    if not cls.name or cls.name in REGISTRY:
        raise ValueError(f"transform name {cls.name!r} missing or taken")
    REGISTRY[cls.name] = cls
    return cls


class Compose:
    """A sequence of transforms applied in order, each with its own derived seed."""

    def __init__(self, transforms: Sequence[Transform]) -> None:
        self.transforms = tuple(transforms)

    def __call__(self, frame: Frame, seed: int) -> tuple[Frame, list[Params]]:
        """Sample and apply every step; return the frame and the applied step records."""
        records: list[Params] = []
        for index, transform in enumerate(self.transforms):
            rng = rng_for(seed, "step", index, transform.name)
            params = json_ready(transform.sample(rng, frame))
            frame = type(transform).apply(frame, params)
            records.append({"name": transform.name, "params": params})
        return frame, records

    @staticmethod
    def replay(frame: Frame, records: Sequence[Mapping[str, Any]]) -> Frame:
        """Re-apply stored step records (from `__call__`) to a frame."""
        for record in records:
            name = record["name"]
            if name not in REGISTRY:
                raise ValueError(f"unknown capture step {name!r} in params record")
            frame = REGISTRY[name].apply(frame, dict(record["params"]))
        return frame


def uniform(rng: np.random.Generator, bounds: Sequence[float]) -> float:
    """Return a float drawn uniformly from `bounds` (a `(low, high)` pair or one value)."""
    if isinstance(bounds, int | float):
        return float(bounds)
    low, high = bounds
    return float(rng.uniform(low, high)) if high > low else float(low)
