"""A hand or an object at the edge of a photo: a thumb, a pen, a phone lying beside the page.

It enters from one side of the frame and never reaches a text or figure
region: its depth is limited to the free band between that edge and the
nearest region corner, so it costs realism, not legibility.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.degradations.frame import Frame, Params, Transform, register, uniform

SKIN = ([224, 172, 140], [198, 140, 104], [160, 106, 74], [110, 72, 50], [236, 196, 170])
OBJECTS = {
    "pen": ([24, 40, 120], [20, 20, 24], [170, 30, 30], [230, 230, 232]),
    "phone": ([18, 18, 20], [60, 62, 66], [200, 200, 204]),
}
KINDS = ("hand", "pen", "phone")


def _free_band(frame: Frame, side: int) -> float:
    """Pixels between the frame edge `side` (0 left, 1 right, 2 top, 3 bottom) and the content."""
    regions = frame.points[:-4] if len(frame.points) > 4 else frame.page
    if side == 0:
        return float(regions[:, 0].min())
    if side == 1:
        return float(frame.width - regions[:, 0].max())
    if side == 2:
        return float(regions[:, 1].min())
    return float(frame.height - regions[:, 1].max())


def _local_shape(
    kind: str, rng: np.random.Generator, depth: float, span: float
) -> list[list[float]]:
    """The outline in edge coordinates: u across the edge (0 at the edge, > 0 inside), v along it."""
    if kind == "hand":  # a thumb: a rounded finger reaching in at a slant
        width = span * uniform(rng, (0.5, 0.8))
        tilt = uniform(rng, (-0.4, 0.4)) * width
        arc = np.linspace(0, np.pi, 12)
        tip = [
            [depth - width / 2 * (1 - np.sin(a)) * 0.6, tilt + width / 2 * np.cos(a)] for a in arc
        ]
        return [[-depth * 0.2, -width * 0.7], *tip, [-depth * 0.2, width * 0.8]]
    if kind == "pen":  # a pen lying nearly parallel to the edge
        length = span * uniform(rng, (3.0, 5.0))
        thick = max(3.0, depth * 0.35)
        inset = depth - thick
        return [[inset, -length / 2], [inset + thick, -length / 2 + thick],
                [inset + thick, length / 2], [inset, length / 2 + thick * 0.5]]  # fmt: skip
    length = span * uniform(rng, (2.0, 3.0))  # a phone's rounded edge
    return [[-depth, -length / 2], [depth * 0.85, -length / 2], [depth, -length / 2 + depth * 0.3],
            [depth, length / 2 - depth * 0.3], [depth * 0.85, length / 2], [-depth, length / 2]]  # fmt: skip


@register
class Occluder(Transform):
    """Sometimes put a thumb, a pen or a phone at one edge of the frame, clear of the content."""

    name = "occluder"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the object, its outline (frame pixels), colour and edge softness, or none."""
        if rng.random() >= self.spec["p"]:
            return {"kind": None}
        side = int(rng.integers(4))
        kind = KINDS[int(rng.integers(len(KINDS)))]
        free = _free_band(frame, side)
        extent = frame.height if side < 2 else frame.width
        depth = min(free * 0.85, extent * uniform(rng, (0.04, 0.09)))
        if depth < 0.015 * min(frame.width, frame.height):
            return {"kind": None}  # the content reaches the edge: nothing fits
        along = uniform(rng, (0.15, 0.85)) * extent
        span = 0.12 * min(frame.width, frame.height)
        local = np.asarray(_local_shape(kind, rng, depth, span))
        u, v = local[:, 0], local[:, 1] + along
        if side == 0:
            xy = np.stack([u, v], axis=1)
        elif side == 1:
            xy = np.stack([frame.width - u, v], axis=1)
        elif side == 2:
            xy = np.stack([v, u], axis=1)
        else:
            xy = np.stack([v, frame.height - u], axis=1)
        colours = SKIN if kind == "hand" else OBJECTS[kind]
        return {
            "kind": kind,
            "side": side,
            "polygon": xy.tolist(),
            "rgb": [int(c) for c in colours[int(rng.integers(len(colours)))]],
            "softness": uniform(rng, (1.0, 2.5)) if kind == "hand" else uniform(rng, (0.6, 1.2)),
            "shade": uniform(rng, (0.15, 0.35)),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Blend the object in with a soft edge and a shaded body (within its bounding box)."""
        if params["kind"] is None:
            return frame
        polygon = np.asarray(params["polygon"], np.float64)
        pad = int(np.ceil(3 * params["softness"])) + 2
        x0 = max(0, int(np.floor(polygon[:, 0].min())) - pad)
        y0 = max(0, int(np.floor(polygon[:, 1].min())) - pad)
        x1 = min(frame.width, int(np.ceil(polygon[:, 0].max())) + pad)
        y1 = min(frame.height, int(np.ceil(polygon[:, 1].max())) + pad)
        if x1 <= x0 or y1 <= y0:
            return frame
        mask = np.zeros((y1 - y0, x1 - x0), np.float32)
        local = np.round((polygon - [x0, y0]) * 16).astype(np.int32)
        cv2.fillPoly(mask, [local], 1.0, cv2.LINE_AA, 4)
        mask = cv2.GaussianBlur(mask, (0, 0), params["softness"])
        # light from the far side: the body darkens toward the frame edge it comes from
        ramp = np.linspace(0, 1, mask.shape[1 if params["side"] < 2 else 0], dtype=np.float32)
        if params["side"] in (0, 2):
            ramp = ramp[::-1]
        ramp = ramp[None, :] if params["side"] < 2 else ramp[:, None]
        body = np.asarray(params["rgb"], np.float32) * (1 - params["shade"] * ramp)[..., None]
        block = frame.image[y0:y1, x0:x1].astype(np.float32)
        alpha = mask[..., None]
        image = frame.image.copy()
        image[y0:y1, x0:x1] = np.clip(block * (1 - alpha) + body * alpha, 0, 255).astype(np.uint8)
        return frame.with_image(image)
