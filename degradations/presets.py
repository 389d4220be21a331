"""Capture presets: the parameter table (preset × severity) and the pipeline built from it.

A severity is defined by what it leaves legible in the delivered image (the
long side the model receives, `deliver_size`): how large the page's text is
there (the page's linear scale against the clean render delivered at the same
size: x-height scales with it), how much blur, how much contrast, which JPEG
quality. Light and medium stay easy to read; strong is hard, never hopeless.
Ranges are `(low, high)` drawn uniformly per image; `p_*` are probabilities.

| preset | severity | page scale (text size) | blur (delivered px) | contrast | JPEG q | what else |
|---|---|---|---|---|---|---|
| pc_screenshot | light | 0.93–0.98 (crop to the page) | none | full | PNG | browser viewport around the page |
| | medium | 0.82–0.91 (page, toolbar, tabs) | re-save 0.85–0.95 | full | 80–90 (p 0.5) | windowed 0.3, taskbar 0.7 |
| | strong | 0.6–0.75 (most of the screen) | re-save 0.7–0.85 | full | 55–70 | windowed 0.6, taskbar 0.9 |
| phone_screenshot | light | 0.93–0.98 | none | full | 92–95 | app bars cropped off |
| | medium | 0.77–0.91 | re-save 0.85–0.95 | full | 80–88 | status and app bars |
| | strong | 0.59–0.71 (page, status and app bars) | re-save 0.75–0.9 | full | 50–62 | rounded corners |
| phone_photo_paper | light | fill 0.88–0.95 | Gaussian σ 0.3–0.5 | exposure 0.93–1.0 | 88–94 | curl 0.3, object 0.1 |
| | medium | fill 0.82–0.90 | σ 0.5–0.8 or motion 3 | 0.86–0.95, shadow 0.5 | 78–88 | curl 0.6, object 0.25 |
| | strong | fill 0.74–0.84, roll ≤ 5° | defocus 1, motion 3–5, σ 0.7–1.0 | 0.76–0.88, shadow 0.8 | 70–80 | curl 0.9, object 0.35 |
| phone_photo_screen | light | page 0.72–0.84 of the frame | σ 0.3–0.5, rim 0.3–0.6 | black 6–14, white 240–250 | 88–94 | moiré ≤ 0.08, glare 0.05–0.15 |
| | medium | page 0.66–0.78 of the frame | σ 0.5–0.8 or motion 3, rim 0.6–1.0 | 12–22 / 230–244 | 78–88 | moiré ≤ 0.14, glare 0.1–0.22 |
| | strong | page 0.63–0.74 of the frame | as paper strong, rim 1.0–1.6 | 18–32 / 216–234 | 70–80 | moiré ≤ 0.22, glare 0.2–0.35 |
| scan | light | 1.0 (300 dpi) | optics 0.4–0.6 scan px | black 0–8, white 246–255 | PNG | bleed-through 0.03–0.06 |
| | medium | 1.0 (200–300 dpi) | optics 0.5–0.8 | 14–28 / 226–240 | 85–92 | toner 0.002 / 0.03, bleed 0.06–0.1 |
| | strong | 1.0 (150–200 dpi) | optics 0.7–1.0, stroke spread 0–1 | 24–40 / 208–224, saturation 0.5–0.75 | 50–62 | toner 0.004 / 0.06, bleed 0.1–0.16 |

Light and medium hold the page's text at the renderer's floor
(`capturing.text_hold`): a page whose text the drawn page scale would take
under it is framed larger (screenshots: narrower margins; photos: closer and,
where the frame needs it, squarer), and the record says so. Strong is not held.

Page scale is the page's long side in the delivered image over the delivered
long side (photos: its fill of the frame, then keystone and roll; screens: the
share of the frame's area the page covers). Blur "rim" is the depth-of-field
falloff toward the frame's corners; moiré is the largest stripe contrast the
beat of the screen's pixel grid and the camera's colour lattice may reach
(it is usually weaker: it depends on the sampled screen pitch, the camera
distance, the lens and the sensor). The measured x-heights, page shares and
OCR reads per preset × severity are printed by `benchmarks/capture_legibility.py`.
"""

from __future__ import annotations

from typing import Any

from itemshot.degradations import photo_geometry
from itemshot.degradations.blur import CameraBlur
from itemshot.degradations.deliver import Crop, Deliver
from itemshot.degradations.desktop import BrowserWindow
from itemshot.degradations.frame import Compose
from itemshot.degradations.occluder import Occluder
from itemshot.degradations.phone_ui import PhoneScreen
from itemshot.degradations.photometric import (
    FocusFalloff,
    Glare,
    Lighting,
    SensorNoise,
    ToneBalance,
)
from itemshot.degradations.scan import (
    BleedThrough,
    PaperGrain,
    ScanResolution,
    TonerNoise,
)
from itemshot.degradations.warp import Warp

PRESETS = ("pc_screenshot", "phone_screenshot", "phone_photo_paper", "phone_photo_screen", "scan")
SEVERITIES = ("light", "medium", "strong")

Spec = dict[str, Any]

_CAMERA: dict[str, Spec] = {
    "light": {
        "blur": {"weights": {"gaussian": 1.0}, "gaussian": (0.3, 0.5)},
        "noise": {"luma": (1.5, 3.0), "chroma": (1.0, 2.0)},
        "encode": {"p_jpeg": 1.0, "quality": (88, 94)},
    },
    "medium": {
        "blur": {"weights": {"gaussian": 0.6, "motion": 0.4}, "gaussian": (0.5, 0.8), "motion": (3, 3)},
        "noise": {"luma": (3.0, 5.0), "chroma": (2.0, 4.0)},
        "encode": {"p_jpeg": 1.0, "quality": (78, 88)},
    },
    "strong": {
        "blur": {
            "weights": {"defocus": 0.3, "motion": 0.2, "gaussian": 0.5},
            "defocus": (1, 1), "motion": (3, 5), "gaussian": (0.7, 1.0),
        },
        "noise": {"luma": (4.0, 6.0), "chroma": (3.0, 5.0)},
        "encode": {"p_jpeg": 1.0, "quality": (70, 80)},
    },
}  # fmt: skip

_SURFACES = ["wood", "desk", "table", "fabric"]

TABLE: dict[str, dict[str, Spec]] = {
    "pc_screenshot": {
        "light": {
            "window": {"screens": [(2560, 1440), (1920, 1080)], "max_tabs": 4, "p_windowed": 0.0,
                       "p_taskbar": 0.5, "p_dark": 0.3, "fill": (0.97, 0.99)},
            "crop": (0.01, 0.035), "soften": (1.0, 1.0), "encode": {"p_jpeg": 0.0, "quality": (95, 95)},
        },
        "medium": {
            "window": {"screens": [(1920, 1080), (1536, 864)], "max_tabs": 6, "p_windowed": 0.3,
                       "p_taskbar": 0.7, "p_dark": 0.3, "fill": (0.92, 0.97)},
            "crop": (0.05, 0.1), "soften": (0.85, 0.95), "encode": {"p_jpeg": 0.5, "quality": (80, 90)},
        },
        "strong": {
            "window": {"screens": [(1536, 864), (1366, 768)], "max_tabs": 7, "p_windowed": 0.6,
                       "p_taskbar": 0.9, "p_dark": 0.3, "fill": (0.85, 0.93)},
            "crop": (0.17, 0.3), "soften": (0.7, 0.85), "encode": {"p_jpeg": 1.0, "quality": (55, 70)},
        },
    },
    "phone_screenshot": {
        "light": {"phone": {"p_dark": 0.3, "margin": (0, 4), "corner_radius": (0, 0)},
                  "crop": (0.01, 0.035), "soften": (1.0, 1.0), "encode": {"p_jpeg": 1.0, "quality": (92, 95)}},
        "medium": {"phone": {"p_dark": 0.3, "margin": (4, 10), "corner_radius": (0, 0)},
                   "crop": (0.05, 0.15), "soften": (0.85, 0.95), "encode": {"p_jpeg": 1.0, "quality": (80, 88)}},
        "strong": {"phone": {"p_dark": 0.3, "margin": (8, 16), "corner_radius": (30, 45)},
                   "crop": (0.2, 0.35), "soften": (0.75, 0.9), "encode": {"p_jpeg": 1.0, "quality": (50, 62)}},
    },
    "phone_photo_paper": {
        "light": {
            "warp": {"fill": (0.88, 0.95), "roll": 2.0, "keystone": (0.0, 0.04), "jitter": 0.004,
                     "lens": (0.0, 0.02), "p_bend": 0.3, "p_fold": 0.2, "curl_extent": (0.05, 0.12),
                     "curl_angle": (0.3, 0.6), "fold_angle": (0.05, 0.12), "bend_shade": (0.05, 0.12),
                     "surfaces": _SURFACES},
            "object": {"p": 0.1},
            "lighting": {"exposure": (0.93, 1.0), "gradient": (0.0, 0.12), "vignette": (0.0, 0.1),
                         "p_shadow": 0.2, "shadow_depth": (0.15, 0.3), "shadow_darkness": (0.1, 0.2)},
            "tone": {"temperature": (-0.03, 0.03), "tint": (-0.01, 0.01)},
        },
        "medium": {
            "warp": {"fill": (0.82, 0.9), "roll": 4.0, "keystone": (0.03, 0.08), "jitter": 0.008,
                     "lens": (0.02, 0.05), "p_bend": 0.6, "p_fold": 0.3, "curl_extent": (0.10, 0.20),
                     "curl_angle": (0.5, 0.9), "fold_angle": (0.1, 0.2), "bend_shade": (0.1, 0.2),
                     "surfaces": _SURFACES},
            "object": {"p": 0.25},
            "lighting": {"exposure": (0.86, 0.95), "gradient": (0.1, 0.25), "vignette": (0.1, 0.25),
                         "p_shadow": 0.5, "shadow_depth": (0.2, 0.4), "shadow_darkness": (0.2, 0.35)},
            "tone": {"temperature": (-0.06, 0.06), "tint": (-0.02, 0.02)},
        },
        "strong": {
            "warp": {"fill": (0.74, 0.84), "roll": 5.0, "keystone": (0.05, 0.11), "jitter": 0.015,
                     "lens": (0.04, 0.08), "p_bend": 0.9, "p_fold": 0.35, "curl_extent": (0.15, 0.30),
                     "curl_angle": (0.7, 1.1), "fold_angle": (0.15, 0.3), "bend_shade": (0.15, 0.3),
                     "surfaces": _SURFACES},
            "object": {"p": 0.35},
            "lighting": {"exposure": (0.76, 0.88), "gradient": (0.2, 0.4), "vignette": (0.2, 0.35),
                         "p_shadow": 0.8, "shadow_depth": (0.25, 0.5), "shadow_darkness": (0.3, 0.5)},
            "tone": {"temperature": (-0.10, 0.10), "tint": (-0.03, 0.03)},
        },
    },
    "phone_photo_screen": {
        "light": {
            "warp": {"share": (0.72, 0.84), "roll": 2.0, "keystone": (0.0, 0.04), "jitter": 0.004,
                     "lens": (0.0, 0.02), "sensor_long": (3000, 4080), "optics": (0.3, 0.6),
                     "subpixel": (0.15, 0.3), "row_gap": (0.3, 0.8), "max_strength": 0.08},
            "tone": {"temperature": (-0.06, 0.0), "black": (6, 14), "white": (240, 250), "gamma": (0.95, 1.05)},
            "glare": {"strength": (0.05, 0.15), "haze": (0.0, 0.03)},
            "lighting": {"exposure": (0.96, 1.0), "gradient": (0.0, 0.08), "vignette": (0.05, 0.15),
                         "p_shadow": 0.0},
            "falloff": {"sigma": (0.3, 0.6)},
        },
        "medium": {
            "warp": {"share": (0.66, 0.78), "roll": 3.0, "keystone": (0.03, 0.08), "jitter": 0.008,
                     "lens": (0.01, 0.03), "sensor_long": (3000, 4080), "optics": (0.3, 0.6),
                     "subpixel": (0.25, 0.45), "row_gap": (0.3, 0.8), "max_strength": 0.14},
            "tone": {"temperature": (-0.08, 0.02), "black": (12, 22), "white": (230, 244), "gamma": (0.9, 1.1)},
            "glare": {"strength": (0.1, 0.22), "haze": (0.02, 0.05)},
            "lighting": {"exposure": (0.93, 1.0), "gradient": (0.05, 0.15), "vignette": (0.1, 0.25),
                         "p_shadow": 0.0},
            "falloff": {"sigma": (0.6, 1.0)},
        },
        "strong": {
            "warp": {"share": (0.63, 0.74), "roll": 4.0, "keystone": (0.05, 0.12), "jitter": 0.012,
                     "lens": (0.02, 0.05), "sensor_long": (3000, 4080), "optics": (0.3, 0.6),
                     "subpixel": (0.4, 0.6), "row_gap": (0.3, 0.8), "max_strength": 0.22},
            "tone": {"temperature": (-0.1, 0.04), "black": (18, 32), "white": (216, 234), "gamma": (0.85, 1.15)},
            "glare": {"strength": (0.2, 0.35), "haze": (0.04, 0.08)},
            "lighting": {"exposure": (0.88, 0.98), "gradient": (0.1, 0.25), "vignette": (0.2, 0.35),
                         "p_shadow": 0.0},
            "falloff": {"sigma": (1.0, 1.6)},
        },
    },
    "scan": {
        "light": {"skew": {"skew": 0.5, "shift": 0.005}, "grain": (0.01, 0.02),
                  "bleed": {"darkness": (0.03, 0.06), "blur": (1.2, 2.0)},
                  "resolution": {"dpi": [300], "optics": (0.4, 0.6)},
                  "toner": {"speckle": (0.0003, 0.0007), "dropout": (0.005, 0.015), "spread": (0, 0)},
                  "tone": {"temperature": (0.0, 0.0), "black": (0, 8), "white": (246, 255)},
                  "encode": {"p_jpeg": 0.0, "quality": (95, 95)}},
        "medium": {"skew": {"skew": 1.5, "shift": 0.01}, "grain": (0.02, 0.04),
                   "bleed": {"darkness": (0.06, 0.1), "blur": (1.5, 2.5)},
                   "resolution": {"dpi": [200, 300], "optics": (0.5, 0.8)},
                   "toner": {"speckle": (0.0015, 0.0025), "dropout": (0.02, 0.04), "spread": (0, 0)},
                   "tone": {"temperature": (0.0, 0.02), "black": (14, 28), "white": (226, 240),
                            "saturation": (0.8, 1.0)},
                   "encode": {"p_jpeg": 1.0, "quality": (85, 92)}},
        "strong": {"skew": {"skew": 3.0, "shift": 0.02}, "grain": (0.04, 0.06),
                   "bleed": {"darkness": (0.1, 0.16), "blur": (1.5, 3.0)},
                   "resolution": {"dpi": [150, 200], "optics": (0.7, 1.0)},
                   "toner": {"speckle": (0.003, 0.005), "dropout": (0.05, 0.07), "spread": (0, 1)},
                   "tone": {"temperature": (0.0, 0.04), "black": (24, 40), "white": (208, 224),
                            "saturation": (0.5, 0.75)},
                   "encode": {"p_jpeg": 1.0, "quality": (50, 62)}},
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
        steps = [BrowserWindow(s["window"]), Crop({"margin": s["crop"]})]
        return Compose([*steps, Deliver({"soften": s["soften"]})]), s["encode"]
    if preset == "phone_screenshot":
        steps = [PhoneScreen(s["phone"]), Crop({"margin": s["crop"]})]
        return Compose([*steps, Deliver({"soften": s["soften"]})]), s["encode"]
    if preset == "phone_photo_paper":
        steps = [
            Warp(photo_geometry.paper_photo(s["warp"])),
            Occluder(s["object"]),
            Lighting(s["lighting"]),
            ToneBalance(s["tone"]),
            CameraBlur(camera["blur"]),
            SensorNoise(camera["noise"]),
            Deliver(),
        ]
        return Compose(steps), camera["encode"]
    if preset == "phone_photo_screen":
        steps = [
            Warp(photo_geometry.screen_photo(s["warp"])),
            ToneBalance(s["tone"]),
            Glare(s["glare"]),
            Lighting(s["lighting"]),
            FocusFalloff(s["falloff"]),
            CameraBlur(camera["blur"]),
            SensorNoise(camera["noise"]),
            Deliver(),
        ]
        return Compose(steps), camera["encode"]
    steps = [
        PaperGrain({"grain": s["grain"]}),
        BleedThrough(s["bleed"]),
        Warp(photo_geometry.scanner_skew(s["skew"])),
        ScanResolution(s["resolution"]),
        TonerNoise(s["toner"]),
        ToneBalance(s["tone"]),
        Deliver(),
    ]
    return Compose(steps), s["encode"]
