"""Framing and delivery: crop a screenshot around the page, then resize to the delivered size.

`Deliver` ends every preset: the image the model receives has the delivered
long side, so a capture's legibility is decided where it matters. Its
optional `soften` factor first shrinks the image below the delivered size and
enlarges it back, as a screenshot re-saved small by a messaging app is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from itemshot.degradations.frame import Frame, Params, Transform, register, uniform
from itemshot.degradations.warp import place_points, resize_image


def delivered_size(width: int, height: int, long_side: int) -> tuple[int, int]:
    """Return (width, height) with the long side `long_side` and the aspect of width × height."""
    scale = long_side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def kept_margin(margins: list[float], page: tuple[float, float], hold: float) -> float:
    """Return the share of the margins (left, top, right, bottom) that keeps the page scale.

    The page's long side must stay at least `hold` of the cut's long side; 1
    when the drawn margins already do (or nothing is held), 0 at the page's
    own bounds (the most a cut can give).
    """
    if hold <= 0:
        return 1.0
    width, height = page
    longest = max(width, height) / hold  # the longest cut that keeps the scale
    share = 1.0
    for side, grown in ((width, margins[0] + margins[2]), (height, margins[1] + margins[3])):
        if side + grown > longest:
            share = min(share, max(0.0, (longest - side) / grown))
    return share


@register
class Crop(Transform):
    """Cut the frame to the page's bounds plus a margin (a region or window screenshot)."""

    name = "crop"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the crop box: the page's bounds grown by a margin drawn per side.

        Deliver scales the box's long side to the delivered one, so the margins
        decide the page scale; where the frame holds the page's text they are
        narrowed to keep it (`held`: the share of the drawn margins kept).
        """
        x0, y0 = frame.page.min(axis=0)
        x1, y1 = frame.page.max(axis=0)
        span = max(x1 - x0, y1 - y0)
        drawn = [uniform(rng, self.spec["margin"]) * span for _ in range(4)]
        held = kept_margin(drawn, (x1 - x0, y1 - y0), frame.hold)
        grow = [margin * held for margin in drawn]
        box = [
            max(0, int(np.floor(x0 - grow[0]))),
            max(0, int(np.floor(y0 - grow[1]))),
            min(frame.width, int(np.ceil(x1 + grow[2]))),
            min(frame.height, int(np.ceil(y1 + grow[3]))),
        ]
        return {"box": box, "held": held}

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Cut out the box and move the points with it."""
        x0, y0, x1, y1 = params["box"]
        image = np.ascontiguousarray(frame.image[y0:y1, x0:x1])
        return frame.with_image(image, place_points(frame.points, 1.0, 1.0, -x0, -y0))


@register
class Deliver(Transform):
    """Resize to the delivered long side (optionally through a smaller re-save first)."""

    name = "deliver"

    def __init__(self, spec: dict[str, Any] | None = None) -> None:
        self.spec = spec or {}

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the delivered size and the size of any intermediate re-save."""
        size = delivered_size(frame.width, frame.height, frame.deliver)
        soften = uniform(rng, self.spec.get("soften", (1.0, 1.0)))
        via = None
        if soften < 1.0:
            via = [max(1, round(size[0] * soften)), max(1, round(size[1] * soften))]
        return {"size": list(size), "via": via}

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Resize (through `via` when given) and scale the points by the exact ratios."""
        width, height = params["size"]
        image = frame.image
        if params.get("via"):
            image = resize_image(image, *params["via"])
        image = resize_image(image, width, height)
        points = place_points(frame.points, width / frame.width, height / frame.height, 0, 0)
        return frame.with_image(image, points)
