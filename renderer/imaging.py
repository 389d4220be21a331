"""The one bounded image decoder: every image that enters itemshot is read through it.

Dataset figures, generated images, cached answers and audited images are all
untrusted bytes. A 48 KB PNG can declare 20000×20000 pixels (1.6 GB once
decoded) and a figure can have a valid header over a broken data stream. So
an image is accepted only when its size in bytes and its declared pixel size
are within limits — both checked before any pixel is decoded — and when it
then decodes completely. Callers get a fully loaded image or `ImageRejected`
naming what is wrong; nothing half-decoded is ever used.

Pillow's own bomb guard (`Image.MAX_IMAGE_PIXELS`) is left as it is: these
limits are stricter and their message names the size.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Pillow is imported where images are decoded: `itemshot --help` needs none
    from PIL import Image

MIB = 1024 * 1024


@dataclass(frozen=True)
class ImageLimits:
    """The largest image accepted: bytes on the wire, pixels in all, pixels a side."""

    max_bytes: int = 40 * MIB
    max_pixels: int = 40_000_000
    max_side: int = 10_000

    def describe(self) -> str:
        """Return the pixel limits as a phrase for messages."""
        return f"{self.max_side} px a side and {self.max_pixels:,} px in all"


# One set of limits for every image: a 4K page (4096×4096) is well inside it,
# and the largest image decodes to at most 160 MB (RGBA).
IMAGE_LIMITS = ImageLimits()


class ImageRejected(ValueError):
    """An image that may not be used; `reason` is `too_large` or `unreadable`."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class ImageInfo:
    """What the header of an accepted image says: its format and pixel size."""

    format: str
    width: int
    height: int


def read_limited(path: Path, limits: ImageLimits = IMAGE_LIMITS, label: str = "") -> bytes:
    """Return the bytes of an image file, refusing one larger than `limits.max_bytes`.

    The size is checked before reading, and no more than the limit is ever read
    (a file that grows meanwhile is refused too).
    """
    name = label or str(path)
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise ImageRejected(f"{name!r} is larger than {limits.max_bytes:,} bytes", "too_large")
    with path.open("rb") as handle:
        data = handle.read(limits.max_bytes + 1)
    if len(data) > limits.max_bytes:
        raise ImageRejected(f"{name!r} is larger than {limits.max_bytes:,} bytes", "too_large")
    return data


def check_image(data: bytes, limits: ImageLimits = IMAGE_LIMITS, label: str = "image") -> ImageInfo:
    """Return the header facts of an image that passes the limits and decodes completely."""
    image, info = _decode(data, limits, label)
    image.close()
    return info


def decode_image(
    data: bytes, limits: ImageLimits = IMAGE_LIMITS, label: str = "image"
) -> Image.Image:
    """Return the image fully decoded (pixels loaded); raise `ImageRejected` otherwise."""
    return _decode(data, limits, label)[0]


@dataclass(frozen=True)
class StillImage:
    """An image as a person sees it: upright, one frame, 8-bit RGB or RGBA, no metadata.

    `steps` names each step that made these pixels differ from what the file's
    own pixels would show in a browser (animation stopped at its first frame,
    EXIF rotation applied, 16-bit or CMYK samples converted); empty when the
    file shows exactly `image`. Palette, grey and grey+alpha images are
    converted too, but those conversions are exact, so they are not steps.
    """

    image: Image.Image
    format: str
    steps: tuple[str, ...]


EXIF_ORIENTATION = 0x0112
# Modes whose samples convert to 8-bit RGB(A) exactly, as a browser shows them.
_EXACT_MODES = frozenset({"1", "L", "LA", "P", "PA", "RGB", "RGBA"})
_ALPHA_MODES = frozenset({"LA", "PA", "RGBA"})
_SIXTEEN_BIT_MODES = frozenset({"I", "I;16", "I;16B", "I;16L", "I;16N"})
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def decode_still(
    data: bytes, limits: ImageLimits = IMAGE_LIMITS, label: str = "image"
) -> StillImage:
    """Return an image decoded through `decode_image` and normalised to what a person sees.

    The one place figures are normalised: the page is given these pixels and
    the verifier compares against them, so both see the same thing. An
    animation is stopped at its first frame (a browser would show whichever
    frame is current at the screenshot); the EXIF orientation is applied (the
    browser applies it too, Pillow does not); 16-bit samples are scaled, not
    clipped, to 8 bits; every mode becomes RGB, or RGBA when it has
    transparency; ICC, EXIF and other metadata are dropped so nothing
    re-encoded from it is reinterpreted.
    """
    from PIL import ImageOps

    steps: list[str] = []
    with decode_image(data, limits, label) as source:
        kind = source.format or ""
        frames = int(getattr(source, "n_frames", 1) or 1)
        if frames > 1:
            source.seek(0)  # counting frames walks them; frame 0 is the one kept
            steps.append(f"first of {frames} frames")
        orientation = int(source.getexif().get(EXIF_ORIENTATION, 1) or 1)
        if 2 <= orientation <= 8:
            steps.append(f"EXIF orientation {orientation} applied")
        if _png_bit_depth(data) == 16 or source.mode in _SIXTEEN_BIT_MODES:
            steps.append("16-bit samples scaled to 8-bit")
        elif source.mode not in _EXACT_MODES:
            steps.append(f"{source.mode} converted to RGB")
        upright = ImageOps.exif_transpose(source)  # a new image, a copy when already upright
    with upright:
        try:
            image = _eight_bit_rgb(upright)
        except (ValueError, OSError) as error:  # a mode Pillow cannot convert to RGB
            raise ImageRejected(f"{label!r} has no RGB form ({error})", "unreadable") from None
    image.info.clear()  # no ICC profile, EXIF or gamma left to be reinterpreted downstream
    return StillImage(image, kind, tuple(steps))


def _eight_bit_rgb(image: Image.Image) -> Image.Image:
    """Return a new 8-bit RGB image, or RGBA when `image` has transparency."""
    from PIL import Image

    if image.mode in _SIXTEEN_BIT_MODES:
        import numpy as np

        # Pillow clips 16-bit values at 255 when converting to 8 bits (a 16-bit
        # grey figure turns almost white); scale them instead: v * 255 / 65535, rounded.
        samples = np.asarray(image.convert("I"), dtype=np.int64)
        scaled = ((np.clip(samples, 0, 65535) + 128) // 257).astype(np.uint8)
        return Image.fromarray(scaled).convert("RGB")
    alpha = image.mode in _ALPHA_MODES or "transparency" in image.info
    return image.convert("RGBA" if alpha else "RGB")


def _png_bit_depth(data: bytes) -> int | None:
    """Return the bit depth a PNG's header declares (None for other formats).

    Pillow reads 16-bit colour PNGs as 8-bit RGB without saying so; the header
    is the only place the depth shows.
    """
    if data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR" or len(data) < 25:
        return None
    return data[24]


def _decode(data: bytes, limits: ImageLimits, label: str) -> tuple[Image.Image, ImageInfo]:
    from PIL import Image

    if len(data) > limits.max_bytes:
        raise ImageRejected(f"{label!r} is larger than {limits.max_bytes:,} bytes", "too_large")
    try:
        with Image.open(io.BytesIO(data)) as probe:
            info = ImageInfo(probe.format or "", probe.width, probe.height)
            _check_size(label, info, limits)
            probe.verify()  # chunk checksums and structure, without decoding
        image = Image.open(io.BytesIO(data))
        image.load()  # every pixel now, so a broken data stream fails here, not later
    except ImageRejected:
        raise
    except Image.DecompressionBombError:
        size = _declared_size(data)
        if size is not None:
            _check_size(label, ImageInfo("", *size), limits)  # raises, naming the size
        raise ImageRejected(f"{label!r} declares too many pixels", "too_large") from None
    except Image.UnidentifiedImageError:
        # Pillow's message names the stream object (`<_io.BytesIO object at 0x…>`), not the image.
        raise ImageRejected(
            f"{label!r} is not a readable image (not a known image format)", "unreadable"
        ) from None
    except Exception as error:  # Pillow raises many types for corrupt data
        raise ImageRejected(f"{label!r} is not a readable image ({error})", "unreadable") from None
    return image, info


def _check_size(label: str, info: ImageInfo, limits: ImageLimits) -> None:
    width, height = info.width, info.height
    if width < 1 or height < 1:
        raise ImageRejected(f"{label!r} has no pixels", "unreadable")
    if max(width, height) > limits.max_side or width * height > limits.max_pixels:
        raise ImageRejected(
            f"{label!r} is {width}×{height} px; the limit is {limits.describe()}", "too_large"
        )


def _declared_size(data: bytes) -> tuple[int, int] | None:
    """Return the size an image's header declares, past Pillow's bomb guard (header only)."""
    from PIL import Image

    Image.init()
    prefix = data[:16]
    for kind in Image.ID:
        factory, accept = Image.OPEN[kind]
        if accept is not None and not accept(prefix):
            continue
        try:
            with factory(io.BytesIO(data), "") as header:
                return header.size
        except Exception:
            continue
    return None
