"""Phone screenshot: the page inside an app on a phone screen, with status bar and notch."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from itemshot.degradations.fonts import ui_font
from itemshot.degradations.frame import Frame, Params, Transform, register
from itemshot.degradations.warp import paste, place_points, resize_image

PHONES: dict[str, tuple[int, int, str]] = {
    "iphone_14": (1170, 2532, "ios"),
    "iphone_15_pro_max": (1290, 2796, "ios"),
    "pixel_7": (1080, 2400, "android"),
    "galaxy_s23": (1080, 2340, "android"),
}
APPS = ("Photos", "Files", "Quiz", "Safari", "Drive", "Classroom")


def _status_bar(draw: ImageDraw.ImageDraw, p: Params) -> None:
    w = p["screen"][0]
    u = w / 390  # one iOS point
    fg = p["fg"]
    bar_h = p["layout"]["status_h"]
    mid = bar_h * 0.55
    clock = ui_font(round(15 * u), bold=p["os"] == "ios")
    if p["os"] == "ios":
        draw.text((w * 0.2, mid), p["clock"], font=clock, fill=fg, anchor="mm")
        draw.rounded_rectangle(
            [w / 2 - 62 * u, 11 * u, w / 2 + 62 * u, 48 * u], radius=round(19 * u), fill="#000000"
        )
    else:
        draw.text((20 * u, mid), p["clock"], font=ui_font(round(13 * u)), fill=fg, anchor="lm")
        r = 6 * u
        draw.ellipse([w / 2 - r, mid - r, w / 2 + r, mid + r], fill="#000000")
    # battery, wifi, signal from the right edge
    right = w - (22 if p["os"] == "ios" else 14) * u
    bw, bh = 25 * u, 12 * u
    box = [right - bw, mid - bh / 2, right, mid + bh / 2]
    draw.rounded_rectangle(box, radius=round(3.5 * u), outline=fg, width=max(1, round(1.2 * u)))
    level = p["battery"] / 100
    fill = "#34c759" if p["charging"] else fg
    draw.rounded_rectangle(
        [box[0] + 2 * u, box[1] + 2 * u, box[0] + 2 * u + (bw - 4 * u) * level, box[3] - 2 * u],
        radius=round(2 * u),
        fill=fill,
    )
    draw.rectangle([right + 1 * u, mid - 2.5 * u, right + 2.5 * u, mid + 2.5 * u], fill=fg)
    if p["os"] == "android":
        draw.text(
            (box[0] - 4 * u, mid),
            f"{p['battery']}%",
            font=ui_font(round(11 * u)),
            fill=fg,
            anchor="rm",
        )
        right = box[0] - 36 * u
    else:
        right = box[0] - 6 * u
    # wifi: three arcs as pie slices
    cx, cy = right - 9 * u, mid + 5 * u
    for radius, shade in ((11, fg), (7.5, p["bg"]), (6.5, fg), (3.5, p["bg"]), (2.5, fg)):
        r = radius * u
        draw.pieslice([cx - r, cy - r, cx + r, cy + r], 225, 315, fill=shade)
    # signal: four bars
    x = right - 22 * u - 20 * u
    for index in range(4):
        height = (4 + 2.6 * index) * u
        color = fg if index < p["signal"] else "#8e8e93"
        draw.rounded_rectangle(
            [x + index * 4.5 * u, mid + 5 * u - height, x + index * 4.5 * u + 3 * u, mid + 5 * u],
            radius=round(u),
            fill=color,
        )


def _app_bar(draw: ImageDraw.ImageDraw, p: Params) -> None:
    w = p["screen"][0]
    u = w / 390
    top = p["layout"]["status_h"]
    h = p["layout"]["app_bar_h"]
    draw.rectangle([0, top, w, top + h], fill=p["bar_bg"])
    draw.text(
        (16 * u, top + h / 2), "‹", font=ui_font(round(30 * u)), fill=p["accent"], anchor="lm"
    )
    draw.text(
        (w / 2, top + h / 2),
        p["app"],
        font=ui_font(round(17 * u), bold=True),
        fill=p["fg"],
        anchor="mm",
    )
    draw.text(
        (w - 22 * u, top + h / 2), "⋯", font=ui_font(round(20 * u)), fill=p["accent"], anchor="mm"
    )
    draw.line([0, top + h, w, top + h], fill="#c6c6c8" if p["fg"] == "#000000" else "#38383a")


def _bottom(draw: ImageDraw.ImageDraw, p: Params) -> None:
    w, h = p["screen"]
    u = w / 390
    bottom_h = p["layout"]["bottom_h"]
    draw.rectangle([0, h - bottom_h, w, h], fill=p["bar_bg"])
    pill_y = h - 8 * u
    draw.rounded_rectangle(
        [w / 2 - 67 * u, pill_y - 5 * u, w / 2 + 67 * u, pill_y], radius=round(3 * u), fill=p["fg"]
    )
    icons = ("□", "↗", "♡", "⌫") if p["os"] == "ios" else ("☰", "⎙", "✎", "⋯")
    for index, glyph in enumerate(icons):
        x = w * (index + 0.5) / len(icons)
        draw.text(
            (x, h - bottom_h + 24 * u),
            glyph,
            font=ui_font(round(20 * u)),
            fill=p["accent"],
            anchor="mm",
        )


@register
class PhoneScreen(Transform):
    """Place the page in a phone app (status bar, notch, app bars, margins) on a phone screen."""

    name = "phone_screen"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return phone model, OS look, clock, battery, app, colours and the page rectangle."""
        model = list(PHONES)[int(rng.integers(len(PHONES)))]
        w, h, system = PHONES[model]
        u = w / 390
        dark = bool(rng.random() < self.spec["p_dark"])
        status_h = round((54 if system == "ios" else 30) * u)
        app_bar_h = round(44 * u)
        bottom_h = round((50 if system == "ios" else 48) * u)
        margin = round(float(rng.uniform(*self.spec["margin"])) * u)
        avail_w = w - 2 * margin
        avail_h = h - status_h - app_bar_h - bottom_h - 2 * margin
        zoom = min(avail_w / frame.width, avail_h / frame.height)
        pw, ph = max(1, round(frame.width * zoom)), max(1, round(frame.height * zoom))
        top = status_h + app_bar_h + margin
        py = top + (avail_h - ph) // 2 if rng.random() < 0.6 else top
        return {
            "model": model,
            "os": system,
            "screen": [w, h],
            "clock": f"{int(rng.integers(1, 13))}:{int(rng.integers(0, 60)):02d}",
            "battery": int(rng.integers(8, 101)),
            "charging": bool(rng.random() < 0.2),
            "signal": int(rng.integers(1, 5)),
            "app": APPS[int(rng.integers(len(APPS)))],
            "fg": "#ffffff" if dark else "#000000",
            "bg": "#000000" if dark else "#ffffff",
            "bar_bg": "#1c1c1e" if dark else "#f9f9f9",
            "content_bg": "#000000" if dark else ["#ffffff", "#f2f2f7"][int(rng.integers(2))],
            "accent": "#0a84ff" if system == "ios" else "#1a73e8",
            "corner_radius": round(float(rng.uniform(*self.spec["corner_radius"])) * u),
            "layout": {
                "status_h": status_h,
                "app_bar_h": app_bar_h,
                "bottom_h": bottom_h,
                "page": [(w - pw) // 2, int(py), pw, ph],
            },
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Draw the phone interface and paste the resized page into the content area."""
        w, h = params["screen"]
        canvas = Image.new("RGB", (w, h), params["content_bg"])
        draw = ImageDraw.Draw(canvas)
        draw.rectangle([0, 0, w, params["layout"]["status_h"]], fill=params["bar_bg"])
        _app_bar(draw, params)
        _bottom(draw, params)
        _status_bar(draw, params)
        radius = params["corner_radius"]
        if radius > 0:
            mask = Image.new("L", (w, h), 255)
            ImageDraw.Draw(mask).rounded_rectangle([0, 0, w - 1, h - 1], radius=radius, fill=0)
            canvas.paste((0, 0, 0), (0, 0), mask)
        image = np.asarray(canvas).copy()
        px, py, pw, ph = params["layout"]["page"]
        paste(image, resize_image(frame.image, pw, ph), px, py)
        points = place_points(frame.points, pw / frame.width, ph / frame.height, px, py)
        return frame.with_image(image, points)
