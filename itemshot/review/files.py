"""Which files the review app serves: images inside the output set, nothing else.

A path is served only if it is relative, has no `.`/`..` or hidden part (the
response cache under `.cache/` stays private), names an image, and resolves
— symlinks followed — to a file inside the output folder. Anything else is
refused the same way a missing file is, so the answer tells nothing about
what exists outside.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
}


def servable(root: Path, relative: str) -> Path | None:
    """Return the real path of `relative` under `root` if it may be served, else None.

    `root` must already be resolved.
    """
    if not relative or "\\" in relative or "\x00" in relative:
        return None
    path = PurePosixPath(relative)
    if path.is_absolute() or any(
        part in ("", ".", "..") or part.startswith(".") for part in path.parts
    ):
        return None
    if path.suffix.lower() not in IMAGE_TYPES:
        return None
    try:
        real = (root / path).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(root) or not real.is_file():
        return None  # a symlink pointing out of the set, or not a regular file
    return real
