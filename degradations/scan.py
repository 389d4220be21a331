"""Scanner steps: paper grain under the print and toner noise (speckles and dropouts)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.backgrounds.textures import surface_texture
from itemshot.degradations.frame import Frame, Params, Transform, register, uniform

TINT_KEPT = 0.35  # share of the paper's colour cast a scan keeps
# A dark pixel whose neighbourhood (a window `FILL_WINDOW` of the page's long side
# across) is at least `FILL_SHARE` dark lies in a fill (a dark board or screen, a
# bar), not in a stroke: letters' strokes leave most of their window light. On a
# blackboard page 2% of the dark pixels count as strokes (its edges, beside its
# chalk text); on a page of dark text, a quarter (its bars and frames are fills).
FILL_WINDOW = 0.015
FILL_SHARE = 0.6


@register
class PaperGrain(Transform):
    """Multiply the page by a paper texture (fibres and mottling), normalised to its mean."""

    name = "paper_grain"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return texture seed and the strength of the grain."""
        return {
            "texture_seed": int(rng.integers(2**31 - 1)),
            "strength": uniform(rng, self.spec["grain"]),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Modulate the image by the grain around 1."""
        w, h = frame.width, frame.height
        paper = surface_texture("paper", max(8, w // 2), max(8, h // 2), params["texture_seed"])
        grey = cv2.cvtColor(paper, cv2.COLOR_RGB2GRAY).astype(np.float32)
        grey = 1 + params["strength"] * (grey / grey.mean() - 1) * 4
        colour = paper.astype(np.float32).mean(axis=(0, 1)) / 255.0
        # a scanner's white balance takes most of the paper's own tint away
        tint = 1 - TINT_KEPT * (1 - colour / colour.max())
        small = cv2.merge([grey * np.float32(c) for c in tint])
        field = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
        return frame.with_image(cv2.multiply(frame.image, field, dtype=cv2.CV_8U))


@register
class TonerNoise(Transform):
    """Toner speckles on the paper, dropouts inside strokes, and slight stroke spread.

    A dropout is a void in a stroke's toner, so it lands on stroke pixels only:
    the dark fill of a page (a blackboard, a game screen) is toner too, but a
    dropout density set for strokes would strew it with light specks as bright
    as its text, many times more of them than a page of dark text gets.
    """

    name = "toner_noise"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return speckle and dropout densities, stroke spread and the noise seed."""
        return {
            "speckle": uniform(rng, self.spec["speckle"]),
            "dropout": uniform(rng, self.spec["dropout"]),
            "spread": int(rng.integers(self.spec["spread"][0], self.spec["spread"][1] + 1)),
            "noise_seed": int(rng.integers(2**63 - 1)),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Darken random specks, lighten random stroke pixels, optionally thicken strokes."""
        rng = np.random.default_rng(params["noise_seed"])
        image = frame.image
        if params["spread"] > 0:
            size = 2 * params["spread"] + 1
            thick = cv2.erode(image, np.ones((size, size), np.uint8))
            image = cv2.addWeighted(image, 0.5, thick, 0.5, 0)
        h, w = image.shape[:2]
        draw = rng.random((h // 2, w // 2), dtype=np.float32)
        draw = cv2.resize(draw, (w, h), interpolation=cv2.INTER_NEAREST)
        dark = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) < 128
        specks = (draw < params["speckle"]) & ~dark
        drops = (draw > 1 - params["dropout"]) & strokes(dark)
        image = image.copy()
        image[specks] = (image[specks] * 0.35).astype(np.uint8)
        image[drops] = np.maximum(image[drops], 170)
        return frame.with_image(cv2.GaussianBlur(image, (0, 0), 0.6))


def strokes(dark: np.ndarray) -> np.ndarray:
    """Return the dark pixels that are strokes, not fills (see `FILL_SHARE`)."""
    window = max(3, round(FILL_WINDOW * max(dark.shape)) | 1)
    share = cv2.blur(dark.astype(np.float32), (window, window))
    return dark & (share < FILL_SHARE)


_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "with",
    "as",
    "on",
    "by",
    "this",
    "from",
    "are",
    "be",
    "which",
    "or",
    "an",
    "at",
    "it",
    "results",
    "figure",
    "table",
    "section",
    "value",
    "model",
    "data",
    "shown",
    "each",
    "between",
    "given",
    "number",
    "answer",
    "question",
    "following",
    "method",
    "two",
    "three",
    "change",
    "rate",
    "level",
    "energy",
    "cell",
    "total",
]


@register
class BleedThrough(Transform):
    """The back page's print showing through the paper: mirrored, blurred, faint text lines."""

    name = "bleed_through"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the back page's text lines (position, size, words), its darkness and blur."""
        w, h = frame.width, frame.height
        size = max(6, round(h * uniform(rng, (0.012, 0.018))))
        lines = []
        y = h * uniform(rng, (0.05, 0.12))
        left, right = w * uniform(rng, (0.06, 0.12)), w * uniform(rng, (0.86, 0.94))
        while y < h * 0.92:
            if rng.random() < 0.12:  # a paragraph break
                y += size * 1.6
                continue
            count = int(rng.integers(6, 14))
            text = " ".join(str(_WORDS[int(i)]) for i in rng.integers(len(_WORDS), size=count))
            lines.append([round(left), round(y), text])
            y += size * 1.55
        return {
            "size": size,
            "lines": lines,
            "right": round(right),
            "darkness": uniform(rng, self.spec["darkness"]),
            "blur": uniform(rng, self.spec["blur"]),
        }

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Draw the lines, mirror them (seen from the front) and darken the page by them."""
        from PIL import Image, ImageDraw

        from itemshot.degradations.fonts import ui_font

        if params["darkness"] <= 0 or not params["lines"]:
            return frame
        w, h = frame.width, frame.height
        back = Image.new("L", (w, h), 0)
        draw = ImageDraw.Draw(back)
        font = ui_font(int(params["size"]))
        for x, y, text in params["lines"]:
            draw.text((x, y), text, font=font, fill=255)
        ink = np.asarray(back)[:, ::-1].astype(np.float32) * np.float32(params["darkness"] / 255)
        ink = cv2.GaussianBlur(ink, (0, 0), params["blur"])
        field = np.float32(1.0) - ink
        out = cv2.multiply(frame.image, cv2.merge([field, field, field]), dtype=cv2.CV_8U)
        return frame.with_image(out)


@register
class ScanResolution(Transform):
    """Sample the page at the scanner's resolution (dpi) through its optics, then back."""

    name = "scan_resolution"

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def sample(self, rng: np.random.Generator, frame: Frame) -> Params:
        """Return the dpi, the page's physical long side, the scan grid and the optics blur."""
        dpi = int(self.spec["dpi"][int(rng.integers(len(self.spec["dpi"])))])
        inches = 11.69 if rng.random() < 0.5 else 11.0  # A4 or US letter
        scan_long = round(dpi * inches)
        long_side = max(frame.width, frame.height)
        grid = None
        if scan_long < long_side:  # fewer scan samples than page pixels: detail is lost
            ratio = scan_long / long_side
            grid = [max(1, round(frame.width * ratio)), max(1, round(frame.height * ratio))]
        # the optics blur, in scan px, seen at this frame's resolution
        sigma = uniform(rng, self.spec["optics"]) * max(1.0, long_side / scan_long)
        return {"dpi": dpi, "inches": inches, "scan_long": scan_long, "grid": grid, "sigma": sigma}

    @classmethod
    def apply(cls, frame: Frame, params: Params) -> Frame:
        """Blur by the optics and, when the scan grid is coarser, resample through it."""
        image = cv2.GaussianBlur(frame.image, (0, 0), params["sigma"])
        if params["grid"]:
            small = cv2.resize(image, tuple(params["grid"]), interpolation=cv2.INTER_AREA)
            image = cv2.resize(small, (frame.width, frame.height), interpolation=cv2.INTER_CUBIC)
        return frame.with_image(image)
