"""Scanner steps: paper grain under the print and toner noise (speckles and dropouts)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.backgrounds.textures import surface_texture
from itemshot.degradations.frame import Frame, Params, Transform, register, uniform


@register
class PaperGrain(Transform):
    """Multiply the page by a paper texture (fibres and mottling), normalised to its mean."""

    name = "paper_grain"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return texture seed and the strength of the grain."""
        return {
            "texture_seed": int(rng.integers(2**31 - 1)),
            "strength": uniform(rng, self.spec["grain"]),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Modulate the image by the grain around 1."""
        w, h = frame.width, frame.height
        paper = surface_texture("paper", max(8, w // 2), max(8, h // 2), params["texture_seed"])
        grey = cv2.cvtColor(paper, cv2.COLOR_RGB2GRAY).astype(np.float32)
        grey = 1 + params["strength"] * (grey / grey.mean() - 1) * 4
        colour = paper.astype(np.float32).mean(axis=(0, 1)) / 255.0
        small = cv2.merge([grey * np.float32(c / colour.max()) for c in colour])
        field = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        return frame.with_image(cv2.multiply(frame.image, field, dtype=cv2.CV_8U))


@register
class TonerNoise(Transform):
    """Toner speckles on the paper, dropouts inside strokes, and slight stroke spread."""

    name = "toner_noise"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return speckle and dropout densities, stroke spread and the noise seed."""
        return {
            "speckle": uniform(rng, self.spec["speckle"]),
            "dropout": uniform(rng, self.spec["dropout"]),
            "spread": int(rng.integers(self.spec["spread"][0], self.spec["spread"][1] + 1)),
            "noise_seed": int(rng.integers(2**63 - 1)),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Darken random specks, lighten random stroke pixels, optionally thicken strokes."""
        rng = np.random.default_rng(params["noise_seed"])
        image = frame.image
        if params["spread"] > 0:
            size = 2 * params["spread"] + 1
            thick = cv2.erode(image, np.ones((size, size), np.uint8))
            image = cv2.addWeighted(image, 0.5, thick, 0.5, 0)
        h, w = image.shape[:2]
        draw = rng.random((h // 2, w // 2), dtype=np.float32)
        draw = cv2.resize(draw, (w, h), interpolation=cv2.INTER_NEAREST)
        dark = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) < 128
        specks = (draw < params["speckle"]) & ~dark
        drops = (draw > 1 - params["dropout"]) & dark
        image = image.copy()
        image[specks] = (image[specks] * 0.35).astype(np.uint8)
        image[drops] = np.maximum(image[drops], 170)
        return frame.with_image(cv2.GaussianBlur(image, (0, 0), 0.6))
