"""Reading images for the verifier (PNG, JPEG, WebP; alpha flattened onto white)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageOps


def load_rgb(path: Path) -> np.ndarray:
    """Return an image file as an RGB uint8 array (EXIF orientation applied)."""
    with Image.open(path) as image:
        image = ImageOps.exif_transpose(image)
        if image.mode in ("RGBA", "LA", "P"):
            image = image.convert("RGBA")
            ground = Image.new("RGBA", image.size, (255, 255, 255, 255))
            image = Image.alpha_composite(ground, image)
        return np.asarray(image.convert("RGB"))
