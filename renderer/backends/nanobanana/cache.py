"""On-disk response cache of the generative backend, keyed by the full request.

Each entry is `<key>.json` (the outcome record) plus `<key>.<ext>` (the image,
when there is one); both are written atomically, the record last, so a record
on disk always has its image. Transport errors are never cached.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from itemshot.renderer.imaging import IMAGE_LIMITS, read_limited
from itemshot.renderer.output import atomic_write, atomic_write_json

_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}


class ResponseCache:
    """A folder of cached model answers (image bytes and outcome metadata)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _record(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[dict[str, Any], bytes | None] | None:
        """Return the cached (record, image bytes) of a request key, or None.

        Raises ImageRejected when the stored image is larger than any image
        accepted (its pixels are checked by the caller, through the decoder).
        """
        path = self._record(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        if not isinstance(record, dict):
            return None
        image_name = record.get("image_file")
        if not image_name:
            return record, None
        image = path.parent / Path(str(image_name)).name  # never a path out of the cache
        try:
            # Size-checked before reading: raises ImageRejected for an oversized file.
            return record, read_limited(image, IMAGE_LIMITS, "the cached image")
        except OSError:
            return None

    def put(self, key: str, record: dict[str, Any], image: bytes | None, mime: str) -> None:
        """Store an answer: the image first, then the record that points at it."""
        path = self._record(key)
        stored = dict(record)
        if image is not None:
            name = key + _EXTENSIONS.get(mime, ".bin")
            atomic_write(path.parent / name, image)
            stored["image_file"] = name
        atomic_write_json(path, stored)
