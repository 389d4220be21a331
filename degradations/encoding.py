"""Final encoding of a captured image (PNG or JPEG) with recorded settings."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from itemshot.degradations.frame import Params

FORMATS = ("png", "jpeg")


def sample_encoding(rng: np.random.Generator, spec: dict[str, Any]) -> Params:
    """Return the format and JPEG quality drawn from the preset's encoding spec."""
    p_jpeg = float(spec["p_jpeg"])
    fmt = "jpeg" if rng.random() < p_jpeg else "png"
    low, high = spec["quality"]
    quality = int(rng.integers(low, high + 1)) if fmt == "jpeg" else None
    return {"format": fmt, "quality": quality}


def encode(image: np.ndarray, params: Params) -> bytes:
    """Return the RGB image encoded as the recorded format (deterministic for equal input)."""
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    if params["format"] == "jpeg":
        ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(params["quality"])])
    elif params["format"] == "png":
        ok, data = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 3])
    else:
        raise ValueError(f"unknown image format {params['format']!r}; known: {', '.join(FORMATS)}")
    if not ok:
        raise RuntimeError(f"could not encode the image as {params['format']}")
    return data.tobytes()


def decode(data: bytes) -> np.ndarray:
    """Return encoded image bytes as an RGB uint8 array (alpha composited over white)."""
    array = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if array is None:
        raise ValueError("could not decode the image bytes")
    return to_rgb(array, bgr=True)


def to_rgb(array: np.ndarray, bgr: bool = False) -> np.ndarray:
    """Return a contiguous RGB uint8 image from grey, RGB or RGBA (BGR/BGRA when `bgr`)."""
    if array.dtype != np.uint8:
        raise ValueError(f"expected an 8-bit image, got {array.dtype}")
    if array.ndim == 2:
        return cv2.cvtColor(array, cv2.COLOR_GRAY2RGB)
    if array.shape[2] == 4:
        alpha = array[:, :, 3:4].astype(np.float32) / 255.0
        colour = array[:, :, :3].astype(np.float32) * alpha + 255.0 * (1 - alpha)
        array = colour.round().astype(np.uint8)
    else:
        array = array[:, :, :3]
    if bgr:
        array = cv2.cvtColor(array, cv2.COLOR_BGR2RGB)
    return np.ascontiguousarray(array)
