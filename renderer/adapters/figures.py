"""Load and check figure files: local, inside the dataset folder, decodable, not huge."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from itemshot.renderer.items import Figure, relative_to_root

MAX_FIGURE_BYTES = 40 * 1024 * 1024
MAX_FIGURE_PIXELS = 40_000_000
MAX_FIGURE_SIDE = 10_000
# Our own size check (below) runs on the header before any pixel is decoded and
# is stricter than PIL's bomb guard, whose error would not name the size.
Image.MAX_IMAGE_PIXELS = None

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
    if candidate.stat().st_size > MAX_FIGURE_BYTES:
        raise FigureProblem(f"file {reference!r} is larger than {MAX_FIGURE_BYTES} bytes")
    return candidate.read_bytes(), reference


def decode_figure(number: int, data: bytes, source: str) -> Figure:
    """Return a checked Figure, re-encoded as PNG when the browser could not show it."""
    if len(data) > MAX_FIGURE_BYTES:
        raise FigureProblem(f"{source!r} is larger than {MAX_FIGURE_BYTES} bytes")
    try:
        with Image.open(io.BytesIO(data)) as probe:
            width, height, kind = probe.width, probe.height, probe.format or ""
            _check_size(source, width, height)
            probe.verify()
        if kind in BROWSER_FORMATS:
            return Figure(number, data, BROWSER_FORMATS[kind], width, height, source)
        with Image.open(io.BytesIO(data)) as image:
            buffer = io.BytesIO()
            image.convert("RGBA").save(buffer, format="PNG")
    except FigureProblem:
        raise
    except Exception as error:  # PIL raises many types for corrupt files
        raise FigureProblem(f"{source!r} is not a readable image ({error})") from None
    return Figure(number, buffer.getvalue(), "image/png", width, height, source)


def _check_size(source: str, width: int, height: int) -> None:
    if width < 1 or height < 1:
        raise FigureProblem(f"{source!r} has no pixels")
    if max(width, height) > MAX_FIGURE_SIDE or width * height > MAX_FIGURE_PIXELS:
        raise FigureProblem(
            f"{source!r} is {width}×{height} px; the limit is {MAX_FIGURE_SIDE} px a side "
            f"and {MAX_FIGURE_PIXELS:,} px in all"
        )
