"""Load and check figure files: local, inside the dataset folder, decodable, not huge."""

from __future__ import annotations

import io
from pathlib import Path

from itemshot.renderer.imaging import IMAGE_LIMITS, ImageRejected, decode_still, read_limited
from itemshot.renderer.items import Figure, relative_to_root

MAX_FIGURE_BYTES = IMAGE_LIMITS.max_bytes
MAX_FIGURE_PIXELS = IMAGE_LIMITS.max_pixels
MAX_FIGURE_SIDE = IMAGE_LIMITS.max_side

BROWSER_FORMATS = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
}


class FigureProblem(ValueError):
    """A figure that cannot be used; `missing` marks a file that simply is not there."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def read_figure_file(reference: str, root: Path) -> tuple[bytes, str]:
    """Return the bytes of a figure named by a path relative to the dataset folder.

    Remote URLs, absolute paths and `..` paths that leave the folder are refused:
    a dataset never makes the tool fetch from the network or read elsewhere.
    """
    if "://" in reference or reference.startswith("//"):
        raise FigureProblem(f"remote URL {reference!r} is not allowed; give a local file path")
    path = Path(reference)
    candidate = path if path.is_absolute() else root / path
    if not relative_to_root(candidate, root):
        raise FigureProblem(f"path {reference!r} points outside the dataset folder")
    if not candidate.is_file():
        raise FigureProblem(f"file {reference!r} not found", missing=True)
    try:
        return read_limited(candidate, IMAGE_LIMITS, f"file {reference}"), reference
    except ImageRejected as rejected:
        raise FigureProblem(str(rejected)) from None


def decode_figure(number: int, data: bytes, source: str) -> Figure:
    """Return a checked Figure: the file's bytes, or a normalised PNG where they differ.

    The figure is decoded completely first: a file whose header is fine but
    whose pixels are not fails here, at load, not as a blank box on the page.
    It is then normalised (`decode_still`: first frame, EXIF orientation,
    8-bit RGB(A)); when that changed what the file would show, or the browser
    cannot show its format, the page gets the normalised pixels as PNG, so it
    never animates or reinterprets them and the verifier compares the same pixels.
    """
    try:
        still = decode_still(data, IMAGE_LIMITS, source)
    except ImageRejected as rejected:
        raise FigureProblem(str(rejected)) from None
    with still.image as image:
        width, height = image.width, image.height
        if still.format in BROWSER_FORMATS and not still.steps:
            return Figure(number, data, BROWSER_FORMATS[still.format], width, height, source)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
    return Figure(number, buffer.getvalue(), "image/png", width, height, source, still.steps)
