"""A resumable on-disk cache of model responses, one JSON file per request key."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from itemshot.renderer.output import atomic_write_text


def request_key(
    model: str, prompt: str, text: str, image_hashes: tuple[str, ...], params: Mapping[str, Any]
) -> str:
    """Return the cache key of a request: hash of model, prompt, text, images and parameters."""
    payload = json.dumps(
        {
            "model": model,
            "prompt": prompt,
            "text": text,
            "images": list(image_hashes),
            "params": dict(params),
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """Successful responses stored under `root/<key[:2]>/<key>.json`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """Return the stored record for `key`, or None when absent or unreadable."""
        path = self._path(key)
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return loaded if isinstance(loaded, dict) else None

    def put(self, key: str, record: Mapping[str, Any]) -> None:
        """Store a record for `key` atomically."""
        atomic_write_text(self._path(key), json.dumps(dict(record), ensure_ascii=False))
