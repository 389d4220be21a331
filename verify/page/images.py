"""Reading images for the verifier (PNG, JPEG, WebP; alpha flattened onto white).

Every image is read through the renderer's bounded decoder, so an audited
file (ours, a model's, or someone else's screenshot) is size-checked before
it is decoded and decoded completely before it is used. A rejected image
raises `ImageRejected`, a `ValueError`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from itemshot.renderer.imaging import IMAGE_LIMITS, decode_image, read_limited


def load_rgb(source: Path | str | bytes) -> np.ndarray:
    """Return an image file (or its encoded bytes) as an RGB uint8 array (EXIF orientation applied)."""
    if isinstance(source, bytes):
        data, label = source, "image"
    else:
        data, label = read_limited(Path(source), IMAGE_LIMITS), str(source)
    with decode_image(data, IMAGE_LIMITS, label) as decoded:
        image = ImageOps.exif_transpose(decoded)
        return np.asarray(flatten_alpha(image).convert("RGB"))


def flatten_alpha(image: Image.Image) -> Image.Image:
    """Return the image with any transparency composited onto white."""
    if image.mode not in ("RGBA", "LA", "P"):
        return image
    image = image.convert("RGBA")
    ground = Image.new("RGBA", image.size, (255, 255, 255, 255))
    return Image.alpha_composite(ground, image)
