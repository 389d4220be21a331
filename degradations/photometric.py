"""Photometric steps: lighting and shadow, tone and white balance, sensor noise, glare."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from scipy.special import ndtri

from itemshot.degradations.frame import Frame, Params, Transform, register, uniform

_LOW = 16  # lighting fields are computed at 1/_LOW resolution and scaled up
# standard normal quantiles at 65536 equal-probability steps: noise by table lookup
_NORMAL = ndtri((np.arange(65536) + 0.5) / 65536).astype(np.float32)


def _normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal float32 samples: 16 random bits each, looked up in `_NORMAL`."""
    count = int(np.prod(shape))
    index = np.frombuffer(rng.bytes(2 * count), "<u2")
    return _NORMAL[index].reshape(shape)


def _times_field(image: np.ndarray, field: np.ndarray) -> np.ndarray:
    """Return the RGB uint8 `image` multiplied by a smooth single-channel float32 `field`.

    The field is scaled straight to the interleaved row length (h × 3w), which
    reads it a third of a pixel apart per channel: invisible for smooth fields,
    and it spares building a 3-channel copy.
    """
    height, width = image.shape[:2]
    field3 = cv2.resize(field, (3 * width, height), interpolation=cv2.INTER_LINEAR)
    flat = cv2.multiply(image.reshape(height, 3 * width), field3, dtype=cv2.CV_8U)
    return flat.reshape(height, width, 3)


def _low_grid(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    gw, gh = max(2, width // _LOW), max(2, height // _LOW)
    xs = (np.arange(gw, dtype=np.float32) + 0.5) / gw
    ys = (np.arange(gh, dtype=np.float32) + 0.5) / gh
    return np.meshgrid(xs, ys)


def _shadow_polygon(rng: np.random.Generator, depth: float) -> list[list[float]]:
    """A blob (hand or phone shadow) entering the frame from one side, in unit coordinates."""
    side = int(rng.integers(4))
    along = rng.uniform(0.1, 0.9)
    half = rng.uniform(0.15, 0.35)
    tip = depth * rng.uniform(0.8, 1.2)
    local = [
        (-0.2, along - half - 0.1),
        (tip, along - half * 0.6),
        (tip * 1.1, along + half * 0.5),
        (-0.2, along + half + 0.1),
    ]
    if side == 0:
        pts = local
    elif side == 1:
        pts = [(1 - x, y) for x, y in local]
    elif side == 2:
        pts = [(y, x) for x, y in local]
    else:
        pts = [(y, 1 - x) for x, y in local]
    return [[float(x), float(y)] for x, y in pts]


@register
class Lighting(Transform):
    """Uneven illumination: a linear light gradient, vignetting and a soft cast shadow."""

    name = "lighting"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return exposure, gradient direction and strength, vignette and shadow polygon."""
        spec = self.spec
        shadow = None
        if rng.random() < spec["p_shadow"]:
            shadow = {
                "polygon": _shadow_polygon(rng, uniform(rng, spec["shadow_depth"])),
                "darkness": uniform(rng, spec["shadow_darkness"]),
                "softness": uniform(rng, (0.03, 0.08)),
            }
        return {
            "exposure": uniform(rng, spec["exposure"]),
            "angle": uniform(rng, (0.0, 2 * np.pi)),
            "gradient": uniform(rng, spec["gradient"]),
            "vignette": uniform(rng, spec["vignette"]),
            "shadow": shadow,
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Multiply the image by the smooth gain field."""
        gx, gy = _low_grid(frame.width, frame.height)
        ux, uy = np.cos(params["angle"]), np.sin(params["angle"])
        gain = params["exposure"] * (1 + params["gradient"] * ((gx - 0.5) * ux + (gy - 0.5) * uy))
        radius2 = (gx - 0.5) ** 2 + (gy - 0.5) ** 2
        gain = gain * (1 - params["vignette"] * radius2 * 2)
        shadow = params["shadow"]
        if shadow:
            gh, gw = gx.shape
            mask = np.zeros((gh, gw), np.float32)
            poly = np.round(np.asarray(shadow["polygon"]) * [gw, gh]).astype(np.int32)
            cv2.fillPoly(mask, [poly], 1.0)
            sigma = max(0.5, shadow["softness"] * max(gw, gh))
            mask = cv2.GaussianBlur(mask, (0, 0), sigma)
            gain = gain * (1 - shadow["darkness"] * mask)
        return frame.with_image(_times_field(frame.image, gain.astype(np.float32)))


@register
class ToneBalance(Transform):
    """Per-channel tone curve: white balance gains, gamma, black and white levels."""

    name = "tone_balance"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return colour temperature shift, tint, gamma and output levels."""
        spec = self.spec
        return {
            "temperature": uniform(rng, spec["temperature"]),
            "tint": uniform(rng, spec.get("tint", (0.0, 0.0))),
            "gamma": uniform(rng, spec.get("gamma", (1.0, 1.0))),
            "black": uniform(rng, spec.get("black", (0.0, 0.0))),
            "white": uniform(rng, spec.get("white", (255.0, 255.0))),
            "saturation": uniform(rng, spec.get("saturation", (1.0, 1.0))),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Apply the per-channel lookup table (and a saturation change, if any)."""
        t, tint = params["temperature"], params["tint"]
        gains = np.array([1 + t, 1 + tint, 1 - t], np.float64)  # warm (+) or cool (−)
        black, white = params["black"], params["white"]
        if params["gamma"] == 1.0:  # a straight line per channel: one affine pass
            matrix = np.zeros((3, 4), np.float32)
            matrix[:, :3] = np.diag(gains * (white - black) / 255.0)
            matrix[:, 3] = gains * black
            image = cv2.transform(frame.image, matrix)
        else:
            x = np.arange(256, dtype=np.float64) / 255.0
            levels = black + (white - black) * x ** params["gamma"]
            lut = np.clip(levels[:, None] * gains[None, :], 0, 255).round().astype(np.uint8)
            image = cv2.LUT(frame.image, lut.reshape(256, 1, 3))
        saturation = params["saturation"]
        if saturation != 1.0:
            grey = cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
            image = cv2.addWeighted(image, saturation, grey, 1 - saturation, 0)
        return frame.with_image(image)


@register
class SensorNoise(Transform):
    """Camera sensor noise: luminance grain at demosaic scale plus coarser chroma blotches."""

    name = "sensor_noise"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return noise levels and the seed of the noise field."""
        return {
            "luma": uniform(rng, self.spec["luma"]),
            "chroma": uniform(rng, self.spec["chroma"]),
            "noise_seed": int(rng.integers(2**63 - 1)),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Add the seeded noise field."""
        rng = np.random.default_rng(params["noise_seed"])
        w, h = frame.width, frame.height
        luma = _normal(rng, (max(1, h // 2), max(1, w // 2)))
        luma *= np.float32(params["luma"])
        chroma = _normal(rng, (max(1, h // 6), max(1, w // 6), 3))
        chroma *= np.float32(params["chroma"])
        size = (luma.shape[1], luma.shape[0])
        small = cv2.add(cv2.merge([luma, luma, luma]), cv2.resize(chroma, size))
        # scaled up as bytes around 128 (a σ ≤ 8 field never nears the ends), then added
        offset = cv2.add(small, (128.0, 128.0, 128.0, 0.0), dtype=cv2.CV_8U)
        noise = cv2.resize(offset, (w, h), interpolation=cv2.INTER_LINEAR)
        image = cv2.addWeighted(frame.image, 1.0, noise, 1.0, -128.0)
        return frame.with_image(image)


@register
class Glare(Transform):
    """Reflections on a glossy screen: a bright soft blob plus a veiling haze."""

    name = "glare"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the blob centre, axes, angle and strength, and the haze level."""
        return {
            "centre": [uniform(rng, (0.15, 0.85)), uniform(rng, (0.1, 0.9))],
            "axes": [uniform(rng, (0.12, 0.35)), uniform(rng, (0.06, 0.2))],
            "angle": uniform(rng, (0.0, np.pi)),
            "strength": uniform(rng, self.spec["strength"]),
            "haze": uniform(rng, self.spec["haze"]),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Brighten toward white by the glare field: `out = img + g·(255 − img)`."""
        gx, gy = _low_grid(frame.width, frame.height)
        aspect = frame.width / frame.height
        dx, dy = (gx - params["centre"][0]) * aspect, gy - params["centre"][1]
        c, s = np.cos(params["angle"]), np.sin(params["angle"])
        u, v = (dx * c + dy * s) / params["axes"][0], (-dx * s + dy * c) / params["axes"][1]
        blob = np.exp(-(u * u + v * v))
        field = np.clip(params["haze"] + params["strength"] * blob, 0, 1).astype(np.float32)
        field = cv2.resize(field, (frame.width, frame.height), interpolation=cv2.INTER_LINEAR)
        lift = cv2.multiply(255 - frame.image, cv2.merge([field, field, field]), dtype=cv2.CV_8U)
        return frame.with_image(cv2.add(frame.image, lift))


@register
class FocusFalloff(Transform):
    """Depth-of-field falloff: sharp where the camera focused, softer toward the frame's edges."""

    name = "focus_falloff"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the focus point (unit coordinates), the sharp radius and the blur at the rim."""
        return {
            "centre": [uniform(rng, (0.4, 0.6)), uniform(rng, (0.4, 0.6))],
            "sharp": uniform(rng, (0.35, 0.55)),
            "sigma": uniform(rng, self.spec["sigma"]),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Blend a blurred copy in by the squared distance beyond the sharp radius."""
        if params["sigma"] <= 0:
            return frame
        gx, gy = _low_grid(frame.width, frame.height)
        aspect = frame.width / frame.height
        cx, cy = params["centre"]
        rho = np.hypot((gx - cx) * aspect, gy - cy) / np.hypot(0.5 * aspect, 0.5)
        weight = np.clip((rho - params["sharp"]) / (1 - params["sharp"]), 0, 1) ** 2
        weight = cv2.resize(weight.astype(np.float32), (frame.width, frame.height))
        blurred = cv2.GaussianBlur(frame.image, (0, 0), params["sigma"])
        image = cv2.blendLinear(frame.image, blurred, 1 - weight, weight)
        return frame.with_image(image)
