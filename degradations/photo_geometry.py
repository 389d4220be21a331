"""Samplers of `Warp` parameters: page photo, screen photo and scanner skew."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from itemshot.degradations.frame import Frame, Params, uniform

Sampler = Callable[[np.random.Generator, Frame], Params]


def _frame_size(frame: Frame, long_side: int, aspect: float) -> tuple[int, int]:
    """Camera frame (aspect = long/short) in the orientation of the content."""
    short = round(long_side / aspect)
    return (short, long_side) if frame.height >= frame.width else (long_side, short)


def _camera_quad(
    rng: np.random.Generator, frame: Frame, size: tuple[int, int], spec: dict[str, Any]
) -> np.ndarray:
    """Where the content's corners land: fitted, offset, keystoned, rolled and jittered."""
    out_w, out_h = size
    fill = uniform(rng, spec["fill"])
    zoom = min(out_w * fill / frame.width, out_h * fill / frame.height)
    half_w, half_h = frame.width * zoom / 2, frame.height * zoom / 2
    slack_x, slack_y = out_w / 2 - half_w, out_h / 2 - half_h
    cx = out_w / 2 + uniform(rng, (-0.5, 0.5)) * slack_x
    cy = out_h / 2 + uniform(rng, (-0.5, 0.5)) * slack_y
    top = 1 - uniform(rng, spec["keystone"])  # far edge looks shorter
    side = uniform(rng, (-1.0, 1.0)) * uniform(rng, spec["keystone"]) * 0.5
    quad = np.array(
        [
            [-half_w * top, -half_h * (1 + side)],
            [half_w * top, -half_h * (1 - side)],
            [half_w, half_h * (1 - side)],
            [-half_w, half_h * (1 + side)],
        ]
    )
    if rng.random() < 0.5:  # the far edge is the bottom one
        quad = quad * [1, -1]
        quad = quad[[3, 2, 1, 0]]
    roll = np.deg2rad(uniform(rng, (-1.0, 1.0)) * spec["roll"])
    rotation = np.array([[np.cos(roll), -np.sin(roll)], [np.sin(roll), np.cos(roll)]])
    quad = quad @ rotation.T
    quad += rng.normal(0.0, spec["jitter"] * max(half_w, half_h), size=(4, 2))
    return quad + np.array([cx, cy])


def _homography(frame: Frame, quad: np.ndarray) -> list[list[float]]:
    w, h = frame.width, frame.height
    source = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    matrix = cv2.getPerspectiveTransform(source, quad.astype(np.float32))
    return (matrix / matrix[2, 2]).tolist()


def _lens(rng: np.random.Generator, size: tuple[int, int], spec: dict[str, Any]) -> Params:
    w, h = size
    return {
        "kind": "lens",
        "centre": [w / 2, h / 2],
        "norm": float(np.hypot(w, h) / 2),
        "k1": uniform(rng, spec["lens"]),
        "k2": 0.0,
    }


def _bend(rng: np.random.Generator, frame: Frame, spec: dict[str, Any]) -> Params:
    w, h = frame.width, frame.height
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    if rng.random() < spec["p_fold"]:
        axis = int(rng.integers(2))
        sign = 1.0 if rng.random() < 0.5 else -1.0
        normal = np.array([sign, 0.0]) if axis == 0 else np.array([0.0, sign])
        extent = w if axis == 0 else h
        middle = corners.mean(axis=0) @ normal
        return {
            "kind": "bend",
            "mode": "fold",
            "normal": normal.tolist(),
            "start": float(middle + uniform(rng, (-0.15, 0.15)) * extent),
            "angle": uniform(rng, spec["fold_angle"]),
            "light": 1.0 if rng.random() < 0.5 else -1.0,
            "shade": uniform(rng, spec["bend_shade"]),
        }
    angle = float(rng.integers(8)) * np.pi / 4 + uniform(rng, (-0.2, 0.2))
    normal = np.array([np.cos(angle), np.sin(angle)])
    reach = corners @ normal
    length = uniform(rng, spec["curl_extent"]) * float(reach.max() - reach.min())
    end_angle = uniform(rng, spec["curl_angle"])
    return {
        "kind": "bend",
        "mode": "curl",
        "normal": normal.tolist(),
        "start": float(reach.max() - length),
        "radius": length / end_angle,
        "light": 1.0 if rng.random() < 0.5 else -1.0,
        "shade": uniform(rng, spec["bend_shade"]),
    }


def paper_photo(spec: dict[str, Any]) -> Sampler:
    """Return a sampler of a phone photo of a page lying on a surface."""

    def sample(rng: np.random.Generator, frame: Frame) -> Params:
        size = _frame_size(frame, max(frame.width, frame.height), 4 / 3)
        stages: list[Params] = []
        if rng.random() < spec["p_bend"]:
            stages.append(_bend(rng, frame, spec))
        quad = _camera_quad(rng, frame, size, spec)
        stages.append({"kind": "homography", "matrix": _homography(frame, quad)})
        stages.append(_lens(rng, size, spec))
        surfaces = spec["surfaces"]
        return {
            "size": list(size),
            "grid": 8,
            "stages": stages,
            "shading": any(s["kind"] == "bend" for s in stages),
            "background": {
                "texture": surfaces[int(rng.integers(len(surfaces)))],
                "seed": int(rng.integers(2**31 - 1)),
                "scale": 3.0,
            },
        }

    return sample


def screen_photo(spec: dict[str, Any]) -> Sampler:
    """Return a sampler of a phone photo of a display (moiré from its subpixel grid)."""

    def sample(rng: np.random.Generator, frame: Frame) -> Params:
        long_side = round(max(frame.width, frame.height) * spec["out_scale"])
        size = _frame_size(frame, long_side, 4 / 3)
        quad = _camera_quad(rng, frame, size, spec)
        surfaces = spec["surfaces"]
        return {
            "size": list(size),
            "grid": 8,
            "stages": [
                {"kind": "homography", "matrix": _homography(frame, quad)},
                _lens(rng, size, spec),
            ],
            "shading": False,
            "subpixel": {
                "pitch": uniform(rng, spec["pitch"]),
                "strength": uniform(rng, spec["subpixel"]),
                "row_gap": uniform(rng, spec["row_gap"]),
            },
            "background": {
                "texture": surfaces[int(rng.integers(len(surfaces)))],
                "seed": int(rng.integers(2**31 - 1)),
                "scale": 3.0,
            },
        }

    return sample


def scanner_skew(spec: dict[str, Any]) -> Sampler:
    """Return a sampler of a slightly rotated and shifted page on a scanner bed."""

    def sample(rng: np.random.Generator, frame: Frame) -> Params:
        w, h = frame.width, frame.height
        angle = np.deg2rad(uniform(rng, (-1.0, 1.0)) * spec["skew"])
        shift = rng.uniform(-spec["shift"], spec["shift"], size=2) * [w, h]
        c, s = np.cos(angle), np.sin(angle)
        cx, cy = w / 2, h / 2
        matrix = [
            [c, -s, cx - c * cx + s * cy + shift[0]],
            [s, c, cy - s * cx - c * cy + shift[1]],
            [0.0, 0.0, 1.0],
        ]
        lid = int(rng.integers(232, 250))
        return {
            "size": [w, h],
            "grid": 16,
            "stages": [{"kind": "homography", "matrix": matrix}],
            "shading": False,
            "background": {"rgb": [lid, lid, lid - 2]},
        }

    return sample
