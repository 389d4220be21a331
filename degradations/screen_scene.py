"""A display showing the page, and the room around it, drawn in the screen's plane.

Coordinates are the clean page's pixels (the page covers `[0, w] × [0, h]`);
the device, its bezel and what surrounds it (wall, desk, a laptop's keyboard
deck, a monitor's stand) lie around it at negative or larger coordinates.
`sample_scene` draws the device and its placement; `draw_scene` paints the
recorded scene over any rectangle of the plane at a reduced scale (the
surround is soft detail; the page itself is remapped at full resolution).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.degradations import plane
from itemshot.degradations.frame import Params, uniform

# name -> screen aspect (long/short), bezel (share of the screen's short side),
# screen pixels per page pixel (how large the viewer shows the page), weights by page shape
DEVICES: dict[str, dict[str, Any]] = {
    "monitor": {"aspect": 16 / 9, "bezel": (0.012, 0.03), "density": (1.0, 1.6),
                "portrait": 0.35, "landscape": 0.35},
    "laptop": {"aspect": 16 / 10, "bezel": (0.02, 0.04), "density": (1.2, 2.0),
               "portrait": 0.25, "landscape": 0.3},
    "tablet": {"aspect": 4 / 3, "bezel": (0.05, 0.08), "density": (1.6, 2.4),
               "portrait": 0.4, "landscape": 0.15},
    "tv": {"aspect": 16 / 9, "bezel": (0.008, 0.02), "density": (0.8, 1.6),
           "portrait": 0.0, "landscape": 0.2},
}  # fmt: skip
BODY_RGB = ([16, 16, 18], [30, 30, 33], [52, 52, 56], [176, 178, 182])
VIEWER_RGB = ([255, 255, 255], [232, 232, 232], [82, 86, 89], [40, 40, 42])
WALLS = ("wall",)
DESKS = ("desk", "wood", "table")


def _pick(rng: np.random.Generator, options: tuple[Any, ...] | list[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def _device(rng: np.random.Generator, portrait: bool) -> str:
    names = list(DEVICES)
    weights = np.array([DEVICES[n]["portrait" if portrait else "landscape"] for n in names])
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


def sample_scene(rng: np.random.Generator, width: int, height: int) -> Params:
    """Return a device showing a `width` × `height` page and the room around it (plane coords)."""
    portrait = height >= width
    name = _device(rng, portrait)
    device = DEVICES[name]
    aspect = device["aspect"]
    landscape_screen = name != "tablet" or not portrait
    screen_aspect = aspect if landscape_screen else 1 / aspect  # width / height
    toolbar_share = uniform(rng, (0.03, 0.05)) if rng.random() < 0.6 else 0.0
    fill = uniform(rng, (0.86, 0.97))
    # the viewer fits the page into the screen below its toolbar
    screen_h = max(height / (fill * (1 - toolbar_share)), width / fill / screen_aspect)
    screen_w = screen_h * screen_aspect
    top = screen_h * toolbar_share
    free_x = screen_w - width
    free_y = screen_h - top - height
    x0 = -(free_x / 2 + uniform(rng, (-0.25, 0.25)) * free_x)
    y0 = -(top + free_y * uniform(rng, (0.1, 0.5)))
    screen = [x0, y0, x0 + screen_w, y0 + screen_h]
    bezel = uniform(rng, device["bezel"]) * min(screen_w, screen_h)
    chin = bezel * (uniform(rng, (1.0, 2.5)) if name in ("monitor", "tv") else 1.0)
    brow = bezel * (1.3 if name == "laptop" else 1.0)
    body = [screen[0] - bezel, screen[1] - brow, screen[2] + bezel, screen[3] + chin]
    viewer = _pick(rng, VIEWER_RGB)
    scene: Params = {
        "kind": "screen",
        "device": name,
        "scale": 2.0,
        "screen": {"rect": screen, "rgb": viewer},
        "toolbar": None,
        "body": {
            "rect": body,
            "rgb": _pick(rng, BODY_RGB),
            "radius": bezel * (1.6 if name == "tablet" else 0.4),
        },
        "wall": {
            "texture": _pick(rng, DESKS if name == "tablet" else WALLS),
            "seed": int(rng.integers(2**31 - 1)),
        },
        "desk": None,
        "keyboard": None,
        "stand": None,
        "camera_dot": None,
        "density": uniform(rng, device["density"]),
    }
    if toolbar_share:
        dark = sum(viewer) < 300
        scene["toolbar"] = {
            "rect": [screen[0], screen[1], screen[2], screen[1] + top],
            "rgb": [50, 52, 56] if dark else [244, 245, 247],
            "buttons": int(rng.integers(3, 8)),
        }
    desk = {"texture": _pick(rng, DESKS), "seed": int(rng.integers(2**31 - 1))}
    if name in ("monitor", "tv"):
        neck = screen_w * uniform(rng, (0.08, 0.16))
        drop = screen_h * uniform(rng, (0.12, 0.3))
        middle = (body[0] + body[2]) / 2 + uniform(rng, (-0.05, 0.05)) * screen_w
        scene["stand"] = {
            "polygon": [[middle - neck / 2, body[3]], [middle + neck / 2, body[3]],
                        [middle + neck * 0.7, body[3] + drop], [middle - neck * 0.7, body[3] + drop]],
            "rgb": _pick(rng, BODY_RGB),
        }  # fmt: skip
        scene["desk"] = desk | {"top": body[3] + drop * uniform(rng, (0.85, 1.0))}
    elif name == "laptop":
        depth = screen_h * uniform(rng, (0.3, 0.45))
        scene["keyboard"] = {
            "rect": [body[0] - bezel, body[3], body[2] + bezel, body[3] + depth],
            "rgb": [int(v) + 14 for v in scene["body"]["rgb"]],
            "keys": [max(0, int(v) - 12) for v in scene["body"]["rgb"]],
        }
        scene["desk"] = desk | {"top": body[3] + depth * uniform(rng, (0.2, 0.6))}
        scene["camera_dot"] = [(screen[0] + screen[2]) / 2, (body[1] + screen[1]) / 2, bezel * 0.2]
    return scene


def _to_pixels(points: Any, box: list[int], scale: float) -> np.ndarray:
    """Plane points → pixel coordinates of the backdrop drawn over `box` (8 fractional bits)."""
    array = (np.asarray(points, np.float64).reshape(-1, 2) - np.array(box[:2])) / scale
    return np.round(array * 256).astype(np.int32)


def _rect(image: np.ndarray, rect: list[float], box: list[int], scale: float, rgb: Any) -> None:
    x0, y0, x1, y1 = rect
    corners = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    cv2.fillPoly(image, [_to_pixels(corners, box, scale)], [int(v) for v in rgb], cv2.LINE_AA, 8)


def _rounded(
    image: np.ndarray, rect: list[float], radius: float, box: list[int], scale: float, rgb: Any
) -> None:
    x0, y0, x1, y1 = rect
    r = max(0.0, min(radius, (x1 - x0) / 2, (y1 - y0) / 2))
    angles = np.linspace(0, np.pi / 2, 6)
    outline = []
    for cx, cy, start in ((x1 - r, y1 - r, 0.0), (x0 + r, y1 - r, np.pi / 2),
                          (x0 + r, y0 + r, np.pi), (x1 - r, y0 + r, 1.5 * np.pi)):  # fmt: skip
        outline += [[cx + r * np.cos(start + a), cy + r * np.sin(start + a)] for a in angles]
    cv2.fillPoly(image, [_to_pixels(outline, box, scale)], [int(v) for v in rgb], cv2.LINE_AA, 8)


def _keys(image: np.ndarray, deck: Params, box: list[int], scale: float) -> None:
    x0, y0, x1, y1 = deck["rect"]
    rows, cols = 5, 14
    pitch_x = (x1 - x0) * 0.8 / cols
    pitch_y = (y1 - y0) * 0.6 / rows
    left, top = x0 + (x1 - x0) * 0.1, y0 + (y1 - y0) * 0.08
    for row in range(rows):
        for col in range(cols):
            kx, ky = left + col * pitch_x, top + row * pitch_y
            _rect(
                image, [kx, ky, kx + pitch_x * 0.84, ky + pitch_y * 0.8], box, scale, deck["keys"]
            )


def draw_scene(
    scene: Params, box: list[int], scale: float, extent: tuple[float, float, float, float]
) -> np.ndarray:
    """Return the scene painted over the plane rectangle `box` at `scale` plane px per pixel."""
    _width, height = plane.pixels(box, scale)
    wall = scene["wall"]
    image = plane.texture_over(wall["texture"], int(wall["seed"]), box, scale, extent).copy()
    desk = scene["desk"]
    if desk is not None:
        row = int(np.clip(np.ceil((desk["top"] - box[1]) / scale), 0, height))
        if row < height:
            rows = (row, height)
            image[row:] = plane.texture_over(
                desk["texture"], int(desk["seed"]), box, scale, extent, rows
            )
            image[max(0, row - 1) : row + 1] = (image[max(0, row - 1) : row + 1] * 0.7).astype(
                np.uint8
            )  # the desk's edge catches a shadow
    if scene["stand"] is not None:
        stand = scene["stand"]
        cv2.fillPoly(
            image, [_to_pixels(stand["polygon"], box, scale)], stand["rgb"], cv2.LINE_AA, 8
        )
    if scene["keyboard"] is not None:
        _rect(image, scene["keyboard"]["rect"], box, scale, scene["keyboard"]["rgb"])
        _keys(image, scene["keyboard"], box, scale)
    body = scene["body"]
    _rounded(image, body["rect"], body["radius"], box, scale, body["rgb"])
    _rect(image, scene["screen"]["rect"], box, scale, scene["screen"]["rgb"])
    toolbar = scene["toolbar"]
    if toolbar is not None:
        _rect(image, toolbar["rect"], box, scale, toolbar["rgb"])
        tx0, ty0, _tx1, ty1 = toolbar["rect"]
        size = (ty1 - ty0) * 0.5
        shade = [int(v) + (30 if sum(toolbar["rgb"]) < 300 else -40) for v in toolbar["rgb"]]
        for index in range(toolbar["buttons"]):
            bx = tx0 + size * (0.8 + 1.6 * index)
            _rect(image, [bx, ty0 + size / 2, bx + size, ty0 + size * 1.5], box, scale, shade)
    if scene["camera_dot"] is not None:
        cx, cy, r = scene["camera_dot"]
        centre = _to_pixels([[cx, cy]], box, scale)[0]
        cv2.circle(image, tuple(int(v) for v in centre), max(1, round(r / scale * 256)),
                   (8, 8, 10), -1, cv2.LINE_AA, 8)  # fmt: skip
    return image
