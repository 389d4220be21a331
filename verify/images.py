"""Reading images for the verifier (PNG, JPEG, WebP; alpha flattened onto white)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps


def load_rgb(source: Path | str | bytes) -> np.ndarray:
    """Return an image file (or its encoded bytes) as an RGB uint8 array (EXIF orientation applied)."""
    with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as image:
        image = ImageOps.exif_transpose(image)
        if image.mode in ("RGBA", "LA", "P"):
            image = image.convert("RGBA")
            ground = Image.new("RGBA", image.size, (255, 255, 255, 255))
            image = Image.alpha_composite(ground, image)
        return np.asarray(image.convert("RGB"))
