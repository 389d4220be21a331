"""PC screenshot: the page shown in a desktop browser window, with tabs, toolbar and taskbar."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from itemshot.degradations.fonts import ui_font
from itemshot.degradations.frame import Frame, Params, Transform, register
from itemshot.degradations.warp import paste, place_points, resize_image

TAB_TITLES = (
    "Practice quiz",
    "Question review",
    "Exam prep - Item",
    "Lecture notes",
    "Inbox (3)",
    "Study group",
    "Course page",
    "Homework 4",
)
HOSTS = ("quiz.example.org", "learn.example.edu", "localhost:8000", "exams.example.com")
THEMES: dict[str, dict[str, str]] = {
    "light": {
        "strip": "#dee1e6", "tab": "#ffffff", "toolbar": "#ffffff", "omnibox": "#f1f3f4",
        "text": "#202124", "muted": "#5f6368", "taskbar": "#f3f3f3", "line": "#c7c9cc",
    },
    "dark": {
        "strip": "#202124", "tab": "#35363a", "toolbar": "#35363a", "omnibox": "#202124",
        "text": "#e8eaed", "muted": "#9aa0a6", "taskbar": "#202020", "line": "#4a4b4f",
    },
}  # fmt: skip
APP_COLORS = ("#0078d4", "#f2b01e", "#e74c3c", "#2ecc71", "#8e44ad", "#1abc9c")


def _layout(screen: tuple[int, int], spec: Params, page: tuple[int, int]) -> Params:
    """Compute window, viewport and page rectangles (all in screen pixels)."""
    sw, sh = screen
    u = float(spec["ui_scale"])
    taskbar_h = round(48 * u) if spec["taskbar"] else 0
    if spec["windowed"]:
        wx, wy, ww, wh = spec["window"]
    else:
        wx, wy, ww, wh = 0, 0, sw, sh - taskbar_h
    chrome_h = round(34 * u) + round(40 * u)
    vx, vy, vw, vh = wx, wy + chrome_h, ww, wh - chrome_h
    pw, ph = page
    zoom = min(vw * spec["fill"] / pw, vh * spec["fill"] / ph)
    out_w, out_h = max(1, round(pw * zoom)), max(1, round(ph * zoom))
    px = vx + (vw - out_w) // 2
    py = vy + max(0, min((vh - out_h) // 2, round(12 * u)))
    return {
        "taskbar_h": taskbar_h,
        "window": [wx, wy, ww, wh],
        "viewport": [vx, vy, vw, vh],
        "page": [px, py, out_w, out_h],
    }


def _draw_browser(draw: ImageDraw.ImageDraw, p: Params) -> None:
    theme = THEMES[p["theme"]]
    u = float(p["ui_scale"])
    wx, wy, ww, _ = p["layout"]["window"]
    strip_h, bar_h = round(34 * u), round(40 * u)
    draw.rectangle([wx, wy, wx + ww, wy + strip_h], fill=theme["strip"])
    tab_w = min(round(220 * u), (ww - round(200 * u)) // max(1, len(p["tabs"])))
    small = ui_font(round(12 * u))
    for index, title in enumerate(p["tabs"]):
        x0 = wx + round(8 * u) + index * tab_w
        top = wy + round(6 * u)
        if index == p["active_tab"]:
            draw.rounded_rectangle(
                [x0, top, x0 + tab_w, wy + strip_h + 4], radius=round(8 * u), fill=theme["tab"]
            )
        elif index + 1 != p["active_tab"]:
            draw.line(
                [x0 + tab_w, top + 6 * u, x0 + tab_w, wy + strip_h - 6 * u], fill=theme["line"]
            )
        draw.ellipse(
            [x0 + 10 * u, top + 8 * u, x0 + 26 * u, top + 24 * u], fill=APP_COLORS[index % 6]
        )
        draw.text((x0 + 34 * u, top + 16 * u), title, font=small, fill=theme["text"], anchor="lm")
        draw.text(
            (x0 + tab_w - 16 * u, top + 16 * u), "×", font=small, fill=theme["muted"], anchor="mm"
        )
    plus_x = wx + round(8 * u) + len(p["tabs"]) * tab_w + 18 * u
    draw.text(
        (plus_x, wy + 22 * u), "+", font=ui_font(round(18 * u)), fill=theme["muted"], anchor="mm"
    )
    for offset, glyph in ((130, "—"), (84, "☐"), (38, "✕")):
        draw.text(
            (wx + ww - offset * u + 20 * u, wy + 17 * u),
            glyph,
            font=small,
            fill=theme["text"],
            anchor="mm",
        )
    y0 = wy + strip_h
    draw.rectangle([wx, y0, wx + ww, y0 + bar_h], fill=theme["toolbar"])
    icon = ui_font(round(16 * u))
    for index, glyph in enumerate(("←", "→", "↻")):
        draw.text(
            (wx + (22 + 34 * index) * u, y0 + bar_h / 2),
            glyph,
            font=icon,
            fill=theme["muted"],
            anchor="mm",
        )
    box = [wx + 118 * u, y0 + 5 * u, wx + ww - 120 * u, y0 + bar_h - 5 * u]
    draw.rounded_rectangle(box, radius=round(15 * u), fill=theme["omnibox"])
    draw.text((box[0] + 16 * u, y0 + bar_h / 2), "ⓘ", font=small, fill=theme["muted"], anchor="mm")
    draw.text(
        (box[0] + 34 * u, y0 + bar_h / 2),
        p["url"],
        font=ui_font(round(14 * u)),
        fill=theme["text"],
        anchor="lm",
    )
    draw.text((box[2] - 18 * u, y0 + bar_h / 2), "☆", font=icon, fill=theme["muted"], anchor="mm")
    draw.ellipse(
        [wx + ww - 48 * u, y0 + 9 * u, wx + ww - 26 * u, y0 + 31 * u], fill=APP_COLORS[p["avatar"]]
    )
    draw.text((wx + ww - 14 * u, y0 + bar_h / 2), "⋮", font=icon, fill=theme["muted"], anchor="mm")
    draw.line([wx, y0 + bar_h - 1, wx + ww, y0 + bar_h - 1], fill=theme["line"])


def _draw_taskbar(draw: ImageDraw.ImageDraw, p: Params, size: tuple[int, int]) -> None:
    theme = THEMES[p["theme"]]
    u = float(p["ui_scale"])
    sw, sh = size
    top = sh - p["layout"]["taskbar_h"]
    draw.rectangle([0, top, sw, sh], fill=theme["taskbar"])
    draw.line([0, top, sw, top], fill=theme["line"])
    count = len(p["apps"])
    x = sw / 2 - (count + 1) * 22 * u
    for index, color in enumerate(["#0a64d8", *p["apps"]]):
        cx = x + index * 44 * u
        if index == 0:  # start button: four squares
            for dx, dy in ((-6, -6), (1, -6), (-6, 1), (1, 1)):
                draw.rectangle(
                    [
                        cx + dx * u,
                        top + 24 * u + dy * u,
                        cx + (dx + 5) * u,
                        top + 24 * u + (dy + 5) * u,
                    ],
                    fill=color,
                )
            continue
        draw.rounded_rectangle(
            [cx - 12 * u, top + 12 * u, cx + 12 * u, top + 36 * u], radius=round(5 * u), fill=color
        )
    small = ui_font(round(12 * u))
    draw.text((sw - 60 * u, top + 16 * u), p["clock"], font=small, fill=theme["text"], anchor="mm")
    draw.text((sw - 60 * u, top + 33 * u), p["date"], font=small, fill=theme["text"], anchor="mm")
    draw.text((sw - 130 * u, top + 24 * u), "ENG", font=small, fill=theme["text"], anchor="mm")


def _wallpaper(size: tuple[int, int], colors: list[list[int]]) -> Image.Image:
    sw, sh = size
    t = np.linspace(0, 1, sh, dtype=np.float32)[:, None, None]
    top, bottom = np.asarray(colors[0], np.float32), np.asarray(colors[1], np.float32)
    column = (top + (bottom - top) * t).astype(np.uint8)
    return Image.fromarray(np.ascontiguousarray(np.broadcast_to(column, (sh, sw, 3))))


@register
class BrowserWindow(Transform):
    """Place the page in a browser viewport on a desktop screen, drawing the interface around it."""

    name = "browser_window"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return screen size, theme, tabs, URL, clock, window placement and page rectangle."""
        spec = self.spec
        screens = spec["screens"]
        sw, sh = screens[int(rng.integers(len(screens)))]
        n_tabs = int(rng.integers(1, spec["max_tabs"] + 1))
        titles = [str(t) for t in rng.choice(TAB_TITLES, size=n_tabs, replace=False)]
        windowed = bool(rng.random() < spec["p_windowed"])
        u = round(max(1.0, sh / 1080), 2)
        window = [0, 0, sw, sh]
        if windowed:
            ww, wh = round(sw * rng.uniform(0.72, 0.9)), round(sh * rng.uniform(0.78, 0.9))
            window = [
                int(rng.integers(0, sw - ww + 1)),
                int(rng.integers(0, max(1, sh - wh - 60))),
                ww,
                wh,
            ]
        hour, minute = int(rng.integers(7, 23)), int(rng.integers(0, 60))
        params: Params = {
            "screen": [sw, sh],
            "ui_scale": u,
            "theme": "dark" if rng.random() < spec["p_dark"] else "light",
            "tabs": titles,
            "active_tab": int(rng.integers(n_tabs)),
            "url": f"https://{HOSTS[int(rng.integers(len(HOSTS)))]}/item/{int(rng.integers(1, 2000))}",
            "avatar": int(rng.integers(6)),
            "taskbar": bool(rng.random() < spec["p_taskbar"]),
            "windowed": windowed,
            "window": window,
            "fill": float(rng.uniform(*spec["fill"])),
            "viewer_bg": ["#ffffff", "#f1f3f4", "#525659", "#e8e8e8"][int(rng.integers(4))],
            "apps": [APP_COLORS[int(i)] for i in rng.integers(0, 6, size=int(rng.integers(3, 7)))],
            "clock": f"{hour}:{minute:02d}",
            "date": f"{int(rng.integers(1, 13))}/{int(rng.integers(1, 29))}/2025",
            "wallpaper": [
                [int(v) for v in rng.integers(20, 120, 3)],
                [int(v) for v in rng.integers(60, 200, 3)],
            ],
        }
        params["layout"] = _layout((sw, sh), params, (frame.width, frame.height))
        return params

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Draw the desktop, window and taskbar; paste the resized page into the viewport."""
        sw, sh = params["screen"]
        layout = params["layout"]
        canvas = _wallpaper((sw, sh), params["wallpaper"])
        draw = ImageDraw.Draw(canvas)
        wx, wy, ww, wh = layout["window"]
        if params["windowed"]:
            shadow = Image.new("L", (sw, sh), 0)
            ImageDraw.Draw(shadow).rectangle([wx + 4, wy + 8, wx + ww + 4, wy + wh + 8], fill=90)
            canvas.paste((0, 0, 0), (0, 0), shadow.filter(ImageFilter.BoxBlur(10)))
        vx, vy, vw, vh = layout["viewport"]
        draw.rectangle([vx, vy, vx + vw - 1, vy + vh - 1], fill=params["viewer_bg"])
        _draw_browser(draw, params)
        if params["taskbar"]:
            _draw_taskbar(draw, params, (sw, sh))
        image = np.asarray(canvas).copy()
        px, py, pw, ph = layout["page"]
        page = resize_image(frame.image, pw, ph)
        view = image[vy : vy + vh, vx : vx + vw]
        paste(view, page, px - vx, py - vy)
        points = place_points(frame.points, pw / frame.width, ph / frame.height, px, py)
        return frame.with_image(image, points)
