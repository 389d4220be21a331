"""Samplers of `Warp` parameters: page photo, screen photo and scanner skew."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from itemshot.degradations import geometry
from itemshot.degradations.frame import Frame, Params, uniform
from itemshot.degradations.screen_scene import sample_scene

Sampler = Callable[[np.random.Generator, Frame], Params]


FRAME_ASPECTS = (1.0, 4 / 3, 16 / 9)  # a phone camera's photo formats (long / short)
# How much of the drawn pose (keystone, roll, jitter) and lens bulge a held photo
# keeps, tried in turn: a page whose text needs the whole frame is photographed
# square-on (a barrel lens shrinks the corners the page then reaches).
HOLD_POSES = (1.0, 0.75, 0.5, 0.25, 0.0)
FIT_MARGIN = 0.01  # the share of the frame each side keeps clear of the page (`_fit`)
GROW_ROUNDS = 4  # rounds of `_grow`: the lens makes one ratio fall short by a percent or so


def _frame_size(frame: Frame, long_side: int, aspect: float) -> tuple[int, int]:
    """Camera frame (aspect = long/short) in the orientation of the content."""
    short = round(long_side / aspect)
    return (short, long_side) if frame.height >= frame.width else (long_side, short)


def _nearest_aspect(frame: Frame) -> float:
    """The photo format closest to the page's shape (so the page can fill the frame)."""
    shape = max(frame.width, frame.height) / min(frame.width, frame.height)
    return min(FRAME_ASPECTS, key=lambda a: abs(np.log(a / shape)))


def _fit(quad: np.ndarray, size: tuple[int, int], margin: float = FIT_MARGIN) -> np.ndarray:
    """Move, then if needed shrink, a quad about the frame centre so it lies inside the frame."""
    out_w, out_h = size
    lo = np.array([out_w, out_h]) * margin
    hi = np.array([out_w, out_h]) * (1 - margin)
    low, high = quad.min(axis=0), quad.max(axis=0)
    shift = np.where(low < lo, lo - low, 0.0) + np.where(high > hi, hi - high, 0.0)
    quad = quad + np.where((high - low) <= (hi - lo), shift, 0.0)
    centre = np.array([out_w, out_h]) / 2
    offset = quad - centre
    limit = np.where(offset < 0, centre - lo, hi - centre)
    need = np.max(np.abs(offset) / limit)
    return centre + offset / need if need > 1 else quad


def _camera_quad(
    rng: np.random.Generator, frame: Frame, size: tuple[int, int], spec: dict[str, Any]
) -> np.ndarray:
    """Where the content's corners land: fitted, offset, keystoned, rolled and jittered.

    The page's size in the frame is a linear `fill` of the frame or, for
    `share`, a share of the frame's area; the quad is kept inside the frame.
    """
    out_w, out_h = size
    if "share" in spec:
        zoom = np.sqrt(uniform(rng, spec["share"]) * out_w * out_h / (frame.width * frame.height))
    else:
        fill = uniform(rng, spec["fill"])
        zoom = min(out_w * fill / frame.width, out_h * fill / frame.height)
    half_w, half_h = frame.width * zoom / 2, frame.height * zoom / 2
    slack_x, slack_y = max(0.0, out_w / 2 - half_w), max(0.0, out_h / 2 - half_h)
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
    return _fit(quad + np.array([cx, cy]), size)


def _fits(quad: np.ndarray, size: tuple[int, int]) -> bool:
    """Return whether a quad fits inside the frame's margins (after a shift)."""
    room = np.asarray(size, np.float64) * (1 - 2 * FIT_MARGIN)
    return bool(np.all(quad.max(axis=0) - quad.min(axis=0) <= room))


def _smallest_stretch(frame: Frame, bend: Params | None, quad: np.ndarray, lens: Params) -> float:
    """Return the least output px per page px, vertically, over the page (text's height).

    Measured through the page's bend, the homography onto `quad` and the lens
    on a 5 × 5 grid of the page, corners included: keystone makes the far edge
    the smallest, a curl its rolled edge.
    """
    (x0, y0), (x1, y1) = frame.page.min(axis=0), frame.page.max(axis=0)
    xs, ys = np.meshgrid(np.linspace(x0, x1 - 1, 5), np.linspace(y0, y1 - 1, 5))
    grid = np.stack([xs.ravel(), ys.ravel()], axis=1)
    stages = _stages(frame, bend, quad, lens)
    top = geometry.forward(stages, grid)
    below = geometry.forward(stages, grid + np.array([0.0, 1.0]))
    return float(np.min(np.linalg.norm(below - top, axis=1)))


def _posed_bend(bend: Params | None, pose: float) -> Params | None:
    """Return the bend with `pose` of its tilt kept (a fold's angle, a curl's end angle)."""
    if bend is None or pose == 1.0:
        return bend
    if pose == 0.0:
        return None  # a page held square-on is photographed flat
    if bend["mode"] == "fold":
        return bend | {"angle": float(bend["angle"]) * pose}
    # The same length of page rolls through `pose` of the angle: a wider cylinder.
    return bend | {"radius": float(bend["radius"]) / pose}


def _held(
    frame: Frame, bend: Params | None, quad: np.ndarray, lens: Params, size: tuple[int, int]
) -> tuple[Params | None, np.ndarray, Params, Params | None]:
    """Return the bend, quad and lens, grown and if need be flattened, that keep the text held.

    `frame.hold` is a page scale (the page's long side over the delivered
    long side, which is the frame's here); the quad grows about its centre
    until the smallest stretch over the page reaches it, keeping as much of
    the drawn pose, page bend and lens bulge (`HOLD_POSES`) as still fits the
    frame. The record says what was needed, drawn and kept; None when the
    drawn photo already holds the text (so an item's cells that differ only in
    their text's size share one record while none is held).
    """
    if frame.hold <= 0:
        return bend, quad, lens, None
    page = frame.page.max(axis=0) - frame.page.min(axis=0)
    need = frame.hold * frame.deliver / float(page.max())
    drawn = _smallest_stretch(frame, bend, quad, lens)
    if drawn >= need:
        return bend, quad, lens, None
    record: Params = {"need": need, "drawn": drawn}
    centre = quad.mean(axis=0)
    half = np.array([frame.width, frame.height]) * need / 2
    square = centre + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
    for pose in HOLD_POSES:  # the last (square-on) is taken even where it does not fit
        posed = square + pose * (quad - square)
        bulge = lens | {"k1": float(lens["k1"]) * pose}
        kept = _posed_bend(bend, pose)
        grow = _grow(frame, kept, posed, bulge, need)
        grown = centre + (posed - centre) * grow
        if _fits(grown, size):
            break
    held = _fit(grown, size)
    stretch = _smallest_stretch(frame, kept, held, bulge)
    return kept, held, bulge, record | {"pose": pose, "grow": grow, "stretch": stretch}


def _grow(frame: Frame, bend: Params | None, quad: np.ndarray, lens: Params, need: float) -> float:
    """Return how much the quad grows about its centre for the smallest stretch to reach `need`.

    A lens compresses the corners a larger quad reaches, so one ratio falls
    short: it is applied again until the stretch holds (a few rounds).
    """
    centre = quad.mean(axis=0)
    grow = 1.0
    for _ in range(GROW_ROUNDS):
        stretch = _smallest_stretch(frame, bend, centre + (quad - centre) * grow, lens)
        if stretch >= need:
            break
        grow *= need / stretch
    return grow


def _stages(frame: Frame, bend: Params | None, quad: np.ndarray, lens: Params) -> list[Params]:
    """Return a photo's geometric stages: the page's bend (if any), the camera, the lens."""
    camera = {"kind": "homography", "matrix": _homography(frame, quad)}
    return ([bend] if bend else []) + [camera, lens]


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


def _without_bend(stages: list[Params]) -> list[Params] | None:
    """The stages the surface under a bent page goes through (None: the same as the page's)."""
    flat = [stage for stage in stages if stage["kind"] != "bend"]
    return None if len(flat) == len(stages) else flat


def paper_photo(spec: dict[str, Any]) -> Sampler:
    """Return a sampler of a phone photo of a page lying on a surface (seen in the same warp)."""

    def sample(rng: np.random.Generator, frame: Frame) -> Params:
        size = _frame_size(frame, frame.deliver, _nearest_aspect(frame))
        bend = _bend(rng, frame, spec) if rng.random() < spec["p_bend"] else None
        quad = _camera_quad(rng, frame, size, spec)
        lens = _lens(rng, size, spec)
        bend, quad, lens, held = _held(frame, bend, quad, lens, size)
        stages = _stages(frame, bend, quad, lens)
        surfaces = spec["surfaces"]
        return {
            "size": list(size),
            "grid": 8,
            "stages": stages,
            "plane_stages": _without_bend(stages),
            "shading": any(s["kind"] == "bend" for s in stages),
            "held": held,
            "backdrop": {
                "kind": "surface",
                "texture": surfaces[int(rng.integers(len(surfaces)))],
                "seed": int(rng.integers(2**31 - 1)),
                "scale": 3.0,
            },
        }

    return sample


def _centre_jacobian(stages: list[Params], size: tuple[int, int]) -> np.ndarray:
    """Plane px per output px at the frame centre (2×2: rows d(u, v), columns d(x, y))."""
    cx, cy = size[0] / 2, size[1] / 2
    probe = np.array([[cx, cy], [cx + 1, cy], [cx, cy + 1]])
    source, _ = geometry.backward(stages, probe)
    return np.stack([source[1] - source[0], source[2] - source[0]], axis=1)


def _sinc(f: float) -> float:
    return 1.0 if f == 0 else abs(float(np.sin(np.pi * f) / (np.pi * f)))


def moire(
    rng: np.random.Generator, jacobian: np.ndarray, density: float, spec: dict[str, Any]
) -> Params:
    """Return the beat of the screen's pixel grid against the camera's colour lattice.

    The screen pitch (`density` screen px per plane px) and the camera's
    distance (the Jacobian: plane px per output px) give the grid's frequency
    on the sensor (`sensor_scale` sensor px per output px); the lattice keeps
    the difference to its nearest harmonic. Its strength is the subpixel
    contrast, times the lens's response at the grid frequency, times what
    survives averaging into one output pixel; beats finer than two output
    pixels vanish.
    """
    sensor_scale = uniform(rng, spec["sensor_long"]) / spec["deliver"]
    lattice = 2.0  # red and blue sites of a Bayer mosaic repeat every 2 sensor px
    sigma = uniform(rng, spec["optics"])  # lens blur on the sensor (sensor px)
    contrast = uniform(rng, spec["subpixel"])
    record: Params = {"density": density, "sensor_scale": sensor_scale, "lattice": lattice,
                      "optics_sigma": sigma}  # fmt: skip
    for axis, name in ((0, "columns"), (1, "rows")):
        on_sensor = density * jacobian[axis] / sensor_scale  # grid cycles per sensor px (x, y)
        alias = np.round(lattice * on_sensor)
        beat = (on_sensor - alias / lattice) * sensor_scale  # cycles per output px
        frequency = float(np.hypot(*beat))
        lens = float(np.exp(-2 * (np.pi * sigma) ** 2 * float(np.hypot(*on_sensor)) ** 2))
        survives = _sinc(frequency) if frequency < 0.5 else 0.0
        weight = contrast if axis == 0 else contrast * uniform(rng, spec["row_gap"])
        record[f"alias_{name}"] = [int(a) for a in alias]
        record[f"period_{name}"] = float(1 / frequency) if frequency > 0 else None
        record["strength" if axis == 0 else "row_strength"] = min(
            spec["max_strength"], weight * lens * survives
        )
    return record


def screen_photo(spec: dict[str, Any]) -> Sampler:
    """Return a sampler of a phone photo of a display: the device, the room, the moiré."""

    def sample(rng: np.random.Generator, frame: Frame) -> Params:
        scene = sample_scene(rng, frame.width, frame.height)
        size = _frame_size(frame, frame.deliver, _nearest_aspect(frame))
        quad = _camera_quad(rng, frame, size, spec)
        lens = _lens(rng, size, spec)
        _, quad, lens, held = _held(frame, None, quad, lens, size)
        stages = _stages(frame, None, quad, lens)
        jacobian = _centre_jacobian(stages, size)
        pattern = moire(rng, jacobian, scene["density"], spec | {"deliver": frame.deliver})
        return {"size": list(size), "grid": 8, "stages": stages, "shading": False,
                "backdrop": scene, "moire": pattern, "held": held}  # fmt: skip

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
            "backdrop": {"kind": "surface", "rgb": [lid, lid, lid - 2]},
        }

    return sample
