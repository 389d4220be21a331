"""What each cell costs in image tokens: billed where the usage says, estimated otherwise.

The bill comes from the usage `predict` records with every answer: the
prompt's input tokens (OpenAI `prompt_tokens`, Gemini `prompt_token_count`,
Anthropic `input_tokens`) and, when the API breaks them out, the image
tokens (Gemini's `prompt_tokens_details` by modality). Where the usage says
nothing about images, the image tokens are estimated from the sizes of the
images the request sent, by the formula each model family publishes:

* ``openai`` (GPT-4o, high detail): scaled to fit 2048 × 2048, then its short
  side to 768 (never enlarged); 85 tokens plus 170 per 512-px tile.
* ``anthropic`` (Claude): an image whose long side exceeds 1568 px or that
  has over 1.15 megapixels is first scaled down; then width × height / 750.
* ``qwen2-vl``: Qwen2-VL's `smart_resize` (sides rounded to multiples of
  28 px, the pixel count kept within 4·28² … 16384·28²), one token per 28 ×
  28 patch (a 2 × 2 merge of 14-px patches); the two marker tokens around
  each image are left out.
* ``gemini`` (Gemini 2.x): 258 tokens when both sides are at most 384 px,
  otherwise 258 per 768 × 768 tile.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAMILIES = ("openai", "anthropic", "qwen2-vl", "gemini")
DEFAULT_FAMILY = "openai"
_MODEL_FAMILIES = (
    (("gpt-", "o1", "o3", "o4", "chatgpt"), "openai"),
    (("claude",), "anthropic"),
    (("qwen",), "qwen2-vl"),
    (("gemini", "gemma"), "gemini"),
)
_QWEN_PATCH = 28
_QWEN_MIN_PIXELS = 4 * 28 * 28
_QWEN_MAX_PIXELS = 16384 * 28 * 28


def openai_tokens(width: int, height: int) -> int:
    """Return GPT-4o's high-detail image tokens: 85 + 170 per 512-px tile after scaling."""
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def anthropic_tokens(width: int, height: int) -> int:
    """Return Claude's image tokens: width × height / 750 after its documented downscaling."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
    return math.ceil((width * scale) * (height * scale) / 750)


def qwen2vl_tokens(
    width: int,
    height: int,
    min_pixels: int = _QWEN_MIN_PIXELS,
    max_pixels: int = _QWEN_MAX_PIXELS,
) -> int:
    """Return Qwen2-VL's image tokens: 28-px patches after its `smart_resize`."""
    factor = _QWEN_PATCH
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return (h_bar // factor) * (w_bar // factor)


def gemini_tokens(width: int, height: int) -> int:
    """Return Gemini 2.x's image tokens: 258, or 258 per 768-px tile above 384 px."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


_FORMULAS = {
    "openai": openai_tokens,
    "anthropic": anthropic_tokens,
    "qwen2-vl": qwen2vl_tokens,
    "gemini": gemini_tokens,
}


def image_tokens(width: int, height: int, family: str) -> int:
    """Return the image tokens `family` publishes for an image of width × height px."""
    if family not in _FORMULAS:
        raise ValueError(f"unknown model family {family!r}; known: {', '.join(FAMILIES)}")
    if width < 1 or height < 1:
        raise ValueError(f"image size must be positive, got {width} × {height}")
    return _FORMULAS[family](int(width), int(height))


def family_of(model: str) -> str | None:
    """Return the model family a model name belongs to, or None when not recognised."""
    name = model.lower().rsplit("/", 1)[-1]
    for prefixes, family in _MODEL_FAMILIES:
        if any(name.startswith(prefix) or f"-{prefix}" in name for prefix in prefixes):
            return family
    return None


def image_size(path: Path) -> tuple[int, int]:
    """Return an image file's (width, height) from its header."""
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def sent_images(fmt: str, image: Path | None, figures: Sequence[Path]) -> list[Path]:
    """Return the images a request of format `fmt` sends, as the request builder does."""
    if fmt == "blind":
        return []
    if fmt == "standard":
        return list(figures)
    if image is None:
        return []
    if fmt == "vision_text_only":
        return [image, *figures]
    return [image]


def billed_input(usage: Mapping[str, Any]) -> int | None:
    """Return the input tokens a usage record bills, or None when it has none."""
    for key in ("prompt_tokens", "prompt_token_count", "input_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def billed_images(usage: Mapping[str, Any]) -> int | None:
    """Return the image tokens a usage record breaks out, or None when it does not."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping):
        value = details.get("image_tokens")
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(details, list):  # Gemini: one entry per modality
        counts = [
            entry.get("token_count")
            for entry in details
            if isinstance(entry, Mapping) and "IMAGE" in str(entry.get("modality", "")).upper()
        ]
        found = [c for c in counts if isinstance(c, int)]
        return sum(found) if found else None
    return None


@dataclass(frozen=True)
class Request:
    """One answered request of a cell: image sizes sent, recorded usage, model, verdict."""

    cell: str
    sizes: tuple[tuple[int, int], ...]
    usage: Mapping[str, Any]
    model: str
    correct: bool
    factor: str = ""  # the one factor away from its reference ("" at the reference look)
    level: str = ""


@dataclass(frozen=True)
class CellCost:
    """A cell's accuracy and mean tokens per request: billed, and estimated per family.

    `image_tokens` is what the plot shows: the billed image tokens when the
    usage breaks them out for every request, else the estimate of `family`
    (the model's, or OpenAI's when the model name names no known family);
    `source` says which.
    """

    cell: str
    n: int
    accuracy: float
    correct: int
    billed_input: float | None
    billed_image: float | None
    estimated: Mapping[str, float] = field(default_factory=dict)
    family: str = DEFAULT_FAMILY
    image_tokens: float = float("nan")
    source: str = ""
    mean_pixels: float = float("nan")
    factor: str = ""
    level: str = ""


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else float("nan")


def _cell_cost(cell: str, requests: Sequence[Request]) -> CellCost:
    inputs = [billed_input(r.usage) for r in requests]
    images = [billed_images(r.usage) for r in requests]
    estimated = {
        family: _mean([sum(image_tokens(w, h, family) for w, h in r.sizes) for r in requests])
        for family in FAMILIES
    }
    models = sorted({family_of(r.model) or "" for r in requests})
    known = [m for m in models if m]
    family = known[0] if len(known) == 1 and len(models) == 1 else DEFAULT_FAMILY
    all_billed = all(value is not None for value in images)
    if all_billed and requests:
        tokens, source = _mean([float(v) for v in images if v is not None]), "billed"
    else:
        named = "" if known else "; model family not recognised"
        tokens, source = estimated[family], f"estimated, {family} formula{named}"
    correct = sum(1 for r in requests if r.correct)
    pixels = [float(sum(w * h for w, h in r.sizes)) for r in requests]
    return CellCost(
        cell=cell,
        n=len(requests),
        accuracy=correct / len(requests) if requests else float("nan"),
        correct=correct,
        billed_input=_mean([v for v in inputs if v is not None])
        if any(v is not None for v in inputs)
        else None,
        billed_image=_mean([v for v in images if v is not None])
        if any(v is not None for v in images)
        else None,
        estimated=estimated,
        family=family,
        image_tokens=tokens,
        source=source,
        mean_pixels=_mean(pixels),
        factor=requests[0].factor if requests else "",
        level=requests[0].level if requests else "",
    )


def cell_costs(requests: Iterable[Request]) -> list[CellCost]:
    """Return each cell's cost, cells in name order."""
    by_cell: dict[str, list[Request]] = defaultdict(list)
    for request in requests:
        by_cell[request.cell].append(request)
    return [_cell_cost(cell, by_cell[cell]) for cell in sorted(by_cell)]
