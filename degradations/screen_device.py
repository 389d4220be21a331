"""A display showing the page: the device (monitor, laptop, tablet, TV) with its bezel."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.degradations.frame import Frame, Params, Transform, register
from itemshot.degradations.warp import paste, place_points, resize_image

# name -> (screen aspect w/h, bezel as a fraction of the screen's short side)
DEVICES: dict[str, tuple[float, float]] = {
    "monitor": (16 / 9, 0.02),
    "laptop": (16 / 10, 0.035),
    "tablet": (3 / 4, 0.06),
    "tv": (16 / 9, 0.015),
}
BEZELS = ([18, 18, 20], [34, 34, 36], [58, 58, 62], [170, 172, 176])


@register
class ScreenDevice(Transform):
    """Show the page full-screen on a display and draw the device bezel around it."""

    name = "screen_device"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return device, screen size in display pixels, page rectangle and bezel colour."""
        names = list(self.spec["devices"])
        device = names[int(rng.integers(len(names)))]
        aspect, bezel_frac = DEVICES[device]
        if device == "tablet" and frame.width > frame.height:
            aspect = 1 / aspect
        # the display shows the page at about its own resolution
        fill = float(rng.uniform(0.86, 0.97))
        screen_h = round(max(frame.height / fill, frame.width / fill / aspect))
        screen_w = round(screen_h * aspect)
        zoom = min(screen_w * fill / frame.width, screen_h * fill / frame.height)
        pw, ph = round(frame.width * zoom), round(frame.height * zoom)
        bezel = round(min(screen_w, screen_h) * bezel_frac)
        return {
            "device": device,
            "screen": [screen_w, screen_h],
            "bezel": bezel,
            "bezel_rgb": BEZELS[int(rng.integers(len(BEZELS)))],
            "screen_bg": [[255, 255, 255], [240, 240, 240], [32, 33, 36]][int(rng.integers(3))],
            "page": [bezel + (screen_w - pw) // 2, bezel + (screen_h - ph) // 2, pw, ph],
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Draw bezel and screen background and paste the page."""
        sw, sh = params["screen"]
        b = params["bezel"]
        canvas = np.empty((sh + 2 * b, sw + 2 * b, 3), np.uint8)
        canvas[:] = params["bezel_rgb"]
        canvas[b : b + sh, b : b + sw] = params["screen_bg"]
        px, py, pw, ph = params["page"]
        if 0.8 <= pw / frame.width < 1.0:
            # a display scales the page bilinearly; area averaging is 5x slower here
            page = cv2.resize(frame.image, (pw, ph), interpolation=cv2.INTER_LINEAR)
        else:
            page = resize_image(frame.image, pw, ph)
        paste(canvas, page, px, py)
        points = place_points(frame.points, pw / frame.width, ph / frame.height, px, py)
        return frame.with_image(canvas, points)
