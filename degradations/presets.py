"""Capture presets: the parameter table (preset × severity) and the pipeline built from it.

Ranges are `(low, high)` drawn uniformly per image; `p_*` are probabilities.

| preset | step | light | medium | strong |
|---|---|---|---|---|
| pc_screenshot | screen (px) | 2560×1440, 1920×1080 | 1920×1080, 1536×864 | 1536×864, 1366×768 |
| | windowed / taskbar | 0 / 0.5 | 0.3 / 0.7 | 0.6 / 0.9 |
| | page fill of viewport | 0.97–0.99 | 0.92–0.97 | 0.85–0.93 |
| | downscale | 1.0 | 0.8–0.9 | 0.6–0.7 |
| | encoding | PNG | JPEG q 80–90 (p 0.5) | JPEG q 55–70 |
| phone_screenshot | device | iPhone 14/15 Pro Max, Pixel 7, Galaxy S23 (all) | same | same |
| | app margin (pt) | 0–4 | 4–10 | 8–16 |
| | rounded corners (pt) | 0 | 0 | 30–45 |
| | downscale | 1.0 | 0.7–0.85 | 0.38–0.45 |
| | encoding | JPEG q 92–95 | JPEG q 80–88 | JPEG q 50–62 |
| phone_photo_paper | page fill of frame | 0.86–0.93 | 0.78–0.88 | 0.70–0.80 |
| | roll (°) / keystone / corner jitter | ±2 / 0–0.04 / 0.004 | ±5 / 0.04–0.10 / 0.01 | ±9 / 0.08–0.16 / 0.02 |
| | lens k1 (barrel) | 0–0.02 | 0.02–0.05 | 0.04–0.08 |
| | curl or fold: p / fold share | 0.3 / 0.2 | 0.6 / 0.3 | 0.9 / 0.35 |
| | curl extent / end angle (rad) | 0.05–0.12 / 0.3–0.6 | 0.10–0.20 / 0.5–0.9 | 0.15–0.30 / 0.8–1.3 |
| | exposure / gradient / vignette | 0.93–1.0 / 0–0.12 / 0–0.1 | 0.86–0.95 / 0.1–0.25 / 0.1–0.25 | 0.76–0.88 / 0.2–0.4 / 0.2–0.35 |
| | cast shadow: p / darkness | 0.2 / 0.1–0.2 | 0.5 / 0.2–0.35 | 0.8 / 0.3–0.5 |
| | white balance (temperature) | ±0.03 | ±0.06 | ±0.10 |
| | blur | Gaussian σ 0.3–0.6 | Gaussian σ 0.6–1.0 or motion 3–5 px | defocus r 1–2, motion 5–7, Gaussian σ 1.0–1.4 |
| | noise luma / chroma σ | 1.5–3 / 1–2 | 3–5 / 2–4 | 5–8 / 3–6 |
| | encoding | JPEG q 88–94 | JPEG q 78–88 | JPEG q 65–78 |
| phone_photo_screen | device | monitor, laptop, tablet, TV | same | same |
| | frame scale / fill | 0.8 / 0.86–0.93 | 0.75 / 0.8–0.9 | 0.7 / 0.74–0.84 |
| | subpixel strength / pitch | 0.08–0.15 / 1.0–1.2 | 0.15–0.3 / 1.0–1.3 | 0.3–0.45 / 1.0–1.4 |
| | black level / white level | 6–14 / 240–250 | 14–26 / 228–242 | 24–40 / 210–230 |
| | glare strength / haze | 0.05–0.15 / 0–0.03 | 0.15–0.3 / 0.03–0.06 | 0.3–0.5 / 0.06–0.12 |
| | blur, noise, encoding | as phone_photo_paper light | as medium | as strong |
| scan | skew (°) / shift | ±0.5 / 0.005 | ±1.5 / 0.01 | ±3 / 0.02 |
| | paper grain | 0.01–0.02 | 0.02–0.04 | 0.04–0.06 |
| | toner speckle / dropout / stroke spread | 0.0005 / 0.01 / 0 | 0.002 / 0.03 / 0 | 0.005 / 0.09 / 0 |
| | black / white level, saturation | 0–8 / 246–255, 1.0 | 14–28 / 226–240, 0.8–1.0 | 34–56 / 200–220, 0.3–0.6 |
| | downscale | 1.0 | 0.85–0.95 | 0.42–0.5 |
| | encoding | PNG | JPEG q 85–92 | JPEG q 55–65 |
"""

from __future__ import annotations

from typing import Any

from itemshot.degradations import photo_geometry
from itemshot.degradations.blur import CameraBlur
from itemshot.degradations.desktop import BrowserWindow
from itemshot.degradations.frame import Compose
from itemshot.degradations.phone_ui import PhoneScreen
from itemshot.degradations.photometric import Glare, Lighting, SensorNoise, ToneBalance
from itemshot.degradations.scan import PaperGrain, TonerNoise
from itemshot.degradations.screen_device import DEVICES, ScreenDevice
from itemshot.degradations.warp import Downscale, Warp

PRESETS = ("pc_screenshot", "phone_screenshot", "phone_photo_paper", "phone_photo_screen", "scan")
SEVERITIES = ("light", "medium", "strong")

Spec = dict[str, Any]

_CAMERA: dict[str, Spec] = {
    "light": {
        "blur": {"weights": {"gaussian": 1.0}, "gaussian": (0.3, 0.6)},
        "noise": {"luma": (1.5, 3.0), "chroma": (1.0, 2.0)},
        "encode": {"p_jpeg": 1.0, "quality": (88, 94)},
    },
    "medium": {
        "blur": {"weights": {"gaussian": 0.6, "motion": 0.4}, "gaussian": (0.6, 1.0), "motion": (3, 5)},
        "noise": {"luma": (3.0, 5.0), "chroma": (2.0, 4.0)},
        "encode": {"p_jpeg": 1.0, "quality": (78, 88)},
    },
    "strong": {
        "blur": {
            "weights": {"defocus": 0.3, "motion": 0.35, "gaussian": 0.35},
            "defocus": (1, 2), "motion": (5, 7), "gaussian": (1.0, 1.4),
        },
        "noise": {"luma": (5.0, 8.0), "chroma": (3.0, 6.0)},
        "encode": {"p_jpeg": 1.0, "quality": (65, 78)},
    },
}  # fmt: skip

TABLE: dict[str, dict[str, Spec]] = {
    "pc_screenshot": {
        "light": {
            "window": {"screens": [(2560, 1440), (1920, 1080)], "max_tabs": 4, "p_windowed": 0.0,
                       "p_taskbar": 0.5, "p_dark": 0.3, "fill": (0.97, 0.99)},
            "downscale": (1.0, 1.0), "encode": {"p_jpeg": 0.0, "quality": (95, 95)},
        },
        "medium": {
            "window": {"screens": [(1920, 1080), (1536, 864)], "max_tabs": 6, "p_windowed": 0.3,
                       "p_taskbar": 0.7, "p_dark": 0.3, "fill": (0.92, 0.97)},
            "downscale": (0.8, 0.9), "encode": {"p_jpeg": 0.5, "quality": (80, 90)},
        },
        "strong": {
            "window": {"screens": [(1536, 864), (1366, 768)], "max_tabs": 7, "p_windowed": 0.6,
                       "p_taskbar": 0.9, "p_dark": 0.3, "fill": (0.85, 0.93)},
            "downscale": (0.6, 0.7), "encode": {"p_jpeg": 1.0, "quality": (55, 70)},
        },
    },
    "phone_screenshot": {
        "light": {"phone": {"p_dark": 0.3, "margin": (0, 4), "corner_radius": (0, 0)},
                  "downscale": (1.0, 1.0), "encode": {"p_jpeg": 1.0, "quality": (92, 95)}},
        "medium": {"phone": {"p_dark": 0.3, "margin": (4, 10), "corner_radius": (0, 0)},
                   "downscale": (0.7, 0.85), "encode": {"p_jpeg": 1.0, "quality": (80, 88)}},
        "strong": {"phone": {"p_dark": 0.3, "margin": (8, 16), "corner_radius": (30, 45)},
                   "downscale": (0.38, 0.45), "encode": {"p_jpeg": 1.0, "quality": (50, 62)}},
    },
    "phone_photo_paper": {
        "light": {
            "warp": {"fill": (0.86, 0.93), "roll": 2.0, "keystone": (0.0, 0.04), "jitter": 0.004,
                     "lens": (0.0, 0.02), "p_bend": 0.3, "p_fold": 0.2, "curl_extent": (0.05, 0.12),
                     "curl_angle": (0.3, 0.6), "fold_angle": (0.05, 0.12), "bend_shade": (0.05, 0.12),
                     "surfaces": ["wood", "desk", "table", "fabric"]},
            "lighting": {"exposure": (0.93, 1.0), "gradient": (0.0, 0.12), "vignette": (0.0, 0.1),
                         "p_shadow": 0.2, "shadow_depth": (0.15, 0.3), "shadow_darkness": (0.1, 0.2)},
            "tone": {"temperature": (-0.03, 0.03), "tint": (-0.01, 0.01)},
        },
        "medium": {
            "warp": {"fill": (0.78, 0.88), "roll": 5.0, "keystone": (0.04, 0.10), "jitter": 0.01,
                     "lens": (0.02, 0.05), "p_bend": 0.6, "p_fold": 0.3, "curl_extent": (0.10, 0.20),
                     "curl_angle": (0.5, 0.9), "fold_angle": (0.1, 0.2), "bend_shade": (0.1, 0.2),
                     "surfaces": ["wood", "desk", "table", "fabric"]},
            "lighting": {"exposure": (0.86, 0.95), "gradient": (0.1, 0.25), "vignette": (0.1, 0.25),
                         "p_shadow": 0.5, "shadow_depth": (0.2, 0.4), "shadow_darkness": (0.2, 0.35)},
            "tone": {"temperature": (-0.06, 0.06), "tint": (-0.02, 0.02)},
        },
        "strong": {
            "warp": {"fill": (0.70, 0.80), "roll": 9.0, "keystone": (0.08, 0.16), "jitter": 0.02,
                     "lens": (0.04, 0.08), "p_bend": 0.9, "p_fold": 0.35, "curl_extent": (0.15, 0.30),
                     "curl_angle": (0.8, 1.3), "fold_angle": (0.15, 0.3), "bend_shade": (0.15, 0.3),
                     "surfaces": ["wood", "desk", "table", "fabric"]},
            "lighting": {"exposure": (0.76, 0.88), "gradient": (0.2, 0.4), "vignette": (0.2, 0.35),
                         "p_shadow": 0.8, "shadow_depth": (0.25, 0.5), "shadow_darkness": (0.3, 0.5)},
            "tone": {"temperature": (-0.10, 0.10), "tint": (-0.03, 0.03)},
        },
    },
    "phone_photo_screen": {
        "light": {
            "warp": {"out_scale": 0.8, "fill": (0.86, 0.93), "roll": 2.0, "keystone": (0.0, 0.04),
                     "jitter": 0.004, "lens": (0.0, 0.02), "pitch": (1.0, 1.2), "subpixel": (0.08, 0.15),
                     "row_gap": (0.05, 0.15), "surfaces": ["wall", "desk"]},
            "tone": {"temperature": (-0.06, 0.0), "black": (6, 14), "white": (240, 250), "gamma": (0.95, 1.05)},
            "glare": {"strength": (0.05, 0.15), "haze": (0.0, 0.03)},
        },
        "medium": {
            "warp": {"out_scale": 0.75, "fill": (0.8, 0.9), "roll": 5.0, "keystone": (0.04, 0.10),
                     "jitter": 0.01, "lens": (0.02, 0.05), "pitch": (1.0, 1.3), "subpixel": (0.15, 0.3),
                     "row_gap": (0.1, 0.25), "surfaces": ["wall", "desk"]},
            "tone": {"temperature": (-0.08, 0.02), "black": (14, 26), "white": (228, 242), "gamma": (0.9, 1.1)},
            "glare": {"strength": (0.15, 0.3), "haze": (0.03, 0.06)},
        },
        "strong": {
            "warp": {"out_scale": 0.7, "fill": (0.74, 0.84), "roll": 9.0, "keystone": (0.08, 0.16),
                     "jitter": 0.02, "lens": (0.04, 0.08), "pitch": (1.0, 1.4), "subpixel": (0.3, 0.45),
                     "row_gap": (0.2, 0.35), "surfaces": ["wall", "desk"]},
            "tone": {"temperature": (-0.1, 0.04), "black": (24, 40), "white": (210, 230), "gamma": (0.85, 1.15)},
            "glare": {"strength": (0.3, 0.5), "haze": (0.06, 0.12)},
        },
    },
    "scan": {
        "light": {"skew": {"skew": 0.5, "shift": 0.005}, "grain": (0.01, 0.02),
                  "toner": {"speckle": (0.0003, 0.0007), "dropout": (0.005, 0.015), "spread": (0, 0)},
                  "tone": {"temperature": (0.0, 0.0), "black": (0, 8), "white": (246, 255)},
                  "downscale": (1.0, 1.0), "encode": {"p_jpeg": 0.0, "quality": (95, 95)}},
        "medium": {"skew": {"skew": 1.5, "shift": 0.01}, "grain": (0.02, 0.04),
                   "toner": {"speckle": (0.0015, 0.0025), "dropout": (0.02, 0.04), "spread": (0, 0)},
                   "tone": {"temperature": (0.0, 0.02), "black": (14, 28), "white": (226, 240),
                            "saturation": (0.8, 1.0)},
                   "downscale": (0.85, 0.95), "encode": {"p_jpeg": 1.0, "quality": (85, 92)}},
        "strong": {"skew": {"skew": 3.0, "shift": 0.02}, "grain": (0.04, 0.06),
                   "toner": {"speckle": (0.004, 0.006), "dropout": (0.08, 0.1), "spread": (0, 0)},
                   "tone": {"temperature": (0.0, 0.04), "black": (34, 56), "white": (200, 220),
                            "saturation": (0.3, 0.6)},
                   "downscale": (0.42, 0.5), "encode": {"p_jpeg": 1.0, "quality": (55, 65)}},
    },
}  # fmt: skip


def spec(preset: str, severity: str) -> Spec:
    """Return the parameter ranges of one preset at one severity (raises on unknown names)."""
    if preset not in TABLE:
        raise ValueError(f"unknown capture preset {preset!r}; known: {', '.join(PRESETS)}")
    if severity not in SEVERITIES:
        raise ValueError(f"unknown severity {severity!r}; known: {', '.join(SEVERITIES)}")
    return TABLE[preset][severity]


def pipeline(preset: str, severity: str) -> tuple[Compose, Spec]:
    """Return the composed steps of a preset at a severity, and its encoding spec."""
    s = spec(preset, severity)
    camera = _CAMERA[severity]
    if preset == "pc_screenshot":
        steps = [BrowserWindow(s["window"]), Downscale(s["downscale"])]
        return Compose(steps), s["encode"]
    if preset == "phone_screenshot":
        return Compose([PhoneScreen(s["phone"]), Downscale(s["downscale"])]), s["encode"]
    if preset == "phone_photo_paper":
        steps = [
            Warp(photo_geometry.paper_photo(s["warp"])),
            Lighting(s["lighting"]),
            ToneBalance(s["tone"]),
            CameraBlur(camera["blur"]),
            SensorNoise(camera["noise"]),
        ]
        return Compose(steps), camera["encode"]
    if preset == "phone_photo_screen":
        steps = [
            ScreenDevice({"devices": list(DEVICES)}),
            Warp(photo_geometry.screen_photo(s["warp"])),
            ToneBalance(s["tone"]),
            Glare(s["glare"]),
            CameraBlur(camera["blur"]),
            SensorNoise(camera["noise"]),
        ]
        return Compose(steps), camera["encode"]
    steps = [
        PaperGrain({"grain": s["grain"]}),
        Warp(photo_geometry.scanner_skew(s["skew"])),
        Downscale(s["downscale"]),
        TonerNoise(s["toner"]),
        ToneBalance(s["tone"]),
    ]
    return Compose(steps), s["encode"]
